// weakscale-engine: trains the GPT-style decoder under mpirun and prints one JSON line per step.
// Thin: parses options, validates the run on every rank, builds the grid and trainer, loops.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/comm/mpi_check.hpp"
#include "engine/comm/process_grid.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/memorization.hpp"
#include "engine/train/step_summary.hpp"
#include "engine/train/trace_writer.hpp"
#include "engine/train/trainer.hpp"
#include "base/quantity.hpp"
#include "base/output_file.hpp"

namespace {

// Exit codes, the same scheme as weakscale's (README "Reliability"): 0 success, 1 a failure during
// training (the MPI job is aborted), 2 bad input (flags, a refused checkpoint),
// 4 an output (CSV, trace, checkpoint, standard output) could not be written.
constexpr int kExitBadInput = 2;
constexpr int kExitOutputError = 4;

struct Options {
  ws::RunConfig run;
  std::string layout_text;
  std::string data_file;
  int steps = 10;
  int warmup = -1;  // -1: min(2, steps - 1)
  std::string peak_text, csv_file, trace_file, checkpoint_dir, resume_dir;
  int checkpoint_every = 0;
  std::string data_order = "random";
  // Memorization evaluation (engine/train/memorization.hpp); off without --eval-memorization.
  std::string eval_file, validation_file;
  ws::MemorizationOptions eval{0, -1, -1};  // sequences 0: --batch; prefix / length -1: seq/2 and the rest
  int eval_every = 0;
};

// One memorization evaluation: a JSON line on stdout and a CSV row in --eval-memorization.
struct MemorizationRow {
  long long step = 0;
  long long sequences_trained = 0;
  ws::MemorizationResult result;
  std::optional<double> validation_loss;
  double seconds = 0;
};

void report_memorization(const Options& o, const MemorizationRow& row) {
  const auto& r = row.result;
  const nlohmann::json line{{"event", "memorization"},
                            {"step", row.step},
                            {"sequences_trained", row.sequences_trained},
                            {"goldfish_k", o.run.goldfish.k},
                            {"goldfish_context", o.run.goldfish.context},
                            {"sequences", r.sequences},
                            {"prefix", o.eval.prefix},
                            {"length", o.eval.length},
                            {"exact_match_rate", r.exact_match_rate()},
                            {"token_accuracy", r.token_accuracy()},
                            {"train_loss", r.loss},
                            {"validation_loss", row.validation_loss ? nlohmann::json(*row.validation_loss) : nlohmann::json()},
                            {"seconds", row.seconds}};
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
  const std::string header =
      "layout,goldfish_k,goldfish_context,step,sequences_trained,sequences,prefix,length,exact_matches,"
      "exact_match_rate,token_accuracy,train_loss,validation_loss,seconds\n";
  std::ostringstream csv;
  csv << ws::to_string(o.run.layout) << ',' << o.run.goldfish.k << ',' << o.run.goldfish.context << ',' << row.step
      << ',' << row.sequences_trained << ',' << r.sequences << ',' << o.eval.prefix << ',' << o.eval.length << ','
      << r.exact_matches << ',' << r.exact_match_rate() << ',' << r.token_accuracy() << ',' << r.loss << ','
      << (row.validation_loss ? std::to_string(*row.validation_loss) : std::string()) << ',' << row.seconds << '\n';
  ws::append_file_atomically(o.eval_file, header, csv.str());
}

// Why `path` cannot be an output of this run, or nothing: its directory must exist and be
// writable (files are written to PATH.tmp there, then renamed), or it is a device such as
// /dev/stdout. Checked before training, so that a typo does not cost the run.
std::optional<std::string> output_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (ws::is_special_file(path)) return std::nullopt;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "is a directory, expected a file";
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return "cannot open for writing: " + dir.string() + " is not a directory";
  if (::access(dir.c_str(), W_OK) != 0) return "cannot open for writing: " + dir.string() + " is not writable";
  return std::nullopt;
}

