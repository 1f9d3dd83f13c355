// Every dialect against responses recorded from the real testbed (record_testdata.sh), plus the
// encode -> decode round trip of the job model.
#include "slurm/dialect.h"

#include <gtest/gtest.h>

#include "slurm/fake_transport.h"
#include "slurm/job_list_decoder.h"

namespace slurmfleet::slurm {
namespace {

class DialectTest : public ::testing::TestWithParam<std::string> {
 protected:
  const Dialect& dialect() { return *FindDialect(GetParam()); }
  nlohmann::json Load(const std::string& name) {
    return nlohmann::json::parse(ReadTestdata(GetParam() + "/" + name + ".json"));
  }
  // The recorded answer, decoded as the client decodes it.
  JobListAnswer Decode(const std::string& name) {
    std::string body = ReadTestdata(GetParam() + "/" + name + ".json");
    Result<JobListAnswer> answer = DecodeJobList(dialect(), body);
    EXPECT_TRUE(answer) << answer.error().ToString();
    return answer ? *answer : JobListAnswer{};
  }
};

TEST_P(DialectTest, DecodesARunningJob) {
  nlohmann::json submit = Load("submit");
  JobListAnswer answer = Decode("job_running");
  ASSERT_EQ(answer.jobs.size(), 1u);
  const JobInfo* job = &answer.jobs[0];
  EXPECT_EQ(job->job_id, submit["job_id"].get<uint32_t>());
  EXPECT_EQ(job->name, "rec-" + GetParam());
  EXPECT_EQ(job->user_name, "ci");
  EXPECT_EQ(job->partition, "debug");
  EXPECT_EQ(job->comment, "slurmfleet:rec");
  EXPECT_EQ(job->state.base, BaseState::kRunning);
  EXPECT_EQ(job->state_reason, "None");
  EXPECT_FALSE(job->nodes.empty());
  EXPECT_EQ(job->batch_host, job->nodes);  // one node: it runs the script
  EXPECT_EQ(job->standard_error, "");      // unset: errors go to the output's file
  EXPECT_EQ(job->time_limit_minutes, 5u);
  EXPECT_EQ(job->current_working_directory, "/home/ci/jobs");
  ASSERT_TRUE(job->submit_time && job->start_time);
  EXPECT_LE(*job->submit_time, *job->start_time);
  EXPECT_FALSE(job->het_job_id.has_value());
  // the SLUID exists from v0.0.44 on; stdout is expanded (%j resolved) from v0.0.43 on
  EXPECT_EQ(!job->sluid.empty(), dialect().has_sluid);
  if (dialect().has_sluid) {
    EXPECT_EQ(job->sluid.size(), 14u);
  }
  if (dialect().has_stdout_expanded) {
    EXPECT_EQ(job->standard_output, "/home/ci/jobs/slurm-" + std::to_string(job->job_id) + ".out");
  } else {
    EXPECT_NE(job->standard_output.find("slurm-"), std::string::npos);
  }
}

// Slurm 24.11 answers v0.0.42 with the output's name only partly expanded (no stdout_expanded
// there): the decoder fills in the rest, and never touches a name the API expanded itself.
TEST(OutputPathDecodeTest, NamesBeforeV0043AreCompletedLaterOnesTakenAsExpanded) {
  nlohmann::json answer = nlohmann::json::parse(ReadTestdata("v0.0.42/job_running.json"));
  nlohmann::json& job = answer["jobs"][0];
  const uint32_t id = job["job_id"].get<uint32_t>();
  job["batch_host"] = "n2";
  job["standard_output"] = "/w/out-" + std::to_string(id) + "-%N-%s-%t.out";
  job["standard_error"] = "/w/err-%J.err";
  std::string body = answer.dump();
  Result<JobListAnswer> old_api = DecodeJobList(*FindDialect("v0.0.42"), body);
  ASSERT_TRUE(old_api) << old_api.error().ToString();
  EXPECT_EQ(old_api->jobs.at(0).standard_output,
            "/w/out-" + std::to_string(id) + "-n2-batch-0.out");
  EXPECT_EQ(old_api->jobs.at(0).standard_error, "/w/err-" + std::to_string(id) + ".err");

  job["stdout_expanded"] = "/w/expanded.out";
  job["stderr_expanded"] = "/w/expanded.err";
  body = answer.dump();
  Result<JobListAnswer> new_api = DecodeJobList(*FindDialect("v0.0.45"), body);
  ASSERT_TRUE(new_api) << new_api.error().ToString();
  EXPECT_EQ(new_api->jobs.at(0).standard_output, "/w/expanded.out");
  EXPECT_EQ(new_api->jobs.at(0).standard_error, "/w/expanded.err");
}

TEST_P(DialectTest, DecodesACancelledJob) {
  JobListAnswer answer = Decode("job_cancelled");
  ASSERT_EQ(answer.jobs.size(), 1u);
  const JobInfo* job = &answer.jobs[0];
  EXPECT_EQ(job->state.base, BaseState::kCancelled);
  ASSERT_TRUE(job->end_time.has_value());
  EXPECT_FALSE(job->exit_code.status.empty());
}

TEST_P(DialectTest, DecodesEveryComponentOfAHeterogeneousJob) {
  nlohmann::json submit = Load("submit_het");
  JobListAnswer answer = Decode("job_het");
  ASSERT_EQ(answer.jobs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const JobInfo* job = &answer.jobs[i];
    EXPECT_EQ(job->het_job_id, submit["job_id"].get<uint32_t>());
    EXPECT_EQ(job->het_job_offset, i);
    EXPECT_EQ(job->name, "rec-het");
  }
}

TEST_P(DialectTest, DecodesEveryJobOfTheFullList) {
  nlohmann::json body = Load("jobs");
  JobListAnswer answer = Decode("jobs");
  ASSERT_FALSE(answer.jobs.empty());
  ASSERT_EQ(answer.jobs.size(), body["jobs"].size());
  for (size_t i = 0; i < answer.jobs.size(); ++i) {
    EXPECT_EQ(answer.jobs[i].job_id, body["jobs"][i]["job_id"].get<uint32_t>());
    EXPECT_EQ(answer.jobs[i].comment, body["jobs"][i]["comment"].get<std::string>());
    EXPECT_EQ(answer.jobs[i].account, body["jobs"][i]["account"].get<std::string>());
    EXPECT_EQ(answer.jobs[i].state_reason, body["jobs"][i]["state_reason"].get<std::string>());
    EXPECT_EQ(answer.jobs[i].state_description,
              body["jobs"][i]["state_description"].get<std::string>());
    EXPECT_NE(answer.jobs[i].state.base, BaseState::kUnknown);
  }
  EXPECT_EQ(answer.last_update, body["last_update"]["number"].get<uint64_t>());
}

TEST_P(DialectTest, AWrongTypeNamesTheJsonPath) {
  nlohmann::json body = Load("job_running");
  body["jobs"][0]["job_state"] = "RUNNING";  // a string where an array belongs
  std::string text = body.dump();
  Result<JobListAnswer> answer = DecodeJobList(dialect(), text);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().where, "jobs[0].job_state");
  std::string not_json = "{\"jobs\": [";
  EXPECT_FALSE(DecodeJobList(dialect(), not_json));
}

TEST_P(DialectTest, DecodesRecordedSubmitAnswers) {
  JobSubmitDecoder decoder;  // one for every answer, as the client's sending thread has
  for (const char* name : {"submit", "submit_het", "submit_wrong_type", "submit_empty"}) {
    SCOPED_TRACE(name);
    nlohmann::json dom = Load(name);
    std::string body = ReadTestdata(GetParam() + "/" + name + ".json");
    Result<JobSubmitAnswer> answer = decoder.Decode(body);
    ASSERT_TRUE(answer) << answer.error().ToString();
    EXPECT_EQ(answer->job_id, dom.value("job_id", 0u));
    EXPECT_EQ(answer->step_id, dom.value("step_id", ""));
    EXPECT_EQ(answer->user_message, dom.value("job_submit_user_msg", ""));
    ASSERT_EQ(answer->errors.size(), dom["errors"].size());
    for (size_t i = 0; i < answer->errors.size(); ++i) {
      EXPECT_EQ(answer->errors[i].error_number, dom["errors"][i].value("error_number", 0));
      EXPECT_EQ(answer->errors[i].description, dom["errors"][i].value("description", ""));
    }
    ASSERT_EQ(answer->warnings.size(), dom["warnings"].size());
    for (size_t i = 0; i < answer->warnings.size(); ++i) {
      EXPECT_EQ(answer->warnings[i].description, dom["warnings"][i].value("description", ""));
      EXPECT_EQ(answer->warnings[i].source, dom["warnings"][i].value("source", ""));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, DialectTest,
                         ::testing::Values("v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"));

JobRequest FullRequest() {
  JobRequest r;
  r.script = "#!/bin/bash\necho hi\n";
  r.name = "agent-1";
  r.comment = "slurmfleet:abc";
  r.partition = "debug";
  r.account = "ops";
  r.qos = "normal";
  r.cpus_per_task = 2;
  r.tasks = 1;
  r.memory_per_node_mb = 2048;
  r.time_limit_minutes = 30;
  r.tres_per_job = "gres/gpu=1";
  r.minimum_nodes = 2;
  r.maximum_nodes = 2;
  r.required_nodes = {"n1", "n2"};
  r.constraints = "a100";
  r.current_working_directory = "/tmp/jenkins";
  r.standard_output = "/tmp/out-%j";
  r.standard_error = "/tmp/err-%j";
  r.environment = {{"PATH", "/bin", false}, {"JENKINS_SECRET", "s3cr3t", true}};
  r.hold = true;
  r.extra_fields = {{"nice", 5}};
  return r;
}

TEST(JobDescTest, EncodesEveryFieldWithSlurmsShapes) {
  nlohmann::json j = EncodeJobDesc(*FindDialect("v0.0.45"), FullRequest(), false);
  EXPECT_EQ(j["memory_per_node"], (nlohmann::json{{"set", true}, {"number", 2048}}));
  EXPECT_EQ(j["time_limit"], (nlohmann::json{{"set", true}, {"number", 30}}));
  EXPECT_EQ(j["required_nodes"], (nlohmann::json{"n1", "n2"}));
  EXPECT_EQ(j["environment"], (nlohmann::json{"PATH=/bin", "JENKINS_SECRET=s3cr3t"}));
  EXPECT_EQ(j["requeue"], false);
  EXPECT_EQ(j["hold"], true);
  EXPECT_EQ(j["nice"], 5);
}

TEST(JobDescTest, RedactsSecretsOnlyWhenAsked) {
  nlohmann::json shown = EncodeJobDesc(*FindDialect("v0.0.45"), FullRequest(), true);
  EXPECT_EQ(shown["environment"][1], "JENKINS_SECRET=***");
  EXPECT_EQ(shown.dump().find("s3cr3t"), std::string::npos);
}

TEST(JobDescTest, RequeueIsAlwaysSentAndFalseByDefault) {
  nlohmann::json j = EncodeJobDesc(*FindDialect("v0.0.42"), JobRequest{}, false);
  EXPECT_EQ(j["requeue"], false);
  EXPECT_EQ(j["environment"], nlohmann::json::array());
  EXPECT_FALSE(j.contains("name"));
  EXPECT_FALSE(j.contains("memory_per_node"));
}

TEST(JobDescTest, RoundTripsThroughAHumanWrittenJobDesc) {
  for (const Dialect& d : AllDialects()) {
    JobRequest original = FullRequest();
    for (EnvVar& v : original.environment) v.secret = false;  // secrecy is not part of job_desc
    Result<JobRequest> back = JobRequestFromJobDesc(EncodeJobDesc(d, original, false), "job");
    ASSERT_TRUE(back) << back.error().ToString();
    EXPECT_EQ(*back, original) << d.version;
  }
}

TEST(JobDescTest, AcceptsPlainIntegersAndCsvNodes) {
  Result<JobRequest> r = JobRequestFromJobDesc(
      nlohmann::json::parse(
          R"({"memory_per_node": 512, "time_limit": 10, "required_nodes": "n1,n2"})"),
      "job");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->memory_per_node_mb, 512u);
  EXPECT_EQ(r->time_limit_minutes, 10u);
  EXPECT_EQ(r->required_nodes, (std::vector<std::string>{"n1", "n2"}));
}

TEST(JobDescTest, RequeueMayOnlyBeFalse) {
  Result<JobRequest> off =
      JobRequestFromJobDesc(nlohmann::json::parse(R"({"requeue": false})"), "job");
  ASSERT_TRUE(off) << off.error().ToString();
  EXPECT_EQ(EncodeJobDesc(*FindDialect("v0.0.45"), *off, false)["requeue"], false);
  for (const char* json : {R"({"requeue": true})", R"({"requeue": "no"})"}) {
    Result<JobRequest> on = JobRequestFromJobDesc(nlohmann::json::parse(json), "job");
    ASSERT_FALSE(on) << json;
    EXPECT_EQ(on.error().where, "job.requeue");
    EXPECT_EQ(on.error().message,
              "must be false or left out: slurmfleet submits every job with requeue=false and "
              "retries on its own, since a requeued job runs its script a second time");
  }
}

TEST(JobDescTest, AnArrayIsRefused) {
  Result<JobRequest> r =
      JobRequestFromJobDesc(nlohmann::json::parse(R"({"array": "0-3%2"})"), "job");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kInvalidInput);
  EXPECT_EQ(r.error().where, "job.array");
  EXPECT_NE(r.error().message.find("submit one job per task"), std::string::npos);
}

TEST(JobDescTest, WrongTypesNameTheField) {
  struct Case {
    const char* json;
    const char* where;
  };
  for (const Case& c : {Case{R"({"cpus_per_task": "two"})", "job.cpus_per_task"},
                        Case{R"({"memory_per_node": "16G"})", "job.memory_per_node"},
                        Case{R"({"environment": ["NOEQUALS"]})", "job.environment"},
                        Case{R"({"hold": "yes"})", "job.hold"},
                        Case{R"({"required_nodes": [1, 2]})", "job.required_nodes"}}) {
    Result<JobRequest> r = JobRequestFromJobDesc(nlohmann::json::parse(c.json), "job");
    ASSERT_FALSE(r) << c.json;
    EXPECT_EQ(r.error().code, Code::kInvalidInput);
    EXPECT_EQ(r.error().where, c.where);
  }
}

// The template path (spec::DecodeJobObject) refuses the same values with the same words.
TEST(JobDescTest, NumbersOutOfRangeAreRefusedNotCast) {
  struct Case {
    const char* json;
    const char* where;
    const char* message;
  };
  for (const Case& c : {
           Case{R"({"cpus_per_task": 4294967297})", "job.cpus_per_task",
                "expected a whole number from 1 to 2147483647"},
           Case{R"({"tasks": -7})", "job.tasks", "expected a whole number from 1 to 2147483647"},
           Case{R"({"minimum_nodes": 0})", "job.minimum_nodes",
                "expected a whole number from 1 to 2147483647"},
           Case{R"({"maximum_nodes": 2.5})", "job.maximum_nodes",
                "expected a whole number from 1 to 2147483647"},
           Case{R"({"time_limit": 4294967296})", "job.time_limit",
                "expected a whole number of minutes from 1 to 4294967293"},
           Case{R"({"time_limit": {"set": true, "number": 4294967294}})", "job.time_limit",
                "expected a whole number of minutes from 1 to 4294967293"},
           Case{R"({"time_limit": {"set": true, "infinite": true}})", "job.time_limit",
                "must be a number of minutes, not infinite; leave the field out to use Slurm's "
                "default"},
           Case{R"({"memory_per_node": {"set": true, "number": -1}})", "job.memory_per_node",
                "expected a whole number of MB from 0 to 9223372036854775807"},
           Case{R"({"memory_per_node": 9223372036854775808})", "job.memory_per_node",
                "expected a whole number of MB from 0 to 9223372036854775807"},
       }) {
    Result<JobRequest> r = JobRequestFromJobDesc(nlohmann::json::parse(c.json), "job");
    ASSERT_FALSE(r) << c.json;
    EXPECT_EQ(r.error().code, Code::kInvalidInput) << c.json;
    EXPECT_EQ(r.error().where, c.where) << c.json;
    EXPECT_EQ(r.error().message, c.message) << c.json;
  }
}

TEST(JobDescTest, NumbersAtTheEdgesOfTheirRangesAreKept) {
  Result<JobRequest> r = JobRequestFromJobDesc(nlohmann::json::parse(R"({
    "cpus_per_task": 2147483647, "tasks": 1, "time_limit": 4294967293,
    "memory_per_node": {"set": true, "number": 0}})"),
                                               "job");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->cpus_per_task, 2147483647);
  EXPECT_EQ(r->tasks, 1);
  EXPECT_EQ(r->time_limit_minutes, 4294967293u);
  EXPECT_EQ(r->memory_per_node_mb, 0u);  // Slurm's "all of each node's memory"
  Result<JobRequest> unset = JobRequestFromJobDesc(
      nlohmann::json::parse(R"({"time_limit": {"set": false, "number": 0}})"), "job");
  ASSERT_TRUE(unset) << unset.error().ToString();
  EXPECT_FALSE(unset->time_limit_minutes);
}

