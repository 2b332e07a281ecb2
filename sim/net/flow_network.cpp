// Max-min fair sharing by progressive filling over the touched component, and the flow lifecycle.
#include "sim/net/flow_network.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include "base/random.hpp"
#include "base/check.hpp"

namespace ws {

namespace {
constexpr std::uint32_t kActivate = 0;
constexpr std::size_t kArity = 4;
}  // namespace

FlowNetwork::FlowNetwork(const Topology& topology, std::span<const Bandwidth> capacity)
    : topology_(&topology) {
  // The solver works in bytes/s: the typed capacities end here.
  link_capacity_.reserve(capacity.size());
  for (const Bandwidth c : capacity) link_capacity_.push_back(c.bytes_per_s());
  const std::size_t L = topology.links.size();
  link_flows_.resize(L);
  link_bytes_.assign(L, 0.0);
  capacity_.assign(L, 0.0);
  unfixed_.assign(L, 0.0);
  link_weight_.assign(L, 0.0);
  link_stamp_.assign(L, 0);
  saturated_.assign(L, 0);
  if (link_capacity_.empty()) {
    link_capacity_.resize(L);
    for (std::size_t l = 0; l < L; ++l) link_capacity_[l] = topology.links[l].bandwidth.bytes_per_s();
  }
  WS_CHECK(link_capacity_.size() == L, "one capacity per link");
  for (const double c : link_capacity_) {
    WS_CHECK(c > 0.0, "every link needs a positive capacity");
    (void)c;
  }
}

int FlowNetwork::allocate_flow() {
  if (free_flows_.empty()) {
    flows_.emplace_back();
    flow_stamp_.push_back(0);
    return static_cast<int>(flows_.size()) - 1;
  }
  const int f = free_flows_.back();
  free_flows_.pop_back();
  return f;
}

void FlowNetwork::set_memoization(bool on) {
  WS_CHECK(flows_.empty(), "set before the first flow");
  memoize_ = on;
}

double FlowNetwork::link_bytes_delivered(int link) const {
  double bytes = link_bytes_[static_cast<std::size_t>(link)];
  for (std::size_t s = 0; s < shape_bytes_.size(); ++s) {
    if (shape_bytes_[s] == 0.0) continue;
    const auto& links = shapes_[s];
    const auto it = std::lower_bound(links.begin(), links.end(), link,
                                     [](const LinkShare& a, int l) { return a.link < l; });
    if (it != links.end() && it->link == link) bytes += shape_bytes_[s] * it->weight;
  }
  return bytes;
}

int FlowNetwork::add_shape(std::vector<LinkShare> links) {
  for (std::size_t i = 0; i < links.size(); ++i) {
    WS_CHECK(links[i].weight > 0.0 && (i == 0 || links[i - 1].link < links[i].link), "a flow shape's links have positive weights, in ascending order");
    WS_CHECK(links[i].link >= 0 && static_cast<std::size_t>(links[i].link) < topology_->links.size(), "a flow shape's links exist");
  }
  shapes_.push_back(std::move(links));
  shape_bytes_.push_back(0.0);
  return static_cast<int>(shapes_.size()) - 1;
}

int FlowNetwork::start_shaped_flow(Time now, int shape, Time latency, double progress_bytes, Bytes bytes,
                                   std::uint64_t tag) {
  WS_CHECK(now >= now_ && shape >= 0 && static_cast<std::size_t>(shape) < shapes_.size(), "a flow of a known shape starts now or later");
  const int f = allocate_flow();
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  flow.shape_position.resize(shapes_[static_cast<std::size_t>(shape)].size());
  flow.remaining = std::max(0.0, progress_bytes);
  flow.progress = flow.remaining;
  flow.rate = 0.0;
  flow.start = now;
  flow.last_update = now;
  flow.bytes = bytes;
  flow.tag = tag;
  flow.state = FlowState::pending;
  flow.shape = shape;
  ++flow.version;
  ++stats_.flows_started;
  flow.heap_index = -1;
  events_.push(now + latency, {kActivate, static_cast<std::uint32_t>(f), flow.version});
  return f;
}

template <typename Fn>
void FlowNetwork::for_each_link(const Flow& flow, Fn&& fn) const {
  const auto& links = shapes_[static_cast<std::size_t>(flow.shape)];
  for (std::size_t slot = 0; slot < links.size(); ++slot) fn(static_cast<int>(slot), links[slot].link, links[slot].weight);
}

double FlowNetwork::weight_on(const Flow& flow, int slot) const {
  return shapes_[static_cast<std::size_t>(flow.shape)][static_cast<std::size_t>(slot)].weight;
}

int& FlowNetwork::position(const LinkEntry& e) {
  Flow& flow = flows_[static_cast<std::size_t>(e.flow)];
  return flow.shape_position[static_cast<std::size_t>(e.slot)];
}

Time FlowNetwork::next_event_time() {
  while (!events_.empty()) {
    const Event& e = events_.top();
    const Flow& flow = flows_[e.payload.id];
    if (flow.version == e.payload.data && flow.state == FlowState::pending) break;
    events_.pop();
  }
  const Time activation = events_.empty() ? Time::max() : events_.top().time;
  const Time completion =
      completion_heap_.empty() ? Time::max() : flows_[static_cast<std::size_t>(completion_heap_.front())].due;
  return min(activation, completion);
}

bool FlowNetwork::due_before(int a, int b) const {
  const Flow& fa = flows_[static_cast<std::size_t>(a)];
  const Flow& fb = flows_[static_cast<std::size_t>(b)];
  return fa.due < fb.due || (fa.due == fb.due && fa.due_sequence < fb.due_sequence);
}

void FlowNetwork::heap_place(int f, std::size_t i) {
  completion_heap_[i] = f;
  flows_[static_cast<std::size_t>(f)].heap_index = static_cast<int>(i);
}

void FlowNetwork::heap_sift_up(std::size_t i) {
  const int f = completion_heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!due_before(f, completion_heap_[parent])) break;
    heap_place(completion_heap_[parent], i);
    i = parent;
  }
  heap_place(f, i);
}

