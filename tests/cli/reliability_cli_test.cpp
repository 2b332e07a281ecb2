// `weakscale` as a careless or hostile user meets it (issue 43): links planted at every name it
// writes are replaced, never followed; a second run on one --out is refused naming the first;
// inputs that would hang, exhaust memory or wrap are refused with one escaped line and exit 2;
// each case here failed (crash, hang, silent default or a followed link) before the fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/command_run.hpp"
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/output_file.hpp"

namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kSource = WEAKSCALE_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path fresh_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = fs::temp_directory_path() /
                   (std::string("weakscale-reliability-") + info->name() + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using ws::testing::CommandRun;

// Runs weakscale with `args` (shell words) from the source root, stdin closed.
CommandRun weakscale(const std::string& args) {
  const fs::path err_file = fs::temp_directory_path() / ("weakscale-reliability-err-" + std::to_string(::getpid()));
  CommandRun r = ws::testing::run_command(
      "cd '" + kSource + "' && '" + std::string(WEAKSCALE_EXE) + "' " + args + " </dev/null", err_file);
  fs::remove(err_file);
  return r;
}

void expect_one_line_error(const CommandRun& r, int exit_code, const std::string& mentions) {
  EXPECT_EQ(r.exit_code, exit_code) << r.err;
  EXPECT_THAT(r.err, HasSubstr(mentions));
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line:\n" << r.err;
}

// Plants a link to `victim` at `name` in `dir` and at the temporary names writers have used.
void plant(const fs::path& dir, const std::string& name, const fs::path& victim) {
  for (const std::string& n : {name, name + ".tmp", "." + name + ".tmp"}) fs::create_symlink(victim, dir / n);
}

// Every file a study writes (tables, JSON, partial results, figures), and plan's --csv and
// --trace, with a link to a victim planted at its name and at its old temporary names: the victim
// keeps its bytes and every output is a regular file of its own.
TEST(ReliabilityCli, LinksPlantedAtEveryOutputNameAreNotFollowed) {
  const fs::path dir = fresh_dir();
  const fs::path victim = dir / "victim.txt";
  { std::ofstream(victim) << "precious\n"; }
  const fs::path out = dir / "out";
  fs::create_directories(out);
  std::vector<std::string> names;
  for (const char* suffix : {".csv", ".json", "-candidates.csv", "-placement-routing.csv", "-sensitivity.csv",
                             ".partial.jsonl", ".png", ".svg", "-breakdown.png", "-breakdown.svg", "-efficiency.png",
                             "-efficiency.svg", "-candidates.png", "-candidates.svg"}) {
    names.push_back(std::string("perlmutter-small") + suffix);
  }
  for (const auto& name : names) plant(out, name, victim);
  plant(dir, "plan.csv", victim);
  plant(dir, "trace.json", victim);

  const CommandRun study = weakscale("study benchmarks/studies/perlmutter-small.yaml --samples 0 --no-sensitivity "
                                     "--no-placement-routing --top-k 2 --out '" + out.string() + "'");
  EXPECT_EQ(study.exit_code, 0) << study.err;
  const CommandRun plan =
      weakscale("plan --machine perlmutter --model 5B --devices 8 --batch 8 --csv '" + (dir / "plan.csv").string() +
                "' --trace '" + (dir / "trace.json").string() + "'");
  EXPECT_EQ(plan.exit_code, 0) << plan.err;

  EXPECT_EQ(read_file(victim), "precious\n");
  for (const auto& name : names) {
    if (name.ends_with(".partial.jsonl") || name.find("sensitivity") != std::string::npos ||
        name.find("placement") != std::string::npos)
      continue;  // not written by this run (the partial file is removed at the end)
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out / name))) << name;
  }
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir / "plan.csv")));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir / "trace.json")));
  fs::remove_all(dir);
}

// While one run holds an --out, a second is refused with exit 4, naming the first; the first's
// files are untouched.
TEST(ReliabilityCli, ASecondStudyOnTheSameOutIsRefusedNamingTheFirst) {
  const fs::path out = fresh_dir();
  {
    const ws::DirectoryLock held(out, "weakscale study other.yaml --seed 1");
    const CommandRun second = weakscale("study benchmarks/studies/perlmutter-small.yaml --seed 2 --out '" +
                                        out.string() + "'");
    expect_one_line_error(second, 4, "another weakscale run is writing there (pid " + std::to_string(::getpid()) +
                                         ": weakscale study other.yaml --seed 1)");
    EXPECT_FALSE(fs::exists(out / "perlmutter-small.csv"));
  }
  // Released (a killed run releases it too): the next run goes ahead.
  const CommandRun next = weakscale("study benchmarks/studies/perlmutter-small.yaml --samples 0 --no-sensitivity "
                                    "--no-placement-routing --no-plot --out '" + out.string() + "'");
  EXPECT_EQ(next.exit_code, 0) << next.err;
  fs::remove_all(out);
}

// A FIFO where a file is expected is refused at once, never waited on.
TEST(ReliabilityCli, FifosAndDevicesAreRefusedAsInputs) {
  const fs::path dir = fresh_dir();
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_one_line_error(weakscale("study '" + fifo.string() + "'"), 2, "not a regular file (a device, FIFO or socket)");
  expect_one_line_error(weakscale("plan --machine '" + fifo.string() + "' --model 5B --devices 8 --batch 8"), 2,
                        "not a regular file (a device, FIFO or socket)");
  expect_one_line_error(weakscale("collectives-vs-published '" + fifo.string() + "' --no-plot --out '" +
                                  dir.string() + "'"),
                        2, "not a regular file (a device, FIFO or socket)");
  expect_one_line_error(weakscale("end-to-end-vs-published '" + fifo.string() + "' --out '" + dir.string() + "'"), 2,
                        "not a regular file (a device, FIFO or socket)");
  expect_one_line_error(weakscale("study /dev/zero"), 2, "not a regular file (a device, FIFO or socket)");
  fs::remove_all(dir);
}

