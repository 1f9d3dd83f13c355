#include "spec/job_object.h"

#include <gtest/gtest.h>

namespace slurmfleet::spec {
namespace {

using nlohmann::json;

struct Decoded {
  JobTemplate layer;
  std::vector<Error> problems;
};

Decoded Decode(const json& job,
               std::vector<const JobDescSchema*> schemas = {FindJobDescSchema("v0.0.45")}) {
  Decoded d;
  DecodeJobObject(job, "job", schemas, d.layer, d.problems);
  return d;
}

std::vector<std::string> Wheres(const Decoded& d) {
  std::vector<std::string> out;
  for (const Error& e : d.problems) out.push_back(e.where);
  return out;
}

TEST(JobObjectTest, TypedFieldsFromTheSpecExample) {
  Decoded d = Decode(json::parse(R"({
    "partition": "gpu", "account": "myaccount", "cpus_per_task": 16,
    "memory_per_node": {"set": true, "number": 32768}, "time_limit": {"set": true, "number": 120},
    "tres_per_job": "gres/gpu:gfx942:4", "minimum_nodes": 1, "required_nodes": ["node1"],
    "constraints": "avx2"})"));
  ASSERT_TRUE(d.problems.empty()) << d.problems.front().ToString();
  const JobFields& f = d.layer.job;
  EXPECT_EQ(f.partition, "gpu");
  EXPECT_EQ(f.account, "myaccount");
  EXPECT_EQ(f.cpus_per_task, 16);
  EXPECT_EQ(f.memory_per_node_mb, 32768u);
  EXPECT_EQ(f.time_limit_minutes, 120u);
  EXPECT_EQ(f.tres_per_job, "gres/gpu:gfx942:4");
  EXPECT_EQ(f.minimum_nodes, 1);
  EXPECT_EQ(f.required_nodes, std::vector<std::string>{"node1"});
  EXPECT_EQ(f.constraints, "avx2");
  EXPECT_TRUE(f.extra.empty());
}

TEST(JobObjectTest, RefusesTwoMemoryRequests) {
  Decoded d = Decode(
      json::parse(R"({"memory_per_node": 4096, "memory_per_cpu": {"set": true, "number": 1024}})"));
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].where, "job.memory_per_cpu");
  EXPECT_NE(d.problems[0].message.find("keep one of them"), std::string::npos);
  EXPECT_TRUE(
      Decode(json::parse(R"({"memory_per_cpu": {"set": true, "number": 1024}})")).problems.empty());
}

TEST(JobObjectTest, PlainIntegerFormsForMemoryAndTime) {
  Decoded d = Decode(json{{"memory_per_node", 4096}, {"time_limit", 30}});
  ASSERT_TRUE(d.problems.empty());
  EXPECT_EQ(d.layer.job.memory_per_node_mb, 4096u);
  EXPECT_EQ(d.layer.job.time_limit_minutes, 30u);
}

TEST(JobObjectTest, RefusesNoValFormsThatAreNotAPlainNumber) {
  Decoded d = Decode(json::parse(R"({
    "time_limit": {"infinite": true},
    "memory_per_node": {"set": false, "number": 5},
    "tasks": 0,
    "cpus_per_task": "four",
    "minimum_nodes": 3000000000})"));
  EXPECT_EQ(Wheres(d),
            (std::vector<std::string>{"job.cpus_per_task", "job.memory_per_node",
                                      "job.minimum_nodes", "job.tasks", "job.time_limit"}));
  EXPECT_FALSE(d.layer.job.time_limit_minutes);
}

TEST(JobObjectTest, OutOfRangeMessagesNameTheRange) {
  Decoded d = Decode(json::parse(R"({"cpus_per_task": 2147483648,
    "time_limit": {"set": true, "number": 4294967294}, "memory_per_node": 0})"));
  ASSERT_EQ(d.problems.size(), 3u);
  EXPECT_EQ(d.problems[0].ToString(),
            "job.cpus_per_task: expected a whole number from 1 to 2147483647");
  EXPECT_EQ(d.problems[1].ToString(),
            "job.memory_per_node: expected a whole number of MB from 1 to 9223372036854775807");
  // 4294967294 is Slurm's NO_VAL: sent as a limit, it would mean none was asked for
  EXPECT_EQ(d.problems[2].ToString(),
            "job.time_limit: expected a whole number of minutes from 1 to 4294967293");
}

