// A machine file with a library's terms fitted to nccl-tests output (collectives-vs-published
// --write-machine): it reloads with the fitted terms and prices the rows as the fit did; every line
// outside the library's term lines is the source's, byte for byte; values in flow maps and
// large_job_overhead points are found too; and the reload check refuses a text whose terms are not
// the fit's.
#include "harness/published/fitted_machine_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/input_error.hpp"
#include "harness/published/measurement_file.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;

const std::string kSource = std::string(WEAKSCALE_SOURCE_DIR);
const std::string kSample = kSource + "/tests/harness/published/data/nccl_all_reduce_perf_2x4.txt";
const std::string kMachines = kSource + "/machines";
const std::string kPerlmutter = kMachines + "/perlmutter.yaml";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

const CollectiveLibrary& library_named(const Machine& m, const std::string& name) {
  for (const auto& l : m.collective_libraries)
    if (l.name == name) return l;
  throw std::runtime_error("no library " + name);
}

std::vector<PublishedCollective> rows_on(const std::string& machine) {
  BenchmarkJob job;
  job.machine = machine;
  job.library = "nccl";
  return load_measurements(kSample, std::nullopt, job);
}

const FitProvenance kProvenance{"weakscale collectives-vs-published nccl_all_reduce_perf_2x4.txt --machine perlmutter "
                                "--library nccl --write-machine mycluster.yaml",
                                {kSample},
                                "2026-12-03"};

// One fit of the sample's 28 Perlmutter NCCL all-reduce rows, shared by the tests (NLopt takes seconds).
struct Fitted {
  std::vector<PublishedCollective> rows = rows_on("perlmutter");
  PublishedFit fit = fit_published(rows, kMachines);
  std::string source_text = read(kPerlmutter);
  Machine source = load_machine(kPerlmutter);
  std::string text = fitted_machine_text(source_text, kPerlmutter, source, fit.libraries.at(0), kProvenance);
};
const Fitted& fitted() {
  static const Fitted f;
  return f;
}

void expect_times_near(Time got, Time want, const std::string& what) {
  EXPECT_LE(std::abs(got.ps() - want.ps()), 500) << what << ": " << got.us() << " us vs " << want.us() << " us";
}
void expect_efficiency_near(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 5e-4 * want) << what;
}

