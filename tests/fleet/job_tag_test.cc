#include "fleet/job_tag.h"

#include <gtest/gtest.h>

namespace slurmfleet::fleet {
namespace {

TEST(JobTagTest, RoundTripsWithAndWithoutAUserComment) {
  JobTag tag{"prod", "sf-0123abcd"};
  EXPECT_EQ(TagComment(tag, ""), "slurmfleet:prod:sf-0123abcd");
  EXPECT_EQ(ParseTag(TagComment(tag, "")), tag);
  EXPECT_EQ(TagComment(tag, "nightly build"), "slurmfleet:prod:sf-0123abcd nightly build");
  EXPECT_EQ(ParseTag(TagComment(tag, "nightly build")), tag);
}

TEST(JobTagTest, RejectsWhatIsNotOurs) {
  EXPECT_EQ(ParseTag(""), std::nullopt);
  EXPECT_EQ(ParseTag("my job"), std::nullopt);
  EXPECT_EQ(ParseTag("slurmfleet:"), std::nullopt);
  EXPECT_EQ(ParseTag("slurmfleet:prod"), std::nullopt);
  EXPECT_EQ(ParseTag("slurmfleet::key"), std::nullopt);
  EXPECT_EQ(ParseTag("slurmfleet:prod:"), std::nullopt);
  EXPECT_EQ(ParseTag("slurmfleet:pr$d:key"), std::nullopt);
  EXPECT_EQ(ParseTag("xslurmfleet:prod:key"), std::nullopt);
}

TEST(JobTagTest, AViewPointsIntoTheComment) {
  const std::string comment = "slurmfleet:prod:sf-0123abcd nightly build";
  std::optional<JobTagView> tag = ParseTagView(comment);
  ASSERT_TRUE(tag);
  EXPECT_EQ(tag->instance, "prod");
  EXPECT_EQ(tag->key, "sf-0123abcd");
  EXPECT_EQ(tag->key.data(), comment.data() + 16);
  EXPECT_FALSE(ParseTagView("slurmfleet:pr$d:key"));
}

TEST(JobTagTest, ValidatesParts) {
  EXPECT_TRUE(ValidateTagPart("instance", "prod-1.a_b"));
  auto bad = ValidateTagPart("submission key", "a b");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where, "submission key");
  EXPECT_FALSE(ValidateTagPart("instance", ""));
  EXPECT_FALSE(ValidateTagPart("instance", std::string(129, 'a')));
}

}  // namespace
}  // namespace slurmfleet::fleet