// Every rank parses the same argv, so every rank reaches the same verdict; only rank 0 prints.
std::optional<int> parse(int argc, char** argv, int rank, Options& o) {
  CLI::App app{"weakscale-engine: 4D-parallel (Gdata x Gx x Gy x Gz) GPT training with MPI + OpenBLAS"};
  auto& m = o.run.model;
  m.name = "cli";
  m.layers = 2, m.hidden = 64, m.heads = 4, m.sequence_length = 32, m.vocabulary = 256;
  o.run.batch_sequences = 8;
  o.run.seed = 1;
  bool no_tune = false, no_overlap = false, no_oar = false, no_ors = false, no_oag = false;
  app.add_option("--layers", m.layers, "transformer blocks")->capture_default_str();
  app.add_option("--hidden", m.hidden, "hidden size")->capture_default_str();
  app.add_option("--heads", m.heads, "attention heads")->capture_default_str();
  app.add_option("--seq", m.sequence_length, "sequence length (tokens)")->capture_default_str();
  app.add_option("--vocab", m.vocabulary, "vocabulary size (>= 256 with --data)")->capture_default_str();
  app.add_option("--batch", o.run.batch_sequences, "global sequences per step")->capture_default_str();
  app.add_option("--steps", o.steps, "training steps (after a resume: more steps; 0 with --eval-memorization: "
                                     "evaluate only)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", o.warmup,
                 "first steps left out of the summary (default min(2, steps - 1): 10 steps, the last 8 averaged)");
  app.add_option("--peak", o.peak_text,
                 "fp32 peak of one rank's device, e.g. \"47.5 GFLOP/s\" (the machine file's device peak.fp32): "
                 "gives percent of peak");
  app.add_option("--csv", o.csv_file, "append the summary as one CSV row (header if the file is new)");
  app.add_option("--trace", o.trace_file, "write a Chrome trace / Perfetto JSON of every rank's kernels and collectives");
  app.add_option("--checkpoint-dir", o.checkpoint_dir, "write sharded checkpoints here (at the end of the run, or see --checkpoint-every)");
  app.add_option("--checkpoint-every", o.checkpoint_every, "also checkpoint every N steps (needs --checkpoint-dir)")
      ->check(CLI::PositiveNumber);
  app.add_option("--resume", o.resume_dir, "continue from the checkpoint in this directory (same model, layout, batch, seed, data)");
  bool recompute = false;
  app.add_flag("--recompute", recompute, "recompute each block's activations in backward instead of storing them");
  app.add_option("--layout", o.layout_text, "Gdata x Gx x Gy x Gz, e.g. 4x1x1x1 (default: ranks x1x1x1)");
  app.add_option("--seed", o.run.seed, "seed of initialisation and synthetic data")->capture_default_str();
  app.add_option("--data", o.data_file, "train on the bytes of this text file instead of synthetic tokens");
  app.add_option("--data-order", o.data_order,
                 "random: each sequence at a seeded random offset of --data; chunks: the file cut into "
                 "documents of --seq + 1 bytes, read in order (batch = documents: one epoch per step)")
      ->check(CLI::IsMember({"random", "chunks"}))
      ->capture_default_str();
  app.add_option("--lr", o.run.optimizer.learning_rate, "AdamW learning rate")->capture_default_str();
  app.add_option("--goldfish-k", o.run.goldfish.k,
                 "Goldfish loss: leave 1 in K targets out of the loss, chosen by a hash of the tokens before "
                 "it (0 = off)")
      ->capture_default_str();
  app.add_option("--goldfish-context", o.run.goldfish.context, "Goldfish loss: tokens hashed to choose (h)")
      ->capture_default_str();
  app.add_option("--eval-memorization", o.eval_file,
                 "append memorization rows (exact-match rate, token accuracy, losses) to this CSV; also printed "
                 "as JSON lines");
  app.add_option("--eval-sequences", o.eval.sequences,
                 "memorization: training sequences evaluated, the first of step 0 (default --batch)");
  app.add_option("--eval-prefix", o.eval.prefix, "memorization: prompt tokens P (default --seq / 2)");
  app.add_option("--eval-length", o.eval.length, "memorization: tokens generated greedily L (default --seq - P)");
  app.add_option("--eval-every", o.eval_every,
                 "memorization: also evaluate before training and every N steps (default: at the end only)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--validation-data", o.validation_file,
                 "memorization: held-out text (read like --data) whose mean loss over --eval-sequences "
                 "sequences is reported");
  app.add_flag("--no-tune", no_tune, "skip GEMM layout tuning (always the plain row-major call)");
  app.add_flag("--no-overlap-dp", no_overlap, "all-reduce gradients after backward instead of block by block");
  app.add_flag("--no-oar", no_oar, "blocking backward dX all-reduce (no overlap with the dW product)");
  app.add_flag("--no-ors", no_ors, "blocking dW reduce-scatter over Z");
  app.add_flag("--no-oag", no_oag, "blocking weight all-gather over Z (no prefetch one block ahead)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is not an error; every parse error is bad input.
    const int code = rank == 0 ? app.exit(e) : e.get_exit_code();
    return code == 0 ? 0 : kExitBadInput;
  }
  o.run.tune_gemm = !no_tune;
  o.run.schedule.overlap_data_parallel = !no_overlap;
  o.run.schedule.overlap_all_reduce = !no_oar;
  o.run.schedule.overlap_reduce_scatter = !no_ors;
  o.run.schedule.overlap_all_gather = !no_oag;
  o.run.schedule.recompute = recompute;
  o.eval.prefix = o.eval.prefix < 0 ? m.sequence_length / 2 : o.eval.prefix;
  o.eval.length = o.eval.length < 0 ? m.sequence_length - o.eval.prefix : o.eval.length;
  if (o.eval.sequences == 0) o.eval.sequences = static_cast<int>(std::min<long long>(o.run.batch_sequences, 1 << 30));
  return std::nullopt;
}

