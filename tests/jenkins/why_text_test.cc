#include "jenkins/why_text.h"

#include <gtest/gtest.h>

namespace slurmfleet::jenkins {
namespace {

using Kind = WhyHint::Kind;

WhyHint Hint(Kind kind, std::string text) { return {kind, std::move(text)}; }

// One row per line of CONTRACT.md §2.3, with Jenkins' U+2018/U+2019 quotes.
TEST(WhyTextTest, NoAgentsAtAllDropsTheLabel) {
  EXPECT_EQ(ParseWhy("Waiting for next available executor"), WhyHint{});
}

TEST(WhyTextTest, NoNodesWithTheLabel) {
  EXPECT_EQ(ParseWhy("There are no nodes with the label \u2018gpu\u2019"),
            Hint(Kind::kLabel, "gpu"));
  EXPECT_EQ(ParseWhy("There are no nodes with the label \u2018gpu&&linux\u2019"),
            Hint(Kind::kLabel, "gpu&&linux"));
}

TEST(WhyTextTest, TheOneNodeOfTheLabelIsOffline) {
  EXPECT_EQ(ParseWhy("\u2018slurm-gpu-1\u2019 is offline"), Hint(Kind::kNode, "slurm-gpu-1"));
}

TEST(WhyTextTest, AllNodesOfTheLabelAreOffline) {
  EXPECT_EQ(ParseWhy("All nodes of label \u2018gpu\u2019 are offline"), Hint(Kind::kLabel, "gpu"));
}

TEST(WhyTextTest, WaitingForAnExecutorOnANodeOrLabel) {
  EXPECT_EQ(ParseWhy("Waiting for next available executor on \u2018slurm-gpu-1\u2019"),
            Hint(Kind::kNodeOrLabel, "slurm-gpu-1"));
  EXPECT_EQ(ParseWhy("Waiting for next available executor on \u2018gpu\u2019"),
            Hint(Kind::kNodeOrLabel, "gpu"));
}

TEST(WhyTextTest, CompositeTakesTheMissingLabel) {
  EXPECT_EQ(
      ParseWhy("\u2018x\u2019 is reserved for jobs with matching label expression; "
               "\u2018y\u2019 doesn\u2019t have label \u2018gpu\u2019; \u2018z\u2019 is offline"),
      Hint(Kind::kLabel, "gpu"));
  EXPECT_EQ(ParseWhy("\u2018y\u2019 doesn\u2019t have label \u2018gpu&&linux\u2019"),
            Hint(Kind::kLabel, "gpu&&linux"));
}

TEST(WhyTextTest, CompositeWithoutALabelNamesNothing) {
  // The Checkmk capture (CONTRACT.md §2.1): nodes that refused, no label.
  EXPECT_EQ(ParseWhy("\u2018Jenkins\u2019 is reserved for jobs with matching label expression; "
                     "\u2018ubu2\u2019 is offline; \u2018ubu\u2019 is offline"),
            WhyHint{});
  EXPECT_EQ(ParseWhy("\u2018x\u2019 is reserved for jobs with matching label expression"),
            WhyHint{});
}

TEST(WhyTextTest, QuietPeriodShutdownAndOthersNameNothing) {
  EXPECT_EQ(ParseWhy("In the quiet period. Expires in 4.9 sec"), WhyHint{});
  EXPECT_EQ(ParseWhy("Jenkins is about to shut down"), WhyHint{});
  EXPECT_EQ(ParseWhy("Build #475 is already in progress (ETA: 10 min)"), WhyHint{});
  EXPECT_EQ(ParseWhy(""), WhyHint{});
  EXPECT_EQ(ParseWhy("There are no nodes with the label \u2018\u2019"), WhyHint{});
}

TEST(WhyTextTest, ToleratesAsciiQuotes) {
  EXPECT_EQ(ParseWhy("There are no nodes with the label 'gpu'"), Hint(Kind::kLabel, "gpu"));
  EXPECT_EQ(ParseWhy("All nodes of label 'gpu' are offline"), Hint(Kind::kLabel, "gpu"));
  EXPECT_EQ(ParseWhy("Waiting for next available executor on 'n1'"),
            Hint(Kind::kNodeOrLabel, "n1"));
  EXPECT_EQ(ParseWhy("'slurm-gpu-1' is offline"), Hint(Kind::kNode, "slurm-gpu-1"));
  EXPECT_EQ(ParseWhy("'y' doesn't have label 'gpu'; 'z' is offline"), Hint(Kind::kLabel, "gpu"));
  // Mixed, as a half-translated message might be.
  EXPECT_EQ(ParseWhy("\u2018y\u2019 doesn't have label 'gpu\u2019"), Hint(Kind::kLabel, "gpu"));
}

TEST(WhyTextTest, LabelsHoldingQuotesAndSpaces) {
  // A quoted atom is shown re-quoted; the text between the outer quotes is kept whole.
  EXPECT_EQ(ParseWhy("There are no nodes with the label \u2018\"my label\"&&x\u2019"),
            Hint(Kind::kLabel, "\"my label\"&&x"));
  EXPECT_EQ(ParseWhy("All nodes of label \u2018it's\u2019 are offline"),
            Hint(Kind::kLabel, "it's"));
}

}  // namespace
}  // namespace slurmfleet::jenkins