void FlowNetwork::heap_sift_down(std::size_t i) {
  const int f = completion_heap_[i];
  const std::size_t n = completion_heap_.size();
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    const std::size_t end = std::min(first + kArity, n);
    std::size_t best = first;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (due_before(completion_heap_[c], completion_heap_[best])) best = c;
    }
    if (!due_before(completion_heap_[best], f)) break;
    heap_place(completion_heap_[best], i);
    i = best;
  }
  heap_place(f, i);
}

void FlowNetwork::heap_remove(int f) {
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  if (flow.heap_index < 0) return;
  const auto i = static_cast<std::size_t>(flow.heap_index);
  flow.heap_index = -1;
  const int last = completion_heap_.back();
  completion_heap_.pop_back();
  if (last == f) return;
  heap_place(last, i);
  heap_sift_up(i);
  heap_sift_down(static_cast<std::size_t>(flows_[static_cast<std::size_t>(last)].heap_index));
}

void FlowNetwork::touch(int link) {
  if (link_stamp_[static_cast<std::size_t>(link)] == epoch_) return;
  link_stamp_[static_cast<std::size_t>(link)] = epoch_;
  touched_.push_back(link);
}

void FlowNetwork::activate(int f, Time t) {
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  flow.state = FlowState::active;
  flow.last_update = t;
  ++active_count_;
  if (memoize_) {
    active_shaped_.push_back(f);
    memo_dirty_ = true;
    return;
  }
  for_each_link(flow, [&](int slot, int l, double weight) {
    auto& list = link_flows_[static_cast<std::size_t>(l)];
    const LinkEntry e{f, slot};
    position(e) = static_cast<int>(list.size());
    list.push_back(e);
    link_weight_[static_cast<std::size_t>(l)] += weight;
    touch(l);
  });
}

