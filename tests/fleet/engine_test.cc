// The engine's reconcile contract, against a small fake Slurm and a real (in-memory) store, with
// a clock that moves only when the test says so. The same scenarios run against the real testbed
// in engine_integration_test.cc.
#include "fleet/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "base/fake_clock.h"
#include "fleet/fake_slurm_client.h"
#include "fleet/job_tag.h"
#include "store/sqlite.h"

namespace slurmfleet::fleet {
namespace {

using namespace std::chrono_literals;
using store::Phase;

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(":memory:", clock_);
    ASSERT_TRUE(s) << s.error().ToString();
    store_ = std::move(*s);
    engine_ = MakeEngine();
  }

  // Calls to Slurm one at a time unless a test asks for more (a test of what runs side by side).
  std::unique_ptr<Engine> MakeEngine(size_t submit_concurrency = 1) {
    EngineOptions o;
    o.cloud = "c1";
    o.instance = "test";
    o.lost_grace = 60s;
    o.orphan_grace = 60s;
    o.absence_margin = 45s;
    o.submit_concurrency = submit_concurrency;
    o.start_details_delay = 0s;  // StartDetailsWaitAMoment covers the delay
    auto e = Engine::Create(*store_, slurm_, clock_, o);
    EXPECT_TRUE(e) << e.error().ToString();
    return std::move(*e);
  }

  // A change shows in jobs/state on one pass and is recorded, with its details, on the next.
  void Settle() {
    engine_->Tick();
    engine_->Tick();
  }

  void Advance(std::chrono::seconds d) {
    clock_.Advance(d);
    slurm_.now += d;
  }

  // Past the orphan grace, `duplicate` (another job carrying `key`'s tag) is cancelled, and the
  // submission keeps its own job running.
  void ExpectDuplicateCollected(const std::string& key, uint32_t own, uint32_t duplicate) {
    Advance(61s);
    slurm_.Touch();
    Settle();
    EXPECT_EQ(slurm_.jobs().at(duplicate).state.base, slurm::BaseState::kCancelled);
    EXPECT_NE(slurm_.jobs().at(own).state.base, slurm::BaseState::kCancelled);
    EXPECT_EQ(Get(key).job_id, own);
  }

  // `n` running jobs carrying our tag that no submission owns (keys gone-0, gone-1, ...).
  std::vector<uint32_t> AddOrphans(int n) {
    std::vector<uint32_t> ids;
    for (int i = 0; i < n; ++i) {
      ids.push_back(slurm_.AddForeignJob("slurmfleet:test:gone-" + std::to_string(i), "ci"));
    }
    return ids;
  }

  slurm::JobRequest Request(std::string name = "job") {
    slurm::JobRequest r;
    r.name = std::move(name);
    r.script = "#!/bin/bash\ntrue\n";
    r.environment = {{"PATH", "/bin", false}};
    return r;
  }

  store::Submission Get(const std::string& key) {
    auto s = store_->Get(key);
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? *s : store::Submission{};
  }

  std::string Add(std::string key = "", std::string name = "job") {
    auto s = engine_->AddIntent(std::move(key), "job", "test", Request(std::move(name)));
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? s->key : "";
  }

  FakeClock clock_{std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000))};
  FakeSlurmClient slurm_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Engine> engine_;
};

TEST(DescribePassTest, NamesWhatThePassDidAndTheNextInterval) {
  PassStats quiet;
  quiet.tracking_requests = 1;
  EXPECT_TRUE(quiet.Quiet());
  EXPECT_EQ(DescribePass("hpc", quiet, 1, 3ms, 10000ms),
            "cloud hpc: pass 3 ms, jobs/state of 1 tracked job; next pass in 10000 ms");
  PassStats busy = quiet;
  busy.submitted = 2;
  busy.detail_requests = 1;
  busy.state_changes = 3;
  busy.cancelled = 1;
  EXPECT_FALSE(busy.Quiet());
  EXPECT_EQ(DescribePass("hpc", busy, 4, 12ms, 1000ms),
            "cloud hpc: pass 12 ms, 2 submitted, jobs/state of 4 tracked jobs, 1 detail request, 3 "
            "state changes, 1 cancelled; next pass in 1000 ms");
  PassStats full;
  full.tracking_requests = 1;
  full.full_list = true;
  full.jobs_listed = 1200;
  full.jobs_parsed = 7;
  full.orphans_cancelled = 2;
  full.adopted = 1;
  EXPECT_EQ(DescribePass("c", full, 0, 40ms, 1000ms),
            "cloud c: pass 40 ms, full job list of 0 tracked jobs (1200 listed, 7 parsed), 1 "
            "adopted, 2 orphans cancelled; next pass in 1000 ms");
  PassStats down;
  down.slurm_error = Error{Code::kUnavailable, "connection refused", "GET /slurm/v0.0.45/jobs"};
  EXPECT_FALSE(down.Quiet());
  EXPECT_EQ(DescribePass("c", down, 2, 1ms, 1000ms),
            "cloud c: pass 1 ms, Slurm: GET /slurm/v0.0.45/jobs: connection refused; next pass in "
            "1000 ms");
}

TEST_F(EngineTest, AnIntentArrivingWhileTheJobListIsTakenIsSentBeforeTheListAnswers) {
  std::string late;
  bool sent_while_listing = false;
  slurm_.while_listing = [&] {
    late = Add("late");
    for (int i = 0; i < 500 && !sent_while_listing; ++i) {
      sent_while_listing = Get(late).phase == Phase::kPending;
      if (!sent_while_listing) std::this_thread::sleep_for(10ms);
    }
  };
  engine_->Tick();  // the first pass takes the full list
  EXPECT_TRUE(sent_while_listing);
  EXPECT_EQ(slurm_.submit_calls, 1);
  store::Submission s = Get(late);
  EXPECT_EQ(s.phase, Phase::kPending);  // missing from the list taken before its POST: not lost
  ASSERT_TRUE(s.job_id);
  Settle();
  EXPECT_EQ(Get(late).phase, Phase::kPending);
  EXPECT_EQ(slurm_.submit_calls, 1);
}

TEST_F(EngineTest, AnIntentArrivingWhileCancelsAreInFlightIsSentBeforeTheyAnswer) {
  const std::string ending = Add("ending");
  engine_->Tick();
  ASSERT_TRUE(engine_->RequestCancel(ending));
  std::string late;
  bool sent_while_cancelling = false;
  slurm_.while_cancelling = [&] {
    late = Add("late");
    for (int i = 0; i < 500 && !sent_while_cancelling; ++i) {
      sent_while_cancelling = Get(late).phase == Phase::kPending;
      if (!sent_while_cancelling) std::this_thread::sleep_for(10ms);
    }
  };
  engine_->Tick();
  EXPECT_TRUE(sent_while_cancelling);
  EXPECT_EQ(slurm_.cancel_calls, 1);
  EXPECT_EQ(slurm_.submit_calls, 2);
  Settle();
  EXPECT_EQ(Get(ending).phase, Phase::kCancelled);
  EXPECT_EQ(Get(late).phase, Phase::kPending);
}

