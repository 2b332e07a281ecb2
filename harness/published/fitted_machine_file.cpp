// The line-by-line rewrite of a machine file's library entry, and the reload that checks it.
// The rewrite knows block-style YAML as the shipped files write it (one key per line, comments after
// the value); a value inside a flow map ({per_step: "10 us", ...}) is replaced in place too. Anything
// it cannot find is an error, and whatever it writes is reloaded by the machine loader and compared.
#include "harness/published/fitted_machine_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "base/output_file.hpp"
#include "base/quantity.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws {

namespace {

constexpr int kEfficiencyDigits = 4;


Time written_time(Time t) { return Time::from_ns(std::round(t.ns())); }
double written_efficiency(double e) { return std::stod(significant(e, kEfficiencyDigits)); }
std::string time_text(Time t) { return fmt::format("{:.3f} us", written_time(t).us()); }
std::string efficiency_text(double e) { return significant(e, kEfficiencyDigits); }

// --- Lines of YAML text ---------------------------------------------------------------------------

std::size_t indent_of(std::string_view line) {
  const auto p = line.find_first_not_of(' ');
  return p == std::string_view::npos ? line.size() : p;
}

// A line with a key or a value on it (not blank, not only a comment).
bool has_content(std::string_view line) {
  const std::size_t i = indent_of(line);
  return i < line.size() && line[i] != '#';
}

// Where the line's comment starts (a '#' outside quotes at the start or after a blank), or npos.
std::size_t comment_start(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '"' && c == '\\') {
      ++i;
    } else if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string_view code_of(std::string_view line) { return line.substr(0, std::min(line.size(), comment_start(line))); }

// The column of a block line's key ("  - name: x" -> 4) and the key; nullopt for lines without one.
struct BlockKey {
  std::size_t column = 0;
  std::string key;
};
std::optional<BlockKey> block_key(std::string_view line) {
  const std::string_view code = code_of(line);
  std::size_t i = indent_of(code);
  if (i < code.size() && code[i] == '-' && i + 1 < code.size() && code[i + 1] == ' ') i = code.find_first_not_of(' ', i + 1);
  if (i == std::string_view::npos || i >= code.size()) return std::nullopt;
  const std::size_t colon = code.find(':', i);
  if (colon == std::string_view::npos || (colon + 1 < code.size() && code[colon + 1] != ' ')) return std::nullopt;
  const std::string_view key = code.substr(i, colon - i);
  if (key.empty() || key.find_first_of(" {[\"'") != std::string_view::npos) return std::nullopt;
  return BlockKey{i, std::string(key)};
}

// A value of `key` on a line: its characters [begin, end), quotes included.
struct ValueAt {
  std::size_t begin = 0, end = 0;
};

// The value of `key:` in the code part of `line` at or after `from`: a block key or one of a flow
// map's ({a: 1, key: "2 us"}).
std::optional<ValueAt> find_value(std::string_view line, std::string_view key, std::size_t from = 0) {
  const std::string_view code = code_of(line);
  for (std::size_t at = code.find(key, from); at != std::string_view::npos; at = code.find(key, at + 1)) {
    const std::size_t colon = at + key.size();
    if (colon >= code.size() || code[colon] != ':') continue;
    if (at > 0 && std::string_view(" {,-").find(code[at - 1]) == std::string_view::npos) continue;
    std::size_t b = code.find_first_not_of(' ', colon + 1);
    if (b == std::string_view::npos) return std::nullopt;  // a block header, no value here
    std::size_t e = b;
    if (code[b] == '"' || code[b] == '\'') {
      e = code.find(code[b], b + 1);
      if (e == std::string_view::npos) return std::nullopt;
      ++e;
    } else {
      const bool flow = code.substr(0, at).find('{') != std::string_view::npos;
      e = flow ? code.find_first_of(",}", b) : code.size();
      if (e == std::string_view::npos) e = code.size();
      while (e > b && code[e - 1] == ' ') --e;
    }
    return ValueAt{b, e};
  }
  return std::nullopt;
}

std::string unquoted(std::string_view value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) return std::string(value.substr(1, value.size() - 2));
  return std::string(value);
}

// Lines [begin, end).
struct LineSpan {
  std::size_t begin = 0, end = 0;
};

