// The engine's command line (engine/train/engine_options): every bad value of a flag is refused
// with one line naming the flag, the value and what is allowed, before any training; an absent
// flag keeps its default, a given one is never replaced by it; data files that are no regular
// text file of at most 1 GiB are refused without being read.
#include "engine/train/engine_options.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/output_file.hpp"
#include "engine/train/step_summary.hpp"

namespace ws {
namespace {

namespace fs = std::filesystem;

EngineCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "weakscale-engine");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_engine_command_line(static_cast<int>(argv.size()), argv.data());
}

// Parses and validates as a job of `ranks` ranks would; returns the error message, "" if none.
std::string refusal(const std::vector<std::string>& args, int ranks = 1) {
  try {
    EngineCommandLine line = parse(args);
    validate_engine_options(line.options, ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

// A fresh directory for this test's files, removed at the end.
class ScratchDirectory {
 public:
  ScratchDirectory() : path_(make_private_directory("weakscale-engine-options")) {}
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

struct BadValue {
  std::vector<std::string> args;
  std::string expected;  // a part of the message: flag, value and the allowed range
};

TEST(EngineOptions, BadNumbersNameFlagValueAndRange) {
  const std::vector<BadValue> cases = {
      {{"--lr", "nan"}, "--lr nan: expected a finite number above 0 and at most 10"},
      {{"--lr", "inf"}, "--lr inf: expected a finite number above 0 and at most 10"},
      {{"--lr", "-1"}, "--lr -1: expected a finite number above 0 and at most 10"},
      {{"--lr", "0"}, "--lr 0: expected a finite number above 0"},
      {{"--lr", "1e300"}, "--lr 1e300: expected a finite number above 0 and at most 10"},
      {{"--lr", "0.1x"}, "--lr 0.1x: expected a finite number"},
      {{"--seed", "-1"}, "--seed -1: expected an integer from 0 to 18446744073709551615"},
      {{"--seed", "18446744073709551616"}, "--seed 18446744073709551616: expected an integer from 0 to"},
      {{"--steps", "-1"}, "--steps -1: expected an integer from 0 to 1000000000"},
      {{"--steps", "1e3"}, "--steps 1e3: expected an integer from 0 to 1000000000"},
      {{"--steps", "99999999999999999999999"},
       "--steps 99999999999999999999999: expected an integer from 0 to"},
      {{"--warmup", "-5"}, "--warmup -5: expected an integer from 0 to 1000000000"},
      {{"--layers", "0"}, "--layers 0: expected an integer from 1 to 16777216"},
      {{"--layers", "abc"}, "--layers abc: expected an integer from 1 to 16777216"},
      {{"--hidden", "2147483648"}, "--hidden 2147483648: expected an integer from 1 to 16777216"},
      {{"--heads", "-4"}, "--heads -4: expected an integer from 1 to 16777216"},
      {{"--seq", "4294967328"}, "--seq 4294967328: expected an integer from 1 to 16777216"},
      {{"--vocab", "2.5"}, "--vocab 2.5: expected an integer from 1 to 16777216"},
      {{"--batch", "0"}, "--batch 0: expected an integer from 1 to 2147483647"},
      {{"--checkpoint-every", "0"}, "--checkpoint-every 0: expected an integer from 1 to 1000000000"},
      {{"--goldfish-k", "-2"}, "--goldfish-k -2: expected an integer from 0 to 2147483647"},
      {{"--goldfish-context", "0"}, "--goldfish-context 0: expected an integer from 1 to 16777216"},
      {{"--eval-sequences", "-1"}, "--eval-sequences -1: expected an integer from 1 to 2147483647"},
      {{"--eval-prefix", "-3"}, "--eval-prefix -3: expected an integer from 1 to 16777216"},
      {{"--eval-length", "-1"}, "--eval-length -1: expected an integer from 1 to 16777216"},
      {{"--eval-every", "-2"}, "--eval-every -2: expected an integer from 0 to 1000000000"},
      {{"--layout", ""}, "--layout \"\": expected DxXxYxZ"},
      {{"--data", ""}, "--data \"\": expected a non-empty value"},
      {{"--csv", ""}, "--csv \"\": expected a non-empty value"},
      {{"--steps", ""}, "--steps \"\": expected an integer"},
  };
  for (const auto& c : cases) {
    const std::string message = refusal(c.args);
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.args[0] << ": got '" << message << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(EngineOptions, AbsentFlagsKeepDefaultsGivenOnesAreKept) {
  const EngineOptions defaults = parse({}).options;
  EXPECT_EQ(defaults.run.seed, 1u);
  EXPECT_FALSE(defaults.warmup);
  EXPECT_FALSE(defaults.eval_prefix);
  const EngineOptions given = parse({"--seed", "18446744073709551615", "--warmup", "0", "--lr", "10",
                                     "--steps", "0", "--eval-prefix", "1", "--goldfish-k", "0"})
                                  .options;
  EXPECT_EQ(given.run.seed, 18446744073709551615u);
  EXPECT_EQ(given.warmup, 0);
  EXPECT_EQ(given.run.optimizer.learning_rate, 10.0);
  EXPECT_EQ(given.steps, 0);
  EXPECT_EQ(given.eval_prefix, 1);
}

TEST(EngineOptions, DefaultsResolveOnlyWhenAbsent) {
  EngineCommandLine line = parse({"--steps", "5", "--eval-memorization", "m.csv"});
  validate_engine_options(line.options, 1);
  EXPECT_EQ(line.options.warmup, 2);
  EXPECT_EQ(line.options.eval.sequences, 8);  // --batch
  EXPECT_EQ(line.options.eval.prefix, 16);    // --seq / 2
  EXPECT_EQ(line.options.eval.length, 16);
  line = parse({"--steps", "5", "--warmup", "0", "--eval-memorization", "m.csv", "--eval-prefix", "4"});
  validate_engine_options(line.options, 1);
  EXPECT_EQ(line.options.warmup, 0);
  EXPECT_EQ(line.options.eval.prefix, 4);
  EXPECT_EQ(line.options.eval.length, 28);
}

TEST(EngineOptions, EvaluationFlagsNeedAnEvaluation) {
  for (const char* flag : {"--eval-sequences", "--eval-prefix", "--eval-length", "--eval-every"})
    EXPECT_NE(refusal({flag, "2"}).find(std::string(flag) + " needs --eval-memorization FILE"),
              std::string::npos)
        << flag;
}

TEST(EngineOptions, EvaluatedSequencesAreBoundedBeforeAllocation) {
  EXPECT_NE(refusal({"--eval-memorization", "m.csv", "--eval-sequences", "2147483647"})
                .find("--eval-sequences 2147483647 x --seq 32 is 68719476704 tokens per rank"),
            std::string::npos);
  // Within the token limit but not within any host's memory: refused with its size.
  EXPECT_NE(refusal({"--eval-memorization", "m.csv", "--eval-sequences", "60000000", "--seq", "32", "--vocab",
                     "65536"})
                .find("the evaluation of --eval-sequences 60000000 needs"),
            std::string::npos);
  EXPECT_EQ(refusal({"--eval-memorization", "m.csv", "--eval-sequences", "16"}), "");
}

TEST(EngineOptions, EvaluationOfChunksStaysWithinTheDocuments) {
  ScratchDirectory dir;
  const std::string text = dir.file("text.txt");
  std::ofstream(text) << std::string(10 * 33, 'a');  // 10 documents of --seq + 1 = 33 bytes
  const std::vector<std::string> run = {"--data", text, "--data-order", "chunks", "--eval-memorization",
                                        "m.csv"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), run.begin(), run.end());
    return refusal(more);
  };
  EXPECT_EQ(with({"--eval-sequences", "10"}), "");
  EXPECT_NE(with({"--eval-sequences", "11"})
                .find("--eval-sequences 11 (default --batch) is above the 10 documents"),
            std::string::npos);
  EXPECT_NE(with({"--batch", "12"}).find("--eval-sequences 12 (default --batch) is above the 10 documents"),
            std::string::npos);
}

TEST(EngineOptions, DataMustBeARegularFileOfAtMostOneGibibyte) {
  ScratchDirectory dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string huge = dir.file("huge.txt");
  std::ofstream(huge).put('a');
  fs::resize_file(huge, (1ull << 30) + 1);  // sparse: nothing of it is ever read
  const std::string not_regular = "is not a regular file (a device, FIFO or socket)";
  EXPECT_NE(refusal({"--data", "/dev/zero"}).find("--data /dev/zero: " + not_regular), std::string::npos);
  EXPECT_NE(refusal({"--data", fifo}).find("--data " + fifo + ": " + not_regular), std::string::npos);
  EXPECT_NE(refusal({"--eval-memorization", "m.csv", "--validation-data", fifo})
                .find("--validation-data " + fifo + ": " + not_regular),
            std::string::npos);
  EXPECT_NE(refusal({"--data", huge}).find("is 1073741825 bytes, above the limit of 1 GiB"),
            std::string::npos);
  EXPECT_NE(refusal({"--data", dir.file("missing")}).find("cannot open the file: No such file or directory"),
            std::string::npos);
}

TEST(EngineOptions, UntrustedTextIsShownEscapedOnOneLine) {
  const std::string message = refusal({"--layout", "1x\x1b[31m\nfake line"});
  EXPECT_NE(message.find("--layout \"1x\\x1B[31m\\x0Afake line\": expected DxXxYxZ"), std::string::npos)
      << message;
  const std::string unknown = refusal({"--bogus\x1b[2J"});
  EXPECT_EQ(unknown.find('\x1b'), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("\\x1B[2J"), std::string::npos) << unknown;
  const std::string long_value(5000, '7');
  EXPECT_LT(refusal({"--steps", long_value}).size(), 200u);
}

TEST(EngineOptions, CsvWithForeignHeaderIsRefusedBeforeTraining) {
  ScratchDirectory dir;
  EngineOptions o = parse({"--csv", dir.file("runs.csv")}).options;
  EXPECT_FALSE(output_files_problem(o));  // a new file
  std::ofstream(dir.file("runs.csv")) << "foo,bar\n1,2\n";
  const auto problem = output_files_problem(o);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("its first line is not this engine's header"), std::string::npos) << *problem;
  std::ofstream(dir.file("runs.csv")) << csv_header() << "\n";
  EXPECT_FALSE(output_files_problem(o));
  // A link is replaced by the new file, not appended to: what it points to is not read.
  fs::remove(dir.file("runs.csv"));
  std::ofstream(dir.file("victim")) << "foo,bar\n";
  fs::create_symlink(dir.file("victim"), dir.file("runs.csv"));
  EXPECT_FALSE(output_files_problem(o));
}

TEST(EngineOptions, HelpIsNotAnError) {
  const EngineCommandLine line = parse({"--help"});
  EXPECT_NE(line.help.find("--lr"), std::string::npos);
  EXPECT_NE(line.help.find("at most 10"), std::string::npos);
}

}  // namespace
}  // namespace ws
