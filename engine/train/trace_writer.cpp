#include "engine/train/trace_writer.hpp"

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/comm/mpi_check.hpp"

namespace ws {

namespace {
constexpr int kComputeThread = 0;
constexpr int kCommThread = 1;

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}
}  // namespace

std::string trace_events_json(const Timeline& timeline, int rank) {
  nlohmann::json events = nlohmann::json::array();
  for (const TraceEvent& e : timeline.events()) {
    nlohmann::json event{{"name", e.name},
                         {"cat", e.comm ? "comm" : "compute"},
                         {"ph", "X"},
                         {"ts", e.start.us()},
                         {"dur", (e.end - e.start).us()},
                         {"pid", rank},
                         {"tid", e.comm ? kCommThread : kComputeThread}};
    if (e.comm || e.bytes > 0) {
      const auto dot = e.name.rfind('.');
      event["args"] = {{"bytes", e.bytes}, {"group", dot == std::string::npos ? "" : e.name.substr(dot + 1)}};
    }
    events.push_back(std::move(event));
  }
  return events.dump();
}

std::string gather_trace_json(const Timeline& timeline, const Communicator& world) {
  const std::string local = trace_events_json(timeline, world.rank());
  std::vector<std::string> parts;
  if (world.size() == 1) {
    parts.push_back(local);
  } else {
    int length = static_cast<int>(local.size());
    std::vector<int> lengths(static_cast<std::size_t>(world.size())), offsets(lengths.size());
    WS_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world.comm()));
    std::vector<char> all;
    if (world.rank() == 0) {
      int total = 0;
      for (std::size_t r = 0; r < lengths.size(); ++r) offsets[r] = total, total += lengths[r];
      all.resize(static_cast<std::size_t>(total));
    }
    WS_MPI_CHECK(MPI_Gatherv(local.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                             MPI_CHAR, 0, world.comm()));
    if (world.rank() == 0)
      for (std::size_t r = 0; r < lengths.size(); ++r)
        parts.emplace_back(all.data() + offsets[r], static_cast<std::size_t>(lengths[r]));
  }
  if (world.rank() != 0) return {};

  nlohmann::json events = nlohmann::json::array();
  for (std::size_t r = 0; r < parts.size(); ++r) {
    const int pid = static_cast<int>(r);
    events.push_back(metadata("process_name", pid, 0, "rank " + std::to_string(r)));
    events.push_back(metadata("thread_name", pid, kComputeThread, "compute"));
    events.push_back(metadata("thread_name", pid, kCommThread, "comm"));
    for (auto& e : nlohmann::json::parse(parts[r])) events.push_back(std::move(e));
  }
  const nlohmann::json trace{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return trace.dump() + '\n';
}

}  // namespace ws
