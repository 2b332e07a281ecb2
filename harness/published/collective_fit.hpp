// Fitting a collective library's terms to published bandwidths, honestly: the terms (launch and
// per-step latency, bandwidth efficiency, the LL and LL128 protocols' terms, the eager-overflow window's
// per-step time, and the per-step overhead of the machine file's large_job_overhead table) are
// fitted on some rows and scored on the others. Two held-out schemes: 5-fold (each row predicted by
// a fit to the other four fifths of its machine and library, the fifths drawn by a seeded shuffle of
// its jobs: rows of one job, which the model prices alike, are held out together)
// and scale (fit on rows of at most 16 nodes, score the larger ones: can small-scale measurements
// predict large jobs?). A term no training row's price depends on (a protocol no row runs, an
// eager window no row's messages fall in) keeps its written value; an overhead point no row reaches
// takes the last reached one's. Written values are often fits to every row, the held-out ones
// included, so each held-out row names the written terms its price moves with, and each scheme is
// scored twice: over all its rows, and over the rows priced by fitted terms alone ("own").
// The network side (phases, routes, rates) is the simulator's and is not fitted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/machine/machine.hpp"
#include "sim/pricing/job_network.hpp"
#include "harness/published/published_table.hpp"

namespace ws {

// What a fit may change in a library.
struct LibraryTerms {
  Time launch_latency;
  Time step_latency;
  double bandwidth_efficiency = 1.0;
  std::vector<Time> overhead_per_step;  // one per large_job_overhead point (empty: none)
  std::vector<ProtocolTerms> protocols;      // the library's LL and LL128, where it has them
  std::optional<Time> eager_per_step;        // eager_overflow's per-step time, where the library has one
};
LibraryTerms terms_of(const CollectiveLibrary& library);
CollectiveLibrary with_terms(CollectiveLibrary library, const LibraryTerms& terms);

// One published collective row, priced by the simulator's phases once; its busbw for any terms.
class PublishedRowModel {
 public:
  // `library` must be one of the machine's collectives (the row's).
  PublishedRowModel(const Machine& machine, const PublishedCollective& row);
  double busbw_gbps(const CollectiveLibrary& library) const;
  Time time(const CollectiveLibrary& library) const;
  std::string algorithm(const CollectiveLibrary& library) const;
  // The links' bound: the busbw of the algorithm `library` runs for the row (ceiling_busbw_gbps) or
  // of the fastest algorithm the model has for it (best_ceiling_busbw_gbps: ring or tree for an
  // NCCL-like all-reduce, else the one it runs) with no launch, step or set-up latency, no protocol,
  // eager or large-job term, no NIC small-message cost and a bandwidth efficiency of 1. No value of
  // the library's terms prices the row above it: a published busbw above the best ceiling is a
  // limit of the model's algorithms, not of its parameters.
  double ceiling_busbw_gbps(const CollectiveLibrary& library) const;
  double best_ceiling_busbw_gbps() const;
  const PublishedCollective& row() const { return row_; }
  int nodes() const { return row_.nodes; }

 private:
  const PricedProgram& program(const CollectiveLibrary& library) const;
  double busbw_of(Time time) const;
  double links_only_busbw(const PricedProgram& program) const;

  PublishedCollective row_;
  CollectiveOp op_ = CollectiveOp::all_reduce;
  Bytes nic_overhead_bytes_ = 0;
  int members_ = 1, nodes_spanned_ = 1;
  PricedProgram ring_, tree_, selected_;  // tree_ only for NCCL-like all-reduce; selected_ otherwise
  bool nccl_all_reduce_ = false;
  CollectiveLibrary links_only_;  // the row's library with every term that slows it at its best
};

struct FitScore {
  double median_abs_error = 0, worst_abs_error = 0;
  int rows = 0;
};

// The fit of one (machine, library) group of rows.
struct LibraryFit {
  std::string machine, library;
  LibraryTerms as_written, fitted;  // fitted on every row of the group
  FitScore file, in_sample, kfold, scale;  // scale: rows > 16 nodes predicted from rows <= 16 nodes
  FitScore kfold_own, scale_own;           // the same, over rows no written term prices
};

// Per row of the comparison (point-to-point rows are not fitted: fitted = kfold = file).
struct RowFit {
  double fitted_busbw_gbps = 0;
  double kfold_busbw_gbps = 0;
  std::optional<double> scale_busbw_gbps;  // set for rows above 16 nodes whose group has rows at or below
  // The terms the held-out fit kept as written (no training row identified them) that this row's
  // held-out price moves with, space-separated ("LL.bandwidth_efficiency"); empty: none.
  std::string kfold_written_terms, scale_written_terms;
};

struct PublishedFit {
  std::vector<LibraryFit> libraries;
  std::vector<RowFit> rows;  // in the table's order
};

inline constexpr int kFitFolds = 5;
inline constexpr std::uint64_t kCrossValidationSeed = 1;  // fixed: the comparison is deterministic
inline constexpr int kScaleSplitNodes = 16;

// The fold of each of `rows` rows (0 .. folds - 1): a seeded shuffle dealt round-robin, so folds
// differ in size by at most one and the same count gives the same folds. Folds by position would
// follow the table's order: the published rows are listed by op, nodes and message size, five sizes
// per node count, so position modulo five would hold out one message size at a time.
std::vector<int> fold_assignment(std::size_t rows, int folds);

// The same over groups of rows (`group[row]`, any ints): a group's rows share a fold. The groups, in
// a seeded shuffle, each go to the fold with the fewest rows so far (the lowest on a tie), so folds
// differ by at most the largest group; one row per group deals exactly as above. The comparison
// groups the rows the model prices alike (one job's all-gather and reduce-scatter rings): with one
// in the training folds, the other's prediction is fitted to its twin, not held out.
std::vector<int> fold_assignment(const std::vector<int>& group, int folds);

// The terms of `base` that make the simulator's prices of `rows` closest to their measured busbw
// (least squares of log(predicted / measured), NLopt's subplex, from base's terms): the fit the
// comparison makes of each library, and the one `weakscale calibrate` makes of this host's MPI.
// Terms no row's price depends on keep base's values.
LibraryTerms fit_library_terms(const CollectiveLibrary& base, const std::vector<const PublishedRowModel*>& rows);

// Fits every (machine, library) group of `rows` (machines loaded from machines_dir).
PublishedFit fit_published(const std::vector<PublishedCollective>& rows, const std::string& machines_dir);

}  // namespace ws