// Two of each, so that both go through the engine's helper threads: a single call runs on the
// thread that asks for it.
TEST_F(EngineTest, CancelsRequestedWhileDetailsAreAskedAreSentBeforeTheyAnswer) {
  engine_ = MakeEngine(4);
  const std::vector<std::string> changed = {Add("changed-1"), Add("changed-2")};
  const std::vector<std::string> ending = {Add("ending-1"), Add("ending-2")};
  engine_->Tick();  // full list, submits
  engine_->Tick();
  for (const std::string& key : changed) slurm_.SetState(*Get(key).job_id, {"RUNNING"});
  std::atomic<bool> cancel_sent{false};
  slurm_.while_cancelling = [&] { cancel_sent = true; };
  bool sent_while_getting = false;
  slurm_.while_getting = [&] {
    for (const std::string& key : ending) EXPECT_TRUE(engine_->RequestCancel(key));
    for (int i = 0; i < 500 && !cancel_sent; ++i) std::this_thread::sleep_for(10ms);
    sent_while_getting = cancel_sent;
  };
  EXPECT_EQ(engine_->Tick().detail_requests, 2);
  EXPECT_TRUE(sent_while_getting);
  Settle();
  for (const std::string& key : ending) EXPECT_EQ(Get(key).phase, Phase::kCancelled);
  for (const std::string& key : changed) EXPECT_EQ(Get(key).phase, Phase::kRunning);
}

TEST_F(EngineTest, SubmitNowWritesTheCallersRecordWithTheMarkedIntentThenSendsItAtOnce) {
  store::Record r{.kind = "agent", .name = "now-1", .cloud = "c1", .doc = "{}"};
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> records = {
      {&r, std::nullopt}};
  ASSERT_TRUE(engine_->SubmitNow({{"now-1", "agent", "test", Request()}}, records));
  EXPECT_TRUE(store_->GetRecord("agent", "now-1"));
  EXPECT_EQ(slurm_.submit_calls, 1) << "sent by the caller's thread, before any pass";
  store::Submission marked = Get("now-1");
  EXPECT_EQ(marked.phase, Phase::kSubmitting) << "the outcome is the loop's to record";
  EXPECT_EQ(marked.attempts, 1);
  engine_->Tick();
  store::Submission s = Get("now-1");
  EXPECT_EQ(s.phase, Phase::kPending);
  EXPECT_EQ(s.attempts, 1);
  EXPECT_EQ(slurm_.submit_calls, 1);
  auto events = store_->Events("now-1", 0, 0);
  ASSERT_TRUE(events);
  for (const store::Event& e : *events) EXPECT_NE(e.type, "submitting");
}

TEST_F(EngineTest, AStopRecordsTheOutcomesOfAWaveSentSinceTheLastPass) {
  engine_->Stop();
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> none;
  ASSERT_TRUE(engine_->SubmitNow({{"now-2", "agent", "test", Request()}}, none));
  engine_->Run();  // stopped already: no pass runs, but the outcome is recorded
  EXPECT_EQ(Get("now-2").phase, Phase::kPending);
  EXPECT_TRUE(Get("now-2").job_id);
  auto clean = store_->GetMeta("engine of cloud c1 stopped cleanly");
  ASSERT_TRUE(clean);
  EXPECT_EQ(*clean, "1");
}

TEST_F(EngineTest, ASubmitNowWaveLeavesTogetherAndOneThatNeverLeftIsSentAgainLater) {
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> none;
  slurm_.unavailable_submits = 1;  // slurmrestd refuses the wave's first connection
  ASSERT_TRUE(engine_->SubmitNow({{"wave-1", "agent", "test", Request()},
                                  {"wave-2", "agent", "test", Request()},
                                  {"wave-3", "agent", "test", Request()}},
                                 none));
  const std::string queued = Add("queued");
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_all_calls, 1);
  EXPECT_EQ(slurm_.submit_calls, 4);
  EXPECT_EQ(Get("wave-1").phase, Phase::kIntent) << "provably never sent: safe to send again";
  EXPECT_EQ(Get("wave-2").phase, Phase::kPending);
  EXPECT_EQ(Get("wave-3").phase, Phase::kPending);
  EXPECT_EQ(Get(queued).phase, Phase::kPending);
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_all_calls, 1) << "an intent sent again is not a wave";
  EXPECT_EQ(Get("wave-1").phase, Phase::kPending);
  EXPECT_EQ(Get("wave-1").attempts, 2);
}

TEST_F(EngineTest, AnIntentSentAgainCarriesTheRequestItWasAddedWith) {
  // The engine keeps no request text for what it tracks: the second POST's request is read back
  // from the store.
  slurm_.unavailable_submits = 1;
  slurm::JobRequest request = Request("again");
  request.script = "#!/bin/bash\necho the stored script\n";
  request.environment.push_back({"A", "1", false});
  auto added = engine_->AddIntent("again", "job", "test", request);
  ASSERT_TRUE(added);
  engine_->Tick();
  ASSERT_EQ(Get("again").phase, Phase::kIntent) << "refused before it was sent";
  engine_->Tick();
  store::Submission s = Get("again");
  ASSERT_EQ(s.phase, Phase::kPending);
  EXPECT_EQ(s.attempts, 2);
  const slurm::JobRequest& sent = slurm_.request_of(*s.job_id);
  EXPECT_EQ(sent.name, "again");
  EXPECT_EQ(sent.script, request.script);
  EXPECT_EQ(sent.environment.size(), 2u);
  EXPECT_EQ(s.request_json, added->request_json) << "tracking writes leave the request alone";
}

TEST_F(EngineTest, IntentsAnEngineLeftWithoutACleanStopAreLookedForBeforeTheyAreSent) {
  // Its marks were not synced: a power loss may have taken the mark of a POST that left.
  const std::string never_sent = Add("never-sent");
  const std::string sent = Add("sent");
  slurm::JobRequest posted = Request("sent");
  posted.comment = TagComment({"test", sent}, "");
  ASSERT_TRUE(slurm_.Submit(posted));  // the POST that left before the power went
  engine_.reset();
  engine_ = MakeEngine();
  EXPECT_EQ(Get(never_sent).phase, Phase::kSubmitting);
  auto events = store_->Events(never_sent, 0, 0);
  ASSERT_TRUE(events);
  EXPECT_NE(events->back().message.find("without a clean shutdown"), std::string::npos)
      << events->back().message;
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_calls, 1) << "nothing sent blindly";
  EXPECT_EQ(Get(sent).phase, Phase::kPending) << "found by its tag";
  EXPECT_EQ(Get(never_sent).phase, Phase::kSubmitting);
  Advance(46s);
  engine_->Tick();  // absent from a list taken long enough after this engine started: sent
  EXPECT_EQ(slurm_.submit_calls, 2);
  EXPECT_EQ(Get(never_sent).phase, Phase::kPending);
  EXPECT_EQ(slurm_.jobs().size(), 2u);
}

