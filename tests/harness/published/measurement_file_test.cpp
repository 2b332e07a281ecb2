// Benchmark output read into published rows: nccl-tests, rccl-tests and osu_bw samples in their exact
// formats (tests/harness/published/data: synthetic numbers from a latency + bandwidth model, not
// measurements, printed with the tools' own printf formats), the job shape taken
// from the rank lines, busbw by the nccl-tests definitions, and one-line errors naming file and line
// for cut, malformed and contradicted inputs.
#include "harness/published/measurement_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "base/input_error.hpp"
#include "harness/published/nccl_tests_output.hpp"
#include "harness/published/osu_output.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;

const std::string kData = std::string(WEAKSCALE_SOURCE_DIR) + "/tests/harness/published/data/";
const std::string kAllReduce = kData + "nccl_all_reduce_perf_2x4.txt";
const std::string kAllGather = kData + "rccl_all_gather_perf_2x8.txt";
const std::string kOsuBw = kData + "osu_bw.txt";
// nccl_all_reduce_perf_2x4.txt: 17 header lines, then one row per size from 8 B.
constexpr int kFirstAllReduceRow = 18;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

BenchmarkJob job(const std::string& machine = "perlmutter", const std::string& library = "nccl") {
  BenchmarkJob j;
  j.machine = machine;
  j.library = library;
  return j;
}

// The message of the InputError `parse` throws; fails the test when it throws none.
template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << "more than one line: " << what;
    return what;
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

// The text with the line that starts with `prefix` (after leading spaces) replaced by `replacement`.
std::string with_line(std::string text, const std::string& prefix, const std::string& replacement) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(' ');
    out +=
        (first != std::string::npos && line.compare(first, prefix.size(), prefix) == 0 ? replacement : line) +
        "\n";
  }
  return out;
}

double word(const std::string& line, int index) {
  std::istringstream in(line);
  std::string w;
  for (int i = 0; i <= index; ++i) in >> w;
  return std::stod(w);
}

// Every row of one run: its op and job shape, and sizes doubling from first_bytes.
void expect_run(const std::vector<PublishedCollective>& rows, const std::string& op, int nodes, int devices,
                Bytes first_bytes) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].op, op) << i;
    EXPECT_EQ(rows[i].nodes, nodes) << i;
    EXPECT_EQ(rows[i].devices, devices) << i;
    EXPECT_EQ(rows[i].bytes, first_bytes << i) << i;
  }
}

TEST(NcclTestsOutput, AllReduceOfTwoNodesOfFourGpusGivesOneRowPerSizeWithTheBetterHalfsBusbw) {
  const auto rows = load_measurements(kAllReduce, std::nullopt, job());
  ASSERT_EQ(rows.size(), 28u);  // 8 B .. 1 GiB, doubling
  std::istringstream lines(read(kAllReduce));
  std::vector<std::string> text;
  for (std::string l; std::getline(lines, l);) text.push_back(l);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(r.machine, "perlmutter");
    EXPECT_EQ(r.library, "nccl");
    EXPECT_EQ(r.op, "all-reduce");
    EXPECT_EQ(r.nodes, 2);    // two distinct hosts in the rank lines
    EXPECT_EQ(r.devices, 8);  // eight rank lines
    EXPECT_EQ(r.bytes, Bytes{8} << i);
    EXPECT_EQ(r.line, kFirstAllReduceRow + static_cast<int>(i));
    EXPECT_THAT(r.source, HasSubstr("all_reduce_perf"));
    // busbw = 2(n-1)/n x size / time of the faster half (in-place in this run), and within the
    // printed busbw's rounding of the higher of the two printed ones.
    const std::string& row = text[static_cast<std::size_t>(r.line - 1)];
    const double out_time_us = word(row, 5), out_busbw = word(row, 7), in_time_us = word(row, 9),
                 in_busbw = word(row, 11);
    const double time_us = std::min(in_time_us, out_time_us);
    EXPECT_NEAR(r.busbw_gbps, static_cast<double>(r.bytes) / (time_us * 1e-6) * 2 * 7 / 8 * 1e-9,
                1e-9 * r.busbw_gbps);
    EXPECT_NEAR(r.busbw_gbps, std::max(in_busbw, out_busbw), 0.0051 + 1e-4 * r.busbw_gbps);
  }
  // Bandwidth grows with size until the links saturate.
  EXPECT_LT(rows.front().busbw_gbps, 0.01);
  EXPECT_GT(rows.back().busbw_gbps, 20);
}

