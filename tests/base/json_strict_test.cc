#include "base/json_strict.h"

#include <gtest/gtest.h>

namespace slurmfleet {
namespace {

TEST(ParseJsonStrictlyTest, ReadsWhatNlohmannReads) {
  auto j = ParseJsonStrictly(R"({"a": {"b": [1, {"b": 2}], "c": "b"}, "b": true})");
  ASSERT_TRUE(j);
  EXPECT_EQ((*j)["a"]["b"][1]["b"], 2);  // the same key in different objects is fine
  EXPECT_TRUE(ParseJsonStrictly("[1, 2]"));
  EXPECT_TRUE(ParseJsonStrictly("\"x\""));
}

TEST(ParseJsonStrictlyTest, AKeyGivenTwiceInOneObjectIsRefused) {
  for (std::string_view text :
       {R"({"kind": "job", "kind": "run"})", R"({"job": {"x": 1, "y": 2, "x": 3}})",
        R"([{"kind": 1, "kind": 2}])"}) {
    auto j = ParseJsonStrictly(text);
    ASSERT_FALSE(j) << text;
    EXPECT_EQ(j.error().kind, JsonRefusal::Kind::kDuplicateKey) << text;
  }
  auto j = ParseJsonStrictly(R"({"a\nb": 1, "a\nb": 2})");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().Describe(),
            "gives the key 'a\\x0Ab' twice in one object; give each key once");
}

TEST(ParseJsonStrictlyTest, ANumberBeyondADoubleIsRefusedWithoutQuotingIt) {
  auto j = ParseJsonStrictly(R"({"cpus": 1e400})");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().Describe(), "holds a number too large to read");
}

TEST(ParseJsonStrictlyTest, ASyntaxErrorGivesItsPositionOnly) {
  auto j = ParseJsonStrictly(R"({"token": "SECRETMARK)");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().kind, JsonRefusal::Kind::kSyntax);
  EXPECT_EQ(j.error().Describe().find("SECRETMARK"), std::string::npos);
  EXPECT_NE(j.error().Describe().find("syntax error at byte "), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet
