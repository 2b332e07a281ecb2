#include "sim/layout_search/layout_enumeration.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace ws {
namespace {

// A model every factorization of small counts can run: everything divisible by 2^k * 3^j.
ModelSpec roomy_model() { return ModelSpec{"roomy", 2, 144 * 64, 144, 64, 144 * 64, 1}; }

TEST(LayoutEnumeration, CountsOrderedFactorizations) {
  const ModelSpec model = roomy_model();
  const Batch batch{144};
  EXPECT_EQ(enumerate_layouts(model, batch, 1).size(), 1u);
  EXPECT_EQ(enumerate_layouts(model, batch, 8).size(), 20u);   // C(3+3, 3)
  EXPECT_EQ(enumerate_layouts(model, batch, 12).size(), 40u);  // C(5, 3) * C(4, 3)
}

TEST(LayoutEnumeration, ProductsAndLexicographicOrder) {
  const auto all = enumerate_layouts(roomy_model(), Batch{144}, 12);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Layout& l = all[i].layout;
    EXPECT_EQ(l.devices(), 12);
    if (i > 0) {
      const Layout& p = all[i - 1].layout;
      EXPECT_LT(std::tie(p.data, p.x, p.y, p.z), std::tie(l.data, l.x, l.y, l.z));
    }
  }
  EXPECT_EQ(all.front().layout, (Layout{1, 1, 1, 12}));
  EXPECT_EQ(all.back().layout, (Layout{12, 1, 1, 1}));
}

TEST(LayoutEnumeration, ValidLayoutsHaveNoReason) {
  for (const auto& c : enumerate_layouts(roomy_model(), Batch{144}, 12)) {
    EXPECT_TRUE(c.valid) << to_string(c.layout) << ": " << c.reason;
    EXPECT_TRUE(c.reason.empty());
  }
}

TEST(LayoutProblem, NamesQuantityAndValue) {
  const Batch batch{64};
  const ModelSpec h64{"h64", 2, 64, 4, 32, 128, 1};
  EXPECT_EQ(layout_problem(h64, batch, Layout{1, 3, 1, 1}), "hidden 64 not divisible by Gx=3");
  EXPECT_EQ(layout_problem(h64, batch, Layout{1, 1, 3, 1}), "hidden 64 not divisible by Gy=3");
  EXPECT_EQ(layout_problem(h64, batch, Layout{1, 1, 8, 1}), "heads 4 not divisible by Gy=8");
  const ModelSpec h96{"h96", 2, 96, 4, 32, 96, 1};
  EXPECT_EQ(layout_problem(h96, batch, Layout{1, 1, 3, 1}), "heads 4 not divisible by Gy=3");
  const ModelSpec v100{"v100", 2, 64, 8, 32, 100, 1};
  EXPECT_EQ(layout_problem(v100, batch, Layout{1, 1, 8, 1}), "vocabulary 100 not divisible by Gy=8");
  const ModelSpec h4{"h4", 1, 4, 1, 8, 4, 1};
  EXPECT_EQ(layout_problem(h4, batch, Layout{1, 1, 1, 32}),
            "QKV weight block 48 (k*n/(Gx*Gy)) not divisible by Gz=32");
  EXPECT_EQ(layout_problem(h64, Batch{3}, Layout{2, 1, 1, 1}),
            "batch sequences 3 not divisible by Gdata*Gz=2");
  EXPECT_EQ(layout_problem(h64, Batch{6}, Layout{1, 1, 1, 4}),
            "batch sequences 6 not divisible by Gdata*Gz=4");
  EXPECT_EQ(layout_problem(h64, batch, Layout{2, 2, 2, 2}), "");
}

TEST(LayoutEnumeration, InvalidCarryReasons) {
  const ModelSpec h64{"h64", 2, 64, 4, 32, 128, 1};
  int invalid = 0;
  for (const auto& c : enumerate_layouts(h64, Batch{12}, 12)) {
    EXPECT_EQ(c.valid, c.reason.empty());
    EXPECT_EQ(c.reason, layout_problem(h64, Batch{12}, c.layout));
    invalid += c.valid ? 0 : 1;
  }
  EXPECT_GT(invalid, 0);
}

}  // namespace
}  // namespace ws
