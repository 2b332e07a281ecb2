// weakscale-engine: trains the GPT-style decoder under mpirun and prints one JSON line per step.
// Thin: options and their validation are engine/train/engine_options; this builds the grid and
// trainer, loops, and reports.
#include <mpi.h>

#include <fmt/format.h>
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
#include "engine/train/engine_options.hpp"
#include "engine/train/memorization.hpp"
#include "engine/train/step_summary.hpp"
#include "engine/train/trace_writer.hpp"
#include "engine/train/trainer.hpp"
#include "base/output_file.hpp"

namespace {

// Exit codes, the same scheme as weakscale's (README "Reliability"): 0 success, 1 a failure during
// training (the MPI job is aborted), 2 bad input (flags, a refused checkpoint),
// 4 an output (CSV, trace, checkpoint, standard output) could not be written.
constexpr int kExitBadInput = 2;
constexpr int kExitOutputError = 4;

using Options = ws::EngineOptions;

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
  std::ostringstream csv;
  csv << ws::to_string(o.run.layout) << ',' << o.run.goldfish.k << ',' << o.run.goldfish.context << ',' << row.step
      << ',' << row.sequences_trained << ',' << r.sequences << ',' << o.eval.prefix << ',' << o.eval.length << ','
      << r.exact_matches << ',' << r.exact_match_rate() << ',' << r.token_accuracy() << ',' << r.loss << ','
      << (row.validation_loss ? std::to_string(*row.validation_loss) : std::string()) << ',' << row.seconds << '\n';
  ws::append_file_atomically(o.eval_file, ws::memorization_csv_header(), csv.str());
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
  // Every rank parses and checks the same argv, so every rank reaches the same verdict before
  // any collective; only rank 0 prints.
  Options o;
  ws::RunInputs in;
  try {
    ws::EngineCommandLine line = ws::parse_engine_command_line(argc, argv);
    if (!line.help.empty()) {
      if (rank == 0) std::printf("%s", line.help.c_str());
      return 0;
    }
    o = std::move(line.options);
    in = ws::validate_engine_options(o, ranks);
  } catch (const ws::InputError& e) {
    if (rank == 0) std::fprintf(stderr, "weakscale-engine: error: %s\n", e.what());
    return kExitBadInput;
  }
  // Output files are checked before training so that a bad path fails at once, on every rank.
  const std::optional<std::string> problem = rank == 0 ? ws::output_files_problem(o) : std::nullopt;
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
    trainer.gather_parameters();  // the distributed optimizer's last update, still on its shards
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
  const ws::RunSummary summary = ws::summarize(records, *o.warmup, o.run.model, o.run.batch_sequences,
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