// Sizes and counts that would exhaust memory or time are refused before any work, with the limit.
TEST(ReliabilityCli, CostsAboveTheDocumentedLimitsAreRefusedUpFront) {
  expect_one_line_error(weakscale("plan --machine frontier --devices 8 --batch 8 --layers 1000000 --hidden 64 --heads 4"),
                        2, "at most 4096");
  expect_one_line_error(weakscale("study benchmarks/studies/perlmutter-small.yaml --samples 1000000000 --out /tmp"), 2,
                        "--samples");
  for (const char* algorithm : {"ring", "tree", "auto"}) {
    expect_one_line_error(weakscale(std::string("collective --machine frontier --op all-reduce --bytes 1GiB --nodes 1024 "
                                                "--devices 8192 --every-step --algorithm ") + algorithm),
                          2, "at most 1 million sends");
  }
  const fs::path dir = fresh_dir();
  std::string spec = "machine: perlmutter\nname: perlmutter-x\npoints:\n";
  for (int i = 0; i < 1001; ++i) spec += "  - {devices: 8, model: 5B, batch_sequences: 8}\n";
  { std::ofstream(dir / "many.yaml") << spec; }
  expect_one_line_error(weakscale("study '" + (dir / "many.yaml").string() + "' --out '" + dir.string() + "'"), 2,
                        "at most 1000 points");
  fs::remove_all(dir);
}

// Values given empty, negative where unsigned, or an unknown command: one line, exit 2, no default.
TEST(ReliabilityCli, EmptyNegativeAndUnknownValuesAreOneLineErrors) {
  expect_one_line_error(weakscale("plan --machine frontier --model 5B --devices 8 --batch 8 --layout ''"), 2,
                        "--layout: an empty value");
  expect_one_line_error(weakscale("plan --machine frontier --model 5B --devices 8 --batch 8 --library ''"), 2,
                        "--library: an empty value");
  expect_one_line_error(weakscale("collective --machine frontier --op all-reduce --bytes 1MiB --devices 8 --seed -1"), 2,
                        "non-negative integer");
  expect_one_line_error(weakscale("frobnicate"), 2, "unknown command 'frobnicate': expected one of plan, study");
  // 1 PiB is the documented end of the range, and is accepted.
  EXPECT_EQ(weakscale("collective --machine frontier --op all-reduce --bytes 1PiB --devices 8").exit_code, 0);
  expect_one_line_error(weakscale("collective --machine frontier --op all-reduce --bytes 2PiB --devices 8"), 2,
                        "1 B to 1 PiB");
}

// A spec with a key given twice, a published row with more devices than its nodes hold, and text
// that would rewrite the terminal: refused, the untrusted text escaped.
TEST(ReliabilityCli, DuplicatesImpossibleRowsAndControlCharactersAreRefusedEscaped) {
  const fs::path dir = fresh_dir();
  { std::ofstream(dir / "dup.yaml") << "machine: perlmutter\nname: perlmutter-d\npoints:\n"
                                       "  - {devices: 8, devices: 16, model: 5B, batch_sequences: 8}\n"; }
  expect_one_line_error(weakscale("study '" + (dir / "dup.yaml").string() + "' --out '" + dir.string() + "'"), 2,
                        "points[0].devices': expected each key at most once");
  { std::ofstream(dir / "rows.csv") << "machine,library,op,nodes,devices,bytes,busbw_gbps,source\n"
                                       "perlmutter,nccl,all-reduce,4,1000,1 MiB,10,test\n"; }
  expect_one_line_error(weakscale("collectives-vs-published '" + (dir / "rows.csv").string() + "' --no-plot --out '" +
                                  dir.string() + "'"),
                        2, "at most 16 devices on 4 nodes of 4 devices each");
  std::string evil = "machine: perlmutter\nname: perlmutter-e\nprecision: \"b\xe2\x80\xae" "61fb\x1b[2J\"\n"
                     "points:\n  - {devices: 8, model: 5B, batch_sequences: 8}\n";
  { std::ofstream(dir / "rtl.yaml", std::ios::binary) << evil; }
  const CommandRun rtl = weakscale("study '" + (dir / "rtl.yaml").string() + "' --out '" + dir.string() + "'");
  expect_one_line_error(rtl, 2, "b\\u{202E}61fb\\x1B[2J");
  EXPECT_EQ(rtl.err.find('\x1b'), std::string::npos);
  EXPECT_EQ(rtl.err.find("\xe2\x80\xae"), std::string::npos);
  std::string nul = "machine: perlmutter\nname: perlmutter-n\nprecision: \"bf";
  nul += '\0';
  nul += "16 and more\"\npoints:\n  - {devices: 8, model: 5B, batch_sequences: 8}\n";
  { std::ofstream(dir / "nul.yaml", std::ios::binary) << nul; }
  expect_one_line_error(weakscale("study '" + (dir / "nul.yaml").string() + "' --out '" + dir.string() + "'"), 2,
                        "bf\\x0016 and more");
  fs::remove_all(dir);
}

}  // namespace
