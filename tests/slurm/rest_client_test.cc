// RestClient over a FakeTransport replaying responses recorded from the real testbed: error
// mapping, retries, re-authentication, version discovery and the cancel ownership check.
#include "slurm/rest_client.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "slurm/curl_transport.h"
#include "slurm/fake_transport.h"

namespace slurmfleet::slurm {
namespace {

class RestClientTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string v() const { return GetParam(); }
  std::string P(const std::string& path) const { return "/slurm/" + v() + path; }

  std::unique_ptr<RestClient> Make(std::string version = "") {
    RestClientOptions o;
    o.api_version = version.empty() ? v() : version;
    o.sleep = [this](std::chrono::milliseconds d) { sleeps_.push_back(d); };
    auto c = RestClient::Connect(transport_, tokens_, o);
    EXPECT_TRUE(c) << c.error().ToString();
    return std::move(*c);
  }

  FakeTransport transport_;
  FakeTokenSource tokens_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

TEST_P(RestClientTest, PingReportsReleaseAndCluster) {
  transport_.On("GET " + P("/ping/"), Recorded(v(), "ping"));
  Result<PingReport> r = Make()->Ping();
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->api_version, v());
  EXPECT_TRUE(r->responding);
  EXPECT_EQ(r->cluster, "testbed");
  EXPECT_EQ(r->slurm_release.substr(0, 5), "26.05");
}

TEST_P(RestClientTest, PingWithARejectedTokenIsAnAuthError) {
  // ping answers 200 with responding=false when slurmctld rejects the token
  transport_.On("GET " + P("/ping/"), Recorded(v(), "ping_bad_token"));
  transport_.On("GET " + P("/jobs/state/"), Recorded(v(), "jobs_bad_token"));
  auto client = Make();
  Result<PingReport> r = client->Ping();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kAuth);
  EXPECT_NE(r.error().message.find("rejected the token"), std::string::npos) << r.error().message;
  EXPECT_GE(tokens_.invalidations(), 1);
}

TEST_P(RestClientTest, SubmitReturnsTheJobId) {
  transport_.On("POST " + P("/job/submit"), Recorded(v(), "submit"));
  JobRequest req;
  req.script = "#!/bin/bash\ntrue\n";
  Result<SubmitReceipt> r = Make()->Submit(req);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_NE(r->job_id, 0u);
  nlohmann::json sent = nlohmann::json::parse(transport_.log().back().body);
  EXPECT_EQ(sent["job"]["requeue"], false);
}

TEST_P(RestClientTest, A200WithoutJobIdIsARejectedSubmitThatCarriesTheWarning) {
  transport_.On("POST " + P("/job/submit"), Recorded(v(), "submit_wrong_type"));
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kRejected);
  EXPECT_NE(r.error().message.find("cpus_per_task"), std::string::npos) << r.error().message;
  EXPECT_EQ(transport_.Count("POST"), 1);
}

// A job id past 32 bits would have been wrapped to another job's id, and that job tracked.
HttpResponse SubmittedAs(const std::string& job_id) {
  HttpResponse answer;
  answer.status = 200;
  answer.content_type = "application/json";
  answer.body =
      R"({"job_id": )" + job_id + R"(, "step_id": "batch", "errors": [], "warnings": []})";
  return answer;
}

TEST_P(RestClientTest, AJobIdPast32BitsIsNotTakenForAnotherJob) {
  transport_.On("POST " + P("/job/submit"), SubmittedAs("4294967297"));
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r) << "became job " << r->job_id;
  EXPECT_EQ(r.error().code, Code::kRejected);
}

TEST_P(RestClientTest, ANegativeJobIdIsNotTakenForAnotherJob) {
  transport_.On("POST " + P("/job/submit"), SubmittedAs("-3"));
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r) << "became job " << r->job_id;
  EXPECT_EQ(r.error().code, Code::kRejected);
}