// The lines under the line at `at` (those indented deeper, and blank or comment lines between them).
LineSpan block_under(const std::vector<std::string>& lines, std::size_t at, std::size_t column) {
  std::size_t end = at + 1;
  for (std::size_t i = at + 1; i < lines.size(); ++i) {
    if (!has_content(lines[i])) continue;
    if (indent_of(lines[i]) <= column) break;
    end = i + 1;
  }
  return {at, end};
}

// One item of a list ("- ..." at some indent) and its keys' column.
struct ListItem {
  LineSpan span;
  std::size_t key_column = 0;
};

// The items of the top-level list `section:`.
std::vector<ListItem> list_items(const std::vector<std::string>& lines, std::string_view section) {
  std::vector<ListItem> items;
  std::size_t i = 0;
  while (i < lines.size() && !(indent_of(lines[i]) == 0 && block_key(lines[i]) && block_key(lines[i])->key == section)) ++i;
  if (i == lines.size()) return items;
  const LineSpan whole = block_under(lines, i, 0);
  std::optional<std::size_t> item_indent;  // the list's own items, not those of lists inside them
  for (std::size_t j = whole.begin + 1; j < whole.end; ++j) {
    if (!has_content(lines[j])) continue;
    const std::size_t dash = indent_of(lines[j]);
    if (lines[j][dash] != '-' || (item_indent && dash != *item_indent)) continue;
    item_indent = dash;
    const auto key = block_key(lines[j]);
    if (!key) continue;
    items.push_back({block_under(lines, j, dash), key->column});
  }
  return items;
}

// The line in `item` whose block key `key` sits at the item's key column.
std::optional<std::size_t> item_key_line(const std::vector<std::string>& lines, const ListItem& item,
                                         std::string_view key) {
  for (std::size_t j = item.span.begin; j < item.span.end; ++j) {
    const auto k = block_key(lines[j]);
    if (k && k->column == item.key_column && k->key == key) return j;
  }
  return std::nullopt;
}

// The unquoted value of `key` in `item`, where the item has the key on a line of its own.
std::optional<std::string> item_value(const std::vector<std::string>& lines, const ListItem& item, std::string_view key) {
  const auto at = item_key_line(lines, item, key);
  if (!at) return std::nullopt;
  const auto value = find_value(lines[*at], key);
  if (!value) return std::nullopt;
  return std::string(unquoted(std::string_view(lines[*at]).substr(value->begin, value->end - value->begin)));
}

std::optional<ListItem> item_named(const std::vector<std::string>& lines, std::string_view section,
                                   std::string_view name_key, std::string_view name) {
  for (const ListItem& item : list_items(lines, section))
    if (item_value(lines, item, name_key) == std::string(name)) return item;
  return std::nullopt;
}

// The `uncertainty:` item of `range` (its parameter, library and protocol; an item without
// `library:` is the default library's, `default_library`).
std::optional<ListItem> range_item(const std::vector<std::string>& lines, const UncertaintyRange& range,
                                   const std::string& default_library) {
  for (const ListItem& item : list_items(lines, "uncertainty")) {
    if (item_value(lines, item, "parameter") != std::string(to_string(range.parameter))) continue;
    if (item_value(lines, item, "library").value_or(default_library) != range.library) continue;
    const std::string protocol = item_value(lines, item, "protocol").value_or("");
    if (protocol_name_of_key(protocol) == range.protocol) return item;
  }
  return std::nullopt;
}

// --- Edits ------------------------------------------------------------------------------------------

struct ValueEdit {
  std::size_t line = 0;
  ValueAt at;
  std::string text;  // the new value, unquoted
  std::string what;  // the key, for the comment when a line holds several
  std::string why;   // empty: a fitted term; else what the comment says instead
};