void FlowNetwork::complete(int f, Time t, std::vector<CompletedFlow>& completed) {
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  const bool active = flow.state == FlowState::active;
  if (active) --active_count_;
  if (memoize_) {
    if (active) {
      active_shaped_.erase(std::find(active_shaped_.begin(), active_shaped_.end(), f));
      memo_dirty_ = true;
    }
    shape_bytes_[static_cast<std::size_t>(flow.shape)] += flow.progress;
  } else {
  for_each_link(flow, [&](int slot, int l, double weight) {
    const auto li = static_cast<std::size_t>(l);
    if (active) {
      auto& list = link_flows_[li];
      const int pos = position({f, slot});
      const LinkEntry moved = list.back();
      list[static_cast<std::size_t>(pos)] = moved;
      position(moved) = pos;
      list.pop_back();
      // Exactly zero on an idle link, whatever the rounding of the weights added and removed.
      link_weight_[li] = list.empty() ? 0.0 : link_weight_[li] - weight;
      touch(l);
    }
    link_bytes_[li] += flow.progress * weight;
  });
  }
  flow.shape = -1;
  bytes_delivered_ += flow.bytes;
  trace_hash_ = splitmix64(trace_hash_ ^ flow.tag) ^ static_cast<std::uint64_t>(t.ps());
  completed.push_back({flow.tag, flow.start, t, flow.bytes});
  flow.state = FlowState::free;
  ++flow.version;
  ++stats_.flows_completed;
  free_flows_.push_back(f);
}

void FlowNetwork::advance(Time t, std::vector<CompletedFlow>& completed) {
  WS_CHECK(t >= now_, "the network advances forward in time");
  now_ = t;
  ++epoch_;
  touched_.clear();
  // Activations first, then completions; the order inside one time only permutes link lists,
  // which stays deterministic.
  for (;;) {
    while (!events_.empty()) {
      const Event& e = events_.top();
      const Flow& flow = flows_[e.payload.id];
      if (flow.version == e.payload.data && flow.state == FlowState::pending) break;
      events_.pop();
    }
    if (events_.empty() || events_.top().time != t) break;
    const Event e = events_.pop();
    ++stats_.events;
    const int f = static_cast<int>(e.payload.id);
    if (flows_[e.payload.id].progress > 0.0) {
      activate(f, t);
    } else {
      complete(f, t, completed);  // a zero-byte message completes when its latency has passed
    }
  }
  while (!completion_heap_.empty() && flows_[static_cast<std::size_t>(completion_heap_.front())].due == t) {
    const int f = completion_heap_.front();
    heap_remove(f);
    ++stats_.events;
    complete(f, t, completed);
  }
  if (!touched_.empty() || memo_dirty_) resolve(t);
}

void FlowNetwork::schedule_completion(int f, Time t) {
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  const Time left = transfer_time(flow.remaining, Bandwidth::from_bytes_per_s(flow.rate));
  flow.due = t + max(left, Time::zero());
  flow.due_sequence = due_sequence_++;
  if (flow.heap_index < 0) {
    completion_heap_.push_back(f);
    heap_sift_up(completion_heap_.size() - 1);
  } else {
    const auto i = static_cast<std::size_t>(flow.heap_index);
    heap_sift_up(i);
    heap_sift_down(static_cast<std::size_t>(flow.heap_index));
  }
}

void FlowNetwork::resolve(Time t) {
  ++stats_.recomputes;
  if (memoize_) {
    memo_dirty_ = false;
    if (solve_from_memo(t)) {
      ++stats_.memo_hits;
    } else {
      solve_shapes(t);
    }
    return;
  }
  if (!solve(t, true)) {
    ++stats_.wide_solves;
    solve(t, false);
  }
}

// The key lists the shape of every active flow, sorted; the value, the rate of each key entry.
bool FlowNetwork::solve_from_memo(Time t) {
  std::sort(active_shaped_.begin(), active_shaped_.end(), [&](int a, int b) {
    const int sa = flows_[static_cast<std::size_t>(a)].shape, sb = flows_[static_cast<std::size_t>(b)].shape;
    return sa < sb || (sa == sb && a < b);
  });
  memo_key_.clear();
  for (const int f : active_shaped_) memo_key_.push_back(flows_[static_cast<std::size_t>(f)].shape);
  const auto it = memo_.find(memo_key_);
  if (it == memo_.end()) return false;
  for (std::size_t i = 0; i < active_shaped_.size(); ++i) {
    const int f = active_shaped_[i];
    Flow& flow = flows_[static_cast<std::size_t>(f)];
    const double rate = it->second[i];
    if (rate == flow.rate) continue;
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * (t - flow.last_update).seconds());
    flow.last_update = t;
    flow.rate = rate;
    schedule_completion(f, t);
  }
  return true;
}