// SubmitAll and SubmitReleased read answers with JobSubmitDecoder, and any shape it does not take
// as a DOM; Submit always as a DOM. Each answer must mean the same either way.
TEST_P(RestClientTest, ASubmitAnswerMeansTheSameSentAloneOrTogether) {
  std::vector<HttpResponse> answers = {
      Recorded(v(), "submit"),       Recorded(v(), "submit_het"),
      Recorded(v(), "submit_empty"), Recorded(v(), "submit_wrong_type"),
      SubmittedAs("4294967297"),     SubmittedAs("-3"),
      SubmittedAs("\"17\""),         SubmittedAs("17.5"),
      SubmittedAs("null"),           SubmittedAs("\"\""),
  };
  const auto with_body = [](std::string body) {
    HttpResponse answer;
    answer.status = 200;
    answer.content_type = "application/json";
    answer.body = std::move(body);
    return answer;
  };
  answers.push_back(with_body(R"({"job_id": 9, "step_id": 3, "errors": []})"));
  answers.push_back(
      with_body(R"({"job_id": 9, "errors": {}, "warnings": [{"description": "w"}]})"));
  answers.push_back(with_body(
      R"({"job_id": 9, "step_id": "batch", "job_submit_user_msg": "hi", "warnings": [{"description": "w", "source": "#/job/x"}]})"));
  answers.push_back(with_body(R"({"errors": [{"error_number": 1007, "error": "auth"}]})"));
  answers.push_back(
      with_body(R"({"job_id": 9, "errors": [{"error_number": 2000, "description": "no"}]})"));
  answers.push_back(with_body("<html>busy</html>"));
  for (const HttpResponse& answer : answers) {
    SCOPED_TRACE(answer.body.substr(0, 120));
    FakeTransport alone, together;
    alone.On("POST " + P("/job/submit"), answer);
    together.On("POST " + P("/job/submit"), answer);
    RestClientOptions o;
    o.api_version = v();
    o.sleep = [](std::chrono::milliseconds) {};
    auto one = RestClient::Connect(alone, tokens_, o);
    auto many = RestClient::Connect(together, tokens_, o);
    ASSERT_TRUE(one && many);
    Result<SubmitReceipt> a = (*one)->Submit(JobRequest{});
    std::vector<Result<SubmitReceipt>> b = (*many)->SubmitAll({JobRequest{}, JobRequest{}}, 16);
    ASSERT_EQ(b.size(), 2u);
    for (const Result<SubmitReceipt>& r : b) {
      ASSERT_EQ(a.has_value(), r.has_value());
      if (a) {
        EXPECT_EQ(a->job_id, r->job_id);
        EXPECT_EQ(a->step_id, r->step_id);
        EXPECT_EQ(a->user_message, r->user_message);
        EXPECT_EQ(a->warnings, r->warnings);
      } else {
        EXPECT_EQ(a.error().code, r.error().code);
        EXPECT_EQ(a.error().message, r.error().message);
        EXPECT_EQ(a.error().where, r.error().where);
      }
    }
  }
}

TEST_P(RestClientTest, A422CarriesSlurmsErrorNumber) {
  transport_.On("POST " + P("/job/submit"), Recorded(v(), "submit_empty"));
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kRejected);
  EXPECT_NE(r.error().message.find("HTTP 422"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("[9000]"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().where, "POST " + P("/job/submit"));
}

TEST_P(RestClientTest, UnknownJobIsNotFound) {
  transport_.On("GET " + P("/job/999999"), Recorded(v(), "job_unknown"));
  Result<std::vector<JobInfo>> r = Make()->GetJob({999999, ""});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kNotFound);
  EXPECT_NE(r.error().message.find("[2017]"), std::string::npos);
}

TEST_P(RestClientTest, NoTokenIsAnAuthErrorAfterOneRetry) {
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs_no_token"));
  Result<JobsSnapshot> r = Make()->JobsChangedSince(std::nullopt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kAuth);
  EXPECT_EQ(transport_.Count("GET"), 2);
  EXPECT_EQ(tokens_.invalidations(), 1);
}

TEST_P(RestClientTest, ARejectedTokenIsRetriedOnceWithAFreshOne) {
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs_bad_token"));
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs"));
  Result<JobsSnapshot> r = Make()->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_FALSE(r->jobs.empty());
  EXPECT_EQ(tokens_.invalidations(), 1);
  ASSERT_EQ(transport_.log().size(), 2u);
  EXPECT_EQ(transport_.log()[0].token.Reveal(), "token-0");
  EXPECT_EQ(transport_.log()[1].token.Reveal(), "token-1");
}

TEST_P(RestClientTest, UnchangedJobListIsReportedAsUnchanged) {
  transport_.On("GET " + P("/jobs/?update_time="), Recorded(v(), "jobs_unchanged"));
  auto since = Seconds(std::chrono::seconds(1796012802));
  Result<JobsSnapshot> r = Make()->JobsChangedSince(since);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_FALSE(r->changed);
  EXPECT_TRUE(r->jobs.empty());
  EXPECT_EQ(r->last_update, since);
  EXPECT_EQ(transport_.log().back().path, P("/jobs/?update_time=1796012802"));
}

TEST_P(RestClientTest, ChangedJobListCarriesLastUpdate) {
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs"));
  Result<JobsSnapshot> r = Make()->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_TRUE(r->changed);
  ASSERT_TRUE(r->last_update.has_value());
  EXPECT_GT(r->last_update->time_since_epoch().count(), 1700000000);
}

TEST_P(RestClientTest, JobStatesOfManyJobsInOneRequest) {
  transport_.On("GET " + P("/jobs/state/"), Recorded(v(), "jobs_state"));
  Result<std::vector<JobStateEntry>> r = Make()->JobStates({1, 2, 3});
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().state.base, BaseState::kRunning);
  EXPECT_EQ(transport_.log().size(), 1u);
  EXPECT_EQ(transport_.log().back().path, P("/jobs/state/?job_id=1&job_id=2&job_id=3"));
  EXPECT_TRUE(Make()->JobStates({})->empty());  // no request: an empty filter means every job
  EXPECT_EQ(transport_.log().size(), 1u);
}

TEST_P(RestClientTest, AllJobStatesIsOneUnfilteredRequest) {
  transport_.On("GET " + P("/jobs/state/"), Recorded(v(), "jobs_state"));
  Result<std::vector<JobStateEntry>> r = Make()->AllJobStates();
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->size(), 1u);
  ASSERT_EQ(transport_.log().size(), 1u);
  EXPECT_EQ(transport_.log().back().path, P("/jobs/state/"));
}

