// The shared report helpers: CSV cells quoted exactly where RFC 4180 needs it (the copy the
// published-collectives table used missed line breaks), gnuplot strings escaped, versions named.
#include <gtest/gtest.h>

#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/text_file.hpp"

namespace ws {
namespace {

TEST(CsvField, QuotesOnlyWhereNeeded) {
  EXPECT_EQ(csv_field("frontier"), "frontier");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
}

// The one CSV line reader (published table, validation and engine CSVs): what csv_field writes
// reads back, empty fields count, and a CRLF line's '\r' is not part of its last field.
TEST(SplitCsvLine, ReadsBackWhatCsvFieldWrites) {
  using Fields = std::vector<std::string>;
  EXPECT_EQ(split_csv_line("a,,b"), (Fields{"a", "", "b"}));
  EXPECT_EQ(split_csv_line(""), (Fields{""}));
  EXPECT_EQ(split_csv_line("a,b,\r"), (Fields{"a", "b", ""}));
  for (const std::string cell : {"plain", "a,b", "say \"hi\"", ""}) {
    EXPECT_EQ(split_csv_line("x," + csv_field(cell) + ",y"), (Fields{"x", cell, "y"})) << cell;
  }
}

TEST(GnuplotString, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(gnuplot_string("plain"), "\"plain\"");
  EXPECT_EQ(gnuplot_string("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"");
  FigureFiles figures;
  const std::string line = figures.set_output(std::filesystem::path(::testing::TempDir()) / "x.png");
  ASSERT_EQ(figures.staged().size(), 1U);
  EXPECT_EQ(line, "set output " + gnuplot_string(figures.staged()[0].temporary().string()) + "\n");
  EXPECT_TRUE(std::filesystem::exists(figures.staged()[0].temporary()));
}

TEST(ProgramVersion, IsTheReleaseThenTheCommit) {
  EXPECT_FALSE(program_release().empty());
  EXPECT_EQ(program_version(), program_release() + " " + program_commit());
}

}  // namespace
}  // namespace ws
