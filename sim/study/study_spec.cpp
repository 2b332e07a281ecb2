#include "sim/study/study_spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include "base/input_error.hpp"
#include "sim/layout_search/layout_enumeration.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/study/model_input.hpp"
#include "base/input_file.hpp"

namespace ws {
namespace {

constexpr std::string_view kTopKeys[] = {"name",      "description", "rationale", "machine", "library",
                                         "precision", "options",     "points",    "top_k",   "strategies"};
constexpr std::string_view kOptionKeys[] = {"recompute", "overlap_all_reduce", "overlap_reduce_scatter",
                                            "overlap_all_gather", "overlap_data_parallel"};
constexpr std::string_view kPointKeys[] = {"devices", "model", "batch_sequences", "layout", "ranks_per_node"};
constexpr std::string_view kInlineModelKeys[] = {
    "name",   "layers",     "hidden",     "heads",    "sequence_length", "vocabulary",      "family",
    "kv_heads", "ffn_hidden", "activation", "norm",     "position",        "tied_embeddings", "biases"};

// Limits of a study spec (README "Reliability"): every point is priced over every layout, sampled
// and varied, so a study's time grows with its points; the candidates table with top_k.
constexpr std::size_t kMaxStudyPoints = 1000;
constexpr int kMaxTopK = 1000;

// The file, and the key path being read, so that every error can name both.
struct Reader {
  const std::string& file;

