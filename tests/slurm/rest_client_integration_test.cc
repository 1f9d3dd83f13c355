// RestClient against the real Slurm testbed, for the oldest API version we speak (v0.0.42) and the
// newest the testbed serves (v0.0.45 on Slurm 26.05; v0.0.42 again on 24.11). Needs the running
// testbed (see testbed_env.h).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/fake_clock.h"
#include "slurm/job_outcome.h"
#include "slurm/testbed_env.h"

namespace slurmfleet::slurm {
namespace {

using namespace std::chrono_literals;

// The oldest API version we speak, and the newest the testbed serves (known only when the tests
// run: ctest lists them when they are built, so they are named by role, not by version).
enum class Api { kOldest, kNewest };
void PrintTo(Api api, std::ostream* out) {
  *out << (api == Api::kOldest ? "the oldest API version" : "the testbed's newest API version");
}

class RestClientIntegrationTest : public ::testing::TestWithParam<Api> {
 protected:
  std::string Version() const {
    return GetParam() == Api::kOldest ? "v0.0.42" : testbed_.api_version;
  }

  void SetUp() override {
    ASSERT_EQ(testbed_.Missing(), "");
    TransportOptions options;
    options.base_url = testbed_.url;
    auto t = CurlTransport::Create(options);
    ASSERT_TRUE(t) << t.error().ToString();
    transport_ = std::move(*t);
    counting_ = std::make_unique<CountingTransport>(*transport_);
    tokens_ = std::make_unique<auth::MintingTokenSource>(testbed_.jwt_key, testbed_.user, clock_);
    client_ = ClientFor(*tokens_);
  }

  std::unique_ptr<RestClient> ClientFor(auth::TokenSource& tokens) {
    RestClientOptions o;
    o.api_version = Version();
    auto c = RestClient::Connect(*counting_, tokens, o);
    EXPECT_TRUE(c) << c.error().ToString();
    return c ? std::move(*c) : nullptr;
  }

  JobRequest Job(const std::string& script, const std::string& name) {
    JobRequest r;
    r.name = name + "-" + Version();
    r.script = "#!/bin/bash\n" + script;
    r.partition = "debug";
    r.current_working_directory = "/home/" + testbed_.user + "/jobs";
    r.memory_per_node_mb = 100;
    r.time_limit_minutes = 5;
    r.comment = "slurmfleet-test";
    r.environment = {{"PATH", "/usr/local/bin:/usr/bin:/bin", false}};
    return r;
  }

  // Polls until `done` holds for the job (every component), or fails the test after `limit`.
  std::vector<JobInfo> WaitFor(RestClient& client, const JobRef& ref, auto done,
                               std::chrono::seconds limit = 60s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<JobInfo> last;
    while (std::chrono::steady_clock::now() < deadline) {
      Result<std::vector<JobInfo>> jobs = client.GetJob(ref);
      EXPECT_TRUE(jobs) << jobs.error().ToString();
      if (!jobs) return {};
      last = *jobs;
      bool all = true;
      for (const JobInfo& j : last) all = all && done(j);
      if (all) return last;
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << "job " << ref.ToString() << " did not reach the wanted state; last: "
                  << (last.empty() ? "-" : JobStateString(last.front().state));
    return last;
  }

  static bool Running(const JobInfo& j) { return j.state.base == BaseState::kRunning; }
  static bool Ended(const JobInfo& j) {
    return j.state.base != BaseState::kPending && j.state.base != BaseState::kRunning &&
           j.state.base != BaseState::kSuspended && !j.state.Has(kFlagCompleting);
  }

  std::string ReadClusterFile(const std::string& path) {
    std::ifstream in(testbed_.root + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  Testbed testbed_;
  SystemClock clock_;
  std::unique_ptr<CurlTransport> transport_;
  std::unique_ptr<CountingTransport> counting_;
  std::unique_ptr<auth::MintingTokenSource> tokens_;
  std::unique_ptr<RestClient> client_;
};

TEST_P(RestClientIntegrationTest, PingReportsTheTestbed) {
  Result<PingReport> r = client_->Ping();
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->api_version, Version());
  EXPECT_EQ(r->cluster, "testbed");
  EXPECT_TRUE(r->responding);
}

TEST_P(RestClientIntegrationTest, SubmitRunsToCompletionAndWritesItsOutput) {
  Result<SubmitReceipt> receipt =
      client_->Submit(Job("echo slurmfleet-says-hello\nsleep 2\n", "complete"));
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  JobRef ref{receipt->job_id, ""};
  std::vector<JobInfo> running = WaitFor(*client_, ref, Running);
  ASSERT_FALSE(running.empty());
  EXPECT_FALSE(running[0].nodes.empty());
  std::vector<JobInfo> ended = WaitFor(*client_, ref, Ended);
  ASSERT_FALSE(ended.empty());
  EXPECT_EQ(ended[0].state.base, BaseState::kCompleted) << DescribeOutcome(ended[0]);
  EXPECT_EQ(ended[0].exit_code.return_code, 0);
  EXPECT_EQ(ended[0].user_name, testbed_.user);
  const std::string& out_path = ended[0].standard_output;
  EXPECT_EQ(out_path, ended[0].current_working_directory + "/slurm-" +
                          std::to_string(receipt->job_id) + ".out");
  EXPECT_NE(ReadClusterFile(out_path).find("slurmfleet-says-hello"), std::string::npos) << out_path;
}

// The names a failed job's message points to are the files the job wrote, whatever of Slurm's
// filename pattern the template used: Slurm 24.11 leaves %s, %t, %n and %J unexpanded in what it
// reports (%N too, but the testbed's nodes share one host name, which is not their node name).
TEST_P(RestClientIntegrationTest, OutputFileNamesAreTheFilesTheJobWrote) {
  JobRequest r = Job("echo to-the-output\necho to-the-errors >&2\nexit 3\n", "pattern");
  r.standard_output = "out-%j-%x-%s-%t-%n-%J-%3t.out";
  r.standard_error = "err-%4j-%s.err";
  Result<SubmitReceipt> receipt = client_->Submit(r);
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  std::vector<JobInfo> ended = WaitFor(*client_, JobRef{receipt->job_id, ""}, Ended);
  ASSERT_FALSE(ended.empty());
  const JobInfo& job = ended[0];
  const std::string id = std::to_string(receipt->job_id);
  const std::string dir = "/home/" + testbed_.user + "/jobs/";
  EXPECT_EQ(job.standard_output,
            dir + "out-" + id + "-" + r.name + "-batch-0-0-" + id + "-000.out");
  EXPECT_EQ(
      job.standard_error,
      dir + "err-" + std::string(4 - std::min<size_t>(4, id.size()), '0') + id + "-batch.err");
  EXPECT_EQ(ReadClusterFile(job.standard_output), "to-the-output\n") << job.standard_output;
  EXPECT_EQ(ReadClusterFile(job.standard_error), "to-the-errors\n") << job.standard_error;
  std::string told = DescribeOutcome(job);
  EXPECT_NE(told.find("the script's output is in " + job.standard_output + ", its errors in " +
                      job.standard_error + " on node " + job.batch_host),
            std::string::npos)
      << told;
}

// Sites that keep slurmrestd off the network run it on a local socket (slurmrestd unix:PATH);
// the testbed's slurmrestd listens on one too. Connections ahead are asked for, as serve asks: a
// libcurl from 8.0 on sends the submit on one opened after the ping; Debian 12's 7.88 opens none
// on a local socket (ConnectionsAhead::Taker).
TEST_P(RestClientIntegrationTest, ALocalSocketReachesSlurmrestdForTheWholeLifecycle) {
  ASSERT_FALSE(testbed_.socket.empty())
      << "SLURMRESTD_SOCKET is not set: start the testbed with testbed/testbed.sh and export "
         "what `testbed/testbed.sh env` prints";
  TransportOptions options;
  options.base_url = "unix:" + testbed_.socket;
  options.connections_ahead = 2;
  auto transport = CurlTransport::Create(options);
  ASSERT_TRUE(transport) << transport.error().ToString();
  RestClientOptions o;
  o.api_version = Version();
  auto client = RestClient::Connect(**transport, *tokens_, o);
  ASSERT_TRUE(client) << client.error().ToString();
  Result<PingReport> ping = (*client)->Ping();
  ASSERT_TRUE(ping) << ping.error().ToString();
  EXPECT_TRUE(ping->responding);
  Result<SubmitReceipt> receipt = (*client)->Submit(Job("sleep 60\n", "socket"));
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  JobRef ref{receipt->job_id, ""};
  ASSERT_FALSE(WaitFor(**client, ref, Running).empty());
  ASSERT_TRUE((*client)->Cancel(ref, "")) << "cancel over the socket";
  std::vector<JobInfo> ended = WaitFor(**client, ref, Ended);
  ASSERT_FALSE(ended.empty());
  EXPECT_EQ(ended[0].state.base, BaseState::kCancelled) << DescribeOutcome(ended[0]);
}

TEST_P(RestClientIntegrationTest, HeterogeneousJobStartsOnBothNodes) {
  JobRequest a = Job("srun --het-group=0,1 hostname\nsleep 30\n", "het");
  JobRequest b = a;
  Result<SubmitReceipt> receipt = client_->SubmitHet({a, b});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  JobRef ref{receipt->job_id, ""};
  // only the backfill scheduler (bf_interval=5 s) starts het jobs
  std::vector<JobInfo> running = WaitFor(*client_, ref, Running, 40s);
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].het_job_id, receipt->job_id);
  EXPECT_NE(running[0].nodes, running[1].nodes);
  ASSERT_TRUE(client_->Cancel(ref));
  WaitFor(*client_, ref, Ended);
}

TEST_P(RestClientIntegrationTest, SubmitAllMakesOneJobPerRequestFromOneThread) {
  // more requests than at once, and more than slurmrestd's idle connections may hold
  std::vector<JobRequest> requests;
  for (int i = 0; i < 40; ++i) {
    JobRequest r = Job("true\n", "wave" + std::to_string(i));
    r.hold = true;
    requests.push_back(r);
  }
  std::vector<Result<SubmitReceipt>> receipts = client_->SubmitAll(requests, 8);
  ASSERT_EQ(receipts.size(), requests.size());
  std::set<uint32_t> ids;
  for (const Result<SubmitReceipt>& r : receipts) {
    ASSERT_TRUE(r) << r.error().ToString();
    ids.insert(r->job_id);
  }
  EXPECT_EQ(ids.size(), requests.size());
  EXPECT_EQ(counting_->Count("POST"), 40);
  for (size_t i = 0; i < receipts.size(); ++i) {
    Result<std::vector<JobInfo>> job = client_->GetJob({receipts[i]->job_id, ""});
    ASSERT_TRUE(job) << job.error().ToString();
    EXPECT_EQ(job->front().name, requests[i].name);  // each answer belongs to its own request
    EXPECT_TRUE(client_->Cancel({receipts[i]->job_id, ""}));
  }
}

TEST_P(RestClientIntegrationTest, CancelEndsARunningJobAndASecondCancelIsFine) {
  Result<SubmitReceipt> receipt = client_->Submit(Job("sleep 300\n", "cancel"));
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  JobRef ref{receipt->job_id, ""};
  WaitFor(*client_, ref, Running);
  ASSERT_TRUE(client_->Cancel(ref));
  std::vector<JobInfo> ended = WaitFor(*client_, ref, Ended);
  ASSERT_FALSE(ended.empty());
  EXPECT_EQ(ended[0].state.base, BaseState::kCancelled);
  EXPECT_TRUE(client_->Cancel(ref));  // already ended: success
  Status unknown = client_->Cancel({4000000000u, ""});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Code::kNotFound);
}

TEST_P(RestClientIntegrationTest, GetAndCancelBySluidWhereTheApiHasOne) {
  if (!client_->dialect().has_sluid) {
    // v0.0.42: no SLUID anywhere in its answers
    Result<SubmitReceipt> receipt = client_->Submit(Job("sleep 1\n", "nosluid"));
    ASSERT_TRUE(receipt);
    Result<std::vector<JobInfo>> got = client_->GetJob({receipt->job_id, ""});
    ASSERT_TRUE(got);
    EXPECT_EQ(got->front().sluid, "");
    return;
  }
  Result<SubmitReceipt> receipt = client_->Submit(Job("sleep 300\n", "sluid"));
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  std::vector<JobInfo> running = WaitFor(*client_, {receipt->job_id, ""}, Running);
  ASSERT_FALSE(running.empty());
  const std::string sluid = running[0].sluid;
  ASSERT_EQ(sluid.size(), 14u);
  Result<std::vector<JobInfo>> by_sluid = client_->GetJob({0, sluid});
  ASSERT_TRUE(by_sluid) << by_sluid.error().ToString();
  EXPECT_EQ(by_sluid->front().job_id, receipt->job_id);
  ASSERT_TRUE(client_->Cancel({0, sluid}));
  std::vector<JobInfo> ended = WaitFor(*client_, {0, sluid}, Ended);
  ASSERT_FALSE(ended.empty());
  EXPECT_EQ(ended[0].state.base, BaseState::kCancelled);
}

TEST_P(RestClientIntegrationTest, BadAndExpiredTokensAreAuthErrorsAndMintingRecovers) {
  // a token minted two hours ago for one hour has expired
  FakeClock past(std::chrono::system_clock::now() - 2h);
  auth::MintingTokenSource stale(testbed_.jwt_key, testbed_.user, past);
  std::unique_ptr<RestClient> client = ClientFor(stale);
  ASSERT_TRUE(client);
  Result<JobsSnapshot> r = client->JobsChangedSince(std::nullopt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kAuth) << r.error().ToString();
  Result<PingReport> p = client->Ping();
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, Code::kAuth) << p.error().ToString();
  // time catches up: the next call re-mints and works
  past.Advance(2h);
  stale.Invalidate();
  Result<JobsSnapshot> ok = client->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(ok) << ok.error().ToString();

  // a token signed with another key
  std::string other_key = ::testing::TempDir() + "/other_jwt.key";
  std::ofstream(other_key) << "0123456789abcdef0123456789abcdef";
  auth::MintingTokenSource forged(other_key, testbed_.user, clock_);
  std::unique_ptr<RestClient> forged_client = ClientFor(forged);
  Result<SubmitReceipt> s = forged_client->Submit(Job("true\n", "forged"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Code::kAuth) << s.error().ToString();
}

TEST_P(RestClientIntegrationTest, AWronglyTypedFieldIsARejectedSubmit) {
  JobRequest r = Job("true\n", "wrongtype");
  r.extra_fields = {{"cpus_per_task", "two"}};
  Result<SubmitReceipt> s = client_->Submit(r);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Code::kRejected);
  EXPECT_NE(s.error().message.find("cpus_per_task"), std::string::npos) << s.error().message;
  Result<std::vector<JobInfo>> none = client_->ListJobs("wrongtype-" + Version());
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_P(RestClientIntegrationTest, AMissingWorkingDirectoryFailsTheJobAndSaysWhy) {
  JobRequest r = Job("echo never\n", "nocwd");
  r.current_working_directory = "/nonexistent/dir";
  Result<SubmitReceipt> s = client_->Submit(r);
  ASSERT_TRUE(s) << s.error().ToString();
  std::vector<JobInfo> ended = WaitFor(*client_, {s->job_id, ""}, Ended);
  ASSERT_FALSE(ended.empty());
  EXPECT_EQ(ended[0].state.base, BaseState::kFailed);
  std::string why = DescribeOutcome(ended[0]);
  EXPECT_NE(why.find("working directory '/nonexistent/dir'"), std::string::npos) << why;
}

TEST_P(RestClientIntegrationTest, CancelOfAnotherUsersJobIsRefusedBeforeAnyDelete) {
  auth::MintingTokenSource other_tokens(testbed_.jwt_key, "other", clock_);
  std::unique_ptr<RestClient> other = ClientFor(other_tokens);
  ASSERT_TRUE(other);
  JobRequest r = Job("sleep 300\n", "others");
  r.current_working_directory = "/home/other/jobs";
  Result<SubmitReceipt> s = other->Submit(r);
  ASSERT_TRUE(s) << s.error().ToString();
  int deletes_before = counting_->Count("DELETE");
  Status refused = client_->Cancel({s->job_id, ""});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Code::kRejected);
  EXPECT_NE(refused.error().message.find("belongs to user 'other'"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(counting_->Count("DELETE"), deletes_before);
  // slurmctld is still fine, and the owner can cancel its own job
  ASSERT_TRUE(client_->Ping());
  ASSERT_TRUE(other->Cancel({s->job_id, ""}));
}

TEST_P(RestClientIntegrationTest, DeltaPollingSeesChangesInOneRequestEach) {
  Result<JobsSnapshot> first = client_->JobsChangedSince(std::nullopt);
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(first->last_update);
  Result<SubmitReceipt> s = client_->Submit(Job("sleep 300\n", "delta"));
  ASSERT_TRUE(s);
  // last_update has one-second resolution: a change in the same second shows on the next poll
  std::this_thread::sleep_for(1100ms);
  int gets_before = counting_->Count("GET");
  Result<JobsSnapshot> next = client_->JobsChangedSince(first->last_update);
  ASSERT_TRUE(next) << next.error().ToString();
  EXPECT_EQ(counting_->Count("GET"), gets_before + 1);
  EXPECT_TRUE(next->changed);
  bool seen = false;
  for (const JobInfo& j : next->jobs) seen = seen || j.job_id == s->job_id;
  EXPECT_TRUE(seen);
  Result<SubmitReceipt> s2 = client_->Submit(Job("sleep 300\n", "delta2"));
  ASSERT_TRUE(s2);
  Result<std::vector<JobStateEntry>> states = client_->JobStates({s->job_id, s2->job_id});
  ASSERT_TRUE(states) << states.error().ToString();
  ASSERT_EQ(states->size(), 2u);
  EXPECT_EQ(states->front().job_id, s->job_id);
  ASSERT_TRUE(client_->Cancel({s2->job_id, ""}));
  ASSERT_TRUE(client_->Cancel({s->job_id, ""}));
}

INSTANTIATE_TEST_SUITE_P(Versions, RestClientIntegrationTest,
                         ::testing::Values(Api::kOldest, Api::kNewest),
                         [](const ::testing::TestParamInfo<Api>& info) {
                           return info.param == Api::kOldest ? "oldest" : "newest";
                         });

}  // namespace
}  // namespace slurmfleet::slurm