TEST(NcclTestsOutput, RcclAllGatherTakesItsOpFromTheCommandLineAndChecksItAgainstBusbw) {
  auto j = job("frontier", "rccl");
  EXPECT_THAT(error_of([&] { load_measurements(kAllGather, std::nullopt, j); }),
              AllOf(HasSubstr(kAllGather + ":"), HasSubstr("--op")));
  // all-reduce counts twice the bus bytes of all-gather: the printed busbw says the op is wrong.
  j.op = "all-reduce";
  EXPECT_THAT(error_of([&] { load_measurements(kAllGather, std::nullopt, j); }),
              AllOf(HasSubstr(kAllGather + ":25:"), HasSubstr("busbw"), HasSubstr("16 ranks")));
  j.op = "all-gather";
  const auto rows = load_measurements(kAllGather, std::nullopt, j);
  ASSERT_EQ(rows.size(), 11u);  // 1 MiB .. 1 GiB
  expect_run(rows, "all-gather", 2, 16, Bytes{1} << 20);
  for (const auto& r : rows) EXPECT_THAT(r.source, HasSubstr("rccl-tests"));
  // 1 GiB in-place: 26937 us; busbw = (n-1)/n x size / time.
  EXPECT_NEAR(rows.back().busbw_gbps, 1073741824.0 / 26937e-6 * 15 / 16 * 1e-9, 1e-6);
}

TEST(NcclTestsOutput, ARowCutShortOrWithAMissingColumnNamesFileAndLine) {
  const std::string text = read(kAllReduce);
  // Cut in the middle of the 4 MiB row (line 37), after its out-of-place time.
  const auto cut_at = text.find("370.32");
  ASSERT_NE(cut_at, std::string::npos);
  const std::string cut = text.substr(0, cut_at + 6);
  EXPECT_THAT(
      error_of([&] { parse_nccl_tests_output(cut, "cut.txt", job()); }),
      AllOf(HasSubstr("cut.txt:37:"), HasSubstr("13 columns"), HasSubstr("has 6"), HasSubstr("cut short")));
  // Cut after a whole row: no closing '# Avg bus bandwidth' line.
  const std::string at_row_end = text.substr(0, text.find('\n', cut_at) + 1);
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(at_row_end, "cut.txt", job()); }),
              AllOf(HasSubstr("cut.txt:37:"), HasSubstr("Avg bus bandwidth"), HasSubstr("cut short")));
  // The 1 MiB row (line 35) without its in-place #wrong.
  const std::string short_row = with_line(text, "1048576 ",
                                          "     1048576        262144     float     sum      -1   110.32    "
                                          "9.51   16.63       0   108.25    9.69   16.95");
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(short_row, "short.txt", job()); }),
              AllOf(HasSubstr("short.txt:35:"), HasSubstr("13 columns as the column header on line 16"),
                    HasSubstr("has 12")));
  // A wrong result count makes the row no measurement.
  const std::string wrong = with_line(text, "1048576 ",
                                      "     1048576        262144     float     sum      -1   110.32    9.51 "
                                      "  16.63       3   108.25    9.69   16.95       0");
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(wrong, "wrong.txt", job()); }),
              AllOf(HasSubstr("wrong.txt:35:"), HasSubstr("#wrong")));
}