TEST_P(RestClientTest, JobStatesTrackHetLeadersAndSkipOtherComponentsAndArrayTasks) {
  transport_.On(
      "GET " + P("/jobs/state/"),
      HttpResponse{
          200, R"({"jobs":[{"job_id":"7","state":["RUNNING"]},{"job_id":"8+0","state":["PENDING"]},
                                     {"job_id":"8+1","state":["PENDING"]},{"job_id":"9_3","state":["RUNNING"]}],
                                     "errors":[],"warnings":[]})",
          "application/json"});
  Result<std::vector<JobStateEntry>> r = Make()->AllJobStates();
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].job_id, 7u);
  EXPECT_EQ((*r)[1].job_id, 8u);
  EXPECT_EQ((*r)[1].state.base, BaseState::kPending);
}

TEST_P(RestClientTest, AJobStatesAnswerOfAnotherShapeNamesWhere) {
  transport_.On("GET " + P("/jobs/state/"),
                HttpResponse{200,
                             R"({"jobs":[{"job_id":"7","state":["RUNNING"]},
                                         {"job_id":"x","state":["PENDING"]}]})",
                             "application/json"});
  transport_.On(
      "GET " + P("/jobs/state/"),
      HttpResponse{200, R"({"jobs":[{"job_id":"7","state":"RUNNING"}]})", "application/json"});
  Result<std::vector<JobStateEntry>> r = Make()->AllJobStates();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kInternal);
  EXPECT_EQ(r.error().where, "GET " + P("/jobs/state/") + " jobs[1].job_id");
  r = Make()->AllJobStates();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "GET " + P("/jobs/state/") + " jobs[0].state");
}

// The client keeps its jobs/state parser from answer to answer: each answer must decode as if
// it were the first, whatever came before it (a bigger one, or one that failed halfway).
TEST_P(RestClientTest, OneClientDecodesEachJobStatesAnswerOnItsOwn) {
  const std::string many = R"({"jobs":[{"job_id":"7","state":["RUNNING"]},
                                        {"job_id":"8","state":["PENDING","REQUEUED"]},
                                        {"job_id":"9","state":["COMPLETED"]}]})";
  transport_.On("GET " + P("/jobs/state/"), HttpResponse{200, many, "application/json"});
  transport_.On("GET " + P("/jobs/state/"), Recorded(v(), "jobs_state"));
  transport_.On("GET " + P("/jobs/state/"),
                HttpResponse{200, R"({"jobs":[{"job_id":"7","state":["RUNNING"]},{"job_id":)",
                             "application/json"});
  transport_.On("GET " + P("/jobs/state/"), HttpResponse{200, many, "application/json"});
  auto client = Make();
  Result<std::vector<JobStateEntry>> first = client->AllJobStates();
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_EQ(first->size(), 3u);
  EXPECT_TRUE((*first)[1].state.Has(kFlagRequeued));

  Result<std::vector<JobStateEntry>> smaller = client->AllJobStates();
  ASSERT_TRUE(smaller) << smaller.error().ToString();
  ASSERT_EQ(smaller->size(), 1u);
  EXPECT_EQ(smaller->front().state.base, BaseState::kRunning);

  EXPECT_FALSE(client->AllJobStates());  // cut off inside the second entry

  Result<std::vector<JobStateEntry>> again = client->AllJobStates();
  ASSERT_TRUE(again) << again.error().ToString();
  ASSERT_EQ(again->size(), first->size());
  for (size_t i = 0; i < again->size(); ++i) {
    EXPECT_EQ((*again)[i].job_id, (*first)[i].job_id) << i;
    EXPECT_EQ((*again)[i].state, (*first)[i].state) << i;
  }
}

