// weakscale-engine: trains the GPT-style decoder under mpirun and prints one JSON line per step.
// Thin: parses options, validates the run on every rank, builds the grid and trainer, loops.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/comm/mpi_check.hpp"
#include "engine/comm/process_grid.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/step_summary.hpp"
#include "engine/train/trace_writer.hpp"
#include "engine/train/trainer.hpp"
#include "sim/core/input_error.hpp"
#include "sim/machine/machine_loader.hpp"

namespace {

struct Options {
  ws::RunConfig run;
  std::string layout_text;
  std::string data_file;
  int steps = 10;
  int warmup = -1;  // -1: min(2, steps - 1)
  std::string machine_file, csv_file, trace_file, checkpoint_dir, resume_dir;
  int checkpoint_every = 0;
};

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
  app.add_option("--steps", o.steps, "training steps (after a resume: more steps)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup,
                 "first steps left out of the summary (default min(2, steps - 1): 10 steps, the last 8 averaged)");
  app.add_option("--machine", o.machine_file, "machine file (machines/*.yaml) whose fp32 device peak gives percent of peak");
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
  app.add_option("--lr", o.run.optimizer.learning_rate, "AdamW learning rate")->capture_default_str();
  app.add_flag("--no-tune", no_tune, "skip GEMM layout tuning (always the plain row-major call)");
  app.add_flag("--no-overlap-dp", no_overlap, "all-reduce gradients after backward instead of block by block");
  app.add_flag("--no-oar", no_oar, "blocking backward dX all-reduce (no overlap with the dW product)");
  app.add_flag("--no-ors", no_ors, "blocking dW reduce-scatter over Z");
  app.add_flag("--no-oag", no_oag, "blocking weight all-gather over Z (no prefetch one block ahead)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) return app.exit(e);
    return e.get_exit_code();
  }
  o.run.tune_gemm = !no_tune;
  o.run.overlap_data_parallel = !no_overlap;
  o.run.overlap = ws::OverlapOptions{!no_oar, !no_ors, !no_oag};
  o.run.recompute = recompute;
  return std::nullopt;
}

int run(int argc, char** argv) {
  int rank = 0, ranks = 1;
  WS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  WS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  Options o;
  if (auto code = parse(argc, argv, rank, o)) return *code;

  std::unique_ptr<ws::TokenSource> source;
  std::optional<ws::Machine> machine;
  try {
    if (o.warmup < 0) o.warmup = std::min(2, o.steps - 1);
    if (o.warmup >= o.steps)
      throw ws::ConfigError("--warmup " + std::to_string(o.warmup) + " must be below --steps " + std::to_string(o.steps) +
                            " (at least one measured step)");
    if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
      throw ws::ConfigError("--checkpoint-every " + std::to_string(o.checkpoint_every) + " needs --checkpoint-dir DIR");
    if (!o.machine_file.empty()) machine = ws::load_machine(o.machine_file);
    if (o.layout_text.empty()) o.layout_text = std::to_string(ranks) + "x1x1x1";
    const auto layout = ws::parse_layout(o.layout_text);
    if (!layout) throw ws::ConfigError("--layout " + o.layout_text + ": expected DxXxYxZ with positive integers");
    o.run.layout = *layout;
    ws::validate_run(o.run, ranks);
    if (o.data_file.empty())
      source = std::make_unique<ws::SyntheticTokens>(o.run.seed, o.run.model.vocabulary);
    else
      source = std::make_unique<ws::TextFileTokens>(o.data_file, o.run.seed, o.run.model.sequence_length);
    if (source->vocabulary() > o.run.model.vocabulary)
      throw ws::ConfigError("--vocab " + std::to_string(o.run.model.vocabulary) + " is below the data's " +
                            std::to_string(source->vocabulary()) + " token values");
  } catch (const ws::ConfigError& e) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
    return 1;
  } catch (const ws::InputError& e) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: --machine: %s\n", e.what());
    return 1;
  }
  // Output files are opened before training so that a bad path fails at once, on every rank.
  int outputs_ok = 1;
  std::string output_problem;
  if (rank == 0)
    for (const std::string* path : {&o.csv_file, &o.trace_file}) {
      if (path->empty()) continue;
      std::ofstream probe(*path, std::ios::app);
      if (!probe) {
        outputs_ok = 0;
        output_problem = (path == &o.csv_file ? "--csv " : "--trace ") + *path + ": cannot open for writing";
      }
    }
  WS_MPI_CHECK(MPI_Bcast(&outputs_ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (!outputs_ok) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", output_problem.c_str());
    return 1;
  }

  const ws::ProcessGrid grid(MPI_COMM_WORLD, o.run.layout);
  ws::Trainer<float> trainer(o.run, grid, *source);
  const std::string data_name = o.data_file.empty() ? "synthetic" : o.data_file;
  try {
    if (!o.resume_dir.empty()) ws::load_checkpoint(trainer, data_name, o.resume_dir);
  } catch (const ws::CheckpointError& e) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
    return 1;
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
                               {"recompute", o.run.recompute},
                               {"first_step", trainer.steps_done() + 1},
                               {"resumed_from", o.resume_dir}};
    std::printf("%s\n", start.dump().c_str());
  }
  // One time origin for every rank's timeline.
  grid.world().barrier();
  grid.timeline().reset_origin();
  grid.timeline().set_tracing(!o.trace_file.empty());
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
        return 1;
      }
    }
    if (rank == 0) {
      const double tokens = static_cast<double>(o.run.batch_sequences) * o.run.model.sequence_length;
      const nlohmann::json line{{"event", "step"},        {"step", r.step},
                                {"loss", r.loss},         {"grad_norm", r.grad_norm},
                                {"time_s", r.seconds},    {"tokens_per_s", tokens / r.seconds},
                                {"exposed_data_comm_s", r.exposed_communication_seconds},
                                {"step_max_rank_s", records.back().seconds},
                                {"exposed_comm_s", ws::exposed_seconds(records.back().communication)}};
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
    }
  }
  if (!o.trace_file.empty()) ws::write_trace(grid.timeline(), grid.world(), o.trace_file);
  const std::optional<double> peak =
      machine ? std::optional<double>(ws::peak(machine->device, ws::Precision::fp32).flops()) : std::nullopt;
  const std::string machine_name = machine ? machine->name : "";
  const ws::RunSummary summary = ws::summarize(records, o.warmup, o.run.model, o.run.batch_sequences,
                                               o.run.recompute, ranks, peak);
  if (rank == 0) {
    std::printf("%s\n", ws::summary_json(summary, machine_name).c_str());
    if (!o.csv_file.empty()) {
      const bool fresh = !std::ifstream(o.csv_file).good() || std::ifstream(o.csv_file).peek() == EOF;
      std::ofstream csv(o.csv_file, std::ios::app);
      if (fresh) csv << ws::csv_header() << '\n';
      csv << ws::csv_row(summary, o.run, machine_name) << '\n';
    }
  }
  if (rank == 0) {
    // What layout tuning gained on this rank: the plain call's time vs the winner's, per shape.
    double baseline = 0, best = 0;
    for (const auto& [shape, choice] : trainer.tuner().choices()) baseline += choice.baseline_seconds, best += choice.best_seconds;
    const nlohmann::json tuning{{"event", "gemm_tuning"},
                                {"shapes", trainer.tuner().choices().size()},
                                {"row_major_s", baseline},
                                {"tuned_s", best}};
    std::printf("%s\n", tuning.dump().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    code = run(argc, argv);
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
