// A machine file with one collective library's terms replaced by a fit (`weakscale
// collectives-vs-published --write-machine`): a user with a new machine gets a calibrated file from
// one nccl-tests campaign. The source file's text is rewritten line by line, not round-tripped
// through a YAML library, so every other line and every comment (the parameters' public sources)
// stays as written; each replaced value's comment says it was fitted, to which files and how well.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/published/collective_fit.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// Where a fit came from, for the written file's comments.
struct FitProvenance {
  std::string command;              // the command line that fitted it, as a user would retype it
  std::vector<std::string> inputs;  // the measurement files' names
  std::string date;                 // ISO 8601 (2026-12-03); passed in so that the text is reproducible
};

// The fitted terms as the file writes them: times to the nanosecond ("100.617 us"), efficiencies to
// four significant digits. What a reload of the written file gives back.
LibraryTerms written_terms(const LibraryTerms& terms);

// `source_text` (the machine file `source_file`, which parses to `source`) with `fit.library`'s
// launch_latency, step_latency and bandwidth_efficiency replaced by fit.fitted's, and its LL / LL128
// terms, eager_overflow.per_step and large_job_overhead points' per_step where the fit moved them;
// a header comment on top. Where the library is the machine's default and a fitted value falls
// outside its `uncertainty:` range (collective_step_latency, collective_bandwidth_efficiency), the
// range's end moves to it: the loader requires every range to hold the file's own value. Throws
// InputError (naming source_file and the key) when a term's line is not where the rewrite can find
// it (a flow-style entry, say).
std::string fitted_machine_text(const std::string& source_text, const std::string& source_file,
                                const Machine& source, const LibraryFit& fit, const FitProvenance& provenance);

// Parses `text` with the machine loader and checks that fit.library's terms are written_terms(fit.fitted)
// and every other library's are source's; throws InputError naming `file` and the first term that is
// not, so that a wrong file is never written.
void check_fitted_machine_text(const std::string& text, const std::string& file, const Machine& source,
                               const LibraryFit& fit);

// Reads the machine file at `source_file`, rewrites and checks it as above, writes it to `out`
// atomically (write_file_atomically: OutputError when it cannot).
void write_fitted_machine_file(const std::filesystem::path& source_file, const std::filesystem::path& out,
                               const LibraryFit& fit, const FitProvenance& provenance);

}  // namespace ws
