#include "engine/schedule/model.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

TEST(Model, FamilyNamesMatchParameterCounts) {
  // Each named size is within 15% of its parameter count (names are rounded marketing sizes).
  for (const auto& m : gpt_family()) {
    const double billions = std::stod(m.name) * 1e9;
    EXPECT_NEAR(parameter_count(m) / billions, 1.0, 0.15) << m.name;
  }
}

TEST(Model, LookupByName) {
  EXPECT_EQ(find_model("20B")->hidden, 7168);
  EXPECT_FALSE(find_model("7B"));
}

}  // namespace
}  // namespace ws