TEST_P(RestClientTest, DecodesEveryJobOfARecordedFullList) {
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs"));
  Result<JobsSnapshot> snapshot = Make()->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(snapshot) << snapshot.error().ToString();
  nlohmann::json full = nlohmann::json::parse(ReadTestdata(v() + "/jobs.json"));
  ASSERT_EQ(snapshot->jobs.size(), full["jobs"].size());
  for (size_t i = 0; i < snapshot->jobs.size(); ++i) {
    EXPECT_EQ(snapshot->jobs[i].name, full["jobs"][i]["name"].get<std::string>()) << i;
    EXPECT_EQ(snapshot->jobs[i].user_name, full["jobs"][i]["user_name"].get<std::string>()) << i;
  }
}

TEST_P(RestClientTest, TheNextFilteredListIsWrittenOverTheOneGivenBack) {
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs"));
  std::unique_ptr<RestClient> client = Make();
  Result<JobsSnapshot> all = client->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(all) << all.error().ToString();
  JobFilter every_job{"slurmfleet:rec:", {}};
  for (const JobInfo& job : all->jobs) every_job.ids.push_back(job.job_id);
  std::sort(every_job.ids.begin(), every_job.ids.end());
  Result<JobsSnapshot> first = client->JobsChangedSince(std::nullopt, every_job);
  ASSERT_TRUE(first) << first.error().ToString();
  const std::vector<JobInfo> jobs = first->jobs;
  ASSERT_EQ(jobs, all->jobs);
  // A mark no text carries survives only if the jobs given back were written over, not decoded
  // afresh (the array's address alone proves nothing: malloc may hand the freed block back).
  for (JobInfo& job : first->jobs) job.batch_host = "mark";
  client->Recycle(std::move(*first));
  Result<JobsSnapshot> second = client->JobsChangedSince(std::nullopt, every_job);
  ASSERT_TRUE(second) << second.error().ToString();
  ASSERT_EQ(second->jobs.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(second->jobs[i].batch_host, "mark") << "job " << i << " was decoded again";
    JobInfo unmarked = second->jobs[i];
    unmarked.batch_host = jobs[i].batch_host;
    EXPECT_EQ(unmarked, jobs[i]);
  }

  // a snapshot it did not hand out (here a copy) is only freed
  JobsSnapshot copy = *second;
  copy.jobs[0].comment = "not what the text says";
  client->Recycle(std::move(copy));
  Result<JobsSnapshot> third = client->JobsChangedSince(std::nullopt, every_job);
  ASSERT_TRUE(third) << third.error().ToString();
  EXPECT_EQ(third->jobs, jobs);
}

TEST_P(RestClientTest, AFilteredListsDigestsTellAJobListedAgainUnchangedFromOneThatChanged) {
  const HttpResponse before = Recorded(v(), "jobs");
  HttpResponse after = before;
  // the second job's account, in its text alone
  const size_t second_job = after.body.find("\n    },\n");
  ASSERT_NE(second_job, std::string::npos);
  const std::string_view account = "\"account\": \"";
  const size_t at = after.body.find(account, second_job);
  ASSERT_NE(at, std::string::npos);
  after.body.insert(at + account.size(), "x");
  transport_.On("GET " + P("/jobs/"), before);
  transport_.On("GET " + P("/jobs/"), before);
  transport_.On("GET " + P("/jobs/"), after);
  std::unique_ptr<RestClient> client = Make();
  Result<JobsSnapshot> all = client->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(all) << all.error().ToString();
  EXPECT_TRUE(all->digests.empty()) << "an unfiltered list is decoded without the memo";
  JobFilter every_job{"slurmfleet:rec:", {}};
  for (const JobInfo& job : all->jobs) every_job.ids.push_back(job.job_id);
  std::sort(every_job.ids.begin(), every_job.ids.end());
  Result<JobsSnapshot> first = client->JobsChangedSince(std::nullopt, every_job);
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_EQ(first->digests.size(), first->jobs.size());
  EXPECT_EQ(first->listed, all->jobs.size());
  EXPECT_EQ(first->parsed, all->jobs.size()) << "the memo knew no job yet";
  const std::vector<uint64_t> digests = first->digests;
  client->Recycle(std::move(*first));
  Result<JobsSnapshot> second = client->JobsChangedSince(std::nullopt, every_job);
  ASSERT_TRUE(second) << second.error().ToString();
  ASSERT_EQ(second->digests.size(), digests.size());
  ASSERT_EQ(second->jobs.at(1).account, "x");
  EXPECT_EQ(second->listed, all->jobs.size());
  EXPECT_EQ(second->parsed, 1u) << "only the job whose text changed";
  for (size_t i = 0; i < digests.size(); ++i) {
    if (i == 1) {
      EXPECT_NE(second->digests[i], digests[i]) << "its text changed";
    } else {
      EXPECT_EQ(second->digests[i], digests[i]) << "job " << i << " was listed unchanged";
    }
  }
}

