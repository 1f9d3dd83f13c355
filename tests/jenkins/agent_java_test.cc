#include "jenkins/agent_java.h"

#include <gtest/gtest.h>

namespace slurmfleet::jenkins {
namespace {

TEST(MinimumAgentJavaTest, ControllersBefore2545TakeJava17) {
  EXPECT_EQ(MinimumAgentJava("2.541.1"), 17);
  EXPECT_EQ(MinimumAgentJava("2.544"), 17);
  EXPECT_EQ(MinimumAgentJava("2.479.3"), 17);
  EXPECT_EQ(MinimumAgentJava("1.651"), 17);
}

TEST(MinimumAgentJavaTest, Controllers2545AndLaterNeedJava21) {
  EXPECT_EQ(MinimumAgentJava("2.545"), 21);
  EXPECT_EQ(MinimumAgentJava("2.555.1"), 21);
  EXPECT_EQ(MinimumAgentJava("2.1000"), 21);
  EXPECT_EQ(MinimumAgentJava("3.1"), 21);
}

TEST(MinimumAgentJavaTest, AVersionThatCannotBeReadGivesTheFloor) {
  EXPECT_EQ(MinimumAgentJava(""), kAgentJavaFloor);
  EXPECT_EQ(MinimumAgentJava("2"), kAgentJavaFloor);
  EXPECT_EQ(MinimumAgentJava("2."), kAgentJavaFloor);
  EXPECT_EQ(MinimumAgentJava("weekly"), kAgentJavaFloor);
  EXPECT_EQ(MinimumAgentJava("-2.600"), kAgentJavaFloor);
  EXPECT_EQ(MinimumAgentJava("2.99999999999999999999999"), kAgentJavaFloor);
}

}  // namespace
}  // namespace slurmfleet::jenkins
