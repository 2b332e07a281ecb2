#include "sim/study/task_records.hpp"

#include "base/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "base/fnv1a.hpp"
#include "base/input_error.hpp"

namespace ws {
namespace {

using Json = nlohmann::json;

Json estimate_json(const LayoutEstimate& e) {
  const auto& s = e.step;
  const auto& m = e.memory;
  const Layout& l = e.layout;
  return Json{{"layout", {l.data, l.x, l.y, l.z, l.pipeline, l.virtual_stages, l.micro_batches}},
              {"layout_text", to_string(l)},  // with the strategy, sp and zero the array lacks
              {"step_ps",
               {s.compute.ps(), s.exposed_x.ps(), s.exposed_y.ps(), s.exposed_z.ps(), s.exposed_data.ps(), s.skew.ps(),
                s.pipeline.ps(), s.pipeline_transfer.ps()}},
              {"memory_bytes",
               {m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes, m.buffers_bytes}},
              {"flops", {e.hardware_flops, e.model_flops, e.sustained_flops_per_s}},
              {"peak_fraction", {e.hardware_peak_fraction, e.model_peak_fraction}},
              {"fits_memory", e.fits_memory},
              {"analytic_step_ps", e.analytic_step.ps()},
              {"isolated_ps",
               {e.isolated.compute.ps(), e.isolated.exposed_x.ps(), e.isolated.exposed_y.ps(),
                e.isolated.exposed_z.ps(), e.isolated.exposed_data.ps(), e.isolated.skew.ps(),
                e.isolated.pipeline.ps(), e.isolated.pipeline_transfer.ps()}}};
}

LayoutEstimate estimate_from_json(const Json& j) {
  LayoutEstimate e;
  const auto& l = j.at("layout");
  e.layout = Layout{l.at(0).get<int>(), l.at(1).get<int>(), l.at(2).get<int>(), l.at(3).get<int>(),
                    l.at(4).get<int>(), l.at(5).get<int>(), l.at(6).get<int>()};
  if (j.contains("layout_text")) {
    const auto parsed = parse_layout(j.at("layout_text").get<std::string>());
    if (!parsed) throw std::runtime_error("a task record's layout_text is not a layout");
    e.layout = *parsed;
  }
  const auto& s = j.at("step_ps");
  auto ps = [&](std::size_t i) { return Time::from_ps(s.at(i).get<std::int64_t>()); };
  auto optional_ps = [&](const Json& a, std::size_t i) {
    return a.size() > i ? Time::from_ps(a.at(i).get<std::int64_t>()) : Time::zero();
  };
  e.step = StepBreakdown{ps(0), ps(1), ps(2), ps(3), ps(4), ps(5), ps(6), optional_ps(s, 7)};
  const auto& m = j.at("memory_bytes");
  e.memory = MemoryEstimate{m.at(0).get<Bytes>(), m.at(1).get<Bytes>(), m.at(2).get<Bytes>(), m.at(3).get<Bytes>(),
                            m.at(4).get<Bytes>()};
  const auto& f = j.at("flops");
  e.hardware_flops = f.at(0).get<double>();
  e.model_flops = f.at(1).get<double>();
  e.sustained_flops_per_s = f.at(2).get<double>();
  const auto& p = j.at("peak_fraction");
  e.hardware_peak_fraction = p.at(0).get<double>();
  e.model_peak_fraction = p.at(1).get<double>();
  e.fits_memory = j.at("fits_memory").get<bool>();
  e.analytic_step = Time::from_ps(j.at("analytic_step_ps").get<std::int64_t>());
  const auto& iso = j.at("isolated_ps");
  auto iso_ps = [&](std::size_t i) { return Time::from_ps(iso.at(i).get<std::int64_t>()); };
  e.isolated =
      StepBreakdown{iso_ps(0), iso_ps(1), iso_ps(2), iso_ps(3), iso_ps(4), iso_ps(5), iso_ps(6), optional_ps(iso, 7)};
  return e;
}

PointEvaluation evaluation_from_json(const Json& j) {
  PointEvaluation e;
  e.feasible = j.at("feasible").get<bool>();
  e.reason = j.at("reason").get<std::string>();
  e.layouts_valid = j.at("layouts_valid").get<int>();
  e.layouts_fitting = j.at("layouts_fitting").get<int>();
  for (const auto& c : j.at("candidates")) e.candidates.push_back(estimate_from_json(c));
  return e;
}

}  // namespace

namespace {
// The record's checksum: FNV-1a of its JSON without the "check" key (keys sorted, numbers in
// shortest round-trip form: the same bytes when written and when read back).
std::string record_check(const Json& record_without_check) {
  return fmt::format("{:016x}", fnv1a64(record_without_check.dump()));
}
}  // namespace

std::string format_task_record(const std::string& study_hash, const std::string& task_key,
                               const PointEvaluation& result) {
  Json candidates = Json::array();
  for (const auto& c : result.candidates) candidates.push_back(estimate_json(c));
  Json record{{"study", study_hash},
              {"task", task_key},
              {"result",
               {{"feasible", result.feasible},
                {"reason", result.reason},
                {"layouts_valid", result.layouts_valid},
                {"layouts_fitting", result.layouts_fitting},
                {"candidates", candidates}}}};
  record["check"] = record_check(record);
  return record.dump() + "\n";
}

std::map<std::string, PointEvaluation> parse_task_records(const std::string& text, const std::string& study_hash) {
  std::map<std::string, PointEvaluation> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string_view line(text.data() + start, end - start);
    try {
      Json j = Json::parse(line);
      if (j.at("study").get<std::string>() != study_hash) continue;
      // An edited record (still valid JSON) is recomputed, not trusted.
      const std::string check = j.at("check").get<std::string>();
      j.erase("check");
      if (check != record_check(j)) continue;
      out[j.at("task").get<std::string>()] = evaluation_from_json(j.at("result"));
    } catch (const Json::exception&) {
      continue;  // a line cut short by an interruption, or not ours: recompute that task
    }
  }
  return out;
}

void append_task_record(const std::filesystem::path& partial_file, const std::string& line) {
  const int fd = ::open(partial_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  const auto fail = [&](const char* what) {
    throw OutputError(fmt::format("{}: the partial-results file cannot be {}: {}", partial_file.string(), what,
                                  errno == ELOOP ? "it is a symbolic link" : std::strerror(errno)));
  };
  if (fd < 0) fail("created and appended to");
  const ssize_t written = ::write(fd, line.data(), line.size());
  const bool complete = written == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!complete) fail("appended to");
}

std::map<std::string, PointEvaluation> load_task_records(const std::filesystem::path& partial_file,
                                                         const std::string& study_hash) {
  std::ifstream in(partial_file, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_task_records(text.str(), study_hash);
}

}  // namespace ws
