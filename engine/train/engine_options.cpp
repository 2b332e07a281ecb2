#include "engine/train/engine_options.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "base/output_file.hpp"
#include "base/quantity.hpp"
#include "engine/train/message_text.hpp"
#include "engine/train/step_summary.hpp"

namespace ws {

namespace {

// Numbers are read as text and converted here rather than by CLI11, which wraps "-1" into an
// unsigned 2^64 - 1, accepts nan and inf, and prints its ranges as 300-digit numbers.
using FlagTexts = std::map<std::string, std::string, std::less<>>;

InputError value_error(std::string_view flag, std::string_view text, std::string_view expected) {
  return InputError(fmt::format("{} {}: expected {}", flag, quote_for_message(text), expected));
}

// Decimal digits with an optional '-', within [min, max]: no spaces, signs of '+', exponents or
// fractions, so that "1e3" or "2.5" never passes as a count.
long long parse_integer(std::string_view flag, std::string_view text, long long min, long long max) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
    throw value_error(flag, text, fmt::format("an integer from {} to {}", min, max));
  return value;
}

// A seed is any 64-bit unsigned value; a sign is refused, not wrapped.
std::uint64_t parse_seed(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw value_error("--seed", text,
                      fmt::format("an integer from 0 to {}", std::numeric_limits<std::uint64_t>::max()));
  return value;
}

// A finite number in (0, max]: nan, inf and zero would train nothing meaningful, and a rate far
// above 1 diverges at the first step.
double parse_positive_real(std::string_view flag, std::string_view text, double max) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      !(value > 0) || value > max)
    throw value_error(flag, text, fmt::format("a finite number above 0 and at most {}", max));
  return value;
}

// Declares the numeric flags as text; converted by read_numbers once CLI11 has parsed argv.
void add_numeric_flags(CLI::App& app, FlagTexts& t) {
  const auto limit = std::to_string(kMaxDimension);
  const auto steps = std::to_string(kMaxSteps);
  const auto batch = std::to_string(kMaxBatch);
  app.add_option("--layers", t["--layers"], "transformer blocks, 1 to " + limit + " (default 2)");
  app.add_option("--hidden", t["--hidden"], "hidden size, 1 to " + limit + " (default 64)");
  app.add_option("--heads", t["--heads"], "attention heads, 1 to " + limit + " (default 4)");
  app.add_option("--seq", t["--seq"], "sequence length (tokens), 1 to " + limit + " (default 32)");
  app.add_option("--vocab", t["--vocab"],
                 "vocabulary size, 1 to " + limit + ", >= 256 with --data (default 256)");
  app.add_option("--kv-heads", t["--kv-heads"], "key/value heads (grouped-query attention), a divisor of --heads "
                                                "(default --heads)");
  app.add_option("--ffn-hidden", t["--ffn-hidden"],
                 "MLP width, 1 to " + limit + " (default 4 x --hidden; --family llama: 2/3 of that, up to 256s)");
  app.add_option("--batch", t["--batch"], "global sequences per step, 1 to " + batch + " (default 8)");
  app.add_option("--steps", t["--steps"],
                 "training steps, 0 to " + steps +
                     " (after a resume: more steps; 0 with --eval-memorization: evaluate only) (default 10)");
  app.add_option(
      "--warmup", t["--warmup"],
      "first steps left out of the summary, 0 to --steps - 1 (default min(2, steps - 1): 10 steps, the "
      "last 8 averaged)");
  app.add_option("--checkpoint-every", t["--checkpoint-every"],
                 "also checkpoint every N steps, 1 to " + steps + " (needs --checkpoint-dir)");
  app.add_option("--seed", t["--seed"],
                 "seed of initialisation and synthetic data, 0 to 2^64 - 1 (default 1)");
  app.add_option("--lr", t["--lr"], "AdamW learning rate, finite, above 0 and at most 10 (default 0.001)");
  app.add_option(
      "--goldfish-k", t["--goldfish-k"],
      "Goldfish loss: leave 1 in K targets out of the loss, chosen by a hash of the tokens before it; "
      "0 = off (default) or 2 to 2147483647");
  app.add_option("--goldfish-context", t["--goldfish-context"],
                 "Goldfish loss: tokens hashed to choose (h), 1 to --seq - 1 (default 13)");
  app.add_option("--eval-sequences", t["--eval-sequences"],
                 "memorization: training sequences evaluated, the first of step 0, 1 to " + batch +
                     " (default --batch; with --data-order chunks at most the documents of the data)");
  app.add_option("--eval-prefix", t["--eval-prefix"],
                 "memorization: prompt tokens P, at least 1 (default --seq / 2)");
  app.add_option("--eval-length", t["--eval-length"],
                 "memorization: tokens generated greedily L, at least 1, P + L <= --seq (default --seq - P)");
  app.add_option("--eval-every", t["--eval-every"],
                 "memorization: also evaluate before training and every N steps, 0 to " + steps +
                     " (default 0: at the end only)");
}

