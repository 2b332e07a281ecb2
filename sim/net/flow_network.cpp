// Max-min fair sharing by progressive filling over the touched component, and the flow lifecycle.
#include "sim/net/flow_network.hpp"

#include <algorithm>
#include <cassert>
#include <functional>

#include "sim/core/random.hpp"

namespace ws {

namespace {
constexpr std::uint32_t kActivate = 0;
constexpr std::size_t kArity = 4;
}  // namespace

FlowNetwork::FlowNetwork(const Topology& topology, Router& router)
    : topology_(&topology), router_(&router) {
  const std::size_t L = topology.links.size();
  link_flows_.resize(L);
  link_load_.assign(L, 0);
  link_bytes_.assign(L, 0.0);
  capacity_.assign(L, 0.0);
  unfixed_.assign(L, 0);
  link_stamp_.assign(L, 0);
  for (const Link& l : topology.links) {
    assert(l.bandwidth.bytes_per_s() > 0.0 && "every link needs a positive bandwidth");
    (void)l;
  }
}

Time FlowNetwork::path_latency(const Path& path) const {
  Time t;
  for (const int l : path.view()) {
    const Link& link = topology_->links[static_cast<std::size_t>(l)];
    t += link.latency;
    if (topology_->is_switch_vertex(link.to)) t += topology_->switch_latency;
  }
  return t;
}

int FlowNetwork::start_flow(Time now, int src_device, int dst_device, Bytes bytes, std::uint64_t tag) {
  assert(now >= now_ && src_device != dst_device);
  int f;
  if (free_flows_.empty()) {
    f = static_cast<int>(flows_.size());
    flows_.emplace_back();
    flow_stamp_.push_back(0);
  } else {
    f = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  flow.path = router_->route(src_device, dst_device, link_load_);
  for (const int l : flow.path.view()) ++link_load_[static_cast<std::size_t>(l)];
  flow.remaining = static_cast<double>(bytes);
  flow.rate = 0.0;
  flow.start = now;
  flow.last_update = now;
  flow.bytes = bytes;
  flow.tag = tag;
  flow.state = FlowState::pending;
  ++flow.version;
  ++stats_.flows_started;
  flow.heap_index = -1;
  events_.push(now + path_latency(flow.path), {kActivate, static_cast<std::uint32_t>(f), flow.version});
  return f;
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
  for (int slot = 0; slot < flow.path.size; ++slot) {
    const int l = flow.path.links[static_cast<std::size_t>(slot)];
    auto& list = link_flows_[static_cast<std::size_t>(l)];
    flow.position[static_cast<std::size_t>(slot)] = static_cast<int>(list.size());
    list.push_back({f, slot});
    touch(l);
  }
}

void FlowNetwork::complete(int f, Time t, std::vector<CompletedFlow>& completed) {
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  if (flow.state == FlowState::active) {
    --active_count_;
    for (int slot = 0; slot < flow.path.size; ++slot) {
      const int l = flow.path.links[static_cast<std::size_t>(slot)];
      auto& list = link_flows_[static_cast<std::size_t>(l)];
      const int pos = flow.position[static_cast<std::size_t>(slot)];
      const LinkEntry moved = list.back();
      list[static_cast<std::size_t>(pos)] = moved;
      flows_[static_cast<std::size_t>(moved.flow)].position[static_cast<std::size_t>(moved.slot)] = pos;
      list.pop_back();
      touch(l);
    }
  }
  for (const int l : flow.path.view()) {
    --link_load_[static_cast<std::size_t>(l)];
    link_bytes_[static_cast<std::size_t>(l)] += static_cast<double>(flow.bytes);
  }
  bytes_delivered_ += flow.bytes;
  trace_hash_ = splitmix64(trace_hash_ ^ flow.tag) ^ static_cast<std::uint64_t>(t.ps());
  completed.push_back({flow.tag, flow.start, t, flow.bytes});
  flow.state = FlowState::free;
  ++flow.version;
  ++stats_.flows_completed;
  free_flows_.push_back(f);
}

void FlowNetwork::advance(Time t, std::vector<CompletedFlow>& completed) {
  assert(t >= now_);
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
    if (flows_[e.payload.id].bytes > 0) {
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
  if (!touched_.empty()) resolve(t);
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
  // 1. The connected component (links <-> flows) reachable from the touched links. The epoch was
  //    bumped in advance(): touched links already carry it.
  component_links_.assign(touched_.begin(), touched_.end());
  component_flows_.clear();
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    const int l = component_links_[i];
    for (const LinkEntry& e : link_flows_[static_cast<std::size_t>(l)]) {
      if (flow_stamp_[static_cast<std::size_t>(e.flow)] == epoch_) continue;
      flow_stamp_[static_cast<std::size_t>(e.flow)] = epoch_;
      component_flows_.push_back(e.flow);
      for (const int l2 : flows_[static_cast<std::size_t>(e.flow)].path.view()) {
        if (link_stamp_[static_cast<std::size_t>(l2)] == epoch_) continue;
        link_stamp_[static_cast<std::size_t>(l2)] = epoch_;
        component_links_.push_back(l2);
      }
    }
  }
  stats_.flows_resolved += component_flows_.size();
  // 2. Settle every flow of the component to time t at its old rate.
  for (const int f : component_flows_) {
    Flow& flow = flows_[static_cast<std::size_t>(f)];
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * (t - flow.last_update).seconds());
    flow.last_update = t;
  }
  // 3. Progressive filling: repeatedly saturate the link with the smallest fair share.
  heap_.clear();
  for (const int l : component_links_) {
    const auto li = static_cast<std::size_t>(l);
    capacity_[li] = topology_->links[li].bandwidth.bytes_per_s();
    unfixed_[li] = static_cast<int>(link_flows_[li].size());
    if (unfixed_[li] > 0) heap_.emplace_back(capacity_[li] / unfixed_[li], l);
  }
  const auto later = std::greater<std::pair<double, int>>();
  std::make_heap(heap_.begin(), heap_.end(), later);
  const std::uint64_t fixed_mark = ++epoch_;  // flow_stamp_ == fixed_mark: share decided
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const auto [share, l] = heap_.back();  // share: the key when queued
    heap_.pop_back();
    const auto li = static_cast<std::size_t>(l);
    if (unfixed_[li] == 0) continue;
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
      flow_stamp_[fi] = fixed_mark;
      Flow& flow = flows_[fi];
      const double old_rate = flow.rate;
      flow.rate = current;
      for (const int l2 : flow.path.view()) {
        const auto l2i = static_cast<std::size_t>(l2);
        capacity_[l2i] -= flow.rate;
        --unfixed_[l2i];
      }
      // Unchanged share: the scheduled completion is still right; keep it (no heap churn).
      if (flow.rate != old_rate) schedule_completion(e.flow, t);
    }
  }
}

}  // namespace ws