// The memorization options against the model and layout; throws InputError naming the flag.
void check_memorization(const Options& o) {
  const bool evaluating = !o.eval_file.empty();
  if (!evaluating) {
    if (o.steps == 0) throw ws::InputError("--steps 0 trains nothing: give --eval-memorization FILE or --steps >= 1");
    if (o.eval_every > 0) throw ws::InputError("--eval-every needs --eval-memorization FILE");
    if (!o.validation_file.empty()) throw ws::InputError("--validation-data needs --eval-memorization FILE");
    return;
  }
  const int seq = o.run.model.sequence_length;
  const long long shards = static_cast<long long>(o.run.layout.data) * o.run.layout.z;
  if (o.eval.sequences <= 0 || o.eval.sequences % shards != 0)
    throw ws::InputError("--eval-sequences " + std::to_string(o.eval.sequences) +
                          " must be positive and divisible by Gdata*Gz = " + std::to_string(shards));
  if (o.eval.prefix < 1 || o.eval.length < 1 || o.eval.prefix + o.eval.length > seq)
    throw ws::InputError("--eval-prefix " + std::to_string(o.eval.prefix) + " and --eval-length " +
                          std::to_string(o.eval.length) + " must be at least 1 each and add up to at most --seq " +
                          std::to_string(seq));
}

// What a run reads besides its flags: the token sources and the peak.
struct RunInputs {
  std::unique_ptr<ws::TokenSource> source, validation;
  std::optional<double> peak;  // fp32 flop/s of one rank's device, from --peak
};

// Every flag checked against the others, the layout, the host's memory and the data, on every
// rank before MPI does anything collective; throws InputError naming the flag.
RunInputs prepare_inputs(Options& o, int ranks) {
  RunInputs in;
  if (o.warmup < 0) o.warmup = std::max(0, std::min(2, o.steps - 1));
  if (o.steps > 0 && o.warmup >= o.steps)
    throw ws::InputError("--warmup " + std::to_string(o.warmup) + " must be below --steps " + std::to_string(o.steps) +
                          " (at least one measured step)");
  if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
    throw ws::InputError("--checkpoint-every " + std::to_string(o.checkpoint_every) + " needs --checkpoint-dir DIR");
  if (!o.peak_text.empty()) {
    const auto rate = ws::parse_flop_rate(o.peak_text);
    if (!rate || !ws::within(ws::kFlopRateRange, rate->flops()))
      throw ws::InputError(fmt::format("--peak {}: expected a compute rate {} with a unit ({})", o.peak_text,
                                        ws::kFlopRateRange.text, ws::kFlopRateUnits));
    in.peak = rate->flops();
  }
  if (o.layout_text.empty()) o.layout_text = std::to_string(ranks) + "x1x1x1";
  const auto layout = ws::parse_layout(o.layout_text);
  if (!layout) throw ws::InputError("--layout " + o.layout_text + ": expected DxXxYxZ with positive integers");
  o.run.layout = *layout;
  ws::validate_run(o.run, ranks);
  // Buffers that cannot fit are refused here, with their size, not by std::bad_alloc mid-run.
  const auto need = static_cast<double>(ws::engine_memory_bytes(o.run));
  const double have = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (have > 0 && need > have)
    throw ws::InputError(fmt::format(
        "the run needs {:.1f} GiB per rank (weights, gradients, AdamW state, activations, logits) but this host "
        "has {:.1f} GiB: lower --hidden, --layers, --seq, --vocab or --batch, or shard over more ranks",
        need / 1073741824.0, have / 1073741824.0));
  check_memorization(o);
  const ws::TextOrder order = o.data_order == "chunks" ? ws::TextOrder::chunks : ws::TextOrder::random_offsets;
  if (o.data_file.empty()) {
    if (order == ws::TextOrder::chunks) throw ws::InputError("--data-order chunks needs --data FILE");
    in.source = std::make_unique<ws::SyntheticTokens>(o.run.seed, o.run.model.vocabulary);
  } else {
    in.source = std::make_unique<ws::TextFileTokens>(o.data_file, o.run.seed, o.run.model.sequence_length, order,
                                                  o.run.batch_sequences);
  }
  if (!o.validation_file.empty())
    in.validation = std::make_unique<ws::TextFileTokens>(o.validation_file, o.run.seed, o.run.model.sequence_length,
                                                      order, o.eval.sequences, "--validation-data");
  if (in.source->vocabulary() > o.run.model.vocabulary)
    throw ws::InputError("--vocab " + std::to_string(o.run.model.vocabulary) + " is below the data's " +
                          std::to_string(in.source->vocabulary()) + " token values");
  return in;
}