TEST_P(RestClientTest, ListFiltersByNamePrefix) {
  transport_.On("GET " + P("/jobs/"), Recorded(v(), "jobs"));
  Result<std::vector<JobInfo>> r = Make()->ListJobs("rec-het");
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_FALSE(r->empty());
  for (const JobInfo& j : *r) EXPECT_EQ(j.name, "rec-het");
}

TEST_P(RestClientTest, CancelChecksOwnershipThenUsesThePluralEndpoint) {
  transport_.On("GET " + P("/job/"), Recorded(v(), "job_running"));
  transport_.On("DELETE " + P("/jobs/"), Recorded(v(), "cancel"));
  nlohmann::json running = nlohmann::json::parse(ReadTestdata(v() + "/job_running.json"));
  uint32_t id = running["jobs"][0]["job_id"];
  std::string sluid =
      FindDialect(v())->has_sluid ? running["jobs"][0]["step_id"]["sluid"].get<std::string>() : "";
  Status s = Make()->Cancel({id, sluid}, "SIGKILL");
  ASSERT_TRUE(s) << s.error().ToString();
  ASSERT_EQ(transport_.Count("DELETE"), 1);
  nlohmann::json body = nlohmann::json::parse(transport_.log().back().body);
  EXPECT_EQ(body["jobs"][0], sluid.empty() ? std::to_string(id) : sluid);
  EXPECT_EQ(body["signal"], "SIGKILL");
}

TEST_P(RestClientTest, CancelOfAnotherUsersJobIsRefusedBeforeAnyDelete) {
  FakeTokenSource other("other");
  RestClientOptions o;
  o.api_version = v();
  auto client = RestClient::Connect(transport_, other, o);
  ASSERT_TRUE(client);
  transport_.On("GET " + P("/job/"), Recorded(v(), "job_running"));
  Status s = (*client)->Cancel({1, ""});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Code::kRejected);
  EXPECT_NE(s.error().message.find("belongs to user 'ci'"), std::string::npos) << s.error().message;
  EXPECT_EQ(transport_.Count("DELETE"), 0);
}

TEST_P(RestClientTest, CancelOfAnEndedJobIsSuccessWithoutADelete) {
  transport_.On("GET " + P("/job/"), Recorded(v(), "job_cancelled"));
  ASSERT_TRUE(Make()->Cancel({1, ""}));
  EXPECT_EQ(transport_.Count("DELETE"), 0);
}

TEST_P(RestClientTest, CancelSeesSlurmsErrorsInsideA200) {
  transport_.On("GET " + P("/job/"), Recorded(v(), "job_running"));
  transport_.On("DELETE " + P("/jobs/"), Recorded(v(), "cancel_unknown"));
  Status s = Make()->Cancel({1, ""});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Code::kNotFound);
  transport_.On("DELETE " + P("/jobs/"), Recorded(v(), "cancel_again"));
}

TEST_P(RestClientTest, CancelOfAJobThatJustCompletedIsSuccess) {
  transport_.On("GET " + P("/job/"), Recorded(v(), "job_running"));
  transport_.On("DELETE " + P("/jobs/"),
                Recorded(v(), "cancel_again"));  // [2021] already completing
  EXPECT_TRUE(Make()->Cancel({1, ""}));
}

INSTANTIATE_TEST_SUITE_P(AllVersions, RestClientTest,
                         ::testing::Values("v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"));

