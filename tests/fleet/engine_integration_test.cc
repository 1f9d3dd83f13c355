// The engine against the real Slurm testbed, through the fault-injection proxy: lost submit
// responses never duplicate or lose a job, tracking is one request per pass however many jobs,
// and an outage of slurmrestd or slurmctld is survived. Needs the running testbed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include "fleet/engine.h"
#include "slurm/testbed_env.h"
#include "support/fault_proxy.h"

namespace slurmfleet::fleet {
namespace {

using namespace std::chrono_literals;
using store::Phase;

std::string UniqueInstance() {
  std::mt19937_64 rng{std::random_device{}()};
  return "it" + std::to_string(rng() % 1000000000);
}

class EngineIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testbed_.Missing(), "");
    std::string host_port = testbed_.url.substr(testbed_.url.find("//") + 2);
    auto proxy = FaultProxy::Start(host_port.substr(0, host_port.find(':')),
                                   std::stoi(host_port.substr(host_port.find(':') + 1)), 42);
    ASSERT_TRUE(proxy) << proxy.error().ToString();
    proxy_ = std::move(*proxy);
    slurm::TransportOptions t;
    t.base_url = proxy_->url();
    t.total_timeout = 5s;
    t.connections_ahead = EngineOptions{}.submit_concurrency;  // as serve holds them
    auto transport = slurm::CurlTransport::Create(t);
    ASSERT_TRUE(transport);
    transport_ = std::move(*transport);
    tokens_ = std::make_unique<auth::MintingTokenSource>(testbed_.jwt_key, testbed_.user, clock_);
    slurm::RestClientOptions ro;
    ro.api_version = testbed_.api_version;
    ro.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(std::min(d, 200ms)); };
    auto client = slurm::RestClient::Connect(*transport_, *tokens_, ro);
    ASSERT_TRUE(client) << client.error().ToString();
    client_ = std::move(*client);
    auto store = store::Store::Open(::testing::TempDir() + "/" + instance_ + ".db", clock_);
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
    EngineOptions o;
    o.cloud = "testbed";
    o.instance = instance_;
    o.absence_margin = 10s;  // transport timeout 5 s + margin for slurmrestd finishing a request
    o.lost_grace = 30s;
    o.orphan_grace = 5s;
    auto engine = Engine::Create(*store_, *client_, clock_, o);
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine);
  }

  void TearDown() override {
    if (!engine_) return;
    // cancel whatever this test left, through the engine itself
    proxy_->ClearRules();
    store::ListFilter f;
    f.active_only = true;
    auto live = store_->List(f);
    ASSERT_TRUE(live) << live.error().ToString();
    for (const store::Submission& s : *live) (void)engine_->RequestCancel(s.key);
    for (int i = 0; i < 30 && engine_->active_count() > 0; ++i) {
      engine_->Tick();
      std::this_thread::sleep_for(200ms);
    }
    EXPECT_EQ(engine_->active_count(), 0u);
  }

  slurm::JobRequest Held(const std::string& name) {
    slurm::JobRequest r;
    r.name = name;
    r.script = "#!/bin/bash\nsleep 600\n";
    r.current_working_directory = "/tmp";
    r.memory_per_node_mb = 10;
    r.hold = true;
    r.environment = {{"PATH", "/usr/bin:/bin", false}};
    return r;
  }

  // Ticks until `done` or the deadline; returns whether `done` became true.
  bool TickUntil(auto done, std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      engine_->Tick();
      if (done()) return true;
      std::this_thread::sleep_for(200ms);
    }
    return done();
  }

  bool AllPhase(Phase phase) {
    auto all = store_->List({});
    if (!all) return false;
    for (const store::Submission& s : *all) {
      if (s.phase != phase) return false;
    }
    return true;
  }

  // Our instance's jobs in Slurm, by key, counted.
  std::map<std::string, int> TaggedJobs(bool live_only) {
    std::map<std::string, int> out;
    auto jobs = client_->JobsChangedSince(std::nullopt);
    EXPECT_TRUE(jobs) << jobs.error().ToString();
    if (!jobs) return out;
    for (const slurm::JobInfo& j : jobs->jobs) {
      auto tag = ParseTag(j.comment);
      bool live =
          j.state.base == slurm::BaseState::kPending || j.state.base == slurm::BaseState::kRunning;
      if (tag && tag->instance == instance_ && (live || !live_only)) ++out[tag->key];
    }
    return out;
  }

  slurm::Testbed testbed_;
  std::string instance_ = UniqueInstance();
  SystemClock clock_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<slurm::CurlTransport> transport_;
  std::unique_ptr<auth::MintingTokenSource> tokens_;
  std::unique_ptr<slurm::RestClient> client_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineIntegrationTest, TwoHundredLostSubmitResponsesMakeExactlyTwoHundredJobs) {
  proxy_->AddRule({"POST", testbed_.Path("job/submit"), Fault::kDropResponse, 0ms, -1, 1.0});
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(engine_->AddIntent("drop-" + std::to_string(i), "job", "t", Held("drop")));
  ASSERT_TRUE(TickUntil([&] { return AllPhase(Phase::kPending); }, 120s));
  EXPECT_EQ(proxy_->Count("POST", testbed_.Path("job/submit")), 200);  // never resent
  std::map<std::string, int> jobs = TaggedJobs(false);
  EXPECT_EQ(jobs.size(), 200u);                              // 0 lost
  for (const auto& [key, n] : jobs) EXPECT_EQ(n, 1) << key;  // 0 duplicates
  std::set<uint32_t> ids;
  auto all = store_->List({});
  ASSERT_TRUE(all);
  for (const store::Submission& s : *all) {
    ASSERT_TRUE(s.job_id) << s.key;
    ids.insert(*s.job_id);
  }
  EXPECT_EQ(ids.size(), 200u);
}