// Why the outputs cannot be written, or nothing: checked on rank 0 before training, so that a
// typo does not cost the run.
std::optional<std::string> outputs_problem(const Options& o) {
  for (const auto& [flag, path] : {std::pair{"--csv ", &o.csv_file}, std::pair{"--trace ", &o.trace_file},
                                   std::pair{"--eval-memorization ", &o.eval_file}}) {
    if (path->empty()) continue;
    if (const auto problem = output_problem(*path)) return flag + *path + ": " + *problem;
  }
  return std::nullopt;
}

// One JSON line per step on rank 0: loss, time, throughput, exposed communication.
void print_step(const Options& o, const ws::StepResult& r, const ws::StepRecord& record) {
  const double tokens = static_cast<double>(o.run.batch_sequences) * o.run.model.sequence_length;
  const nlohmann::json line{{"event", "step"},        {"step", r.step},
                            {"loss", r.loss},         {"grad_norm", r.grad_norm},
                            {"time_s", r.seconds},    {"tokens_per_s", tokens / r.seconds},
                            {"exposed_data_comm_s", r.exposed_communication_seconds},
                            {"step_max_rank_s", record.seconds},
                            {"exposed_comm_s", ws::exposed_seconds(record.communication)}};
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

// Rank 0, after the last step: the summary line, the trace and CSV files, what GEMM tuning gained;
// returns the exit code (kExitOutputError when a file or standard output cannot be written).
int report_run(const Options& o, const ws::RunSummary& summary, const std::string& trace,
               const ws::GemmTuner<float>& tuner) {
  std::printf("%s\n", ws::summary_json(summary).c_str());
  try {
    if (!o.trace_file.empty()) ws::write_file_atomically(o.trace_file, trace);
    if (!o.csv_file.empty())
      ws::append_file_atomically(o.csv_file, ws::csv_header() + "\n", ws::csv_row(summary, o.run) + "\n");
  } catch (const ws::OutputError& e) {
    std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
    return kExitOutputError;
  }
  {
    // What layout tuning gained on this rank: the plain call's time vs the winner's, per shape.
    double baseline = 0, best = 0;
    for (const auto& [shape, choice] : tuner.choices()) baseline += choice.baseline_seconds, best += choice.best_seconds;
    const nlohmann::json tuning{{"event", "gemm_tuning"},
                                {"shapes", tuner.choices().size()},
                                {"row_major_s", baseline},
                                {"tuned_s", best}};
    std::printf("%s\n", tuning.dump().c_str());
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "weakscale-engine: error: cannot write to standard output\n");
    return kExitOutputError;
  }
  return 0;
}

