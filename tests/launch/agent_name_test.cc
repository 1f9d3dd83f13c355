#include "launch/agent_name.h"

#include <gtest/gtest.h>

namespace slurmfleet::launch {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

TEST(AgentNameTest, ValidNames) {
  const std::string names[] = {"a", "gpu-large", "cpu_2", "v1.2", "A9", std::string(63, 'x')};
  for (const std::string& name : names) {
    EXPECT_TRUE(ValidateName("template name", name)) << name;
  }
}

TEST(AgentNameTest, InvalidNamesSayWhy) {
  struct Case {
    std::string name;
    std::string expected;
  } cases[] = {
      {"", "template name is empty"},
      {"gpu large", "contains ' '"},
      {"gpu/large", "contains '/'"},
      {"a$b", "contains '$'"},
      {"-gpu", "must start with a letter or a digit"},
      {".hidden", "must start with a letter or a digit"},
      {"gpu.", "must not end with '.'"},
      {std::string(64, 'x'), "64 characters long"},
      {"tab\there", "contains '\\x09'"},
      {"\xC3\xBCn\xC3\xAF", "contains '\\xC3'"},  // "ünï": its first byte, in hex
  };
  for (const Case& c : cases) {
    Status s = ValidateName("template name", c.name);
    ASSERT_FALSE(s) << c.name;
    EXPECT_EQ(s.error().code, Code::kInvalidInput);
    EXPECT_NE(s.error().message.find(c.expected), std::string::npos) << s.error().message;
  }
}

TEST(AgentNameTest, MakeAgentNameFollowsTheSpecPattern) {
  Result<std::string> name = MakeAgentName(
      "my-cloud", "gpu-agent", system_clock::time_point(milliseconds(1712345678901)), 3);
  ASSERT_TRUE(name);
  EXPECT_EQ(*name, "my-cloud-gpu-agent-1712345678901-3");
  EXPECT_TRUE(ValidateAgentName(*name));
}

TEST(AgentNameTest, MakeAgentNameRejectsBadParts) {
  const auto at = system_clock::time_point(milliseconds(1));
  EXPECT_FALSE(MakeAgentName("bad cloud", "t", at, 1));
  EXPECT_FALSE(MakeAgentName("c", "t;rm", at, 1));
}

TEST(AgentNameTest, NamesTooLongTogetherForAnAgentNameAreRefused) {
  const auto at = system_clock::time_point(milliseconds(9'000'000'000'000));  // 13 digits
  const std::string cloud(63, 'c');
  Result<std::string> longest =
      MakeAgentName(cloud, std::string(kMaxCloudAndTemplateLength - 63, 't'), at, UINT64_MAX);
  ASSERT_TRUE(longest) << longest.error().ToString();
  EXPECT_EQ(longest->size(), kMaxAgentNameLength);
  Result<std::string> over =
      MakeAgentName(cloud, std::string(kMaxCloudAndTemplateLength - 62, 't'), at, 1);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("characters together"), std::string::npos);
}

// Names from flags and the state file are held to what MakeAgentName makes: at most 128.
TEST(AgentNameTest, ValidateAgentNameAllowsWhatMakeAgentNameMakes) {
  EXPECT_TRUE(ValidateAgentName(std::string(kMaxAgentNameLength, 'a')));
  Status over = ValidateAgentName(std::string(kMaxAgentNameLength + 1, 'a'));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, Code::kInvalidInput);
  EXPECT_NE(over.error().message.find("is 129 characters long; use 128 or fewer"),
            std::string::npos)
      << over.error().message;
  EXPECT_FALSE(ValidateAgentName(std::string(63, 'a') + "-" + std::string(63, 'b') + "-1-1"));
  EXPECT_FALSE(ValidateAgentName("a/../b"));
}

TEST(AgentNameTest, OwnershipTagRoundTrips) {
  const std::string tag = OwnershipTag("local", "cpu-2n");
  EXPECT_EQ(tag, "slurmfleet:agent cloud=local template=cpu-2n");
  std::optional<Ownership> o = ParseOwnershipTag(tag);
  ASSERT_TRUE(o);
  EXPECT_EQ(*o, (Ownership{"local", "cpu-2n"}));
}

TEST(AgentNameTest, ForeignCommentsAreNotOurs) {
  for (const char* comment :
       {"", "ci-agent probe", "slurmfleet:agent cloud=a", "slurmfleet:agent cloud=a b template=c",
        "slurmfleet:agent cloud= template=c", "xslurmfleet:agent cloud=a template=b"}) {
    EXPECT_FALSE(ParseOwnershipTag(comment)) << comment;
  }
}

}  // namespace
}  // namespace slurmfleet::launch