TEST_F(EngineTest, IntentsAnEngineLeftAfterRunReturnedAreSentAtOnce) {
  const std::string key = Add("after-stop");
  engine_->Stop();
  engine_->Run();  // returns at once: stopped
  engine_.reset();
  engine_ = MakeEngine();
  EXPECT_EQ(Get(key).phase, Phase::kIntent);
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_calls, 1);
  EXPECT_EQ(Get(key).phase, Phase::kPending);
}

TEST_F(EngineTest, AMarkedIntentACrashLeftUnsentIsLookedForThenSentOnce) {
  // what SubmitNow leaves when the process dies between its transaction and its POSTs
  const std::string key = Add("now-2");
  store::Submission marked = Get(key);
  marked.phase = Phase::kSubmitting;
  marked.attempts = 1;
  marked.submit_sent_at =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
  ASSERT_TRUE(store_->Update(marked));
  engine_ = MakeEngine();
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_calls, 0) << "its outcome is unknown: never sent blindly";
  EXPECT_EQ(Get(key).phase, Phase::kSubmitting);
  Advance(46s);
  engine_->Tick();  // absent from a list taken long enough after the mark: sent
  EXPECT_EQ(slurm_.submit_calls, 1);
  EXPECT_EQ(Get(key).phase, Phase::kPending);
}

TEST_F(EngineTest, ASubmitNowJobWhoseAnswerACrashLostIsAdoptedNotSentAgain) {
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> none;
  ASSERT_TRUE(engine_->SubmitNow({{"now-5", "agent", "test", Request()}}, none));
  ASSERT_EQ(slurm_.submit_calls, 1);
  engine_ = MakeEngine();  // the process died before the loop recorded the answer
  Advance(46s);
  engine_->Tick();
  Settle();
  EXPECT_EQ(slurm_.submit_calls, 1);
  store::Submission s = Get("now-5");
  EXPECT_EQ(s.phase, Phase::kPending);
  EXPECT_TRUE(s.job_id);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
}

TEST_F(EngineTest, ASubmitNowWavesAbsenceCountsFromItsLastPostNotItsFirst) {
  // 16 POSTs in flight at a time against a slow slurmrestd: the wave's last POSTs leave 40 s
  // after its first, and one of them may still land until the margin after that.
  slurm_.lost_before_slurm = 1;
  slurm_.while_submitting_all = [this] { Advance(40s); };
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> none;
  ASSERT_TRUE(engine_->SubmitNow({{"now-6", "agent", "test", Request()}}, none));
  engine_->Tick();
  Advance(10s);
  engine_->Tick();  // 50 s after the wave began, 10 s after its last POST: not proven absent
  EXPECT_EQ(Get("now-6").phase, Phase::kSubmitting);
  EXPECT_EQ(slurm_.submit_calls, 1);
  Advance(40s);
  engine_->Tick();
  EXPECT_EQ(Get("now-6").phase, Phase::kPending);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
}

TEST_F(EngineTest, ASubmittingMarkACrashLeftCountsItsAbsenceFromTheRestart) {
  // Marked long ago, its POST waited behind others and may have left just before the process
  // died: after a crash only the restart is known to come after it.
  const std::string key = Add("slow-post");
  store::Submission marked = Get(key);
  marked.phase = Phase::kSubmitting;
  marked.attempts = 1;
  marked.submit_sent_at = UnixSeconds(clock_);
  ASSERT_TRUE(store_->Update(marked));
  Advance(600s);
  engine_.reset();  // no clean stop
  engine_ = MakeEngine();
  engine_->Tick();
  Advance(30s);
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_calls, 0) << "within the margin of the restart: never sent blindly";
  EXPECT_EQ(Get(key).phase, Phase::kSubmitting);
  Advance(20s);
  engine_->Tick();
  EXPECT_EQ(slurm_.submit_calls, 1);
  EXPECT_EQ(Get(key).phase, Phase::kPending);
}

TEST_F(EngineTest, ASubmitNowJobCancelledRightAfterItsPostIsCancelledInSlurm) {
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> none;
  ASSERT_TRUE(engine_->SubmitNow({{"now-3", "agent", "test", Request()}}, none));
  ASSERT_TRUE(engine_->RequestCancel("now-3"));
  Settle();
  EXPECT_EQ(slurm_.submit_calls, 1);
  EXPECT_EQ(slurm_.cancel_calls, 1);
  EXPECT_EQ(Get("now-3").phase, Phase::kCancelled);
}

TEST_F(EngineTest, SubmitNowWithAKeyThatExistsWritesNothing) {
  Add("now-4");
  store::Record r{.kind = "agent", .name = "now-4b", .cloud = "c1", .doc = "{}"};
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> records = {
      {&r, std::nullopt}};
  Status s = engine_->SubmitNow({{"now-4", "agent", "test", Request()}}, records);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Code::kConflict);
  EXPECT_FALSE(store_->GetRecord("agent", "now-4b"));
}

TEST_F(EngineTest, SubmitsAnIntentWithOurTag) {
  std::string key = Add("run-7");
  engine_->Tick();
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kPending);
  ASSERT_TRUE(s.job_id);
  EXPECT_EQ(s.attempts, 1);
  const slurm::JobRequest& sent = slurm_.request_of(*s.job_id);
  EXPECT_EQ(sent.comment, "slurmfleet:test:run-7");
}

TEST_F(EngineTest, LostSubmitResponseNeverMakesASecondJob) {
  slurm_.dropped_responses = 1;
  std::string key = Add("run-7");
  engine_->Tick();  // the POST goes out first; the same pass's job list finds it by its tag
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kPending);
  EXPECT_TRUE(s.job_id);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
  EXPECT_EQ(slurm_.submit_calls, 1);
}

TEST_F(EngineTest, ASlurmctldWhoseClockWentBackProvesNoJobAbsentOrLost) {
  std::string tracked = Add("run-8");
  Settle();
  ASSERT_EQ(Get(tracked).phase, Phase::kPending);
  slurm_.clock_behind = true;
  slurm_.dropped_responses = 1;
  std::string unknown = Add("run-9");
  engine_->Tick();
  std::string answered = Add("run-10");  // its job id is known, but no list has shown it yet
  for (int i = 0; i < 4; ++i) {
    Advance(31s);
    engine_->Tick();
  }
  EXPECT_EQ(slurm_.jobs().size(), 3u);
  EXPECT_EQ(slurm_.submit_calls, 3);
  EXPECT_EQ(Get(unknown).phase, Phase::kPending);
  EXPECT_EQ(Get(answered).phase, Phase::kPending);
  EXPECT_EQ(Get(tracked).phase, Phase::kPending);
}

