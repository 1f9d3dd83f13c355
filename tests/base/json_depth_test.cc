#include "base/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace slurmfleet {
namespace {

TEST(JsonDepthTest, CountsArraysAndObjectsNotStrings) {
  EXPECT_EQ(JsonNestingDepth(""), 0);
  EXPECT_EQ(JsonNestingDepth("42"), 0);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}], "c": {}})"), 4);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "[[[{{{", "b": "\"[[["})"), 1);
  EXPECT_EQ(JsonNestingDepth(R"(["\\", [[]]])"), 3) << "an escaped backslash ends the string";
  EXPECT_EQ(JsonNestingDepth(std::string(100000, '[')), 100000);
}

}  // namespace
}  // namespace slurmfleet