class LineEditor {
 public:
  explicit LineEditor(const std::string& text) {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) {
        if (start < text.size()) lines_.push_back(text.substr(start));
        final_newline_ = start == text.size();
        break;
      }
      lines_.push_back(text.substr(start, nl - start));
      start = nl + 1;
    }
  }
  const std::vector<std::string>& lines() const { return lines_; }
  void replace(ValueEdit edit) { edits_[edit.line].push_back(std::move(edit)); }

  // The text with every edit made; `note(old values)` is the comment of each edited line.
  template <class Note>
  std::string text(const std::vector<std::string>& header, Note note) const {
    std::string out;
    for (const auto& h : header) out += h + "\n";
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      auto e = edits_.find(i);
      out += e == edits_.end() ? lines_[i] : edited(lines_[i], e->second, note);
      if (i + 1 < lines_.size() || final_newline_) out += "\n";
    }
    return out;
  }

 private:
  template <class Note>
  static std::string edited(const std::string& line, std::vector<ValueEdit> edits, Note note) {
    const std::string why = edits.front().why;
    std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.at.begin > b.at.begin; });
    const std::size_t comment = comment_start(line);
    std::string code(code_of(line));
    std::vector<std::string> was;
    for (const ValueEdit& e : edits) {
      const std::string old = code.substr(e.at.begin, e.at.end - e.at.begin);
      const bool quoted = old.front() == '"' || old.front() == '\'';
      code.replace(e.at.begin, e.at.end - e.at.begin, quoted ? old.front() + e.text + old.front() : e.text);
      was.insert(was.begin(), edits.size() > 1 ? e.what + " " + old : old);
    }
    while (!code.empty() && code.back() == ' ') code.pop_back();
    // The comment where the old one began, so that the file's comments stay in one column; one blank
    // after a value too long for it.
    const std::size_t column = comment == std::string::npos ? code.size() + 1 : std::max(comment, code.size() + 1);
    code.append(column > code.size() ? column - code.size() : 1, ' ');
    std::string joined;
    for (const auto& w : was) joined += (joined.empty() ? "" : ", ") + w;
    return code + "# " + note(joined, why);
  }

  std::vector<std::string> lines_;
  bool final_newline_ = true;
  std::map<std::size_t, std::vector<ValueEdit>> edits_;
};

InputError not_found(const std::string& file, const std::string& key, const std::string& expected) {
  return InputError(InputLocation{file, 0, key}, "", expected);
}

std::string score_text(const FitScore& s) {
  return s.rows == 0 ? std::string("-") : fmt::format("{:.1f} / {:.1f} %", 100 * s.median_abs_error, 100 * s.worst_abs_error);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + std::filesystem::path(n).filename().string();
  return out;
}

const CollectiveLibrary* library_in(const Machine& m, const std::string& name) {
  for (const auto& l : m.collective_libraries)
    if (l.name == name) return &l;
  return nullptr;
}

// The protocol's block key in the file (machine_loader: low_latency is LL, ll128 is LL128).
std::string protocol_key(const ProtocolTerms& p) { return protocol_key_of_name(p.name); }

}  // namespace

LibraryTerms written_terms(const LibraryTerms& terms) {
  LibraryTerms t = terms;
  t.launch_latency = written_time(t.launch_latency);
  t.step_latency = written_time(t.step_latency);
  t.bandwidth_efficiency = written_efficiency(t.bandwidth_efficiency);
  for (Time& o : t.overhead_per_step) o = written_time(o);
  for (ProtocolTerms& p : t.protocols) {
    p.step_latency = written_time(p.step_latency);
    p.bandwidth_efficiency = written_efficiency(p.bandwidth_efficiency);
  }
  if (t.eager_per_step) t.eager_per_step = written_time(*t.eager_per_step);
  return t;
}