TEST_F(EngineTest, AnIdThatNowNamesAnotherJobIsNotFollowedNorCancelled) {
  std::string ours = Add("run-12");
  std::string key = Add("run-11");
  Settle();
  ASSERT_EQ(Get(key).phase, Phase::kPending);
  ASSERT_FALSE(Get(key).sluid.empty());
  ASSERT_FALSE(Get(ours).sluid.empty());
  const uint32_t id = *Get(key).job_id;
  slurm_.ReuseId(*Get(ours).job_id, /*keep_tag=*/true);  // another SLUID, but our tag: ours
  slurm_.ReuseId(id);
  Advance(31s);
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(Get(ours).phase, Phase::kPending);
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kLost);
  EXPECT_NE(s.failure.find("its id now names another job"), std::string::npos) << s.failure;
  (void)engine_->RequestCancel(key);  // ended already: nothing is sent
  engine_->Tick();
  EXPECT_EQ(slurm_.jobs().at(id).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.cancel_calls, 0);
}

TEST_F(EngineTest, TwoHundredDroppedResponsesMakeExactlyTwoHundredJobs) {
  slurm_.dropped_responses = 200;
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(Add("k" + std::to_string(i)));
  for (int i = 0; i < 5; ++i) {
    engine_->Tick();
    Advance(1s);
  }
  EXPECT_EQ(slurm_.jobs().size(), 200u);
  EXPECT_EQ(slurm_.submit_calls, 200);
  std::set<uint32_t> ids;
  for (const std::string& k : keys) {
    store::Submission s = Get(k);
    EXPECT_EQ(s.phase, Phase::kPending) << k;
    ASSERT_TRUE(s.job_id) << k;
    ids.insert(*s.job_id);
  }
  EXPECT_EQ(ids.size(), 200u);
}

TEST_F(EngineTest, ASubmitThatNeverArrivedIsResentOnlyAfterAbsenceIsProven) {
  slurm_.lost_before_slurm = 1;
  std::string key = Add("run-8");
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kSubmitting);
  Advance(30s);
  engine_->Tick();  // within the margin: a POST could still land, so no resend
  EXPECT_EQ(Get(key).phase, Phase::kSubmitting);
  EXPECT_EQ(slurm_.submit_calls, 1);
  Advance(20s);
  engine_->Tick();  // past the margin and still absent: resend under the same key
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kPending);
  EXPECT_EQ(s.attempts, 2);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
}

TEST_F(EngineTest, AnotherUsersJobCarryingTheTagOfAnUnsureSubmissionIsNeverAdopted) {
  slurm_.lost_before_slurm = 1;
  const uint32_t planted = slurm_.AddForeignJob("slurmfleet:test:run-32", "alice");
  std::string key = Add("run-32");
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kSubmitting);
  EXPECT_FALSE(Get(key).job_id);
  Advance(46s);
  slurm_.Touch();
  engine_->Tick();  // absent (only alice's job carries the tag): sent again
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kPending);
  ASSERT_TRUE(s.job_id);
  EXPECT_NE(*s.job_id, planted);
  Advance(61s);
  slurm_.Touch();
  Settle();
  EXPECT_EQ(slurm_.jobs().at(*s.job_id).state.base, slurm::BaseState::kPending);
  EXPECT_EQ(slurm_.jobs().at(planted).state.base, slurm::BaseState::kRunning);
}

TEST_F(EngineTest, ARestartedEngineAdoptsWhatItsPredecessorLeftUnsure) {
  slurm_.dropped_responses = 1;
  std::string key = Add("run-9");
  engine_->Tick();
  engine_.reset();  // the daemon dies
  engine_ = MakeEngine();
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kPending);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
}

TEST_F(EngineTest, ACrashBetweenRecordingAndPostingIsResentAfterTheMargin) {
  store::Submission s;
  s.key = "crashed";
  s.kind = "job";
  s.cloud = "c1";
  s.request_json =
      R"({"job":{"name":"x","script":"#!/bin/bash\n","environment":["PATH=/bin"]},"secret_env":[]})";
  ASSERT_TRUE(store_->Add(s));
  s.phase = Phase::kSubmitting;
  s.attempts = 1;
  s.submit_sent_at = 1'800'000'000;
  ASSERT_TRUE(store_->Update(s));
  engine_ = MakeEngine();
  engine_->Tick();
  EXPECT_EQ(Get("crashed").phase, Phase::kSubmitting);
  Advance(46s);
  engine_->Tick();
  EXPECT_EQ(Get("crashed").phase, Phase::kPending);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
}

TEST_F(EngineTest, StateChangesBecomeEventsAndTheEndIsRecorded) {
  std::string key = Add("run-10");
  engine_->Tick();
  uint32_t id = *Get(key).job_id;
  slurm_.SetState(id, {"RUNNING"});
  Settle();
  EXPECT_EQ(Get(key).phase, Phase::kRunning);
  slurm_.SetState(id, {"COMPLETED", "COMPLETING"});
  Settle();
  EXPECT_EQ(Get(key).phase, Phase::kCompleting);  // resources still held: not terminal
  slurm_.SetState(id, {"COMPLETED"});
  Settle();
  EXPECT_EQ(Get(key).phase, Phase::kSucceeded);
  EXPECT_EQ(engine_->active_count(), 0u);
  auto events = store_->Events(key, 0, 100);
  ASSERT_TRUE(events);
  std::vector<std::string> types;
  std::string messages;
  for (const auto& e : *events) {
    types.push_back(e.type);
    messages += e.message + "\n";
  }
  EXPECT_EQ(types, (std::vector<std::string>{"intent", "submitting", "submitted", "state", "state",
                                             "finished"}))
      << messages;
}

TEST_F(EngineTest, AnEndedJobsEventSaysWhereItsOutputWent) {
  std::string ok = Add("run-ok");
  std::string bad = Add("run-bad");
  engine_->Tick();
  for (const std::string& key : {ok, bad}) {
    uint32_t id = *Get(key).job_id;
    slurm_.SetOutput(id, "/w/slurm-" + std::to_string(id) + ".out", "n2");
    slurm_.SetState(id, {key == ok ? "COMPLETED" : "FAILED"});
  }
  Settle();
  for (const std::string& key : {ok, bad}) {
    auto events = store_->Events(key, 0, 100);
    ASSERT_TRUE(events);
    ASSERT_FALSE(events->empty());
    EXPECT_EQ(events->back().type, key == ok ? "finished" : "failed");
    EXPECT_TRUE(events->back().message.ends_with("; the script's output is in /w/slurm-" +
                                                 std::to_string(*Get(key).job_id) +
                                                 ".out on node n2"))
        << events->back().message;
  }
  EXPECT_NE(Get(bad).failure.find("output is in /w/slurm-"), std::string::npos) << Get(bad).failure;
}

