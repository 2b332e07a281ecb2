#include "workload/layout.hpp"

#include <gtest/gtest.h>

#include "workload/comm_group.hpp"

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
  EXPECT_EQ(group_stride(l, CommGroup::x), 1);
  EXPECT_EQ(group_stride(l, CommGroup::y), 2);
  EXPECT_EQ(group_stride(l, CommGroup::z), 8);
  EXPECT_EQ(group_stride(l, CommGroup::data), 40);
  EXPECT_EQ(group_size(l, CommGroup::data), 3);
  // data x Z: Z fastest, then data, so consecutive members are Gx Gy ranks apart.
  EXPECT_EQ(group_stride(l, CommGroup::data_z), 8);
  EXPECT_EQ(group_size(l, CommGroup::data_z), 15);
  EXPECT_EQ(group_stride(l, CommGroup::world), 1);
  EXPECT_EQ(group_size(l, CommGroup::world), l.devices());
}

// Megatron-LM's rank orders: tp-dp-pp (its default, stages outermost) and tp-pp-dp
// (--use-tp-pp-dp-mapping, stages inside the data ranks); the order is kept only where it moves a
// rank (pp > 1 and dp > 1).
TEST(Layout, MegatronRankOrders) {
  const Layout inner = *parse_layout("tp=2,pp=4,dp=3,mb=8,order=tp-pp-dp");
  EXPECT_EQ(inner.order, RankOrder::stages_inside_data);
  EXPECT_EQ(to_string(inner), "tp=2,pp=4,dp=3,mb=8,order=tp-pp-dp");
  EXPECT_EQ(parse_layout(to_string(inner)), inner);
  EXPECT_EQ(parse_layout("tp=2,pp=4,dp=3,mb=8,order=tp-dp-pp"), parse_layout("tp=2,pp=4,dp=3,mb=8"));
  EXPECT_EQ(parse_layout("tp=2,pp=1,dp=3,order=tp-pp-dp")->order, RankOrder::stages_outermost);
  EXPECT_EQ(parse_layout("tp=2,pp=4,dp=1,mb=8,order=tp-pp-dp")->order, RankOrder::stages_outermost);
  EXPECT_FALSE(parse_layout("tp=2,pp=4,dp=3,order=tp-pp-dp,order=tp-pp-dp"));
  EXPECT_FALSE(parse_layout("tp=2,pp=4,dp=3,order=pp-tp-dp"));
  EXPECT_FALSE(parse_layout("dp_shard=2,order=tp-pp-dp"));
  // Rank r = y + tp (stage + pp data): Y fastest, then the stage, then data.
  EXPECT_EQ(inner.stage_stride(), 2);
  EXPECT_EQ(inner.data_stride(), 8);
  EXPECT_EQ(group_stride(inner, CommGroup::pipeline), 2);
  EXPECT_EQ(group_stride(inner, CommGroup::data), 8);
  EXPECT_EQ(group_stride(inner, CommGroup::data_z), 8);
  for (int r = 0; r < inner.devices(); ++r) {
    const RankCoords c = coords_of(inner, r);
    EXPECT_EQ(c.y, r % 2);
    EXPECT_EQ(c.stage, (r / 2) % 4);
    EXPECT_EQ(c.data, r / 8);
    EXPECT_EQ(rank_of(inner, c), r);
  }
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

TEST(Layout, HoldsDevicesWithoutOverflowingOnLargeParts) {
  EXPECT_TRUE(holds_devices(Layout{512, 2, 2, 2}, 4096));
  EXPECT_FALSE(holds_devices(Layout{512, 2, 2, 2}, 4095));
  // Each part fits an int; their product fits neither an int nor a long long.
  const auto huge = parse_layout("2147483647x2147483647x2147483647x2147483647");
  ASSERT_TRUE(huge.has_value());
  EXPECT_FALSE(holds_devices(*huge, 2147483647));
  EXPECT_TRUE(holds_devices(Layout{2147483647, 1, 1, 1}, 2147483647));
}

}  // namespace
}  // namespace ws