  InputLocation at(const YAML::Node& node, std::string key) const {
    const int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return InputLocation{file, line, std::move(key)};
  }
};

template <std::size_t N>
std::string join(const std::string_view (&keys)[N]) {
  std::string out;
  for (auto k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

template <std::size_t N>
void check_keys(const Reader& r, const YAML::Node& map, const std::string& prefix,
                const std::string_view (&allowed)[N]) {
  std::vector<std::string> seen;
  for (const auto& kv : map) {
    // A complex key ("? {a: 1}: x") is valid YAML but no setting: found by fuzzing.
    if (!kv.first.IsScalar())
      throw InputError(r.at(kv.first, prefix), "", fmt::format("plain keys, one of {}", join(allowed)));
    const auto key = kv.first.as<std::string>();
    if (std::find(std::begin(allowed), std::end(allowed), key) == std::end(allowed)) {
      throw InputError(r.at(kv.first, prefix + key), key, fmt::format("one of the keys {}", join(allowed)));
    }
    // yaml-cpp keeps the first of two equal keys: the second would be silently ignored.
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw InputError(r.at(kv.first, prefix + key), key, "each key at most once");
    seen.push_back(key);
  }
}

YAML::Node required(const Reader& r, const YAML::Node& map, const std::string& key, const std::string& path,
                    const char* what) {
  YAML::Node node = map[key];
  if (!node) throw InputError(r.at(map, path), "", fmt::format("a '{}' key ({})", key, what));
  return node;
}

std::string scalar(const Reader& r, const YAML::Node& node, const std::string& path, const char* what) {
  if (!node.IsScalar()) throw InputError(r.at(node, path), "", what);
  return node.Scalar();
}

long long positive_integer(const Reader& r, const YAML::Node& node, const std::string& path) {
  const std::string text = scalar(r, node, path, "a positive integer");
  long long value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value <= 0 || value > std::numeric_limits<int>::max()) {
    throw InputError(r.at(node, path), text, "a positive integer");
  }
  return value;
}

bool boolean(const Reader& r, const YAML::Node& node, const std::string& path) {
  const std::string text = scalar(r, node, path, "true or false");
  if (text == "true") return true;
  if (text == "false") return false;
  throw InputError(r.at(node, path), text, "true or false");
}

// File names are built from the study name, so it must stay inside the output directory.
bool is_file_name_safe(std::string_view name) {
  return !name.empty() && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

StepOptions read_options(const Reader& r, const YAML::Node& node, StepOptions options) {
  if (!node.IsMap()) throw InputError(r.at(node, "options"), "", "a map of step options");
  check_keys(r, node, "options.", kOptionKeys);
  struct Flag {
    const char* key;
    bool StepOptions::*field;
  };
  const Flag flags[] = {{"recompute", &StepOptions::recompute},
                        {"overlap_all_reduce", &StepOptions::overlap_all_reduce},
                        {"overlap_reduce_scatter", &StepOptions::overlap_reduce_scatter},
                        {"overlap_all_gather", &StepOptions::overlap_all_gather},
                        {"overlap_data_parallel", &StepOptions::overlap_data_parallel}};
  for (const auto& flag : flags) {
    if (const YAML::Node value = node[flag.key]) {
      options.*flag.field = boolean(r, value, fmt::format("options.{}", flag.key));
    }
  }
  return options;
}

constexpr std::string_view kInlineModelHint =
    "a map of layers, hidden, heads, sequence_length, vocabulary (and optionally family, kv_heads, ffn_hidden, "
    "activation, norm, position, tied_embeddings, biases)";

ModelSpec read_model(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) return named_model(node.Scalar(), r.at(node, path), kInlineModelHint);
  if (!node.IsMap()) {
    throw InputError(r.at(node, path), "",
                     fmt::format("a model name ({}) or {}", model_names(), kInlineModelHint));
  }
  check_keys(r, node, path + ".", kInlineModelKeys);
  CustomModelFields fields;
  auto field = [&](const char* key) {
    const std::string key_path = fmt::format("{}.{}", path, key);
    return positive_integer(r, required(r, node, key, path, "a positive integer"), key_path);
  };
  fields.layers = field("layers");
  fields.hidden = field("hidden");
  fields.heads = field("heads");
  fields.sequence_length = field("sequence_length");
  fields.vocabulary = field("vocabulary");
  // The architecture: a family's defaults, then any of its choices given one by one.
  for (const auto& [key, text] : {std::pair{"family", &fields.family}, std::pair{"activation", &fields.activation},
                                  std::pair{"norm", &fields.norm}, std::pair{"position", &fields.position}})
    if (const YAML::Node value = node[key]) *text = scalar(r, value, fmt::format("{}.{}", path, key), "a name");
  for (const auto& [key, number] : {std::pair{"kv_heads", &fields.kv_heads}, std::pair{"ffn_hidden", &fields.ffn_hidden}})
    if (const YAML::Node value = node[key]) *number = positive_integer(r, value, fmt::format("{}.{}", path, key));
  for (const auto& [key, flag] : {std::pair{"tied_embeddings", &fields.tied_embeddings}, std::pair{"biases", &fields.biases}})
    if (const YAML::Node value = node[key]) *flag = boolean(r, value, fmt::format("{}.{}", path, key));
  ModelSpec model = custom_model(fields, r.at(node, path));
  if (const YAML::Node name = node["name"]) {
    model.name = scalar(r, name, path + ".name", "a model name (text)");
  }
  return model;
}

StudyPoint read_point(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) {
    throw InputError(r.at(node, path), "", "a map with devices, model, batch_sequences (and optionally layout, ranks_per_node)");
  }
  check_keys(r, node, path + ".", kPointKeys);
  StudyPoint point;
  point.line = r.at(node, path).line;
  point.devices = static_cast<int>(
      positive_integer(r, required(r, node, "devices", path, "a positive integer"), path + ".devices"));
  point.model =
      read_model(r, required(r, node, "model", path, "a model name or map"), path + ".model");
  point.batch.sequences = positive_integer(
      r, required(r, node, "batch_sequences", path, "a positive integer: sequences per step"),
      path + ".batch_sequences");
  if (const YAML::Node rpn = node["ranks_per_node"]) {
    point.ranks_per_node = static_cast<int>(positive_integer(r, rpn, path + ".ranks_per_node"));
  }
  if (const YAML::Node l = node["layout"]) {
    const std::string key = path + ".layout";
    constexpr const char* kLayoutText =
        "a layout Gdata x Gx x Gy x Gz, e.g. 32x1x2x128, optionally with pipeline stages, e.g. 8x1x4x1/pp=4,mb=16";
    const std::string text = scalar(r, l, key, kLayoutText);
    const std::optional<Layout> layout = parse_layout(text);
    if (!layout) throw InputError(r.at(l, key), text, kLayoutText);
    if (!holds_devices(*layout, point.devices)) {
      throw InputError(r.at(l, key), text,
                       fmt::format("a layout whose Gdata x Gx x Gy x Gz is the point's devices ({})", point.devices));
    }
    if (const std::string problem = layout_problem(point.model, point.batch, *layout); !problem.empty()) {
      throw InputError(r.at(l, key), text,
                       fmt::format("a layout that can run {} with a batch of {} sequences; this one cannot: {}",
                                   point.model.name, point.batch.sequences, problem));
    }
    point.layout = layout;
  }
  return point;
}

}  // namespace

std::string machine_short_name(const std::string& machine_name_or_path) {
  return std::filesystem::path(machine_name_or_path).stem().string();
}

StudySpec parse_study_spec(const std::string& yaml_text, const std::string& file) {
  const Reader r{file};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(InputLocation{file, e.mark.line >= 0 ? e.mark.line + 1 : 0, ""}, "",
                     fmt::format("valid YAML ({})", e.msg));
  }
  if (!root.IsMap()) throw InputError(r.at(root, ""), "", "a YAML map of study settings");
  check_keys(r, root, "", kTopKeys);