TEST(NcclTestsOutput, TheCommandLineFillsWhatTheFileDoesNotPrintAndMustAgreeWithWhatItDoes) {
  const std::string text = read(kAllReduce);
  auto j = job();
  j.nodes = 3;
  EXPECT_THAT(
      error_of([&] { parse_nccl_tests_output(text, "ar.txt", j); }),
      AllOf(HasSubstr("ar.txt:6:"), HasSubstr("--nodes"), HasSubstr("got '3'"), HasSubstr("expected 2")));
  j.nodes = 2;
  j.ranks_per_node = 8;
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(text, "ar.txt", j); }),
              AllOf(HasSubstr("--ranks-per-node"), HasSubstr("got '8'"), HasSubstr("expected 4")));
  j.ranks_per_node = 4;
  j.op = "all-gather";
  EXPECT_THAT(
      error_of([&] { parse_nccl_tests_output(text, "ar.txt", j); }),
      AllOf(HasSubstr("ar.txt:2:"), HasSubstr("--op"), HasSubstr("all-gather"), HasSubstr("all-reduce")));
  j.op = "all-reduce";
  EXPECT_EQ(parse_nccl_tests_output(text, "ar.txt", j).size(), 28u);
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(text, "ar.txt", BenchmarkJob{}); }),
              HasSubstr("--machine"));

  // Without rank lines the shape comes from --nodes and --ranks-per-node, and needs both.
  std::string no_ranks = with_line(text, "#  Rank", "#");
  auto shape = job();
  shape.nodes = 2;
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(no_ranks, "nr.txt", shape); }),
              HasSubstr("--ranks-per-node"));
  shape.ranks_per_node = 4;
  const auto rows = parse_nccl_tests_output(no_ranks, "nr.txt", shape);
  ASSERT_EQ(rows.size(), 28u);
  EXPECT_EQ(rows.front().nodes, 2);
  EXPECT_EQ(rows.front().devices, 8);
  // ... and a wrong rank count shows in busbw (2 x 3 ranks: factor 5/3 against 7/4).
  shape.nodes = 3;
  shape.ranks_per_node = 2;
  EXPECT_THAT(error_of([&] { parse_nccl_tests_output(no_ranks, "nr.txt", shape); }), HasSubstr("6 ranks"));
}

TEST(OsuOutput, BandwidthRowsArePointToPointBetweenTwoNodesInGigabytesPerSecond) {
  auto j = job("alps", "mpi");
  EXPECT_THAT(error_of([&] { load_measurements(kOsuBw, std::nullopt, j); }),
              AllOf(HasSubstr(kOsuBw), HasSubstr("--nodes 2")));
  j.nodes = 2;
  const auto rows = load_measurements(kOsuBw, std::nullopt, j);
  ASSERT_EQ(rows.size(), 23u);  // 1 B .. 4 MiB
  expect_run(rows, "point-to-point", 2, 2, Bytes{1});
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].line, 5 + static_cast<int>(i));
  EXPECT_DOUBLE_EQ(rows.front().busbw_gbps, 22.05 / 1000);  // OSU's MB is 10^6 bytes
  EXPECT_DOUBLE_EQ(rows.back().busbw_gbps, 24093.73 / 1000);

  const std::string text = read(kOsuBw);
  const std::string cut = text.substr(0, text.find("24087.46") - 3);
  EXPECT_THAT(error_of([&] { parse_osu_output(cut, "osu.txt", j); }),
              AllOf(HasSubstr("osu.txt:26:"), HasSubstr("2 columns"), HasSubstr("cut short")));
  const std::string latency = with_line(text, "# OSU", "# OSU MPI Latency Test v7.4");
  EXPECT_THAT(error_of([&] { parse_osu_output(latency, "lat.txt", j); }),
              AllOf(HasSubstr("lat.txt:2:"), HasSubstr("osu_bw")));
}

TEST(MeasurementFile, FormatIsDetectedByContentOrNamed) {
  EXPECT_EQ(detect_measurement_format(read(kAllReduce), kAllReduce), MeasurementFormat::nccl_tests);
  EXPECT_EQ(detect_measurement_format(read(kAllGather), kAllGather), MeasurementFormat::nccl_tests);
  EXPECT_EQ(detect_measurement_format(read(kOsuBw), kOsuBw), MeasurementFormat::osu);
  const std::string table = std::string(WEAKSCALE_SOURCE_DIR) + "/benchmarks/collectives/published.csv";
  EXPECT_EQ(detect_measurement_format(read(table), table), MeasurementFormat::csv);
  EXPECT_THAT(error_of([&] { detect_measurement_format("size busbw\n1 2\n", "x.txt"); }),
              AllOf(HasSubstr("x.txt:"), HasSubstr("--format")));
  EXPECT_EQ(parse_measurement_format("nccl-tests"), MeasurementFormat::nccl_tests);
  EXPECT_EQ(parse_measurement_format("nccl"), std::nullopt);
  // A named format reads the file as that format, whatever it holds.
  EXPECT_THAT(error_of([&] { load_measurements(kOsuBw, MeasurementFormat::nccl_tests, job()); }),
              HasSubstr("column header"));
  // Our CSV: the command line's values, where given, agree with every row.
  auto j = BenchmarkJob{};
  j.machine = "frontier";
  EXPECT_THAT(
      error_of([&] { load_measurements(table, std::nullopt, j); }),
      AllOf(HasSubstr("published.csv:"), HasSubstr("key 'machine'"), HasSubstr("--machine frontier")));
}

}  // namespace
}  // namespace ws