// The numeric flags given, converted into `o`; an absent flag keeps its default.
void read_numbers(const CLI::App& app, const FlagTexts& t, EngineOptions& o) {
  const auto given = [&](const char* flag) { return app.count(flag) > 0; };
  const auto integer = [&](const char* flag, long long min, long long max) {
    return parse_integer(flag, t.find(flag)->second, min, max);
  };
  const auto to_int = [](long long v) { return static_cast<int>(v); };  // each range fits an int
  auto& m = o.run.model;
  for (auto [flag, field] :
       {std::pair{"--layers", &m.layers}, std::pair{"--hidden", &m.hidden}, std::pair{"--heads", &m.heads},
        std::pair{"--seq", &m.sequence_length}, std::pair{"--vocab", &m.vocabulary},
        std::pair{"--kv-heads", &m.kv_heads}, std::pair{"--ffn-hidden", &m.ffn_hidden}})
    if (given(flag)) *field = to_int(integer(flag, 1, kMaxDimension));
  if (given("--batch")) o.run.batch_sequences = integer("--batch", 1, kMaxBatch);
  if (given("--steps")) o.steps = to_int(integer("--steps", 0, kMaxSteps));
  if (given("--warmup")) o.warmup = to_int(integer("--warmup", 0, kMaxSteps));
  if (given("--checkpoint-every")) o.checkpoint_every = to_int(integer("--checkpoint-every", 1, kMaxSteps));
  if (given("--eval-every")) o.eval_every = to_int(integer("--eval-every", 0, kMaxSteps));
  if (given("--seed")) o.run.seed = parse_seed(t.find("--seed")->second);
  if (given("--lr"))
    o.run.optimizer.learning_rate = parse_positive_real("--lr", t.find("--lr")->second, kMaxLearningRate);
  if (given("--goldfish-k")) o.run.goldfish.k = to_int(integer("--goldfish-k", 0, INT_MAX));
  if (given("--goldfish-context"))
    o.run.goldfish.context = to_int(integer("--goldfish-context", 1, kMaxDimension));
  if (given("--eval-sequences")) o.eval_sequences = to_int(integer("--eval-sequences", 1, kMaxBatch));
  if (given("--eval-prefix")) o.eval_prefix = to_int(integer("--eval-prefix", 1, kMaxDimension));
  if (given("--eval-length")) o.eval_length = to_int(integer("--eval-length", 1, kMaxDimension));
}

// A text flag given explicitly as "" is refused: an empty file name or layout would otherwise
// silently mean "not given" and run with the default.
void refuse_empty_values(const CLI::App& app, const EngineOptions& o) {
  for (const auto& [flag, value] :
       {std::pair{"--layout", &o.layout_text}, std::pair{"--data", &o.data_file},
        std::pair{"--peak", &o.peak_text}, std::pair{"--csv", &o.csv_file},
        std::pair{"--trace", &o.trace_file}, std::pair{"--checkpoint-dir", &o.checkpoint_dir},
        std::pair{"--resume", &o.resume_dir}, std::pair{"--eval-memorization", &o.eval_file},
        std::pair{"--validation-data", &o.validation_file}})
    if (app.count(flag) > 0 && value->empty())
      throw value_error(flag, "",
                        flag == std::string_view("--layout") ? "DxXxYxZ with positive integers, e.g. 4x1x1x1"
                                                             : "a non-empty value");
}