int run(int argc, char** argv) {
  int rank = 0, ranks = 1;
  WS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  WS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  Options o;
  if (auto code = parse(argc, argv, rank, o)) return *code;

  RunInputs in;
  try {
    in = prepare_inputs(o, ranks);
  } catch (const ws::InputError& e) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
    return kExitBadInput;
  }
  // Output files are opened before training so that a bad path fails at once, on every rank.
  const std::optional<std::string> problem = rank == 0 ? outputs_problem(o) : std::nullopt;
  int outputs_ok = problem ? 0 : 1;
  WS_MPI_CHECK(MPI_Bcast(&outputs_ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (!outputs_ok) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", problem->c_str());
    return kExitOutputError;
  }

  const ws::ProcessGrid grid(MPI_COMM_WORLD, o.run.layout);
  ws::Trainer<float> trainer(o.run, grid, *in.source);
  // The data order is part of what a checkpoint is bound to: the same file read another way is
  // other data.
  const std::string data_name =
      o.data_file.empty() ? "synthetic" : o.data_file + (o.data_order == "chunks" ? " (chunks)" : "");
  try {
    if (!o.resume_dir.empty()) ws::load_checkpoint(trainer, data_name, o.resume_dir);
  } catch (const ws::CheckpointError& e) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
    return kExitBadInput;
  }
  if (rank == 0) {
    const nlohmann::json start{{"event", "start"},
                               {"layout", ws::to_string(o.run.layout)},
                               {"ranks", ranks},
                               {"parameters", trainer.model().parameters().size()},
                               {"layers", o.run.model.layers},
                               {"hidden", o.run.model.hidden},
                               {"heads", o.run.model.heads},
                               {"seq", o.run.model.sequence_length},
                               {"vocab", o.run.model.vocabulary},
                               {"batch", o.run.batch_sequences},
                               {"seed", o.run.seed},
                               {"data", data_name},
                               {"recompute", o.run.schedule.recompute},
                               {"goldfish_k", o.run.goldfish.k},
                               {"goldfish_context", o.run.goldfish.context},
                               {"first_step", trainer.steps_done() + 1},
                               {"resumed_from", o.resume_dir}};
    std::printf("%s\n", start.dump().c_str());
  }
  // One time origin for every rank's timeline.
  grid.world().barrier();
  grid.timeline().reset_origin();
  grid.timeline().set_tracing(!o.trace_file.empty());
  auto evaluate = [&] {
    const auto start = std::chrono::steady_clock::now();
    MemorizationRow row;
    row.step = trainer.steps_done();
    row.sequences_trained = trainer.steps_done() * o.run.batch_sequences;
    row.result = ws::evaluate_memorization(trainer.model(), grid, *in.source, o.eval);
    if (in.validation) row.validation_loss = ws::evaluate_loss(trainer.model(), grid, *in.validation, o.eval.sequences);
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rank == 0) report_memorization(o, row);
  };
  const bool evaluating = !o.eval_file.empty();
  if (evaluating && (o.eval_every > 0 || o.steps == 0)) evaluate();
  std::vector<ws::StepRecord> records;
  for (int s = 0; s < o.steps; ++s) {
    const ws::StepResult r = trainer.step();
    records.push_back(ws::reduce_step(r, grid.world()));
    const bool last = s + 1 == o.steps;
    if (!o.checkpoint_dir.empty() &&
        ((o.checkpoint_every > 0 && trainer.steps_done() % o.checkpoint_every == 0) || last)) {
      try {
        ws::save_checkpoint(trainer, data_name, o.checkpoint_dir);
      } catch (const ws::CheckpointError& e) {
        if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
        return kExitOutputError;
      }
    }
    if (rank == 0) print_step(o, r, records.back());
    if (evaluating && (last || (o.eval_every > 0 && trainer.steps_done() % o.eval_every == 0))) evaluate();
  }
  if (o.steps == 0) return 0;  // evaluation only: no steps to summarise
  std::string trace;
  if (!o.trace_file.empty()) trace = ws::gather_trace_json(grid.timeline(), grid.world());
  const ws::RunSummary summary = ws::summarize(records, o.warmup, o.run.model, o.run.batch_sequences,
                                               o.run.schedule.recompute, ranks, in.peak);
  if (rank != 0) return 0;  // what follows is rank 0's output, no collective left
  return report_run(o, summary, trace, trainer.tuner());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    code = run(argc, argv);
  } catch (const ws::OutputError& e) {
    // A memorization row that cannot be written mid-run: the other ranks are already in the next
    // step's collectives, so the job is aborted, with the output error's code.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "weakscale-engine: rank %d: error: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitOutputError);
  } catch (const std::exception& e) {
    // A failure during training may leave other ranks inside a collective: abort the job.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "weakscale-engine: rank %d: error: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