class RestClientRetryTest : public ::testing::Test {
 protected:
  std::unique_ptr<RestClient> Make(const std::string& version = "v0.0.45") {
    RestClientOptions o;
    o.api_version = version;
    o.sleep = [this](std::chrono::milliseconds d) { sleeps_.push_back(d); };
    return std::move(*RestClient::Connect(transport_, tokens_, o));
  }
  FakeTransport transport_;
  FakeTokenSource tokens_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

TEST_F(RestClientRetryTest, GetIsRetriedOn503WithBackoff) {
  transport_.On("GET /slurm/v0.0.45/jobs/", HttpResponse{503, "busy", "text/plain"});
  transport_.On("GET /slurm/v0.0.45/jobs/", HttpResponse{502, "", ""});
  transport_.On("GET /slurm/v0.0.45/jobs/", Recorded("v0.0.45", "jobs"));
  Result<JobsSnapshot> r = Make()->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(transport_.Count("GET"), 3);
  ASSERT_EQ(sleeps_.size(), 2u);
  for (auto d : sleeps_) EXPECT_LE(d, std::chrono::milliseconds(5000));
}

TEST_F(RestClientRetryTest, GetGivesUpAfterMaxAttemptsAsUnavailable) {
  transport_.On("GET /slurm/v0.0.45/jobs/", Fail(Code::kUnknownOutcome, "reset", "GET"));
  Result<JobsSnapshot> r = Make()->JobsChangedSince(std::nullopt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnavailable);
  EXPECT_EQ(transport_.Count("GET"), 4);
}

TEST_F(RestClientRetryTest, SubmitIsNeverRetriedWhenItMayHaveLanded) {
  transport_.On("POST /slurm/v0.0.45/job/submit", Fail(Code::kUnknownOutcome, "timeout", "POST"));
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome);
  EXPECT_EQ(transport_.Count("POST"), 1);
}

TEST_F(RestClientRetryTest, SubmitAnswered503IsAnUnknownOutcomeNotARetry) {
  transport_.On("POST /slurm/v0.0.45/job/submit", HttpResponse{503, "", ""});
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome);
  EXPECT_EQ(transport_.Count("POST"), 1);
}

// Recorded from Slurm 24.11.5: a job for a partition that does not exist is an HTTP 500 carrying
// slurmctld's error 2000. slurmctld refused it; nothing was created.
TEST_F(RestClientRetryTest, ASubmitSlurmctldRefusedIsRejectedWhateverTheStatus) {
  transport_.On("POST /slurm/v0.0.42/job/submit",
                Recorded("v0.0.42", "submit_invalid_partition_24.11"));
  Result<SubmitReceipt> r = Make("v0.0.42")->Submit(JobRequest{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kRejected);
  EXPECT_EQ(r.error().message,
            "Slurm rejected the request (HTTP 500): [2000] Batch job submission failed (Invalid "
            "partition name specified)");
  EXPECT_EQ(transport_.Count("POST"), 1);

  // A communication error between slurmrestd and slurmctld leaves the outcome open.
  transport_.On("POST /slurm/v0.0.45/job/submit",
                HttpResponse{500,
                             R"({"errors": [{"error_number": 1001, "error": "Communication )"
                             R"(connection failure", "description": ""}]})",
                             "application/json"});
  r = Make()->Submit(JobRequest{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome);
}

TEST_F(RestClientRetryTest, SubmitThatNeverLeftIsRetried) {
  transport_.On("POST /slurm/v0.0.45/job/submit", Fail(Code::kUnavailable, "refused", "POST"));
  transport_.On("POST /slurm/v0.0.45/job/submit", Recorded("v0.0.45", "submit"));
  Result<SubmitReceipt> r = Make()->Submit(JobRequest{});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(transport_.Count("POST"), 2);
}

JobRequest Named(const std::string& name) {
  JobRequest r;
  r.name = name;
  r.script = "#!/bin/bash\ntrue\n";
  return r;
}

std::string NameSent(const HttpRequest& r) {
  return nlohmann::json::parse(r.body)["job"]["name"].get<std::string>();
}