TEST(JobObjectTest, RequiredNodesAcceptsACommaSeparatedString) {
  Decoded d = Decode(json{{"required_nodes", "n1,n2,,n3"}});
  ASSERT_TRUE(d.problems.empty());
  EXPECT_EQ(d.layer.job.required_nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
}

TEST(JobObjectTest, OtherFieldsAreSchemaCheckedIntoExtra) {
  Decoded d = Decode(json::parse(R"({"mail_type": ["END"], "nice": 5, "exclusive": ["user"],
                                      "cpus_per_tsk": 4, "contiguous": "yes"})"));
  EXPECT_EQ(d.layer.job.extra, json::parse(R"({"mail_type": ["END"], "nice": 5})"));
  ASSERT_EQ(d.problems.size(), 3u);
  EXPECT_EQ(d.problems[0].where, "job.contiguous");
  EXPECT_EQ(d.problems[1].where, "job.cpus_per_tsk");
  EXPECT_NE(d.problems[1].message.find("did you mean 'cpus_per_task'"), std::string::npos);
  EXPECT_EQ(d.problems[2].where, "job.exclusive");
}

TEST(JobObjectTest, AnyOfSeveralSchemasIsEnough) {
  std::vector<const JobDescSchema*> all;
  for (const JobDescSchema& s : AllJobDescSchemas()) all.push_back(&s);
  // CPU_BIND_RANK exists only before v0.0.45: accepted under `auto`, refused when pinned.
  json job = {{"cpu_binding_flags", {"CPU_BIND_RANK"}}};
  EXPECT_TRUE(Decode(job, all).problems.empty());
  EXPECT_EQ(Decode(job).problems.size(), 1u);
}

TEST(JobObjectTest, ReservedFieldsAreRefused) {
  Decoded d = Decode(json{{"script", "x"}, {"name", "n"}, {"comment", "c"}, {"requeue", true}});
  EXPECT_EQ(Wheres(d),
            (std::vector<std::string>{"job.comment", "job.name", "job.requeue", "job.script"}));
  EXPECT_NE(d.problems[0].message.find("set by slurmfleet"), std::string::npos);
}

// A pipeline's JSON reaches this decoder too: it may not choose whom its agent runs as, nor
// hold the job (which would never start).
TEST(JobObjectTest, UserGroupAndHoldAreRefused) {
  Decoded d = Decode(json{{"user_id", "0"}, {"group_id", "0"}, {"hold", true}});
  EXPECT_EQ(Wheres(d), (std::vector<std::string>{"job.group_id", "job.hold", "job.user_id"}));
  EXPECT_NE(d.problems[0].message.find("run as the Slurm user of the cloud's token"),
            std::string::npos)
      << d.problems[0].message;
  EXPECT_NE(d.problems[1].message.find("must start by itself"), std::string::npos);
}

TEST(JobObjectTest, AnArrayIsRefused) {
  Decoded d = Decode(json{{"array", "0-3"}});
  EXPECT_EQ(Wheres(d), (std::vector<std::string>{"job.array"}));
  EXPECT_NE(d.problems[0].message.find("remove 'array'"), std::string::npos);
}

TEST(JobObjectTest, EnvironmentLandsInTheLayer) {
  Decoded d =
      Decode(json{{"environment", {"A=1", "B=x=y", "JENKINS_SECRET=z", "nonsense", "1X=2"}}});
  EXPECT_EQ(d.layer.environment, (std::map<std::string, std::string>{{"A", "1"}, {"B", "x=y"}}));
  EXPECT_EQ(Wheres(d), (std::vector<std::string>{"job.environment[2]", "job.environment[3]",
                                                 "job.environment[4]"}));
}

TEST(JobObjectTest, NotAnObject) {
  Decoded d = Decode(json::array());
  EXPECT_EQ(Wheres(d), std::vector<std::string>{"job"});
}

TEST(JobObjectTest, EnvironmentNames) {
  EXPECT_EQ(CheckEnvironmentName("BUILD_CACHE"), "");
  EXPECT_EQ(CheckEnvironmentName("_x1"), "");
  EXPECT_NE(CheckEnvironmentName(""), "");
  EXPECT_NE(CheckEnvironmentName("A-B"), "");
  EXPECT_NE(CheckEnvironmentName("JENKINS_URL"), "");
  EXPECT_NE(CheckEnvironmentName("SLURMFLEET_AGENT_INDEX"), "");
}

}  // namespace
}  // namespace slurmfleet::spec