TEST_F(EngineTest, StartDetailsWaitAMomentButAnEndIsFetchedAtOnce) {
  EngineOptions o = engine_->options();
  o.start_details_delay = 2s;
  engine_ = Engine::Create(*store_, slurm_, clock_, o).value();
  std::string key = Add("run-11");
  engine_->Tick();
  uint32_t id = *Get(key).job_id;
  slurm_.SetState(id, {"RUNNING"});
  const int lists = slurm_.list_calls;
  engine_->Tick();  // jobs/state sees the start
  engine_->Tick();
  EXPECT_EQ(slurm_.list_calls, lists) << "no full list while slurmctld launches the job";
  EXPECT_EQ(Get(key).phase, Phase::kPending);
  Advance(2s);
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kRunning);
  slurm_.SetState(id, {"COMPLETED"});
  engine_->Tick();
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kSucceeded);
}

TEST_F(EngineTest, VanishedJobIsLostOnlyAfterTheGracePeriod) {
  std::string key = Add("run-11");
  engine_->Tick();
  slurm_.Forget(*Get(key).job_id);
  Advance(59s);
  Settle();
  EXPECT_EQ(Get(key).phase, Phase::kPending);
  Advance(2s);
  Settle();
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kLost);
  EXPECT_NE(s.failure.find("vanished"), std::string::npos);
}

TEST_F(EngineTest, AnUnresolvablePendingReasonFailsFastAndCancelsTheJob) {
  std::string key = Add("run-12");
  engine_->Tick();
  uint32_t id = *Get(key).job_id;
  slurm_.SetState(id, {"PENDING"}, "BadConstraints");
  Advance(5s);  // a pending job's reason is looked at every pending_check_interval
  engine_->Tick();
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kFailed);
  EXPECT_NE(s.failure.find("BadConstraints"), std::string::npos);
  EXPECT_EQ(slurm_.jobs().at(id).state.base, slurm::BaseState::kCancelled);
}

TEST_F(EngineTest, AJobAdoptedPendingForAnUnresolvableReasonIsCancelledToo) {
  slurm_.dropped_responses = 1;
  // the job is stuck by the time the list that finds it is taken
  slurm_.while_listing = [this] {
    slurm_.SetState(slurm_.jobs().begin()->first, {"PENDING"}, "BadConstraints");
  };
  std::string key = Add("run-31");
  engine_->Tick();
  ASSERT_EQ(slurm_.jobs().size(), 1u);
  const uint32_t id = slurm_.jobs().begin()->first;
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kFailed);
  EXPECT_EQ(s.job_id, id);
  EXPECT_EQ(slurm_.jobs().at(id).state.base, slurm::BaseState::kCancelled);
}

TEST_F(EngineTest, AResolvablePendingReasonKeepsWaiting) {
  std::string key = Add("run-13");
  engine_->Tick();
  slurm_.SetState(*Get(key).job_id, {"PENDING"}, "Resources");
  Advance(5s);
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kPending);
  EXPECT_EQ(Get(key).state_reason, "Resources");
}

TEST_F(EngineTest, OrphansWithOurTagAreCancelledAfterTheGracePeriodAndNothingElseIs) {
  uint32_t orphan = slurm_.AddForeignJob("slurmfleet:test:gone-1", "ci");
  uint32_t untagged = slurm_.AddForeignJob("someone's job", "ci");
  uint32_t other_instance = slurm_.AddForeignJob("slurmfleet:prod:k1", "ci");
  uint32_t other_user = slurm_.AddForeignJob("slurmfleet:test:gone-2", "alice");
  engine_->Tick();
  EXPECT_EQ(slurm_.jobs().at(orphan).state.base, slurm::BaseState::kRunning);  // within grace
  Advance(61s);
  slurm_.Touch();
  engine_->Tick();
  EXPECT_EQ(slurm_.jobs().at(orphan).state.base, slurm::BaseState::kCancelled);
  EXPECT_EQ(slurm_.jobs().at(untagged).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.jobs().at(other_instance).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.jobs().at(other_user).state.base, slurm::BaseState::kRunning);
}

TEST_F(EngineTest, ATaggedJobIsNoOrphanWhileTheStoreCannotSayWhoOwnsIt) {
  const std::string path = ::testing::TempDir() + "/engine-store-error.db";
  std::remove(path.c_str());
  auto s = store::Store::Open(path, clock_);
  ASSERT_TRUE(s) << s.error().ToString();
  store_ = std::move(*s);
  engine_ = MakeEngine();
  uint32_t tagged = slurm_.AddForeignJob("slurmfleet:test:gone-9", "ci");
  engine_->Tick();
  auto other = store::sqlite::Connection::Open(path);
  ASSERT_TRUE(other) << other.error().ToString();
  ASSERT_TRUE((*other)->Exec("ALTER TABLE submissions RENAME TO unreadable", "break the store"));
  Advance(61s);
  slurm_.Touch();
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(slurm_.jobs().at(tagged).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.cancel_calls, 0);
}

TEST_F(EngineTest, AJobSeenEndingBetweenFullListsIsNoOrphan) {
  std::string key = Add("run-31");
  engine_->Tick();
  Settle();
  const uint32_t id = *Get(key).job_id;
  Advance(61s);
  slurm_.Touch();
  ASSERT_TRUE(engine_->Tick().full_list);  // shows the job running, past the orphan grace
  slurm_.SetState(id, {"COMPLETED"});
  ASSERT_FALSE(engine_->Tick().full_list);
  ASSERT_FALSE(engine_->Tick().full_list);
  ASSERT_EQ(Get(key).phase, Phase::kSucceeded);
  // the submission is retired; the last full list still shows its job running
  ASSERT_FALSE(engine_->Tick().full_list);
  EXPECT_EQ(slurm_.cancel_calls, 0);
  auto events = store_->Events(key, 0, 0);
  ASSERT_TRUE(events);
  for (const store::Event& e : *events) EXPECT_NE(e.type, "orphan") << e.message;
}

