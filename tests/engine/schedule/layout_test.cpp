#include "engine/schedule/layout.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

TEST(Layout, CoordsRoundTripAndXIsFastest) {
  const Layout l{3, 2, 4, 5};
  for (int r = 0; r < l.devices(); ++r) EXPECT_EQ(rank_of(l, coords_of(l, r)), r);
  EXPECT_EQ(coords_of(l, 1).x, 1);
  EXPECT_EQ(coords_of(l, 2).y, 1);
  EXPECT_EQ(coords_of(l, 8).z, 1);
  EXPECT_EQ(coords_of(l, 40).data, 1);
}

TEST(Layout, GroupStridesAreProductsOfInnerSizes) {
  const Layout l{3, 2, 4, 5};
  EXPECT_EQ(group_stride(l, GroupKind::x), 1);
  EXPECT_EQ(group_stride(l, GroupKind::y), 2);
  EXPECT_EQ(group_stride(l, GroupKind::z), 8);
  EXPECT_EQ(group_stride(l, GroupKind::data), 40);
  EXPECT_EQ(group_size(l, GroupKind::data), 3);
}

TEST(Layout, TextRoundTrip) {
  const Layout l{512, 2, 2, 2};
  EXPECT_EQ(to_string(l), "512x2x2x2");
  EXPECT_EQ(parse_layout("512x2x2x2"), l);
  EXPECT_FALSE(parse_layout("512x2x2"));
  EXPECT_FALSE(parse_layout("512x2x2x0"));
  EXPECT_FALSE(parse_layout("512x2x2x2x1"));
  EXPECT_FALSE(parse_layout("a"));
}

}  // namespace
}  // namespace ws