std::string fitted_machine_text(const std::string& source_text, const std::string& source_file,
                                const Machine& source, const LibraryFit& fit, const FitProvenance& provenance) {
  const std::string where = "collectives." + fit.library;
  const CollectiveLibrary* base = library_in(source, fit.library);
  if (base == nullptr) throw not_found(source_file, where, "a collective library named " + fit.library);
  LineEditor editor(source_text);
  const auto& lines = editor.lines();
  const auto entry = item_named(lines, "collectives", "name", fit.library);
  if (!entry) throw not_found(source_file, where, "a block-style entry '- name: " + fit.library + "' under collectives:");
  const LibraryTerms& fitted = fit.fitted;
  const LibraryTerms& written = fit.as_written;

  // A key at the entry's own column.
  auto replace_direct = [&](const std::string& key, const std::string& text) {
    const auto at = item_key_line(lines, *entry, key);
    const auto value = at ? find_value(lines[*at], key) : std::nullopt;
    if (!value) throw not_found(source_file, where + "." + key, "'" + key + ": VALUE' on one line of the entry");
    editor.replace({*at, *value, text, key, ""});
  };
  // The n-th (0-based) value of `key` inside the block of the entry's key `block`.
  auto replace_in_block = [&](const std::string& block, const std::string& key, std::size_t n, const std::string& text) {
    const auto at = item_key_line(lines, *entry, block);
    const std::string name = where + "." + block + "." + key;
    if (!at) throw not_found(source_file, name, "the entry's '" + block + ":' block");
    const LineSpan span = block_under(lines, *at, entry->key_column);
    std::size_t seen = 0;
    for (std::size_t j = span.begin; j < span.end; ++j) {
      // On the block's own line, only after its key (a flow map: "eager_overflow: {per_step: ...}").
      std::size_t from = j == *at ? lines[j].find(':', entry->key_column) + 1 : 0;
      while (const auto value = find_value(lines[j], key, from)) {
        if (seen++ == n) {
          editor.replace({j, *value, text, key, ""});
          return;
        }
        from = value->end;
      }
    }
    throw not_found(source_file, name, fmt::format("{} '{}:' values in the block", n + 1, key));
  };

  replace_direct("launch_latency", time_text(fitted.launch_latency));
  replace_direct("step_latency", time_text(fitted.step_latency));
  replace_direct("bandwidth_efficiency", efficiency_text(fitted.bandwidth_efficiency));
  for (std::size_t j = 0; j < fitted.protocols.size() && j < written.protocols.size(); ++j) {
    const ProtocolTerms& f = fitted.protocols[j];
    const ProtocolTerms& w = written.protocols[j];
    if (f.step_latency != w.step_latency) replace_in_block(protocol_key(w), "step_latency", 0, time_text(f.step_latency));
    if (f.bandwidth_efficiency != w.bandwidth_efficiency)
      replace_in_block(protocol_key(w), "bandwidth_efficiency", 0, efficiency_text(f.bandwidth_efficiency));
  }
  if (fitted.eager_per_step && written.eager_per_step && *fitted.eager_per_step != *written.eager_per_step)
    replace_in_block("eager_overflow", "per_step", 0, time_text(*fitted.eager_per_step));
  for (std::size_t j = 0; j < fitted.overhead_per_step.size() && j < written.overhead_per_step.size(); ++j) {
    if (fitted.overhead_per_step[j] != written.overhead_per_step[j])
      replace_in_block("large_job_overhead", "per_step", j, time_text(fitted.overhead_per_step[j]));
  }

  // The loader requires every uncertainty range to hold the file's own value: a fitted value outside
  // a range of this library (its own terms or a protocol's) moves that end of the range.
  Machine fitted_machine = source;
  for (CollectiveLibrary& l : fitted_machine.collective_libraries)
    if (l.name == fit.library) l = with_terms(l, written_terms(fitted));
  for (const UncertaintyRange& r : source.uncertainty) {
    if (r.library != fit.library) continue;
    const ParameterValue v = nominal_value(fitted_machine, r);
    std::string low, high;
    if (is_latency(r.parameter)) {
      if (v.time < r.low_time) low = time_text(v.time);
      if (v.time > r.high_time) high = time_text(v.time);
    } else {
      if (v.number < r.low) low = efficiency_text(v.number);
      if (v.number > r.high) high = efficiency_text(v.number);
    }
    if (low.empty() && high.empty()) continue;
    const std::string where_range = "uncertainty." + range_label(r);
    const auto item = range_item(lines, r, source.collective_libraries.front().name);
    for (const auto& [key, text] : {std::pair{std::string("low"), low}, std::pair{std::string("high"), high}}) {
      if (text.empty()) continue;
      const auto at = item ? item_key_line(lines, *item, key) : std::nullopt;
      const auto value = at ? find_value(lines[*at], key) : std::nullopt;
      if (!value) throw not_found(source_file, where_range + "." + key, "'" + key + ": VALUE' on one line");
      editor.replace({*at, *value, text, key, "range end moved to hold the fitted value (the loader requires it)"});
    }
  }

  const std::string inputs = joined(provenance.inputs);
  const std::string scores = fmt::format("{}-fold {} median / worst, in sample {}", kFitFolds, score_text(fit.kfold),
                                         score_text(fit.in_sample));
  const std::vector<std::string> header = {
      fmt::format("# Fitted on {}: the terms of collective library {} marked [fit] below are fitted to {} rows of",
                  provenance.date, fit.library, fit.file.rows),
      fmt::format("# {} by", inputs),
      fmt::format("#   {}", provenance.command),
      fmt::format("# ({}; the file's own terms scored {}). Every other line is {}'s.", scores, score_text(fit.file),
                  source_file),
      "#"};
  return editor.text(header, [&](const std::string& was, const std::string& why) {
    if (!why.empty()) return fmt::format("[fit] {}, written {}; was {}", why, provenance.date, was);
    return fmt::format("[fit] collectives-vs-published on {}: {}, written {}; was {}", inputs, scores,
                       provenance.date, was);
  });
}

