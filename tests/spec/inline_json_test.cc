#include "spec/inline_json.h"

#include <gtest/gtest.h>

namespace slurmfleet::spec {
namespace {

Result<JobTemplate> Parse(std::string_view text) {
  const JobDescSchema* schemas[] = {FindJobDescSchema("v0.0.45")};
  return ParseInlineJson(text, schemas);
}

TEST(InlineJsonTest, TheSpecExample) {
  Result<JobTemplate> t = Parse(R"({
    "job": {"partition": "gpu", "account": "myaccount", "cpus_per_task": 16,
            "memory_per_node": {"set": true, "number": 32768},
            "time_limit": {"set": true, "number": 120}, "tres_per_job": "gres/gpu:gfx942:4",
            "minimum_nodes": 1, "required_nodes": ["node1"], "constraints": "avx2"},
    "pyxis": {"containerImage": "/home/user/jenkins-agent.sqsh", "containerMountHome": true,
              "containerWritable": false}})");
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(t->job.memory_per_node_mb, 32768u);
  ASSERT_TRUE(t->pyxis);
  EXPECT_EQ(t->pyxis->container_image, "/home/user/jenkins-agent.sqsh");
  EXPECT_EQ(t->pyxis->container_mount_home, true);
  EXPECT_EQ(t->pyxis->container_writable, false);
  EXPECT_FALSE(t->pyxis->container_remap);
}

TEST(InlineJsonTest, EveryPyxisAndAgentField) {
  Result<JobTemplate> t = Parse(R"({
    "pyxis": {"containerImage": "i", "containerMountHome": false, "containerMounts": "/a:/b",
              "containerWorkdir": "/w", "containerWritable": true, "containerRemap": true,
              "containerName": "n"},
    "agent": {"java_path": "/j", "jar_path": "/a.jar", "download_jar": true,
              "setup_script": "module load java"}})");
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(*t->pyxis, (PyxisLaunch{"i", false, "/a:/b", "/w", true, true, "n"}));
  EXPECT_EQ(t->agent, (NativeLaunch{"/j", "/a.jar", true, "module load java"}));
}

TEST(InlineJsonTest, OneProblemKeepsItsPath) {
  Result<JobTemplate> t = Parse(R"({"job": {"cpus_per_task": "8"}})");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, Code::kInvalidInput);
  EXPECT_EQ(t.error().where, "job.cpus_per_task");
}

TEST(InlineJsonTest, EveryProblemIsListed) {
  Result<JobTemplate> t = Parse(R"({
    "jbo": {}, "job": {"partiton": "gpu"},
    "pyxis": {"containerImage": 5, "containerMount": "/a"},
    "agent": {"javaPath": "/j", "download_jar": "yes"}})");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().where, "json");
  const std::string& m = t.error().message;
  EXPECT_EQ(m.find("6 problems:"), 0u) << m;
  EXPECT_NE(m.find("jbo: unknown key 'jbo' (did you mean 'job'?)"), std::string::npos) << m;
  EXPECT_NE(m.find("job.partiton: unknown job_desc field 'partiton' in API v0.0.45 (did you mean "
                   "'partition'?)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("pyxis.containerImage: expected a string"), std::string::npos) << m;
  EXPECT_NE(m.find("pyxis.containerMount: unknown key 'containerMount' (did you mean "
                   "'containerMounts'?)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("agent.javaPath: unknown key 'javaPath' (did you mean 'java_path'?)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("agent.download_jar: expected true or false"), std::string::npos) << m;
}

TEST(InlineJsonTest, ASyntaxErrorGivesItsPositionNeverTheText) {
  Result<JobTemplate> t = Parse(R"({"job": {"environment": ["TOKEN=SECRETMARK"})");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, Code::kInvalidInput);
  EXPECT_EQ(t.error().where, "json");
  EXPECT_EQ(t.error().message,
            "the template JSON is not valid JSON (syntax error at byte 44); check quotes and "
            "commas");
}

TEST(InlineJsonTest, SyntaxErrorsAndWrongShapes) {
  Result<JobTemplate> t = Parse(R"({"job": {)");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(Parse("[1]"));
  EXPECT_FALSE(Parse(R"({"pyxis": true})"));
  EXPECT_TRUE(Parse("{}"));
}

// A pipeline's JSON reaches the daemon inside a request body, as a string the body's own depth
// check does not see into; nested deep, it would overflow the stack when written out.
TEST(InlineJsonTest, NestingDeeperThanAnyTemplateIsRefusedBeforeParsing) {
  const std::string deep =
      R"({"job": {"power_flags": )" + std::string(100000, '[') + std::string(100000, ']') + "}}";
  Result<JobTemplate> t = Parse(deep);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().where, "json");
  EXPECT_NE(t.error().message.find("nests deeper than 64 levels"), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet::spec