// Bytes of physical memory of this host; 0 when unknown.
double host_memory_bytes() {
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

// Buffers that cannot fit are refused here, with their size, not by std::bad_alloc mid-run.
void check_memory(const RunConfig& run, const std::string& what) {
  const auto need = static_cast<double>(engine_memory_bytes(run));
  const double have = host_memory_bytes();
  if (have > 0 && need > have)
    throw InputError(
        fmt::format("{} needs {:.1f} GiB per rank (weights, gradients, AdamW state, activations, "
                    "logits) but this host has {:.1f} GiB: lower --hidden, --layers, --seq, --vocab "
                    "or --batch, or shard over more ranks",
                    what, need / 1073741824.0, have / 1073741824.0));
}

// The memorization options resolved against the model and layout; throws InputError naming the
// flag. The evaluated sequences run through the model as one batch: they are bounded like one.
void check_memorization(EngineOptions& o) {
  const bool evaluating = !o.eval_file.empty();
  if (!evaluating) {
    if (o.steps == 0)
      throw InputError("--steps 0 trains nothing: give --eval-memorization FILE or --steps >= 1");
    for (const auto& [flag, given] : {std::pair{"--eval-every", o.eval_every > 0},
                                      std::pair{"--validation-data", !o.validation_file.empty()},
                                      std::pair{"--eval-sequences", o.eval_sequences.has_value()},
                                      std::pair{"--eval-prefix", o.eval_prefix.has_value()},
                                      std::pair{"--eval-length", o.eval_length.has_value()}})
      if (given) throw InputError(fmt::format("{} needs --eval-memorization FILE", flag));
    return;
  }
  const int seq = o.run.model.sequence_length;
  o.eval.sequences = o.eval_sequences.value_or(static_cast<int>(o.run.batch_sequences));
  o.eval.prefix = o.eval_prefix.value_or(seq / 2);
  o.eval.length = o.eval_length.value_or(seq - o.eval.prefix);
  const long long shards = static_cast<long long>(o.run.layout.data) * o.run.layout.z;
  if (o.eval.sequences <= 0 || o.eval.sequences % shards != 0)
    throw InputError(fmt::format("--eval-sequences {} must be positive and divisible by Gdata*Gz = {}",
                                 o.eval.sequences, shards));
  if (o.eval.prefix < 1 || o.eval.length < 1 || o.eval.prefix + o.eval.length > seq)
    throw InputError(
        fmt::format("--eval-prefix {} and --eval-length {} must be at least 1 each and add up to at "
                    "most --seq {}",
                    o.eval.prefix, o.eval.length, seq));
  const double tokens = static_cast<double>(o.eval.sequences) / static_cast<double>(shards) * seq;
  if (tokens > INT_MAX)
    throw InputError(
        fmt::format("--eval-sequences {} x --seq {} is {:.0f} tokens per rank (Gdata*Gz = {}), above "
                    "the engine's limit 2147483647",
                    o.eval.sequences, seq, tokens, shards));
  RunConfig evaluation = o.run;
  evaluation.batch_sequences = std::max<long long>(o.run.batch_sequences, o.eval.sequences);
  check_memory(evaluation, fmt::format("the evaluation of --eval-sequences {}", o.eval.sequences));
}

// In chunks order sequence g reads document g mod documents: more evaluated sequences than
// documents would count the same document twice.
void check_documents(const EngineOptions& o, const TextFileTokens& text, const char* flag) {
  if (o.eval_file.empty() || o.data_order != "chunks" || o.eval.sequences <= text.chunks()) return;
  throw InputError(
      fmt::format("--eval-sequences {} (default --batch) is above the {} documents of {} {} "
                  "(--data-order chunks, --seq + 1 = {} bytes each)",
                  o.eval.sequences, text.chunks(), flag,
                  quote_for_message(flag == std::string_view("--data") ? o.data_file : o.validation_file),
                  o.run.model.sequence_length + 1));
}

// Why `path` cannot be an output of this run, or nothing: its directory must exist and be
// writable (files are written to a new temporary there, then renamed), or it is a device such as
// /dev/stdout.
std::optional<std::string> output_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (is_special_file(path)) return std::nullopt;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "is a directory, expected a file";
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    return "cannot open for writing: " + quote_for_message(dir.string()) + " is not a directory";
  if (::access(dir.c_str(), W_OK) != 0)
    return "cannot open for writing: " + quote_for_message(dir.string()) + " is not writable";
  return std::nullopt;
}

// Why rows cannot be appended to the CSV at `path`, or nothing: an existing regular file must
// start with `header`'s first line (rows under another header would be read as the wrong
// columns). Read without following a link: a link there is replaced, not appended to.
std::optional<std::string> csv_header_problem(const std::string& path, const std::string& header) {
  const std::string first_line = header.substr(0, header.find('\n'));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // missing, or a link (replaced by a new file)
  struct stat st {};
  const bool nonempty_file = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
  std::string start(nonempty_file ? first_line.size() : 0, '\0');
  const ssize_t n = nonempty_file ? ::read(fd, start.data(), start.size()) : 0;
  ::close(fd);
  start.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (!nonempty_file || start == first_line) return std::nullopt;
  return "its first line is not this engine's header (" + first_line.substr(0, 40) + "...); give a new file";
}

}  // namespace