TEST(FittedMachineFile, ReloadsWithTheFittedTermsAndPricesTheRowsAsTheFit) {
  const Fitted& f = fitted();
  ASSERT_EQ(f.fit.libraries.size(), 1u);
  const LibraryFit& fit = f.fit.libraries[0];
  // Not a tautology: the fit moved the written terms, so an unrewritten file would fail below.
  ASSERT_GT(std::abs(fit.fitted.step_latency.us() - fit.as_written.step_latency.us()), 0.01);
  ASSERT_GT(std::abs(fit.fitted.launch_latency.us() - fit.as_written.launch_latency.us()), 0.01);
  const Machine written = parse_machine(f.text, "written.yaml");
  const LibraryTerms got = terms_of(library_named(written, "nccl"));
  expect_times_near(got.launch_latency, fit.fitted.launch_latency, "launch_latency");
  expect_times_near(got.step_latency, fit.fitted.step_latency, "step_latency");
  expect_efficiency_near(got.bandwidth_efficiency, fit.fitted.bandwidth_efficiency, "bandwidth_efficiency");
  ASSERT_EQ(got.protocols.size(), fit.fitted.protocols.size());
  for (std::size_t j = 0; j < got.protocols.size(); ++j) {
    expect_times_near(got.protocols[j].step_latency, fit.fitted.protocols[j].step_latency, got.protocols[j].name);
    expect_efficiency_near(got.protocols[j].bandwidth_efficiency, fit.fitted.protocols[j].bandwidth_efficiency,
                           got.protocols[j].name);
  }
  // Each row priced on the written file as on the source with the fitted terms.
  const CollectiveLibrary with_fit = with_terms(library_named(f.source, "nccl"), fit.fitted);
  for (const auto& row : f.rows) {
    const double on_written = PublishedRowModel(written, row).busbw_gbps(library_named(written, "nccl"));
    const double on_fit = PublishedRowModel(f.source, row).busbw_gbps(with_fit);
    EXPECT_NEAR(on_written / on_fit, 1.0, 1e-3) << row.bytes << " B";
  }
  // The comparison on the written file: its terms as written score what the fit scored in sample.
  const auto dir = std::filesystem::temp_directory_path() / ("weakscale-fitted-machine-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_fitted_machine_file(kPerlmutter, dir / "mycluster.yaml", fit, kProvenance);
  const PublishedFit again = fit_published(rows_on((dir / "mycluster.yaml").string()), kMachines);
  ASSERT_EQ(again.libraries.size(), 1u);
  // Within the written digits (efficiencies to 4: up to 1.2e-4 of a price) and half the console's 0.1 %.
  EXPECT_NEAR(again.libraries[0].file.median_abs_error, fit.in_sample.median_abs_error, 5e-4);
  EXPECT_NEAR(again.libraries[0].file.worst_abs_error, fit.in_sample.worst_abs_error, 5e-4);
  EXPECT_GT(fit.file.worst_abs_error, fit.in_sample.worst_abs_error + 1e-3);  // the source file scores worse
  std::filesystem::remove_all(dir);
}

// The lines of the `- name: nccl` entry under collectives: (first, end).
std::pair<std::size_t, std::size_t> entry_lines(const std::vector<std::string>& lines, const std::string& name) {
  std::size_t first = 0;
  while (first < lines.size() && lines[first].find("- name: " + name) == std::string::npos) ++first;
  std::size_t end = first + 1;
  while (end < lines.size() && lines[end].find("- name:") == std::string::npos &&
         (lines[end].empty() || lines[end][0] == ' ' || lines[end][0] == '#'))
    ++end;
  return {first, end};
}

std::string key_of(const std::string& line) {
  const auto start = line.find_first_not_of(" -");
  return line.substr(start, line.find(':') - start);
}

TEST(FittedMachineFile, KeepsEveryLineOutsideTheLibrarysTermsByteForByte) {
  const Fitted& f = fitted();
  const auto source = lines_of(f.source_text);
  const auto written = lines_of(f.text);
  ASSERT_GT(written.size(), source.size());
  const std::size_t header = written.size() - source.size();
  for (std::size_t i = 0; i < header; ++i) EXPECT_EQ(written[i].rfind("#", 0), 0u) << written[i];
  EXPECT_THAT(written[0], HasSubstr("nccl"));
  EXPECT_THAT(f.text.substr(0, 600), HasSubstr(kProvenance.command));
  const auto [first, end] = entry_lines(source, "nccl");
  ASSERT_LT(first, source.size());
  const std::vector<std::string> terms = {"launch_latency", "step_latency", "bandwidth_efficiency", "per_step"};
  int changed_terms = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::string& was = source[i];
    const std::string& now = written[header + i];
    if (was == now) continue;
    const std::string key = key_of(was);
    const bool term = i > first && i < end && std::find(terms.begin(), terms.end(), key) != terms.end();
    // A default library's fitted value outside its uncertainty range moves the range's end.
    const bool range_end = (key == "low" || key == "high") && now.find("range end moved") != std::string::npos;
    EXPECT_TRUE(term || range_end) << "line " << i + 1 << " changed:\n" << was << "\n" << now;
    EXPECT_EQ(now.substr(0, now.find(':')), was.substr(0, was.find(':'))) << "the key moved";
    EXPECT_THAT(now, HasSubstr("# [fit] "));
    // The comment stays in the source's column where the new value fits before it.
    if (now.find(" #") < was.find(" #")) ADD_FAILURE() << "comment column moved left:\n" << was << "\n" << now;
    if (term) {
      ++changed_terms;
      EXPECT_THAT(now, HasSubstr("5-fold"));
      EXPECT_THAT(now, HasSubstr("nccl_all_reduce_perf_2x4.txt"));
      EXPECT_THAT(now, HasSubstr("written 2026-12-03"));
    }
  }
  EXPECT_GE(changed_terms, 3);  // launch, step, bandwidth at least
}