TEST(SubmitBodyTest, HeterogeneousJobHasOneScriptAtTheTop) {
  JobRequest a = FullRequest();
  JobRequest b = FullRequest();
  b.script = "ignored";
  std::vector<JobRequest> parts{a, b};
  nlohmann::json body = EncodeSubmit(*FindDialect("v0.0.45"), parts, false);
  EXPECT_EQ(body["script"], a.script);
  ASSERT_EQ(body["jobs"].size(), 2u);
  EXPECT_FALSE(body["jobs"][0].contains("script"));
  EXPECT_FALSE(body["jobs"][1].contains("script"));
  EXPECT_FALSE(body.contains("job"));
}

TEST(JobSubmitDecoderTest, AnswersOfAnotherShapeNameTheField) {
  JobSubmitDecoder decoder;
  const std::pair<std::string, std::string> cases[] = {
      {R"({"job_id": -3, "errors": []})", "job_id"},
      {R"({"job_id": 4294967296})", "job_id"},
      {R"({"job_id": "12a"})", "job_id"},
      {R"({"job_id": 7.5})", "job_id"},
      {R"({"job_id": 7, "step_id": 0})", "step_id"},
      {R"({"job_id": 7, "errors": {}})", "errors"},
      {R"({"job_id": 7, "warnings": ["x"]})", "warnings"},
      {R"([7])", ""},
  };
  for (const auto& [text, where] : cases) {
    std::string body = text;
    Result<JobSubmitAnswer> answer = decoder.Decode(body);
    ASSERT_FALSE(answer) << text;
    EXPECT_EQ(answer.error().code, Code::kInternal) << text;
    EXPECT_EQ(answer.error().where, where) << text;
  }
  std::string not_json = R"({"job_id": 7,)";
  EXPECT_FALSE(decoder.Decode(not_json));
  // and the decoder is whole again after them
  std::string fine = R"({"job_id": "42", "step_id": "batch", "errors": [], "warnings": []})";
  Result<JobSubmitAnswer> answer = decoder.Decode(fine);
  ASSERT_TRUE(answer) << answer.error().ToString();
  EXPECT_EQ(answer->job_id, 42u);
  EXPECT_EQ(answer->step_id, "batch");
}

TEST(DialectTableTest, NewestFirstAndOnlyTheDeprecatedOneIsMarked) {
  auto all = AllDialects();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all.front().version, "v0.0.45");
  EXPECT_EQ(all.back().version, "v0.0.42");
  for (const Dialect& d : all) EXPECT_EQ(d.deprecated, d.version == "v0.0.42");
  EXPECT_EQ(FindDialect("v0.0.41"), nullptr);
  EXPECT_EQ(SupportedVersions(), "v0.0.42, v0.0.43, v0.0.44, v0.0.45");
  EXPECT_EQ(FindDialect("v0.0.44")->Path("/jobs/"), "/slurm/v0.0.44/jobs/");
}

}  // namespace
}  // namespace slurmfleet::slurm