std::string memorization_csv_header() {
  return "layout,goldfish_k,goldfish_context,step,sequences_trained,sequences,prefix,length,exact_matches,"
         "exact_match_rate,token_accuracy,train_loss,validation_loss,seconds\n";
}

EngineCommandLine parse_engine_command_line(int argc, const char* const* argv) {
  EngineCommandLine line;
  EngineOptions& o = line.options;
  CLI::App app{"weakscale-engine: 4D-parallel (Gdata x Gx x Gy x Gz) GPT training with MPI + OpenBLAS"};
  auto& m = o.run.model;
  m.name = "cli";
  m.layers = 2, m.hidden = 64, m.heads = 4, m.sequence_length = 32, m.vocabulary = 256;
  o.run.batch_sequences = 8;
  o.run.seed = 1;
  FlagTexts numbers;
  add_numeric_flags(app, numbers);
  bool no_tune = false, no_overlap = false, no_oar = false, no_ors = false, no_oag = false, recompute = false;
  std::string family = "gpt";
  app.add_option("--family", family,
                 "model architecture: gpt (LayerNorm, GELU, learned positions, tied embeddings, biases) or llama "
                 "(RMSNorm, SwiGLU, rotary positions, untied embeddings, no biases; docs/models.md)")
      ->check(CLI::IsMember({"gpt", "llama"}))
      ->capture_default_str();
  app.add_option(
      "--peak", o.peak_text,
      "fp32 peak of one rank's device, e.g. \"47.5 GFLOP/s\" (the machine file's device peak.fp32): "
      "gives percent of peak");
  app.add_option("--csv", o.csv_file, "append the summary as one CSV row (header if the file is new)");
  app.add_option("--trace", o.trace_file,
                 "write a Chrome trace / Perfetto JSON of every rank's kernels and collectives");
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "write sharded checkpoints here (at the end of the run, or see --checkpoint-every)");
  app.add_option("--resume", o.resume_dir,
                 "continue from the checkpoint in this directory (same model, layout, batch, seed, data)");
  app.add_flag("--recompute", recompute,
               "recompute each block's activations in backward instead of storing them");
  app.add_option("--layout", o.layout_text,
                 "Gdata x Gx x Gy x Gz, e.g. 4x1x1x1, with optional /pp=,vpp=,mb=; Megatron-LM's "
                 "tp=2,pp=2,dp=2,mb=4 with optional zero=1|2|3, sp, order=tp-pp-dp; FSDP's dp_shard=2,dp_replicate=2,tp=2 "
                 "(default: ranks x1x1x1)");
  app.add_option(
      "--data", o.data_file,
      "train on the bytes of this text file (a regular file of at most 1 GiB) instead of synthetic tokens");
  app.add_option("--data-order", o.data_order,
                 "random: each sequence at a seeded random offset of --data; chunks: the file cut into "
                 "documents of --seq + 1 bytes, read in order (batch = documents: one epoch per step)")
      ->check(CLI::IsMember({"random", "chunks"}))
      ->capture_default_str();
  app.add_option(
      "--eval-memorization", o.eval_file,
      "append memorization rows (exact-match rate, token accuracy, losses) to this CSV; also printed "
      "as JSON lines");
  app.add_option("--validation-data", o.validation_file,
                 "memorization: held-out text (read like --data) whose mean loss over --eval-sequences "
                 "sequences is reported");
  app.add_flag("--no-tune", no_tune, "skip GEMM layout tuning (always the plain row-major call)");
  app.add_flag("--no-overlap-dp", no_overlap,
               "all-reduce gradients after backward instead of block by block");
  app.add_flag("--no-oar", no_oar, "blocking backward dX all-reduce (no overlap with the dW product)");
  app.add_flag("--no-ors", no_ors, "blocking dW reduce-scatter over Z");
  app.add_flag("--no-oag", no_oag, "blocking weight all-gather over Z (no prefetch one block ahead)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    line.help = app.help();
    return line;
  } catch (const CLI::ParseError& e) {
    // CLI11's message quotes the argument as given: shown escaped, on one line.
    throw InputError(escape_for_message(e.what()) + " (see --help)");
  }
  refuse_empty_values(app, o);
  read_numbers(app, numbers, o);
  if (family == "llama") o.run.model = with_llama_architecture(o.run.model);
  o.run.tune_gemm = !no_tune;
  o.run.schedule.overlap_data_parallel = !no_overlap;
  o.run.schedule.overlap_all_reduce = !no_oar;
  o.run.schedule.overlap_reduce_scatter = !no_ors;
  o.run.schedule.overlap_all_gather = !no_oag;
  o.run.schedule.recompute = recompute;
  return line;
}