// Progressive filling over the active shaped flows (in memo-key order): every unfixed flow's rate
// rises together; the link that saturates first fixes the flows that cross it. Flows of one shape
// are fixed together, so they get the same rate.
void FlowNetwork::solve_shapes(Time t) {
  const std::size_t n = active_shaped_.size();
  std::vector<double> rate(n, 0.0);
  std::vector<char> fixed(n, 0);
  const std::uint64_t reached = ++epoch_;
  component_links_.clear();
  for (const int f : active_shaped_) {
    for (const LinkShare& s : shapes_[static_cast<std::size_t>(flows_[static_cast<std::size_t>(f)].shape)]) {
      const auto li = static_cast<std::size_t>(s.link);
      if (link_stamp_[li] != reached) {
        link_stamp_[li] = reached;
        component_links_.push_back(s.link);
        capacity_[li] = link_capacity_[li];
        unfixed_[li] = 0.0;
      }
      unfixed_[li] += s.weight;
    }
  }
  double level = 0.0;
  std::size_t left = n;
  while (left > 0) {
    // The smallest level at which some link saturates, given the flows fixed so far.
    double next = std::numeric_limits<double>::infinity();
    int tight = -1;
    for (const int l : component_links_) {
      const auto li = static_cast<std::size_t>(l);
      if (unfixed_[li] <= 0.0) continue;
      const double at = level + std::max(capacity_[li], 0.0) / unfixed_[li];
      if (at < next) {
        next = at;
        tight = l;
      }
    }
    WS_CHECK(tight >= 0, "max-min sharing finds a bottleneck link");
    // Raise every unfixed flow to `next`, then fix those on the tight link (and their shape-mates).
    const double rise = next - level;
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      for (const LinkShare& s : shapes_[static_cast<std::size_t>(flows_[static_cast<std::size_t>(active_shaped_[i])].shape)])
        capacity_[static_cast<std::size_t>(s.link)] -= rise * s.weight;
    }
    level = next;
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      const auto& links = shapes_[static_cast<std::size_t>(flows_[static_cast<std::size_t>(active_shaped_[i])].shape)];
      const auto it = std::lower_bound(links.begin(), links.end(), tight,
                                       [](const LinkShare& a, int l) { return a.link < l; });
      if (it == links.end() || it->link != tight) continue;
      fixed[i] = 1;
      rate[i] = level;
      --left;
      for (const LinkShare& s : links) unfixed_[static_cast<std::size_t>(s.link)] -= s.weight;
    }
    // Fixing removes whole weights; tiny remainders are rounding, not flows.
    for (const int l : component_links_) {
      auto& u = unfixed_[static_cast<std::size_t>(l)];
      if (u < 1e-12) u = 0.0;
    }
  }
  std::vector<double> rates;
  for (std::size_t i = 0; i < n; ++i) {
    const int f = active_shaped_[i];
    Flow& flow = flows_[static_cast<std::size_t>(f)];
    rates.push_back(rate[i]);
    if (rate[i] == flow.rate) continue;
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * (t - flow.last_update).seconds());
    flow.last_update = t;
    flow.rate = rate[i];
    schedule_completion(f, t);
  }
  stats_.flows_resolved += n;
  memo_.emplace(memo_key_, std::move(rates));
}