void check_fitted_machine_text(const std::string& text, const std::string& file, const Machine& source,
                               const LibraryFit& fit) {
  Machine reloaded;
  try {
    reloaded = parse_machine(text, file);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: not written: the rewritten machine file does not load: {}", file, e.what()));
  }
  auto fail = [&](const std::string& term, const std::string& got, const std::string& expected) {
    return InputError(InputLocation{file, 0, "collectives." + fit.library + "." + term}, got,
                      expected + " (not written: the rewrite of the machine file's lines went wrong)");
  };
  const CollectiveLibrary* library = library_in(reloaded, fit.library);
  if (library == nullptr) throw fail("name", "", "the library " + fit.library);
  // To the printed precision: times to the nanosecond, efficiencies to 4 significant digits.
  auto check_time = [&](const std::string& term, Time got, Time want) {
    if (std::abs(got.ps() - want.ps()) > 500) throw fail(term, time_text(got), "the fitted " + time_text(want));
  };
  auto check_efficiency = [&](const std::string& term, double got, double want) {
    const double unit = std::pow(10.0, std::floor(std::log10(std::fabs(want))) - (kEfficiencyDigits - 1));
    if (std::fabs(got - want) > 0.5 * unit * (1 + 1e-9))
      throw fail(term, efficiency_text(got), "the fitted " + efficiency_text(want));
  };
  const LibraryTerms got = terms_of(*library);
  const LibraryTerms& want = fit.fitted;
  check_time("launch_latency", got.launch_latency, want.launch_latency);
  check_time("step_latency", got.step_latency, want.step_latency);
  check_efficiency("bandwidth_efficiency", got.bandwidth_efficiency, want.bandwidth_efficiency);
  if (got.protocols.size() != want.protocols.size()) throw fail("protocols", "", "the source's protocols");
  for (std::size_t j = 0; j < got.protocols.size(); ++j) {
    const std::string key = protocol_key(want.protocols[j]);
    check_time(key + ".step_latency", got.protocols[j].step_latency, want.protocols[j].step_latency);
    check_efficiency(key + ".bandwidth_efficiency", got.protocols[j].bandwidth_efficiency,
                     want.protocols[j].bandwidth_efficiency);
  }
  if (got.eager_per_step.has_value() != want.eager_per_step.has_value()) throw fail("eager_overflow", "", "the source's");
  if (got.eager_per_step) check_time("eager_overflow.per_step", *got.eager_per_step, *want.eager_per_step);
  if (got.overhead_per_step.size() != want.overhead_per_step.size()) throw fail("large_job_overhead", "", "the source's");
  for (std::size_t j = 0; j < got.overhead_per_step.size(); ++j)
    check_time(fmt::format("large_job_overhead.points[{}].per_step", j), got.overhead_per_step[j], want.overhead_per_step[j]);
  // Every other library as the source wrote it.
  if (reloaded.collective_libraries.size() != source.collective_libraries.size())
    throw fail("", "", "the source's collective libraries");
  for (std::size_t i = 0; i < source.collective_libraries.size(); ++i) {
    const CollectiveLibrary& s = source.collective_libraries[i];
    const CollectiveLibrary& r = reloaded.collective_libraries[i];
    if (s.name == fit.library) continue;
    const LibraryTerms a = terms_of(s), b = terms_of(r);
    const bool same = r.name == s.name && a.launch_latency == b.launch_latency && a.step_latency == b.step_latency &&
                      a.bandwidth_efficiency == b.bandwidth_efficiency && a.overhead_per_step == b.overhead_per_step &&
                      a.eager_per_step == b.eager_per_step && a.protocols.size() == b.protocols.size();
    if (!same) {
      throw InputError(InputLocation{file, 0, "collectives." + s.name}, r.name,
                       "library " + s.name + " as the source wrote it (not written: the rewrite touched it)");
    }
  }
}

void write_fitted_machine_file(const std::filesystem::path& source_file, const std::filesystem::path& out,
                               const LibraryFit& fit, const FitProvenance& provenance) {
  const std::string source_text = read_input_file(source_file, "a readable machine file (YAML)", kMaxMachineFileBytes);
  const Machine source = parse_machine(source_text, source_file.string());
  const std::string text = fitted_machine_text(source_text, source_file.string(), source, fit, provenance);
  check_fitted_machine_text(text, out.string(), source, fit);
  write_file_atomically(out, text);
}

}  // namespace ws