RunInputs validate_engine_options(EngineOptions& o, int ranks) {
  RunInputs in;
  if (!o.warmup) o.warmup = std::max(0, std::min(2, o.steps - 1));
  if (o.steps > 0 && *o.warmup >= o.steps)
    throw InputError(
        fmt::format("--warmup {} must be below --steps {} (at least one measured step)", *o.warmup, o.steps));
  if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
    throw InputError(fmt::format("--checkpoint-every {} needs --checkpoint-dir DIR", o.checkpoint_every));
  if (!o.peak_text.empty()) {
    const auto rate = parse_flop_rate(o.peak_text);
    if (!rate || !within(kFlopRateRange, rate->flops()))
      throw InputError(fmt::format("--peak {}: expected a compute rate {} with a unit ({})",
                                   quote_for_message(o.peak_text), kFlopRateRange.text, kFlopRateUnits));
    in.peak = rate->flops();
  }
  if (o.layout_text.empty()) o.layout_text = std::to_string(ranks) + "x1x1x1";
  const auto layout = parse_layout(o.layout_text);
  if (!layout)
    throw InputError("--layout " + quote_for_message(o.layout_text) +
                     ": expected DxXxYxZ with positive integers (optionally /pp=P[,vpp=V],mb=M), Megatron-LM's "
                     "tp=T,pp=P,dp=D,mb=M with optional vpp=V, zero=1|2|3, sp and order=tp-pp-dp, or FSDP's "
                     "dp_shard=S[,dp_replicate=R][,tp=T]");
  o.run.layout = *layout;
  validate_run(o.run, ranks);
  // Evaluation runs the model's own passes (every block and every vocabulary row on every rank;
  // the distributed optimizer's last update is gathered first).
  const Layout& l = o.run.layout;
  if ((l.pipelined() || l.vocabulary_parallel()) && !o.eval_file.empty())
    throw InputError(fmt::format("--eval-memorization with layout {}: the engine evaluates layouts without stages, "
                                 "micro-batches or a vocabulary-parallel head only",
                                 to_string(l)));
  check_memory(o.run, "the run");
  check_memorization(o);
  const TextOrder order = o.data_order == "chunks" ? TextOrder::chunks : TextOrder::random_offsets;
  if (o.data_file.empty()) {
    if (order == TextOrder::chunks) throw InputError("--data-order chunks needs --data FILE");
    in.source = std::make_unique<SyntheticTokens>(o.run.seed, o.run.model.vocabulary);
  } else {
    auto text = std::make_unique<TextFileTokens>(o.data_file, o.run.seed, o.run.model.sequence_length, order,
                                                 o.run.batch_sequences);
    check_documents(o, *text, "--data");
    in.source = std::move(text);
  }
  if (!o.validation_file.empty()) {
    auto text = std::make_unique<TextFileTokens>(o.validation_file, o.run.seed, o.run.model.sequence_length,
                                                 order, o.eval.sequences, "--validation-data");
    check_documents(o, *text, "--validation-data");
    in.validation = std::move(text);
  }
  if (in.source->vocabulary() > o.run.model.vocabulary)
    throw InputError(fmt::format("--vocab {} is below the data's {} token values", o.run.model.vocabulary,
                                 in.source->vocabulary()));
  return in;
}

std::optional<std::string> output_files_problem(const EngineOptions& o) {
  for (const auto& [flag, path, header] :
       {std::tuple{"--csv", &o.csv_file, csv_header() + "\n"},
        std::tuple{"--trace", &o.trace_file, std::string()},
        std::tuple{"--eval-memorization", &o.eval_file, memorization_csv_header()}}) {
    if (path->empty()) continue;
    auto problem = output_problem(*path);
    if (!problem && !header.empty()) problem = csv_header_problem(*path, header);
    if (problem) return fmt::format("{} {}: {}", flag, quote_for_message(*path), *problem);
  }
  return std::nullopt;
}

}  // namespace ws