  StudySpec spec;
  spec.file = file;
  spec.machine = scalar(r, required(r, root, "machine", "", "a machine name or machine file path"), "machine",
                        "a machine name or machine file path");
  if (const YAML::Node name = root["name"]) {
    spec.name = scalar(r, name, "name", "a study name (text)");
  } else {
    spec.name = std::filesystem::path(file).stem().string();
  }
  const std::string machine_name = machine_short_name(spec.machine);
  if (!is_file_name_safe(spec.name)) {
    throw InputError(r.at(root["name"] ? root["name"] : root, "name"), spec.name,
                     "a name of letters, digits, '-', '_' and '.' (it names the output files)");
  }
  if (spec.name.rfind(machine_name, 0) != 0) {
    throw InputError(r.at(root["name"] ? root["name"] : root, "name"), spec.name,
                     fmt::format("a study name starting with the machine's name '{}' (so that "
                                 "output files say which machine they are for)",
                                 machine_name));
  }
  if (const YAML::Node d = root["description"]) {
    spec.description = scalar(r, d, "description", "a description (text)");
  }
  if (const YAML::Node d = root["rationale"]) {
    spec.rationale = scalar(r, d, "rationale", "a rationale (text)");
  }
  if (const YAML::Node l = root["library"]) {
    spec.library = scalar(r, l, "library", "a collective library of the machine file (collectives[].name)");
    spec.library_at = r.at(l, "library");
  }
  if (const YAML::Node p = root["precision"]) {
    const std::string text = scalar(r, p, "precision", "a precision");
    const auto precision = parse_precision(text);
    if (!precision) throw InputError(r.at(p, "precision"), text, fmt::format("one of {}", kPrecisionNames));
    spec.options.precision = *precision;
  }
  if (const YAML::Node o = root["options"]) spec.options = read_options(r, o, spec.options);
  if (const YAML::Node k = root["top_k"]) {
    spec.top_k = static_cast<int>(positive_integer(r, k, "top_k"));
    if (spec.top_k > kMaxTopK)
      throw InputError(r.at(k, "top_k"), std::to_string(spec.top_k), fmt::format("a positive integer of at most {}", kMaxTopK));
  }

  std::vector<Strategy> strategies{Strategy::four_d};
  if (const YAML::Node s = root["strategies"]) {
    constexpr const char* kExpected = "a list of strategies from 4d, megatron, fsdp (each once)";
    if (!s.IsSequence() || s.size() == 0) throw InputError(r.at(s, "strategies"), "", kExpected);
    strategies.clear();
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::string key = fmt::format("strategies[{}]", i);
      const std::string text = scalar(r, s[i], key, kExpected);
      const std::optional<Strategy> strategy = text == "4d"         ? std::optional(Strategy::four_d)
                                               : text == "megatron" ? std::optional(Strategy::megatron)
                                               : text == "fsdp"     ? std::optional(Strategy::fsdp)
                                                                    : std::nullopt;
      if (!strategy || std::find(strategies.begin(), strategies.end(), *strategy) != strategies.end())
        throw InputError(r.at(s[i], key), text, kExpected);
      strategies.push_back(*strategy);
    }
  }
  const YAML::Node points = required(r, root, "points", "", "a list of {devices, model, batch_sequences}");
  if (!points.IsSequence() || points.size() == 0) {
    throw InputError(r.at(points, "points"), "", "a non-empty list of {devices, model, batch_sequences}");
  }
  if (points.size() > kMaxStudyPoints) {
    throw InputError(r.at(points, "points"), fmt::format("{} points", points.size()),
                     fmt::format("at most {} points (the limit for one study; split it into several)", kMaxStudyPoints));
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string path = fmt::format("points[{}]", i);
    StudyPoint point = read_point(r, points[i], path);
    point.strategies = strategies;
    if (!spec.points.empty() && point.devices < spec.points.back().devices) {
      throw InputError(r.at(points[i]["devices"], path + ".devices"), std::to_string(point.devices),
                       fmt::format("device counts in non-decreasing order (previous point has {})",
                                   spec.points.back().devices));
    }
    spec.points.push_back(std::move(point));
  }
  return spec;
}

StudySpec load_study_spec(const std::string& path) {
  return parse_study_spec(read_input_file(path, "a readable study file (YAML)", kMaxSpecFileBytes), path);
}

Machine study_machine(const StudySpec& spec, Machine machine) {
  if (!spec.library.empty()) machine = with_collective_library(std::move(machine), spec.library, spec.library_at);
  return without_other_libraries_ranges(std::move(machine));
}

}  // namespace ws
