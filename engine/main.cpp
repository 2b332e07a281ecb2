// weakscale-engine: trains the GPT-style decoder under mpirun and prints one JSON line per step.
// Thin: parses options, validates the run on every rank, builds the grid and trainer, loops.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "engine/comm/mpi_check.hpp"
#include "engine/comm/process_grid.hpp"
#include "engine/train/trainer.hpp"

namespace {

struct Options {
  ws::RunConfig run;
  std::string layout_text;
  std::string data_file;
  int steps = 10;
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
  app.add_option("--steps", o.steps, "training steps")->capture_default_str()->check(CLI::PositiveNumber);
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
  return std::nullopt;
}

int run(int argc, char** argv) {
  int rank = 0, ranks = 1;
  WS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  WS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  Options o;
  if (auto code = parse(argc, argv, rank, o)) return *code;

  std::unique_ptr<ws::TokenSource> source;
  try {
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
  }

  const ws::ProcessGrid grid(MPI_COMM_WORLD, o.run.layout);
  ws::Trainer<float> trainer(o.run, grid, *source);
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
                               {"data", o.data_file.empty() ? "synthetic" : o.data_file}};
    std::printf("%s\n", start.dump().c_str());
  }
  for (int s = 0; s < o.steps; ++s) {
    const ws::StepResult r = trainer.step();
    if (rank == 0) {
      const double tokens = static_cast<double>(o.run.batch_sequences) * o.run.model.sequence_length;
      const nlohmann::json line{{"event", "step"},        {"step", r.step},
                                {"loss", r.loss},         {"grad_norm", r.grad_norm},
                                {"time_s", r.seconds},    {"tokens_per_s", tokens / r.seconds},
                                {"exposed_data_comm_s", r.exposed_communication_seconds}};
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
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