// Max-min over the flows a change can reach. Restricted: from the touched links, only through links
// that were saturated after the last solve. A flow's share is set by a saturated link on which it
// has the largest share, so a change spreads only through saturated links -- or through a link it
// newly saturates. The flows outside keep their rates and their use of the boundary (unsaturated)
// links; if the solve saturates a boundary link below the share of an outside flow on it, that flow
// would have to change too, and the caller re-solves the whole connected component instead.
bool FlowNetwork::solve(Time t, bool restricted) {
  const std::uint64_t reached = ++epoch_;
  component_links_.clear();
  for (const int l : touched_) {
    link_stamp_[static_cast<std::size_t>(l)] = reached;
    component_links_.push_back(l);
  }
  component_flows_.clear();
  boundary_links_.clear();
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    const int l = component_links_[i];
    for (const LinkEntry& e : link_flows_[static_cast<std::size_t>(l)]) {
      if (flow_stamp_[static_cast<std::size_t>(e.flow)] == reached) continue;
      flow_stamp_[static_cast<std::size_t>(e.flow)] = reached;
      component_flows_.push_back(e.flow);
      for_each_link(flows_[static_cast<std::size_t>(e.flow)], [&](int, int l2, double) {
        const auto l2i = static_cast<std::size_t>(l2);
        if (link_stamp_[l2i] == reached) return;
        link_stamp_[l2i] = reached;
        if (!restricted || saturated_[l2i]) {
          component_links_.push_back(l2);
        } else {
          boundary_links_.push_back(l2);
        }
      });
    }
  }
  stats_.flows_resolved += component_flows_.size();
  // Settle every reached flow to time t at its old rate.
  for (const int f : component_flows_) {
    Flow& flow = flows_[static_cast<std::size_t>(f)];
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * (t - flow.last_update).seconds());
    flow.last_update = t;
  }
  // Progressive filling: repeatedly saturate the link with the smallest fair share (capacity per
  // unit of unfixed weight; a shaped flow counts its weight on the link). Every flow of a component link is
  // reached; a boundary link's capacity is what the outside flows leave.
  heap_.clear();
  for (const int l : component_links_) {
    const auto li = static_cast<std::size_t>(l);
    capacity_[li] = link_capacity_[li];
    unfixed_[li] = link_weight_[li];
    if (unfixed_[li] > 0) heap_.emplace_back(capacity_[li] / unfixed_[li], l);
  }
  for (const int l : boundary_links_) {
    const auto li = static_cast<std::size_t>(l);
    double left = link_capacity_[li];
    double unfixed = 0;
    for (const LinkEntry& e : link_flows_[li]) {
      const Flow& flow = flows_[static_cast<std::size_t>(e.flow)];
      const double weight = weight_on(flow, e.slot);
      if (flow_stamp_[static_cast<std::size_t>(e.flow)] == reached) {
        unfixed += weight;
      } else {
        left -= flow.rate * weight;
      }
    }
    capacity_[li] = left;
    unfixed_[li] = unfixed;
    heap_.emplace_back(std::max(left, 0.0) / unfixed, l);
  }
  const auto later = std::greater<std::pair<double, int>>();
  std::make_heap(heap_.begin(), heap_.end(), later);
  const std::uint64_t fixed_mark = ++epoch_;  // flow_stamp_ == fixed_mark: share decided
  constexpr double kSlack = 1e-9;             // relative: saturation and share comparisons
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const auto [share, l] = heap_.back();  // share: the key when queued
    heap_.pop_back();
    const auto li = static_cast<std::size_t>(l);
    if (unfixed_[li] <= 0) continue;
    // Fixing flows at the minimum share s only raises the other links' shares ((c - k s) / (n - k)
    // >= c / n when s <= c / n), so a key is a lower bound: re-queue it at its current value rather
    // than pushing on every change (one push per link, not one per flow x link).
    const double current = std::max(capacity_[li], 0.0) / unfixed_[li];
    if (current > share) {
      heap_.emplace_back(current, l);
      std::push_heap(heap_.begin(), heap_.end(), later);
      continue;
    }
    for (const LinkEntry& e : link_flows_[li]) {
      const auto fi = static_cast<std::size_t>(e.flow);
      if (flow_stamp_[fi] == fixed_mark) continue;
      Flow& flow = flows_[fi];
      if (flow_stamp_[fi] != reached) {
        // An outside flow on a link saturated here: it must not get more than the reached ones.
        if (flow.rate > current * (1.0 + kSlack)) return false;
        continue;
      }
      flow_stamp_[fi] = fixed_mark;
      const double old_rate = flow.rate;
      flow.rate = current;
      for_each_link(flow, [&](int, int l2, double weight) {
        const auto l2i = static_cast<std::size_t>(l2);
        capacity_[l2i] -= flow.rate * weight;
        unfixed_[l2i] -= weight;
      });
      // Unchanged share: the scheduled completion is still right; keep it (no heap churn).
      if (flow.rate != old_rate) schedule_completion(e.flow, t);
    }
  }
  auto mark_saturation = [&](int l) {
    const auto li = static_cast<std::size_t>(l);
    saturated_[li] = link_weight_[li] > 0 && capacity_[li] <= kSlack * link_capacity_[li] ? 1 : 0;
  };
  for (const int l : component_links_) mark_saturation(l);
  for (const int l : boundary_links_) mark_saturation(l);
  return true;
}

}  // namespace ws