TEST_F(EngineTest, AnOrphanWhoseCancelFailedForNowIsCancelledAtTheNextPass) {
  uint32_t orphan = slurm_.AddForeignJob("slurmfleet:test:gone-3", "ci");
  engine_->Tick();
  Advance(61s);
  slurm_.Touch();
  slurm_.unavailable_cancels = 1;
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(slurm_.jobs().at(orphan).state.base, slurm::BaseState::kRunning);
  Advance(31s);
  slurm_.Touch();
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(slurm_.jobs().at(orphan).state.base, slurm::BaseState::kCancelled);
  auto events = store_->Events("gone-3", 0, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_NE((*events)[0].message.find("; trying again"), std::string::npos) << (*events)[0].message;
  EXPECT_EQ((*events)[1].type, "orphan");
}

TEST_F(EngineTest, ALateDuplicateOfALiveSubmissionIsCancelled) {
  std::string key = Add("run-21");
  engine_->Tick();
  uint32_t own = *Get(key).job_id;
  // a POST thought lost lands after the job was sent again: a second job with the same tag
  uint32_t late = slurm_.AddForeignJob("slurmfleet:test:run-21", "ci");
  ExpectDuplicateCollected(key, own, late);
}

TEST_F(EngineTest, ADuplicateListedBeforeTheSubmissionsOwnJobIsCancelledToo) {
  // The POST thought lost reached slurmctld just before the job was sent again: the duplicate has
  // the lower id, and slurmrestd lists jobs by id, so it comes before the submission's own job.
  uint32_t early = slurm_.AddForeignJob("slurmfleet:test:run-22", "ci");
  std::string key = Add("run-22");
  engine_->Tick();
  uint32_t own = *Get(key).job_id;
  ASSERT_LT(early, own);
  ExpectDuplicateCollected(key, own, early);
}

TEST_F(EngineTest, AnUnsureSubmissionFollowsItsLiveJobNotAnEndedCopy) {
  // A POST thought lost landed and its job failed; the resubmission's answer is lost too. Both
  // jobs carry the tag, the ended one listed first: the submission must follow the one running.
  uint32_t ended = slurm_.AddForeignJob("slurmfleet:test:run-23", "ci");
  slurm_.SetState(ended, {"FAILED"});
  slurm_.dropped_responses = 1;
  std::string key = Add("run-23");
  engine_->Tick();
  Settle();
  store::Submission s = Get(key);
  ASSERT_TRUE(s.job_id);
  EXPECT_NE(*s.job_id, ended);
  EXPECT_EQ(s.phase, Phase::kPending);
  const uint32_t live = *s.job_id;
  Advance(61s);
  slurm_.Touch();
  Settle();
  EXPECT_EQ(slurm_.jobs().at(live).state.base, slurm::BaseState::kPending);  // not an orphan
  EXPECT_EQ(Get(key).job_id, live);
  EXPECT_EQ(Get(key).phase, Phase::kPending);
}

TEST_F(EngineTest, TagsAreMatchedWhateverOrderTheirKeysAndJobIdsRunIn) {
  // slurmrestd lists jobs by id, and keys that arrive over several passes sort otherwise: here
  // each key sorts before the keys submitted ahead of it. Every unsure submission still finds its
  // own job, and the orphan next to each is collected.
  slurm_.dropped_responses = 12;
  std::vector<std::string> keys;
  std::vector<uint32_t> orphans;
  for (int i = 11; i >= 0; --i) {
    const std::string key = "k" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    orphans.push_back(slurm_.AddForeignJob("slurmfleet:test:" + key + "-gone", "ci"));
    keys.push_back(Add(key));
    engine_->Tick();
  }
  Settle();
  for (const std::string& key : keys) {
    store::Submission s = Get(key);
    EXPECT_EQ(s.phase, Phase::kPending) << key;
    ASSERT_TRUE(s.job_id) << key;
    EXPECT_EQ(slurm_.jobs().at(*s.job_id).comment, "slurmfleet:test:" + key) << key;
  }
  Advance(61s);
  slurm_.Touch();
  Settle();
  for (uint32_t orphan : orphans) {
    EXPECT_EQ(slurm_.jobs().at(orphan).state.base, slurm::BaseState::kCancelled) << orphan;
  }
  for (const std::string& key : keys) {
    EXPECT_EQ(slurm_.jobs().at(*Get(key).job_id).state.base, slurm::BaseState::kPending) << key;
  }
}

TEST_F(EngineTest, AJobWhoseTagWasEditedAwayIsStillTrackedByItsId) {
  // Full lists leave out jobs that are not ours; a job we track is ours by its id whatever its
  // comment now says (an admin's `scontrol update comment=`), so it is never taken for lost.
  uint32_t other = slurm_.AddForeignJob("someone's job", "alice");
  std::string key = Add("run-24");
  engine_->Tick();
  uint32_t id = *Get(key).job_id;
  slurm_.SetComment(id, "edited by an admin");
  slurm_.SetState(id, {"RUNNING"});
  for (int i = 0; i < 5; ++i) {
    Advance(31s);
    slurm_.Touch();
    PassStats stats = engine_->Tick();
    EXPECT_TRUE(stats.full_list);
  }
  EXPECT_EQ(Get(key).phase, Phase::kRunning);
  EXPECT_EQ(slurm_.jobs().at(other).state.base, slurm::BaseState::kRunning);  // never touched
}

TEST_F(EngineTest, JobsListedAgainAfterOthersLeftOrJoinedTheListKeepTheirRecords) {
  // Between two lists slurmctld purges ended jobs and takes new ones: a job listed again
  // unchanged is known by its text wherever it now stands, and only by its own.
  const std::vector<uint32_t> orphans = AddOrphans(4);
  std::string key = Add("run-31");
  engine_->Tick();
  const uint32_t own = *Get(key).job_id;
  slurm_.Forget(orphans[0]);  // the first job of the list left it
  Advance(61s);
  const uint32_t young = slurm_.AddForeignJob("slurmfleet:test:young", "ci");  // within its grace
  ASSERT_TRUE(engine_->Tick().full_list);
  for (size_t i = 1; i < orphans.size(); ++i) {
    EXPECT_EQ(slurm_.jobs().at(orphans[i]).state.base, slurm::BaseState::kCancelled) << i;
  }
  EXPECT_EQ(slurm_.jobs().at(young).state.base, slurm::BaseState::kRunning);
  // a job whose key sorts before every other joins: each record moves to a later place
  Advance(61s);
  const uint32_t early = slurm_.AddForeignJob("slurmfleet:test:early", "ci");
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(slurm_.jobs().at(young).state.base, slurm::BaseState::kCancelled);
  EXPECT_EQ(slurm_.jobs().at(early).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.jobs().at(own).state.base, slurm::BaseState::kPending);
  EXPECT_EQ(Get(key).phase, Phase::kPending);
  EXPECT_EQ(Get(key).job_id, own);
}

TEST_F(EngineTest, AListWithoutDigestsIsReadWholeAndSoIsTheNext) {
  // A list decoded without the client's memo carries no digests: what the engine kept of the list
  // before is forgotten, since the records were rebuilt (here one left, and two joined).
  const std::vector<uint32_t> orphans = AddOrphans(4);
  std::string key = Add("run-33");
  engine_->Tick();
  const uint32_t own = *Get(key).job_id;
  Advance(31s);
  slurm_.Forget(orphans[0]);
  const uint32_t joined_x = slurm_.AddForeignJob("slurmfleet:test:x-joined", "ci");
  const uint32_t joined_y = slurm_.AddForeignJob("slurmfleet:test:y-joined", "ci");
  slurm_.digests = false;
  ASSERT_TRUE(engine_->Tick().full_list);
  for (uint32_t orphan : {orphans[1], joined_x, joined_y}) {
    EXPECT_EQ(slurm_.jobs().at(orphan).state.base, slurm::BaseState::kRunning) << "within grace";
  }
  slurm_.digests = true;
  Advance(31s);
  slurm_.Touch();
  ASSERT_TRUE(engine_->Tick().full_list);
  for (size_t i = 1; i < orphans.size(); ++i) {
    EXPECT_EQ(slurm_.jobs().at(orphans[i]).state.base, slurm::BaseState::kCancelled) << i;
  }
  EXPECT_EQ(slurm_.jobs().at(joined_x).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.jobs().at(joined_y).state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(slurm_.jobs().at(own).state.base, slurm::BaseState::kPending);
  EXPECT_EQ(Get(key).phase, Phase::kPending);
}

TEST_F(EngineTest, AReasonItsDetailsShowedIsUndoneByTheNextListThatShowsTheEarlierText) {
  std::string key = Add("run-32");
  engine_->Tick();
  const uint32_t id = *Get(key).job_id;
  Advance(31s);
  slurm_.Touch();
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(Get(key).state_reason, "None");
  slurm_.SetState(id, {"PENDING"}, "Resources");
  Advance(5s);
  PassStats asked = engine_->Tick();  // a pending job's reason is asked of its own job
  ASSERT_FALSE(asked.full_list);
  ASSERT_EQ(asked.detail_requests, 1);
  EXPECT_EQ(Get(key).state_reason, "Resources");
  // the job reads again as the last list showed it: its submission was changed since by another
  // answer, so that text is observed again
  slurm_.SetState(id, {"PENDING"}, "None");
  Advance(31s);
  ASSERT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(Get(key).state_reason, "None");
}

TEST_F(EngineTest, ALiveSubmissionsJobIsNeverAnOrphan) {
  std::string key = Add("run-14");
  engine_->Tick();
  uint32_t id = *Get(key).job_id;
  slurm_.SetState(id, {"RUNNING"});
  Advance(3600s);
  slurm_.Touch();
  engine_->Tick();
  EXPECT_EQ(slurm_.jobs().at(id).state.base, slurm::BaseState::kRunning);
}

TEST_F(EngineTest, CancelRequestCancelsTheJob) {
  std::string key = Add("run-15");
  engine_->Tick();
  uint32_t id = *Get(key).job_id;
  ASSERT_TRUE(engine_->RequestCancel(key));
  engine_->Tick();
  EXPECT_EQ(slurm_.jobs().at(id).state.base, slurm::BaseState::kCancelled);
  Settle();
  EXPECT_EQ(Get(key).phase, Phase::kCancelled);
}

TEST_F(EngineTest, CancelBeforeSubmissionNeverSubmits) {
  slurm_.unavailable_submits = 1;  // the first POST is refused: provably not accepted
  std::string key = Add("run-16");
  engine_->Tick();
  ASSERT_TRUE(engine_->RequestCancel(key));
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kCancelled);
  EXPECT_EQ(slurm_.submit_calls, 1);
  EXPECT_TRUE(slurm_.jobs().empty());
}

TEST_F(EngineTest, ACancelRequestedBeforeTheFirstPassWinsOverTheIntentHandedToTheLoop) {
  // AddIntent hands the new submission to the loop as written; the cancel request changed the
  // store's copy since, and the loop must act on that one
  std::string key = Add("run-16b");
  ASSERT_TRUE(engine_->RequestCancel(key));
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kCancelled);
  EXPECT_EQ(slurm_.submit_calls, 0);
  EXPECT_TRUE(slurm_.jobs().empty());
}

