// Row models, the least-squares fit of library terms on log bandwidth ratios (NLopt's subplex),
// and the held-out schemes.
#include "harness/published/collective_fit.hpp"

#include <fmt/format.h>
#include <nlopt.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <span>

#include "base/input_error.hpp"
#include "base/random.hpp"
#include "base/statistics.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/pricing/collective_pricing.hpp"

namespace ws {

LibraryTerms terms_of(const CollectiveLibrary& library) {
  LibraryTerms t{library.launch_latency, library.step_latency, library.bandwidth_efficiency, {}, library.protocols,
                 {}};
  for (const auto& p : library.large_job_overhead.points) t.overhead_per_step.push_back(p.per_step);
  if (library.eager_overflow) t.eager_per_step = library.eager_overflow->per_step;
  return t;
}

CollectiveLibrary with_terms(CollectiveLibrary library, const LibraryTerms& terms) {
  library.launch_latency = terms.launch_latency;
  library.step_latency = terms.step_latency;
  library.bandwidth_efficiency = terms.bandwidth_efficiency;
  for (std::size_t i = 0; i < library.large_job_overhead.points.size() && i < terms.overhead_per_step.size(); ++i)
    library.large_job_overhead.points[i].per_step = terms.overhead_per_step[i];
  if (terms.protocols.size() == library.protocols.size()) library.protocols = terms.protocols;
  if (library.eager_overflow && terms.eager_per_step) library.eager_overflow->per_step = *terms.eager_per_step;
  return library;
}

namespace {

CollectiveOp op_of(const PublishedCollective& row) {
  for (const auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    if (row.op == to_string(op)) return op;
  }
  throw InputError(InputLocation{row.file, row.line, "op"}, row.op, "all-reduce, reduce-scatter or all-gather");
}

const CollectiveLibrary& library_named(const Machine& machine, const PublishedCollective& row) {
  for (const auto& l : machine.collective_libraries) {
    if (l.name == row.library) return l;
  }
  std::string names;
  for (const auto& l : machine.collective_libraries) names += (names.empty() ? "" : ", ") + l.name;
  throw InputError(InputLocation{row.file, row.line, "library"}, row.library,
                   "one of " + machine.name + "'s libraries: " + names);
}

}  // namespace

PublishedRowModel::PublishedRowModel(const Machine& machine, const PublishedCollective& row)
    : row_(row), op_(op_of(row)), nic_overhead_bytes_(machine.node.nic_efficiency.half_bandwidth_bytes) {
  Machine m = machine;
  const CollectiveLibrary library = library_named(machine, row);
  m.collective_libraries = {library};
  if (row.devices > m.total_devices() || row.nodes > m.nodes) {
    throw InputError(InputLocation{row.file, row.line, "devices"}, std::to_string(row.devices),
                     "a job the machine holds (" + std::to_string(m.total_devices()) + " devices)");
  }
  // A row with more devices than its nodes hold cannot have run as written.
  const long long per_node = m.node.devices;
  if (static_cast<long long>(row.devices) > static_cast<long long>(row.nodes) * per_node) {
    throw InputError(InputLocation{row.file, row.line, "devices"}, std::to_string(row.devices),
                     fmt::format("at most {} devices on {} nodes of {} devices each",
                                 static_cast<long long>(row.nodes) * per_node, row.nodes, per_node));
  }
  // Ranks spread evenly over the row's nodes, as the benchmark was launched (srun -N nodes -n
  // devices): a point-to-point row of 2 devices on 2 nodes crosses the network.
  if (row.devices % row.nodes != 0) {
    throw InputError(InputLocation{row.file, row.line, "devices"}, std::to_string(row.devices),
                     fmt::format("a multiple of the row's {} nodes (the same number of ranks on every node)", row.nodes));
  }
  const int ranks_per_node = row.devices / row.nodes;
  links_only_.step_overlap = StepOverlap::pipelined;  // the most overlap the model allows
  JobNetwork network(m, row.devices, NodeAllocation::contiguous, 1, ranks_per_node);
  const GroupGeometry g{1, row.devices};
  members_ = g.size;
  nodes_spanned_ = network.nodes_spanned(g);
  nccl_all_reduce_ = collective_family(library) == CollectiveFamily::nccl && op_ == CollectiveOp::all_reduce;
  ring_ = network.program(g, CollectiveAlgorithm::ring, op_, row.bytes, false);
  if (nccl_all_reduce_) {
    tree_ = network.program(g, CollectiveAlgorithm::tree, op_, row.bytes, false);
  } else {
    selected_ = network.program(g, select_algorithm(library, op_, row.bytes, members_, nodes_spanned_), op_,
                                row.bytes, false);
  }
}

const PricedProgram& PublishedRowModel::program(const CollectiveLibrary& library) const {
  if (!nccl_all_reduce_) return selected_;
  const auto& t = library.tree_thresholds;
  if (!t.empty() && nodes_spanned_ >= t.front().nodes && nodes_spanned_ <= t.back().nodes) {
    return row_.bytes < nccl_tree_threshold(library, nodes_spanned_) ? tree_ : ring_;
  }
  return program_time(tree_, library, row_.bytes, nic_overhead_bytes_) <
                 program_time(ring_, library, row_.bytes, nic_overhead_bytes_)
             ? tree_
             : ring_;
}

Time PublishedRowModel::time(const CollectiveLibrary& library) const {
  return program_time(program(library), library, row_.bytes, nic_overhead_bytes_);
}

std::string PublishedRowModel::algorithm(const CollectiveLibrary& library) const {
  return to_string(program(library).algorithm);
}

double PublishedRowModel::busbw_of(Time time) const {
  const double p = members_;
  const double factor = op_ == CollectiveOp::all_reduce ? 2.0 * (p - 1) / p : (p - 1) / p;
  return static_cast<double>(row_.bytes) / time.seconds() * 1e-9 * factor;
}

double PublishedRowModel::busbw_gbps(const CollectiveLibrary& library) const { return busbw_of(time(library)); }

double PublishedRowModel::links_only_busbw(const PricedProgram& program) const {
  return busbw_of(program_time(program, links_only_, row_.bytes, 0));
}

double PublishedRowModel::ceiling_busbw_gbps(const CollectiveLibrary& library) const {
  return links_only_busbw(program(library));
}

double PublishedRowModel::best_ceiling_busbw_gbps() const {
  if (!nccl_all_reduce_) return links_only_busbw(selected_);
  return std::max(links_only_busbw(ring_), links_only_busbw(tree_));
}

namespace {

constexpr double kMicro = 1e-6;

FitScore score(const std::vector<double>& relative_errors) {
  FitScore s;
  s.rows = static_cast<int>(relative_errors.size());
  if (relative_errors.empty()) return s;
  std::vector<double> a;
  for (const double e : relative_errors) a.push_back(std::abs(e));
  s.median_abs_error = median(a);
  s.worst_abs_error = *std::max_element(a.begin(), a.end());
  return s;
}

// How many sizes of step (bytes per member) there are among the training rows whose price, under
// the terms as written, depends on a protocol term: an LL or LL128 protocol (the row runs it) or the
// eager-overflow window (the row's messages fall in it). A term no row depends on (zero) is not
// identified by them and keeps its written value; fitted anyway, the optimizer moves it to wherever
// it helps other rows through a protocol switch (LL taking over 64 KiB steps at 16 nodes, say) and
// the larger jobs that do run it pay for that.
int distinct_steps_depending(const std::vector<const PublishedRowModel*>& train, const CollectiveLibrary& base,
                             const CollectiveLibrary& without_term) {
  std::vector<double> steps;
  for (const PublishedRowModel* r : train) {
    if (r->time(base) == r->time(without_term)) continue;
    const double step = static_cast<double>(r->row().bytes) / r->row().devices;
    if (std::find(steps.begin(), steps.end(), step) == steps.end()) steps.push_back(step);
  }
  return static_cast<int>(steps.size());
}

// A term a fit could move but left as written: no training row's price depends on it.
struct WrittenTerm {
  enum class Kind { protocol_step, protocol_bandwidth, eager_per_step } kind = Kind::protocol_step;
  std::size_t protocol = 0;  // index into CollectiveLibrary::protocols
};

struct TermsFit {
  LibraryTerms terms;
  std::vector<WrittenTerm> written;
};

// Least squares of log(predicted / published) over `train`, from the library's terms.
TermsFit fit_terms(const CollectiveLibrary& base, const std::vector<const PublishedRowModel*>& train) {
  const LargeJobOverhead& overhead = base.large_job_overhead;
  // An overhead point is fitted only where some training row of a listed op reaches its node count.
  std::vector<bool> trainable(overhead.points.size(), false);
  for (std::size_t j = 0; j < overhead.points.size(); ++j) {
    for (const PublishedRowModel* r : train) {
      const bool listed = std::find(overhead.ops.begin(), overhead.ops.end(), op_of(r->row())) != overhead.ops.end();
      if (listed && r->nodes() >= overhead.points[j].nodes) trainable[j] = true;
    }
  }
  std::vector<double> x{std::log(std::max(base.launch_latency.us(), 0.1)), std::log(std::max(base.step_latency.us(), 0.05)),
                        std::log(base.bandwidth_efficiency / std::max(1e-6, 1.0 - base.bandwidth_efficiency + 1e-6))};
  std::vector<double> lower{std::log(0.1), std::log(0.05), -4.0}, upper{std::log(2000.0), std::log(2000.0), 8.0};
  for (std::size_t j = 0; j < overhead.points.size(); ++j) {
    if (!trainable[j]) continue;
    x.push_back(std::log(std::max(overhead.points[j].per_step.us(), 1.0)));
    lower.push_back(std::log(0.01));
    upper.push_back(std::log(1e5));
  }
  CollectiveLibrary without_eager = base;
  without_eager.eager_overflow.reset();
  const bool fit_eager = base.eager_overflow && distinct_steps_depending(train, base, without_eager) > 0;
  // A protocol's terms, where training rows run it: its step latency from one size of step, its
  // bandwidth too from two or more (one size cannot tell a longer step from a slower transfer).
  // They sit at x[protocol_at[j]] and, where fitted, the next.
  std::vector<std::size_t> protocol_at(base.protocols.size(), 0);
  std::vector<int> protocol_terms(base.protocols.size(), 0);
  for (std::size_t j = 0; j < base.protocols.size(); ++j) {
    CollectiveLibrary without = base;
    without.protocols.erase(without.protocols.begin() + static_cast<std::ptrdiff_t>(j));
    protocol_terms[j] = std::min(2, distinct_steps_depending(train, base, without));
    if (protocol_terms[j] == 0) continue;
    protocol_at[j] = x.size();
    x.push_back(std::log(std::max(base.protocols[j].step_latency.us(), 0.05)));
    lower.push_back(std::log(0.05));
    upper.push_back(std::log(2000.0));
    if (protocol_terms[j] < 2) continue;
    const double e = base.protocols[j].bandwidth_efficiency;
    x.push_back(std::log(e / std::max(1e-6, 1.0 - e + 1e-6)));
    lower.push_back(-4.0);
    upper.push_back(8.0);
  }
  const std::size_t eager_at = x.size();
  if (fit_eager) {
    x.push_back(std::log(std::max(base.eager_overflow->per_step.us(), 0.05)));
    lower.push_back(std::log(0.05));
    upper.push_back(std::log(1e5));
  }
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], lower[i], upper[i]);
  auto terms_at = [&](const std::vector<double>& v) {
    LibraryTerms t;
    t.launch_latency = Time::from_seconds(std::exp(v[0]) * kMicro);
    t.step_latency = Time::from_seconds(std::exp(v[1]) * kMicro);
    t.bandwidth_efficiency = std::min(1.0, 1.0 / (1.0 + std::exp(-v[2])));
    std::size_t k = 3;
    Time last;  // an untrainable point carries the last trained one's per-step time (none: zero)
    for (std::size_t j = 0; j < overhead.points.size(); ++j) {
      if (trainable[j]) last = Time::from_seconds(std::exp(v[k++]) * kMicro);
      t.overhead_per_step.push_back(last);
    }
    t.protocols = base.protocols;
    for (std::size_t j = 0; j < base.protocols.size(); ++j) {
      if (protocol_terms[j] > 0) t.protocols[j].step_latency = Time::from_seconds(std::exp(v[protocol_at[j]]) * kMicro);
      if (protocol_terms[j] > 1)
        t.protocols[j].bandwidth_efficiency = std::min(1.0, 1.0 / (1.0 + std::exp(-v[protocol_at[j] + 1])));
    }
    if (base.eager_overflow) t.eager_per_step = base.eager_overflow->per_step;
    if (fit_eager) t.eager_per_step = Time::from_seconds(std::exp(v[eager_at]) * kMicro);
    return t;
  };
  struct Problem {
    const CollectiveLibrary* base;
    const std::vector<const PublishedRowModel*>* train;
    decltype(terms_at)* terms;
  } problem{&base, &train, &terms_at};
  nlopt::opt opt(nlopt::LN_SBPLX, static_cast<unsigned>(x.size()));
  opt.set_lower_bounds(lower);
  opt.set_upper_bounds(upper);
  opt.set_xtol_rel(1e-7);
  opt.set_maxeval(6000);
  opt.set_min_objective(
      [](const std::vector<double>& v, std::vector<double>&, void* data) {
        const auto& pr = *static_cast<Problem*>(data);
        const CollectiveLibrary library = with_terms(*pr.base, (*pr.terms)(v));
        double sum = 0;
        for (const PublishedRowModel* r : *pr.train) {
          const double e = std::log(r->busbw_gbps(library) / r->row().busbw_gbps);
          sum += e * e;
        }
        return sum / static_cast<double>(pr.train->size());
      },
      &problem);
  double value = 0;
  try {
    opt.optimize(x, value);
  } catch (const nlopt::roundoff_limited&) {
    // The best point so far is in x.
  }
  TermsFit out{terms_at(x), {}};
  for (std::size_t j = 0; j < base.protocols.size(); ++j) {
    if (protocol_terms[j] < 1) out.written.push_back({WrittenTerm::Kind::protocol_step, j});
    if (protocol_terms[j] < 2) out.written.push_back({WrittenTerm::Kind::protocol_bandwidth, j});
  }
  if (base.eager_overflow && !fit_eager) out.written.push_back({WrittenTerm::Kind::eager_per_step, 0});
  return out;
}

