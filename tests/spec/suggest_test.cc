#include "spec/suggest.h"

#include <gtest/gtest.h>

namespace slurmfleet::spec {
namespace {

constexpr std::string_view kKeys[] = {"cpusPerTask", "memoryPerNode", "timeLimit",
                                      "tresPerJob",  "label",         "name"};

TEST(SuggestTest, EditDistance) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("lable", "label"), 1u);  // adjacent swap counts once
  EXPECT_EQ(EditDistance("NAME", "name"), 0u);
}

TEST(SuggestTest, TyposFindTheirKey) {
  EXPECT_EQ(Suggest("cpusPerTsk", kKeys), "cpusPerTask");
  EXPECT_EQ(Suggest("lable", kKeys), "label");
  EXPECT_EQ(Suggest("timelimit", kKeys), "timeLimit");
  EXPECT_EQ(Suggest("memory_per_node", kKeys), "memoryPerNode");
  EXPECT_EQ(Suggest("tres-per-job", kKeys), "tresPerJob");
}

TEST(SuggestTest, UnrelatedWordsFindNothing) {
  EXPECT_EQ(Suggest("partition", kKeys), "");
  EXPECT_EQ(Suggest("xyz", kKeys), "");
  EXPECT_EQ(Suggest("nm", std::span<const std::string_view>()), "");
}

TEST(SuggestTest, DidYouMeanPhrase) {
  EXPECT_EQ(DidYouMean("nmae", kKeys), " (did you mean 'name'?)");
  EXPECT_EQ(DidYouMean("zzzzzz", kKeys), "");
}

}  // namespace
}  // namespace slurmfleet::spec