TEST_F(EngineTest, RejectedSubmitFailsWithSlurmsWords) {
  slurm_.reject_submits = 1;
  std::string key = Add("run-17");
  engine_->Tick();
  store::Submission s = Get(key);
  EXPECT_EQ(s.phase, Phase::kFailed);
  EXPECT_NE(s.failure.find("Invalid partition"), std::string::npos);
}

TEST_F(EngineTest, UnreachableSlurmIsRetriedLater) {
  slurm_.unavailable_submits = 1;
  std::string key = Add("run-18");
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kIntent);
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kPending);
  EXPECT_EQ(slurm_.jobs().size(), 1u);
}

TEST_F(EngineTest, OneTrackingRequestPerPassHoweverManyJobs) {
  for (int i = 0; i < 500; ++i) Add("m" + std::to_string(i));
  engine_->Tick();
  for (int pass = 0; pass < 8; ++pass) {
    if (pass == 3) slurm_.SetState(slurm_.jobs().begin()->first, {"RUNNING"});  // one's details
    if (pass == 5) {  // more changed than max_detail_requests: the full list
      for (auto it = std::next(slurm_.jobs().begin()); it != slurm_.jobs().end(); ++it)
        slurm_.SetState(it->first, {"RUNNING"});
    }
    int before = slurm_.list_calls + slurm_.state_calls;
    int gets = slurm_.get_calls;
    PassStats stats = engine_->Tick();
    EXPECT_EQ(slurm_.list_calls + slurm_.state_calls - before, 1);
    EXPECT_EQ(stats.tracking_requests, 1);
    EXPECT_LE(slurm_.get_calls - gets, 16) << "a few changed jobs' own details at most";
    EXPECT_EQ(slurm_.get_calls - gets, stats.detail_requests);
  }
  for (const auto& [id, job] : slurm_.jobs()) EXPECT_EQ(job.state.base, slurm::BaseState::kRunning);
  EXPECT_EQ(engine_->active_count(), 500u);
  size_t running = 0;
  for (int i = 0; i < 500; ++i) running += Get("m" + std::to_string(i)).phase == Phase::kRunning;
  EXPECT_EQ(running, 500u);
}