TEST_F(RestClientRetryTest, SubmitAllSendsTheRequestsTogetherAndAnswersInTheirOrder) {
  const std::string submit = "POST /slurm/v0.0.45/job/submit";
  transport_.On(submit, Recorded("v0.0.45", "submit"));
  transport_.On(submit, Recorded("v0.0.45", "submit_wrong_type"));
  transport_.On(submit, Fail(Code::kUnknownOutcome, "connection reset", "POST"));
  std::vector<Result<SubmitReceipt>> r =
      Make()->SubmitAll({Named("a"), Named("b"), Named("c")}, 16);
  ASSERT_EQ(r.size(), 3u);
  ASSERT_TRUE(r[0]) << r[0].error().ToString();
  EXPECT_NE(r[0]->job_id, 0u);
  ASSERT_FALSE(r[1]);
  EXPECT_EQ(r[1].error().code, Code::kRejected);
  EXPECT_NE(r[1].error().message.find("cpus_per_task"), std::string::npos);
  ASSERT_FALSE(r[2]);
  EXPECT_EQ(r[2].error().code, Code::kUnknownOutcome);  // never resent: it may have landed
  EXPECT_EQ(transport_.send_all_calls, 1);
  EXPECT_EQ(transport_.widest, 16u);
  ASSERT_EQ(transport_.log().size(), 3u);
  EXPECT_EQ(NameSent(transport_.log()[0]), "a");
  EXPECT_EQ(NameSent(transport_.log()[2]), "c");
  EXPECT_EQ(nlohmann::json::parse(transport_.log()[1].body)["job"]["requeue"], false);
}

TEST_F(RestClientRetryTest, SubmitAllSendsWhatARejectedTokenStoppedOnceMoreWithAFreshToken) {
  const std::string submit = "POST /slurm/v0.0.45/job/submit";
  transport_.On(submit, HttpResponse{401, "", ""});
  transport_.On(submit, Recorded("v0.0.45", "submit"));
  std::vector<Result<SubmitReceipt>> r = Make()->SubmitAll({Named("a"), Named("b")}, 16);
  ASSERT_TRUE(r[0]) << r[0].error().ToString();
  ASSERT_TRUE(r[1]) << r[1].error().ToString();
  EXPECT_EQ(tokens_.invalidations(), 1);
  EXPECT_EQ(transport_.send_all_calls, 2);
  ASSERT_EQ(transport_.log().size(), 3u);
  EXPECT_EQ(NameSent(transport_.log()[2]), "a");
  EXPECT_EQ(transport_.log()[2].token.Reveal(), "token-1");
}

TEST_F(RestClientRetryTest, SubmitAllGivesUpOnATokenRejectedTwice) {
  transport_.On("POST /slurm/v0.0.45/job/submit", HttpResponse{401, "", ""});
  std::vector<Result<SubmitReceipt>> r = Make()->SubmitAll({Named("a"), Named("b")}, 16);
  for (const Result<SubmitReceipt>& one : r) {
    ASSERT_FALSE(one);
    EXPECT_EQ(one.error().code, Code::kAuth);
  }
  EXPECT_EQ(transport_.Count("POST"), 4);
  EXPECT_EQ(tokens_.invalidations(), 1);
}

TEST_F(RestClientRetryTest, SubmitAllLeavesWhatNeverLeftToTheCaller) {
  transport_.On("POST /slurm/v0.0.45/job/submit", Fail(Code::kUnavailable, "refused", "POST"));
  std::vector<Result<SubmitReceipt>> r = Make()->SubmitAll({Named("a")}, 16);
  ASSERT_FALSE(r[0]);
  EXPECT_EQ(r[0].error().code, Code::kUnavailable);
  EXPECT_EQ(transport_.Count("POST"), 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RestClientRetryTest, SubmitReleasedSendsWhatIsReleasedAndAnswersEachAsItEnds) {
  const std::string submit = "POST /slurm/v0.0.45/job/submit";
  transport_.On(submit, Recorded("v0.0.45", "submit"));
  transport_.On(submit, Fail(Code::kUnknownOutcome, "connection reset", "POST"));
  std::vector<Result<SubmitReceipt>> answers(3, Fail(Code::kInternal, "no answer"));
  std::vector<size_t> order;
  int asked_for_1 = 0;
  Make()->SubmitReleased(
      {Named("a"), Named("b"), Named("c")}, 1,
      [&](size_t i) {
        if (i == 1 && ++asked_for_1 < 2) return Release::kLater;
        return i < 2 ? Release::kNow : Release::kNever;
      },
      [&](size_t i, Result<SubmitReceipt> r) {
        order.push_back(i);
        answers[i] = std::move(r);
      });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1}));
  ASSERT_TRUE(answers[0]) << answers[0].error().ToString();
  EXPECT_NE(answers[0]->job_id, 0u);
  ASSERT_FALSE(answers[1]);
  EXPECT_EQ(answers[1].error().code, Code::kUnknownOutcome);  // never resent: it may have landed
  EXPECT_EQ(asked_for_1, 2);
  ASSERT_EQ(transport_.log().size(), 2u);
  EXPECT_EQ(NameSent(transport_.log()[1]), "b");
  EXPECT_EQ(nlohmann::json::parse(transport_.log()[0].body)["job"]["requeue"], false);
}

