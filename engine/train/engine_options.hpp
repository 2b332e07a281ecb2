// weakscale-engine's command line: the flags parsed, every value checked against its documented
// range, and the run checked against the rank count, the host's memory and the data, all before
// MPI does anything collective. No MPI here: every rank reaches the same verdict from the same
// argv, and the fuzz target fuzz_engine_args runs it without a job.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/train/memorization.hpp"
#include "engine/train/run_config.hpp"
#include "engine/train/token_source.hpp"

namespace ws {

// The documented limits of the engine's flags (engine/README.md, "Flags").
inline constexpr long long kMaxSteps = 1'000'000'000;  // --steps, --warmup, --checkpoint-every, --eval-every
inline constexpr long long kMaxBatch = 2'147'483'647;  // --batch, --eval-sequences (and tokens per rank)
inline constexpr double kMaxLearningRate = 10.0;       // --lr in (0, 10]

struct EngineOptions {
  RunConfig run;
  std::string layout_text;  // empty: ranks x1x1x1
  std::string data_file;
  int steps = 10;
  std::optional<int> warmup;  // absent: min(2, steps - 1)
  std::string peak_text, csv_file, trace_file, checkpoint_dir, resume_dir;
  int checkpoint_every = 0;
  std::string data_order = "random";
  // Memorization evaluation (engine/train/memorization.hpp); off without --eval-memorization.
  std::string eval_file, validation_file;
  std::optional<int> eval_sequences, eval_prefix, eval_length;  // absent: --batch, seq / 2, the rest
  MemorizationOptions eval;  // the above resolved by validate_engine_options
  int eval_every = 0;
};

// What the command line asks for: a run, or only the usage text (--help; exit 0).
struct EngineCommandLine {
  std::string help;
  EngineOptions options;
};

// Parses the flags and checks each value on its own (number syntax, range, finiteness, an empty
// value given explicitly); throws InputError with one line naming the flag, the value and what
// is allowed.
EngineCommandLine parse_engine_command_line(int argc, const char* const* argv);

// What a run reads besides its flags: the token sources and the peak.
struct RunInputs {
  std::unique_ptr<TokenSource> source, validation;
  std::optional<double> peak;  // fp32 flop/s of one rank's device, from --peak
};

// Every flag checked against the others, the layout, the host's memory and the data (a regular
// file of at most 1 GiB, read here); resolves the defaults in `options`; throws InputError.
RunInputs validate_engine_options(EngineOptions& options, int ranks);

// Why the output files (--csv, --trace, --eval-memorization) cannot be written, or nothing: the
// directory must exist and be writable, a CSV to append to must start with this engine's header.
// Checked on rank 0 before training, so that a typo does not cost the run (exit 4).
std::optional<std::string> output_files_problem(const EngineOptions& options);

// The first line of the --eval-memorization CSV.
std::string memorization_csv_header();

}  // namespace ws