TEST_F(EngineTest, SteadyPassesAskOnlyForStatesAndAChangeBringsThatJobsDetails) {
  std::string key = Add("run-20");
  engine_->Tick();  // full list (first pass), submit
  PassStats light = engine_->Tick();
  EXPECT_FALSE(light.full_list);
  EXPECT_EQ(light.tracking_requests, 1);
  EXPECT_EQ(light.detail_requests, 0);
  slurm_.SetState(*Get(key).job_id, {"RUNNING"});
  PassStats seen = engine_->Tick();  // jobs/state shows the change, and its GET job/{id} ...
  EXPECT_FALSE(seen.full_list);
  EXPECT_EQ(seen.detail_requests, 1);
  EXPECT_EQ(slurm_.get_calls, 1);
  EXPECT_EQ(Get(key).phase, Phase::kRunning);  // ... records it with its details
  EXPECT_EQ(engine_->Tick().detail_requests, 0);
  Advance(31s);
  EXPECT_TRUE(engine_->Tick().full_list);  // and the full list at least every full_list_interval
}

TEST_F(EngineTest, APendingJobsReasonIsAskedOfItsOwnJobEveryFewSeconds) {
  std::string key = Add("run-20b");
  engine_->Tick();
  engine_->Tick();
  EXPECT_EQ(slurm_.get_calls, 0) << "a job submitted moments ago has no reason worth asking";
  slurm_.SetState(*Get(key).job_id, {"PENDING"}, "PartitionConfig");
  Advance(5s);
  PassStats pass = engine_->Tick();
  EXPECT_FALSE(pass.full_list);
  EXPECT_EQ(pass.detail_requests, 1);
  EXPECT_EQ(Get(key).phase, Phase::kFailed);
  EXPECT_NE(Get(key).failure.find("PartitionConfig"), std::string::npos) << Get(key).failure;
  EXPECT_EQ(slurm_.jobs().at(*Get(key).job_id).state.base, slurm::BaseState::kCancelled);
}

TEST_F(EngineTest, ManyPendingJobsHaveTheirReasonsLookedAtByThePeriodicFullList) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back(Add("many-" + std::to_string(i)));
  engine_->Tick();
  engine_->Tick();
  slurm_.SetState(*Get(keys[3]).job_id, {"PENDING"}, "PartitionConfig");
  for (int second = 0; second < 29; ++second) {
    Advance(1s);
    PassStats pass = engine_->Tick();
    EXPECT_FALSE(pass.full_list) << "at " << second + 1 << " s: 20 pending jobs are not a change";
    EXPECT_EQ(pass.detail_requests, 0) << "more than max_detail_requests: not one by one";
  }
  EXPECT_EQ(Get(keys[3]).phase, Phase::kPending);
  Advance(2s);
  EXPECT_TRUE(engine_->Tick().full_list);
  EXPECT_EQ(Get(keys[3]).phase, Phase::kFailed);
  EXPECT_EQ(Get(keys[4]).phase, Phase::kPending);
}

TEST_F(EngineTest, AJobVanishedFromTheStatesTakesTheFullListToProveItLost) {
  std::string key = Add("run-20c");
  engine_->Tick();
  engine_->Tick();
  slurm_.Forget(*Get(key).job_id);
  engine_->Tick();  // jobs/state lacks it
  EXPECT_TRUE(engine_->Tick().full_list);
  Advance(61s);
  engine_->Tick();
  EXPECT_EQ(Get(key).phase, Phase::kLost);
}

TEST_F(EngineTest, APeriodicFullListWaitsWhileAJobOfOursIsBeingStarted) {
  std::string first = Add("run-21");
  Settle();
  slurm_.SetState(*Get(first).job_id, {"RUNNING"});
  Settle();
  ASSERT_EQ(Get(first).phase, Phase::kRunning);
  Advance(31s);  // the periodic full list is due ...
  Add("run-22");
  PassStats submitting = engine_->Tick();
  EXPECT_EQ(submitting.submitted, 1);
  EXPECT_FALSE(submitting.full_list);  // ... but not right after our submit
  Advance(2s);
  EXPECT_FALSE(engine_->Tick().full_list);
  Add("run-23");  // a steady stream of young jobs does not put it off for ever
  Advance(1s);
  PassStats next = engine_->Tick();
  EXPECT_EQ(next.submitted, 1);
  EXPECT_FALSE(next.full_list);
  Advance(1s);  // periodic interval + pending_check_interval
  EXPECT_TRUE(engine_->Tick().full_list);
}

TEST_F(EngineTest, ManyTrackedJobsAskForEveryJobsStateInsteadOfALongIdList) {
  for (int i = 0; i < 300; ++i) Add("many-" + std::to_string(i));
  Settle();
  int all_before = slurm_.all_state_calls;
  PassStats s = engine_->Tick();
  EXPECT_FALSE(s.full_list);
  EXPECT_EQ(s.tracking_requests, 1);
  EXPECT_EQ(slurm_.all_state_calls, all_before + 1);
}

TEST_F(EngineTest, SameKeySameRequestIsIdempotentAnotherRequestConflicts) {
  auto a = engine_->AddIntent("dup", "job", "t", Request("x"));
  ASSERT_TRUE(a);
  auto again = engine_->AddIntent("dup", "job", "t", Request("x"));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->key, "dup");
  auto other = engine_->AddIntent("dup", "job", "t", Request("y"));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, Code::kConflict);
  auto bad = engine_->AddIntent("bad key!", "job", "t", Request("x"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Code::kInvalidInput);
}

// Text that JSON cannot hold is refused when the intent is made, not thrown on the engine's
// thread when it is written out.
TEST_F(EngineTest, ARequestThatIsNotUtf8IsRefusedAndNothingIsStored) {
  slurm::JobRequest request = Request("latin1");
  request.script = "#!/bin/bash\necho caf\xE9\n";
  auto added = engine_->AddIntent("latin1", "job", "t", request);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().code, Code::kInvalidInput);
  EXPECT_NE(added.error().message.find("not UTF-8"), std::string::npos);
  std::vector<Engine::Intent> intents{{"latin1-now", "job", "t", request}};
  std::vector<std::pair<store::Record*, std::optional<store::Event>>> records;
  EXPECT_FALSE(engine_->SubmitNow(intents, records, store::Sync::kDisk));
  auto many = engine_->AddIntents(intents);
  ASSERT_EQ(many.size(), 1u);
  EXPECT_FALSE(many[0]);
  EXPECT_FALSE(store_->Get("latin1"));
  EXPECT_FALSE(store_->Get("latin1-now"));
  engine_->Tick();
  EXPECT_EQ(slurm_.jobs().size(), 0u);
}

TEST_F(EngineTest, FastWhileStartingSlowWhenSteady) {
  std::string key = Add("run-19");
  EXPECT_EQ(engine_->NextInterval(), engine_->options().fast_interval);
  engine_->Tick();
  EXPECT_EQ(engine_->NextInterval(), engine_->options().fast_interval);  // pending
  slurm_.SetState(*Get(key).job_id, {"RUNNING"});
  Settle();
  EXPECT_EQ(engine_->NextInterval(), engine_->options().slow_interval);
}

}  // namespace
}  // namespace slurmfleet::fleet