TEST_F(RestClientRetryTest,
       SubmitReleasedLeavesWhatARejectedTokenStoppedToTheCallerWithAFreshToken) {
  transport_.On("POST /slurm/v0.0.45/job/submit", HttpResponse{401, "", ""});
  std::vector<Result<SubmitReceipt>> answers(2, Fail(Code::kInternal, "no answer"));
  Make()->SubmitReleased(
      {Named("a"), Named("b")}, 1, [](size_t) { return Release::kNow; },
      [&](size_t i, Result<SubmitReceipt> r) { answers[i] = std::move(r); });
  for (const Result<SubmitReceipt>& r : answers) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Code::kAuth);  // rejected before any job was made: send again
  }
  EXPECT_EQ(transport_.Count("POST"), 2);
  EXPECT_EQ(tokens_.invalidations(), 1);
}

TEST(RestClientConnectTest, AutoTakesTheNewestVersionThatAnswers) {
  FakeTransport t;
  FakeTokenSource tokens;
  t.On("GET /slurm/v0.0.42/ping/", Recorded("v0.0.42", "ping"));
  t.On("GET /slurm/v0.0.43/ping/", Recorded("v0.0.43", "ping"));
  auto c = RestClient::Connect(t, tokens, {});
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ((*c)->api_version(), "v0.0.43");
  EXPECT_EQ((*c)->offered_versions(), (std::vector<std::string>{"v0.0.43", "v0.0.42"}));
}

TEST(RestClientConnectTest, AutoAsksWithTheTokenBecauseSlurm2411AuthenticatesFirst) {
  FakeTransport t;
  FakeTokenSource tokens;
  // 24.11: 401 for any path without a token; with one, 404 for versions it does not serve
  t.On("GET /slurm/v0.0.45/ping/", HttpResponse{404, "Unable find requested URL", "text/plain"});
  t.On("GET /slurm/v0.0.42/ping/", Recorded("v0.0.42", "ping"));
  auto c = RestClient::Connect(t, tokens, {});
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ((*c)->api_version(), "v0.0.42");
  for (const HttpRequest& r : t.log()) EXPECT_FALSE(r.token.empty()) << r.path;
}

TEST(RestClientConnectTest, AutoWithEveryVersionRefusingTheTokenIsAnAuthError) {
  FakeTransport t;
  FakeTokenSource tokens;
  t.On("GET /slurm/", HttpResponse{401, "Authentication failure", "text/plain"});
  auto c = RestClient::Connect(t, tokens, {});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kAuth);
}

TEST(RestClientConnectTest, AutoNeverPrefersTheDeprecatedVersion) {
  FakeTransport t;
  FakeTokenSource tokens;
  for (std::string v : {"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"})
    t.On("GET /slurm/" + v + "/ping/", Recorded(v, "ping"));
  auto c = RestClient::Connect(t, tokens, {});
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)->api_version(), "v0.0.45");
}

TEST(RestClientConnectTest, AutoWithNothingWeSpeakIsNotFound) {
  FakeTransport t;
  FakeTokenSource tokens;
  auto c = RestClient::Connect(t, tokens, {});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kNotFound);
  EXPECT_NE(c.error().message.find("v0.0.42, v0.0.43, v0.0.44, v0.0.45"), std::string::npos);
}

TEST(RestClientConnectTest, AnUnknownPinnedVersionIsInvalidInput) {
  FakeTransport t;
  FakeTokenSource tokens;
  RestClientOptions o;
  o.api_version = "v0.0.39";
  auto c = RestClient::Connect(t, tokens, o);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kInvalidInput);
  EXPECT_TRUE(t.log().empty());
}

TEST(RestClientConnectTest, UnreachableServerIsUnavailable) {
  FakeTransport t;
  FakeTokenSource tokens;
  t.On("GET /slurm/", Fail(Code::kUnavailable, "refused", "GET"));
  auto c = RestClient::Connect(t, tokens, {});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kUnavailable);
}

TEST(CurlTransportTest, AnUnreadableCaFileIsNamedWhenTheTransportIsMade) {
  TransportOptions t;
  t.base_url = "https://slurmrestd:6820";
  t.ca_file = "/nonexistent/site-ca.pem";
  auto transport = CurlTransport::Create(t);
  ASSERT_FALSE(transport);
  EXPECT_EQ(transport.error().code, Code::kInvalidInput);
  EXPECT_EQ(transport.error().where, "ca_file");
  EXPECT_NE(transport.error().message.find("/nonexistent/site-ca.pem"), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet::slurm