// A source with a flow-map eager window and a large_job_overhead table: the fit's values land in them.
TEST(FittedMachineFile, RewritesFlowMapsAndOverheadPoints) {
  std::string text = read(kPerlmutter);
  const std::string anchor = "    step_overlap: pipelined ";
  const auto at = text.find(anchor, text.find("- name: nccl"));
  ASSERT_NE(at, std::string::npos);
  text.insert(at,
              "    eager_overflow: {above: \"16 KiB\", up_to: \"64 KiB\", per_step: \"310 us\"}  # a window\n"
              "    large_job_overhead:\n"
              "      ops: [all-gather]\n"
              "      points:\n"
              "        - {nodes: 32, per_step: \"10 us\", message: \"64 KiB\"}  # first\n"
              "        - nodes: 64\n"
              "          per_step: \"20 us\"       # second\n"
              "          message: \"64 KiB\"\n");
  const Machine source = parse_machine(text, "with-tables.yaml");
  LibraryFit fit;
  fit.machine = "perlmutter";
  fit.library = "nccl";
  fit.as_written = terms_of(library_named(source, "nccl"));
  fit.fitted = fit.as_written;
  fit.fitted.launch_latency = Time::from_us(42.1234);
  fit.fitted.eager_per_step = Time::from_us(123.456);
  fit.fitted.overhead_per_step = {Time::from_us(11.5), Time::from_us(0.25)};
  fit.fitted.protocols.at(1).bandwidth_efficiency = 0.2345678;
  const std::string out = fitted_machine_text(text, "with-tables.yaml", source, fit, kProvenance);
  EXPECT_NO_THROW(check_fitted_machine_text(out, "out.yaml", source, fit));
  const LibraryTerms got = terms_of(library_named(parse_machine(out, "out.yaml"), "nccl"));
  EXPECT_EQ(got.launch_latency, Time::from_us(42.123));
  EXPECT_EQ(*got.eager_per_step, Time::from_us(123.456));
  EXPECT_EQ(got.overhead_per_step, (std::vector<Time>{Time::from_us(11.5), Time::from_us(0.25)}));
  EXPECT_DOUBLE_EQ(got.protocols.at(1).bandwidth_efficiency, 0.2346);
  EXPECT_EQ(got.protocols.at(0).step_latency, fit.as_written.protocols.at(0).step_latency);
  EXPECT_THAT(out, HasSubstr("eager_overflow: {above: \"16 KiB\", up_to: \"64 KiB\", per_step: \"123.456 us\"} # [fit]"));
  EXPECT_THAT(out, HasSubstr("was \"310 us\""));
  EXPECT_THAT(out, HasSubstr("launch_latency: \"42.123 us\""));
  EXPECT_THAT(out, HasSubstr("bandwidth_efficiency: 0.2346"));
  // LL's terms did not move: its lines are the source's.
  EXPECT_THAT(out, HasSubstr("      step_latency: \"3.971 us\"     # [fit] same fit;"));
}

// The check reloads what it is given: a text whose terms are not the fit's is refused, naming the term.
TEST(FittedMachineFile, CheckRefusesATextWithoutTheFittedTerms) {
  const Fitted& f = fitted();
  const LibraryFit& fit = f.fit.libraries.at(0);
  EXPECT_NO_THROW(check_fitted_machine_text(f.text, "out.yaml", f.source, fit));
  try {
    check_fitted_machine_text(f.source_text, "out.yaml", f.source, fit);
    ADD_FAILURE() << "the unrewritten source passed the check";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out.yaml"));
    EXPECT_THAT(e.what(), HasSubstr("collectives.nccl.launch_latency"));
  }
  // A library the file does not have: nothing to rewrite.
  LibraryFit other = fit;
  other.library = "no-such-library";
  EXPECT_THROW(fitted_machine_text(f.source_text, kPerlmutter, f.source, other, kProvenance), InputError);
}

}  // namespace
}  // namespace ws