TEST_F(EngineIntegrationTest, ASubmitThatNeverReachedSlurmIsResentOnceAbsenceIsProven) {
  // the POST is swallowed: the client times out and cannot know the job does not exist
  proxy_->AddRule({"POST", testbed_.Path("job/submit"), Fault::kBlackhole, 0ms, 1, 1.0});
  ASSERT_TRUE(engine_->AddIntent("blackholed", "job", "t", Held("blackholed")));
  engine_->Tick();
  EXPECT_EQ(store_->Get("blackholed")->phase, Phase::kSubmitting);
  ASSERT_TRUE(TickUntil([&] { return store_->Get("blackholed")->phase == Phase::kPending; }, 60s));
  EXPECT_EQ(store_->Get("blackholed")->attempts, 2);
  EXPECT_EQ(TaggedJobs(false)["blackholed"], 1);
}

TEST_F(EngineIntegrationTest, TrackingFiveHundredJobsIsOneRequestPerPass) {
  for (int i = 0; i < 500; ++i)
    ASSERT_TRUE(engine_->AddIntent("t-" + std::to_string(i), "job", "t", Held("track")));
  ASSERT_TRUE(TickUntil([&] { return AllPhase(Phase::kPending); }, 120s));
  proxy_->ResetCounts();
  for (int pass = 0; pass < 5; ++pass) {
    PassStats stats = engine_->Tick();
    EXPECT_EQ(stats.tracking_requests, 1)
        << (stats.slurm_error ? stats.slurm_error->ToString() : "no error");
    std::this_thread::sleep_for(1100ms);  // let last_update move on, so every pass can see changes
  }
  EXPECT_EQ(proxy_->TotalRequests(), 5);
  // each pass asked either for the states of our jobs or for the full list, never per job
  EXPECT_EQ(proxy_->Count("GET", testbed_.Path("jobs/")) +
                proxy_->Count("GET", testbed_.Path("jobs/state/")),
            5);
}

TEST_F(EngineIntegrationTest, SurvivesSlurmrestdAndSlurmctldRestarts) {
  ASSERT_TRUE(engine_->AddIntent("before", "job", "t", Held("restart")));
  ASSERT_TRUE(TickUntil([&] { return AllPhase(Phase::kPending); }, 30s));

  // slurmrestd goes away: passes fail, nothing crashes, new work waits
  proxy_->SetUpstreamDown(true);
  ASSERT_TRUE(engine_->AddIntent("during", "job", "t", Held("restart")));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(engine_->Tick().slurm_error.has_value());
  // its POST went out first and got no answer: it is looked for, never sent blindly again
  EXPECT_EQ(store_->Get("during")->phase, Phase::kSubmitting);
  EXPECT_EQ(store_->Get("during")->attempts, 1);
  proxy_->SetUpstreamDown(false);
  ASSERT_TRUE(TickUntil([&] { return AllPhase(Phase::kPending); }, 30s));

  // the real slurmrestd restarted
  std::string testbed = std::string(SLURMFLEET_TESTDATA_DIR) + "/../testbed/testbed.sh";
  ASSERT_EQ(std::system((testbed + " restart-daemon slurmrestd 2 >/dev/null 2>&1 &").c_str()), 0);
  ASSERT_TRUE(engine_->AddIntent("rest-restart", "job", "t", Held("restart")));
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(TickUntil([&] { return AllPhase(Phase::kPending); }, 60s));

  // the real slurmctld restarted (its saved state is recovered)
  ASSERT_EQ(std::system((testbed + " restart-daemon slurmctld 2 >/dev/null 2>&1 &").c_str()), 0);
  ASSERT_TRUE(engine_->AddIntent("ctld-restart", "job", "t", Held("restart")));
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(TickUntil([&] { return AllPhase(Phase::kPending); }, 90s));
  std::map<std::string, int> jobs = TaggedJobs(true);
  EXPECT_EQ(jobs.size(), 4u);
  for (const auto& [key, n] : jobs) EXPECT_EQ(n, 1) << key;
}

TEST_F(EngineIntegrationTest, OrphansWithOurTagAreCancelledAfterTheGracePeriod) {
  // a job tagged as ours whose submission the store does not know (e.g. the state file was lost)
  slurm::JobRequest orphan = Held("orphan");
  orphan.comment = TagComment({instance_, "no-such-submission"}, "");
  auto receipt = client_->Submit(orphan);
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  // and one without our tag, which must never be touched
  slurm::JobRequest foreign = Held("foreign");
  foreign.comment = "not ours";
  auto other = client_->Submit(foreign);
  ASSERT_TRUE(other);
  ASSERT_TRUE(TickUntil([&] { return TaggedJobs(true).empty(); }, 30s));
  auto foreign_now = client_->GetJob({other->job_id, ""});
  ASSERT_TRUE(foreign_now);
  EXPECT_EQ(foreign_now->front().state.base, slurm::BaseState::kPending);
  ASSERT_TRUE(client_->Cancel({other->job_id, ""}));
}

}  // namespace
}  // namespace slurmfleet::fleet
