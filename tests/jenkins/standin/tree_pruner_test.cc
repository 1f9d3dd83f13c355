#include "jenkins/standin/tree_pruner.h"

#include <gtest/gtest.h>

namespace slurmfleet::standin {
namespace {

using nlohmann::json;

TEST(StandinTreePrunerTest, KeepsNamedPropertiesAndClass) {
  json full = json::parse(R"({"_class":"Q","items":[{"_class":"I","id":3,"why":"w","url":"u",
      "task":{"_class":"T","name":"n","url":"v","color":"blue"}}],"discoverableItems":[]})");
  auto spec = ParseTree("items[id,task[name]]");
  ASSERT_TRUE(spec);
  EXPECT_EQ(Prune(full, *spec), json::parse(R"({"_class":"Q","items":[{"_class":"I","id":3,
      "task":{"_class":"T","name":"n"}}]})"));
}

TEST(StandinTreePrunerTest, BareObjectKeepsOnlyClassAndEmptyBracketsAreTheSame) {
  json full = json::parse(R"({"a":{"_class":"X","b":1},"e":[{"n":1},{"n":2}],"p":null})");
  EXPECT_EQ(Prune(full, *ParseTree("a,e[],p")),
            json::parse(R"({"a":{"_class":"X"},"e":[{},{}],"p":null})"));
}

TEST(StandinTreePrunerTest, RejectsMalformedTrees) {
  EXPECT_FALSE(ParseTree("a[b"));
  EXPECT_FALSE(ParseTree("a]"));
  EXPECT_FALSE(ParseTree("a,,b"));
  EXPECT_FALSE(ParseTree(""));
  EXPECT_TRUE(ParseTree("a[b[c,d]],e"));
}

}  // namespace
}  // namespace slurmfleet::standin