// The written terms `row`'s price under `held` moves with (a 1 % change of the term changes it),
// space-separated.
std::string written_terms_pricing(const PublishedRowModel& row, const CollectiveLibrary& held,
                                  const std::vector<WrittenTerm>& written) {
  std::string names;
  const Time price = row.time(held);
  for (const WrittenTerm& w : written) {
    CollectiveLibrary moved = held;
    std::string name;
    switch (w.kind) {
      case WrittenTerm::Kind::protocol_step: {
        ProtocolTerms& p = moved.protocols[w.protocol];
        p.step_latency = Time::from_seconds(p.step_latency.seconds() * 1.01);
        name = p.name + ".step_latency";
        break;
      }
      case WrittenTerm::Kind::protocol_bandwidth: {
        ProtocolTerms& p = moved.protocols[w.protocol];
        p.bandwidth_efficiency *= 0.99;
        name = p.name + ".bandwidth_efficiency";
        break;
      }
      case WrittenTerm::Kind::eager_per_step:
        moved.eager_overflow->per_step = Time::from_seconds(moved.eager_overflow->per_step.seconds() * 1.01);
        name = "eager_overflow.per_step";
        break;
    }
    if (row.time(moved) != price) names += (names.empty() ? "" : " ") + name;
  }
  return names;
}

}  // namespace

LibraryTerms fit_library_terms(const CollectiveLibrary& base, const std::vector<const PublishedRowModel*>& rows) {
  return fit_terms(base, rows).terms;
}

std::vector<int> fold_assignment(std::size_t rows, int folds) {
  std::vector<int> group(rows);
  std::iota(group.begin(), group.end(), 0);
  return fold_assignment(group, folds);
}

std::vector<int> fold_assignment(const std::vector<int>& group, int folds) {
  std::vector<int> ids = group;  // dense group numbers, in order of first appearance
  std::map<int, int> dense;
  for (int& g : ids) g = dense.emplace(g, static_cast<int>(dense.size())).first->second;
  std::vector<std::size_t> rows_in(dense.size(), 0);
  for (const int g : ids) ++rows_in[static_cast<std::size_t>(g)];
  std::vector<std::size_t> order(dense.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  RandomStream(kCrossValidationSeed, StreamId::cross_validation).shuffle(std::span<std::size_t>(order));
  std::vector<std::size_t> load(static_cast<std::size_t>(folds), 0);
  std::vector<int> fold_of_group(dense.size(), 0);
  for (const std::size_t g : order) {
    const auto least = std::min_element(load.begin(), load.end());
    fold_of_group[g] = static_cast<int>(least - load.begin());
    *least += rows_in[g];
  }
  std::vector<int> fold(ids.size(), 0);
  for (std::size_t r = 0; r < ids.size(); ++r) fold[r] = fold_of_group[static_cast<std::size_t>(ids[r])];
  return fold;
}

PublishedFit fit_published(const std::vector<PublishedCollective>& rows, const std::string& machines_dir) {
  std::map<std::string, Machine> machines;
  std::vector<std::optional<PublishedRowModel>> models(rows.size());
  std::vector<std::pair<std::string, std::string>> groups;  // (machine, library), first-appearance order
  std::vector<int> group_of(rows.size(), -1);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (row.op == "point-to-point") continue;
    auto it = machines.find(row.machine);
    if (it == machines.end()) it = machines.emplace(row.machine, load_machine_by_name(row.machine, machines_dir)).first;
    models[i].emplace(it->second, row);
    const auto key = std::make_pair(row.machine, row.library);
    auto g = std::find(groups.begin(), groups.end(), key);
    if (g == groups.end()) g = groups.insert(groups.end(), key);
    group_of[i] = static_cast<int>(g - groups.begin());
  }
  PublishedFit fit;
  fit.rows.resize(rows.size());
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Machine& machine = machines.at(groups[gi].first);
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (group_of[i] == static_cast<int>(gi)) members.push_back(i);
    const CollectiveLibrary base = library_named(machine, rows[members.front()]);
    LibraryFit lf;
    lf.machine = groups[gi].first;
    lf.library = groups[gi].second;
    lf.as_written = terms_of(base);
    auto models_of = [&](auto&& keep) {
      std::vector<const PublishedRowModel*> out;
      for (std::size_t k = 0; k < members.size(); ++k)
        if (keep(k)) out.push_back(&*models[members[k]]);
      return out;
    };
    auto error = [&](std::size_t i, const CollectiveLibrary& library) {
      return models[i]->busbw_gbps(library) / rows[i].busbw_gbps - 1.0;
    };
    std::vector<double> file_errors, fit_errors, kfold_errors, scale_errors, kfold_own_errors, scale_own_errors;
    // Every row.
    lf.fitted = fit_terms(base, models_of([](std::size_t) { return true; })).terms;
    const CollectiveLibrary fitted = with_terms(base, lf.fitted);
    for (const std::size_t i : members) {
      file_errors.push_back(error(i, base));
      fit_errors.push_back(error(i, fitted));
      fit.rows[i].fitted_busbw_gbps = models[i]->busbw_gbps(fitted);
    }
    // k folds, drawn once per group (fold_assignment). Rows of one job that the written terms price
    // alike (as consistency_floor asks) share a fold.
    std::vector<double> price(members.size());
    for (std::size_t k = 0; k < members.size(); ++k) price[k] = models[members[k]]->time(base).seconds();
    std::vector<int> job(members.size());
    for (std::size_t k = 0; k < members.size(); ++k) {
      std::size_t first = 0;
      while (first < k && !(same_job(rows[members[first]], rows[members[k]]) && alike(price[first], price[k]))) ++first;
      job[k] = static_cast<int>(first);
    }
    const std::vector<int> fold = fold_assignment(job, kFitFolds);
    for (int f = 0; f < kFitFolds; ++f) {
      const auto train = models_of([&](std::size_t k) { return fold[k] != f; });
      if (train.empty()) continue;
      const TermsFit held_fit = fit_terms(base, train);
      const CollectiveLibrary held = with_terms(base, held_fit.terms);
      for (std::size_t k = 0; k < members.size(); ++k) {
        if (fold[k] != f) continue;
        RowFit& r = fit.rows[members[k]];
        r.kfold_busbw_gbps = models[members[k]]->busbw_gbps(held);
        r.kfold_written_terms = written_terms_pricing(*models[members[k]], held, held_fit.written);
        kfold_errors.push_back(error(members[k], held));
        if (r.kfold_written_terms.empty()) kfold_own_errors.push_back(kfold_errors.back());
      }
    }
    // Small jobs predict the large ones.
    const auto small = models_of([&](std::size_t k) { return rows[members[k]].nodes <= kScaleSplitNodes; });
    if (!small.empty() && small.size() < members.size()) {
      const TermsFit held_fit = fit_terms(base, small);
      const CollectiveLibrary held = with_terms(base, held_fit.terms);
      for (const std::size_t i : members) {
        if (rows[i].nodes <= kScaleSplitNodes) continue;
        RowFit& r = fit.rows[i];
        r.scale_busbw_gbps = models[i]->busbw_gbps(held);
        r.scale_written_terms = written_terms_pricing(*models[i], held, held_fit.written);
        scale_errors.push_back(error(i, held));
        if (r.scale_written_terms.empty()) scale_own_errors.push_back(scale_errors.back());
      }
    }
    lf.file = score(file_errors);
    lf.in_sample = score(fit_errors);
    lf.kfold = score(kfold_errors);
    lf.scale = score(scale_errors);
    lf.kfold_own = score(kfold_own_errors);
    lf.scale_own = score(scale_own_errors);
    fit.libraries.push_back(std::move(lf));
  }
  return fit;
}

}  // namespace ws
