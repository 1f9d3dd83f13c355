#include "store/store.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/fake_clock.h"
#include "gtest/gtest.h"
#include "store/migrations.h"

namespace slurmfleet::store {
namespace {

using namespace std::chrono_literals;

constexpr auto kStart = std::chrono::sys_seconds(1'700'000'000s);
constexpr int64_t kStartSeconds = 1'700'000'000;

auto Fields(const Submission& s) {
  return std::tie(s.key, s.kind, s.cloud, s.owner, s.request_json, s.phase, s.attempts, s.job_id,
                  s.sluid, s.slurm_state, s.state_reason, s.failure, s.cancel_requested,
                  s.created_at, s.updated_at, s.submit_sent_at, s.last_seen_at, s.version);
}

std::vector<std::string> Keys(const std::vector<Submission>& list) {
  std::vector<std::string> keys;
  for (const Submission& s : list) keys.push_back(s.key);
  return keys;
}

// Every field set to something other than its default.
Submission Full(const std::string& key) {
  return Submission{
      .key = key,
      .kind = "run",
      .cloud = "gcp-west",
      .owner = "template gpu",
      .request_json = R"({"job":{"name":"x","environment":["A=1"]},"script":"#!/bin/sh\n"})",
      .phase = Phase::kRunning,
      .attempts = 3,
      .job_id = 4242,
      .sluid = "sluid-abc",
      .slurm_state = "RUNNING",
      .state_reason = "None",
      .failure = "",
      .cancel_requested = true,
      .created_at = 5,  // overwritten by Add
      .updated_at = 6,  // overwritten by Add
      .submit_sent_at = kStartSeconds - 10,
      .last_seen_at = kStartSeconds - 1,
      .version = 99,  // overwritten by Add
  };
}

// GCC 12 warns (-Wmissing-field-initializers) on partial designated initializers, hence these.
Submission Intent(const std::string& key, const std::string& cloud = "c1",
                  const std::string& kind = "job") {
  Submission s;
  s.key = key;
  s.kind = kind;
  s.cloud = cloud;
  s.owner = "o";
  return s;
}

Event Ev(const std::string& type, const std::string& message) {
  Event e;
  e.type = type;
  e.message = message;
  return e;
}

struct Filter {
  Filter& Active() {
    f.active_only = true;
    return *this;
  }
  Filter& Cloud(std::string cloud) {
    f.cloud = std::move(cloud);
    return *this;
  }
  Filter& Kind(std::string kind) {
    f.kind = std::move(kind);
    return *this;
  }
  Filter& Limit(size_t limit) {
    f.limit = limit;
    return *this;
  }
  Filter& WithoutRequests() {
    f.requests = false;
    return *this;
  }
  operator ListFilter() const { return f; }
  ListFilter f;
};

// A fresh directory under the test temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "slurmfleet-store-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A raw SQLite handle, for setting up old files and looking at what the store wrote.
class RawDb {
 public:
  explicit RawDb(const std::string& path, int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, flags, nullptr), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "") << " in " << sql;
    sqlite3_free(error);
  }
  // A column of the first row, as text ("" when there is none).
  std::string Scalar(const std::string& sql, int column = 0) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, column) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
    }
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

class StoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> OpenFile(const std::string& path) {
    auto store = Store::Open(path, clock_);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  FakeClock clock_{kStart};
  TempDir dir_;
  std::unique_ptr<Store> store_ = OpenFile(":memory:");
};

TEST(PhaseTest, NamesRoundTripAndTerminalsAreTheFinalFour) {
  for (int i = 0; i <= static_cast<int>(Phase::kLost); ++i) {
    auto phase = static_cast<Phase>(i);
    EXPECT_EQ(PhaseFromName(PhaseName(phase)), phase) << PhaseName(phase);
    bool terminal = phase == Phase::kSucceeded || phase == Phase::kFailed ||
                    phase == Phase::kCancelled || phase == Phase::kLost;
    EXPECT_EQ(IsTerminal(phase), terminal) << PhaseName(phase);
  }
  EXPECT_EQ(PhaseName(Phase::kIntent), "intent");
  EXPECT_EQ(PhaseName(Phase::kSubmitting), "submitting");
  EXPECT_EQ(PhaseFromName("Running"), std::nullopt);
  EXPECT_EQ(PhaseFromName(""), std::nullopt);
}

TEST_F(StoreTest, AddThenGetRoundTripsEveryField) {
  Submission s = Full("run-7");
  ASSERT_TRUE(store_->Add(s));
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.created_at, kStartSeconds);
  EXPECT_EQ(s.updated_at, kStartSeconds);

  auto got = store_->Get("run-7");
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_EQ(Fields(*got), Fields(s));

  auto events = store_->Events("run-7", 0, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "intent");
  EXPECT_EQ((*events)[0].key, "run-7");
  EXPECT_EQ((*events)[0].at, kStartSeconds);
}

TEST_F(StoreTest, UpdateRoundTripsEveryFieldButCreatedAtAndTheRequest) {
  Submission s = Full("run-7");
  ASSERT_TRUE(store_->Add(s));
  const std::string request = s.request_json;
  clock_.Advance(30s);

  s.kind = "agent";
  s.cloud = "aws-east";
  s.owner = "run 12";
  s.request_json = "{}";
  s.phase = Phase::kFailed;
  s.attempts = 4;
  s.job_id = std::numeric_limits<uint32_t>::max();
  s.sluid = "sluid-def";
  s.slurm_state = "FAILED";
  s.state_reason = "NonZeroExitCode";
  s.failure = "exit code 3";
  s.cancel_requested = false;
  s.submit_sent_at = kStartSeconds + 1;
  s.last_seen_at = kStartSeconds + 29;
  ASSERT_TRUE(store_->Update(s));
  EXPECT_EQ(s.version, 2);
  EXPECT_EQ(s.updated_at, kStartSeconds + 30);
  EXPECT_EQ(s.created_at, kStartSeconds);

  auto got = store_->Get("run-7");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->request_json, request);  // written by Add only
  s.request_json = request;
  EXPECT_EQ(Fields(*got), Fields(s));

  // A job id can be cleared again; created_at is not the caller's to change, and a caller that
  // dropped its copy of the request does not erase the stored one.
  s.job_id.reset();
  s.created_at = 1;
  s.request_json.clear();
  ASSERT_TRUE(store_->Update(s));
  got = store_->Get("run-7");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->job_id, std::nullopt);
  EXPECT_EQ(got->created_at, kStartSeconds);
  EXPECT_EQ(got->request_json, request);
  EXPECT_EQ(got->version, 3);
}

TEST_F(StoreTest, GetUnknownKeyIsNotFound) {
  auto got = store_->Get("nope");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Code::kNotFound);
  EXPECT_NE(got.error().message.find("'nope'"), std::string::npos);
}

TEST_F(StoreTest, DuplicateKeyConflictsAndChangesNothing) {
  Submission first = Full("run-7");
  ASSERT_TRUE(store_->Add(first));
  Submission second = Intent("run-7");
  auto added = store_->Add(second);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().code, Code::kConflict);
  EXPECT_NE(added.error().message.find("'run-7'"), std::string::npos);
  EXPECT_EQ(second.version, 0);  // the caller's copy is untouched

  auto got = store_->Get("run-7");
  ASSERT_TRUE(got);
  EXPECT_EQ(Fields(*got), Fields(first));
  EXPECT_EQ(store_->Events("", 0, 0)->size(), 1u);  // no second intent event
}

TEST_F(StoreTest, EmptyKeyIsInvalid) {
  Submission s = Intent("");
  auto added = store_->Add(s);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().code, Code::kInvalidInput);
}

TEST_F(StoreTest, StaleVersionConflictsAndWritesNothing) {
  Submission s = Intent("run-7");
  ASSERT_TRUE(store_->Add(s));
  Submission a = *store_->Get("run-7");
  Submission b = *store_->Get("run-7");

  a.phase = Phase::kSubmitting;
  ASSERT_TRUE(store_->Update(a, Ev("submitted", "by a")));

  b.phase = Phase::kCancelled;
  b.failure = "should never be stored";
  auto updated = store_->Update(b, Ev("cancelled", "by b"));
  ASSERT_FALSE(updated);
  EXPECT_EQ(updated.error().code, Code::kConflict);
  EXPECT_NE(updated.error().message.find("'run-7'"), std::string::npos);
  EXPECT_EQ(b.version, 1);  // not bumped

  auto got = store_->Get("run-7");
  ASSERT_TRUE(got);
  EXPECT_EQ(Fields(*got), Fields(a));
  auto events = store_->Events("run-7", 0, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);  // intent, and a's; not b's
  EXPECT_EQ((*events)[1].message, "by a");
}

TEST_F(StoreTest, UpdateOfUnknownKeyIsNotFoundAndAppendsNoEvent) {
  Submission s = Intent("ghost");
  s.version = 1;
  auto updated = store_->Update(s, Ev("state", "m"));
  ASSERT_FALSE(updated);
  EXPECT_EQ(updated.error().code, Code::kNotFound);
  EXPECT_TRUE(store_->Events("", 0, 0)->empty());
}

TEST_F(StoreTest, UpdateAppendsItsEventStampedByTheStore) {
  Submission s = Intent("run-7");
  ASSERT_TRUE(store_->Add(s));
  clock_.Advance(5s);
  s.phase = Phase::kPending;
  // id, key and at are the store's: what the caller put there is ignored.
  ASSERT_TRUE(store_->Update(
      s, Event{.id = 77, .key = "other", .at = 1, .type = "submitted", .message = "job 12"}));

  auto events = store_->Events("run-7", 0, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  const Event& e = (*events)[1];
  EXPECT_GT(e.id, (*events)[0].id);
  EXPECT_EQ(e.key, "run-7");
  EXPECT_EQ(e.at, kStartSeconds + 5);
  EXPECT_EQ(e.type, "submitted");
  EXPECT_EQ(e.message, "job 12");
  EXPECT_TRUE(store_->Events("other", 0, 0)->empty());
}

TEST_F(StoreTest, EventsPageWithACursorPerKeyOrForAll) {
  Submission a = Intent("a");
  Submission b = Intent("b");
  ASSERT_TRUE(store_->Add(a));  // event 1: a intent
  ASSERT_TRUE(store_->Add(b));  // event 2: b intent
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(1s);
    auto ida = store_->AppendEvent("a", "warn", "a" + std::to_string(i));
    auto idb = store_->AppendEvent("b", "warn", "b" + std::to_string(i));
    ASSERT_TRUE(ida && idb);
    EXPECT_LT(*ida, *idb);
  }

  auto all = store_->Events("", 0, 0);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 8u);
  for (size_t i = 1; i < all->size(); ++i) EXPECT_LT((*all)[i - 1].id, (*all)[i].id);

  // Page through a's events two at a time.
  std::vector<std::string> messages;
  int64_t cursor = 0;
  while (true) {
    auto page = store_->Events("a", cursor, 2);
    ASSERT_TRUE(page);
    ASSERT_LE(page->size(), 2u);
    if (page->empty()) break;
    for (const Event& e : *page) {
      EXPECT_EQ(e.key, "a");
      messages.push_back(e.message);
    }
    cursor = page->back().id;
  }
  EXPECT_EQ(messages, (std::vector<std::string>{"job for 'o' on cloud 'c1'", "a0", "a1", "a2"}));

  auto after = store_->Events("", (*all)[5].id, 0);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[0].message, "a2");
  EXPECT_EQ((*after)[1].message, "b2");
  EXPECT_EQ((*after)[1].at, kStartSeconds + 3);

  auto limited = store_->Events("", 0, 3);
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->size(), 3u);
  EXPECT_EQ(limited->front().id, all->front().id);
}

TEST_F(StoreTest, LastEventIdIsWhereAFollowerStarts) {
  EXPECT_EQ(store_->LastEventId(), 0);
  auto id = store_->AppendEvent("k", "warn", "m");
  ASSERT_TRUE(id);
  EXPECT_EQ(store_->LastEventId(), *id);
}

TEST_F(StoreTest, AppendEventForAKeyWithoutSubmissionIsKept) {
  // orphan jobs carrying our tag have no submission, but what was done to them is recorded
  auto id = store_->AppendEvent("ghost", "orphan", "m");
  ASSERT_TRUE(id) << id.error().ToString();
  auto events = store_->Events("ghost", 0, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().type, "orphan");
}

std::vector<std::string> EventKeys(Store& store) {
  std::vector<std::string> keys;
  auto events = store.Events("", 0, 0);
  EXPECT_TRUE(events) << events.error().ToString();
  if (events) {
    for (const Event& e : *events) keys.push_back(e.key);
  }
  return keys;
}

TEST_F(StoreTest, PruneHistoryRemovesOnlyKeysIdleSinceTheCutoffAndEachOneWhole) {
  // Ten days ago: these are written, and some of them show signs of life since.
  auto put_record = [&](const std::string& name, bool active, bool with_event) {
    Record r{.kind = "agent", .name = name, .cloud = "c1", .active = active, .doc = "{}"};
    ASSERT_TRUE(with_event ? store_->PutRecord(r, Ev("created", "node")) : store_->PutRecord(r));
  };
  auto end = [&](const std::string& key) {
    Submission s = *store_->Get(key);
    s.phase = Phase::kSucceeded;
    ASSERT_TRUE(store_->Update(s, Ev("state", "COMPLETED")));
  };
  for (const char* key : {"ended-old", "ended-late", "live-old", "agent-old", "agent-live"}) {
    Submission s = Intent(key);
    ASSERT_TRUE(store_->Add(s));
  }
  end("ended-old");
  end("agent-old");
  end("agent-live");
  put_record("agent-old", false, true);
  put_record("agent-live", true, true);  // an idle agent kept for days: its history stays whole
  put_record("eventless-old", false, false);
  ASSERT_TRUE(store_->AppendEvent("orphan-old", "orphan", "cancelled job 7"));
  ASSERT_TRUE(store_->AppendEvent("orphan-late", "orphan", "cancelled job 8"));

  clock_.Advance(std::chrono::hours(24 * 5));
  end("ended-late");                                             // ended five days ago
  ASSERT_TRUE(store_->AppendEvent("orphan-late", "warn", "x"));  // and a newer event
  put_record("eventless-late", false, false);

  clock_.Advance(std::chrono::hours(24 * 5));
  const int64_t cutoff = kStartSeconds + 3 * 86400;  // history kept for seven days
  ASSERT_TRUE(store_->AppendEvent("new", "orphan", "first seen after the cutoff"));
  Result<PruneCounts> pruned = store_->PruneHistory(cutoff);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  // ended-old (intent, state), agent-old (intent, state, created), orphan-old (orphan)
  EXPECT_EQ(*pruned, (PruneCounts{.keys = 3, .submissions = 2, .records = 2, .events = 6}));

  EXPECT_EQ(store_->Get("ended-old").error().code, Code::kNotFound);
  EXPECT_EQ(store_->Get("agent-old").error().code, Code::kNotFound);
  EXPECT_EQ(store_->GetRecord("agent", "agent-old").error().code, Code::kNotFound);
  EXPECT_EQ(store_->GetRecord("agent", "eventless-old").error().code, Code::kNotFound);
  for (const char* key : {"ended-late", "live-old", "agent-live"}) {
    EXPECT_TRUE(store_->Get(key)) << key;
  }
  EXPECT_TRUE(store_->GetRecord("agent", "agent-live"));
  EXPECT_TRUE(store_->GetRecord("agent", "eventless-late"));
  EXPECT_EQ(EventKeys(*store_), (std::vector<std::string>{"ended-late", "live-old", "agent-live",
                                                          "agent-live", "agent-live", "orphan-late",
                                                          "ended-late", "orphan-late", "new"}));
  EXPECT_EQ(store_->Events("ended-old", 0, 0)->size(), 0u);
  EXPECT_EQ(store_->Events("agent-live", 0, 0)->size(), 3u);

  // Nothing more to remove at the same cutoff; a key whose events were removed starts afresh.
  EXPECT_EQ(*store_->PruneHistory(cutoff), PruneCounts{});
  ASSERT_TRUE(store_->AppendEvent("orphan-old", "orphan", "cancelled job 9"));
  EXPECT_EQ(store_->Events("orphan-old", 0, 0)->size(), 1u);
}

TEST_F(StoreTest, PruneHistoryFindsAKeysRecordsByTheirIndexNotByReadingThemAll) {
  const std::string path = dir_.File("state.db");
  { ASSERT_TRUE(OpenFile(path)); }
  RawDb raw(path);
  EXPECT_EQ(raw.Scalar("EXPLAIN QUERY PLAN SELECT 1 FROM records WHERE name = 'a'", 3),
            "SEARCH records USING COVERING INDEX records_by_name (name=?)");
}

TEST_F(StoreTest, PruneHistoryGoesThroughManyTransactionsAndLeavesTheLiveOnesInTheirOrder) {
  // More keys than one transaction looks at, ended and live ones interleaved.
  for (int i = 0; i < 1000; ++i) {
    Submission s = Intent("k" + std::to_string(i));
    ASSERT_TRUE(store_->Add(s));
    if (i % 3 != 0) {
      s.phase = Phase::kCancelled;
      ASSERT_TRUE(store_->Update(s, Ev("state", "CANCELLED")));
    }
  }
  clock_.Advance(std::chrono::hours(24));
  Result<PruneCounts> pruned = store_->PruneHistory(kStartSeconds + 60);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  EXPECT_EQ(pruned->keys, 666);
  EXPECT_EQ(pruned->submissions, 666);
  EXPECT_EQ(pruned->events, 2 * 666);
  auto left = store_->List(ListFilter{});
  ASSERT_TRUE(left);
  ASSERT_EQ(left->size(), 334u);
  std::vector<std::string> keys = EventKeys(*store_);
  ASSERT_EQ(keys.size(), 334u);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[i], "k" + std::to_string(3 * i));
}

TEST_F(StoreTest, MetaSetsOverwritesAndReportsAbsence) {
  auto absent = store_->GetMeta("tracker.cursor");
  ASSERT_TRUE(absent);
  EXPECT_EQ(*absent, std::nullopt);

  ASSERT_TRUE(store_->SetMeta("tracker.cursor", "100"));
  ASSERT_TRUE(store_->SetMeta("tracker.cursor", "200"));
  ASSERT_TRUE(store_->SetMeta("other", ""));
  EXPECT_EQ(*store_->GetMeta("tracker.cursor"), "200");
  EXPECT_EQ(*store_->GetMeta("other"), "");
}

TEST_F(StoreTest, ListFiltersAndOrders) {
  // created_at: b=t, a=t (same second: key breaks the tie), c=t+1, d=t+2, e=t+3.
  Submission b = Intent("b", "c1", "run");
  Submission a = Intent("a", "c2", "agent");
  ASSERT_TRUE(store_->Add(b));
  ASSERT_TRUE(store_->Add(a));
  clock_.Advance(1s);
  Submission c = Intent("c", "c1", "agent");
  ASSERT_TRUE(store_->Add(c));
  clock_.Advance(1s);
  Submission d = Intent("d", "c1", "agent");
  ASSERT_TRUE(store_->Add(d));
  clock_.Advance(1s);
  Submission e = Intent("e", "c2", "run");
  ASSERT_TRUE(store_->Add(e));
  // c succeeded and e was lost: both terminal.
  c.phase = Phase::kSucceeded;
  ASSERT_TRUE(store_->Update(c));
  e.phase = Phase::kLost;
  ASSERT_TRUE(store_->Update(e));
  d.phase = Phase::kCompleting;  // not terminal
  ASSERT_TRUE(store_->Update(d));

  auto keys = [&](ListFilter filter) {
    auto list = store_->List(filter);
    EXPECT_TRUE(list) << list.error().ToString();
    return list ? Keys(*list) : std::vector<std::string>{};
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(keys(Filter()), (V{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(keys(Filter().Active()), (V{"a", "b", "d"}));
  EXPECT_EQ(keys(Filter().Cloud("c1")), (V{"b", "c", "d"}));
  EXPECT_EQ(keys(Filter().Kind("agent")), (V{"a", "c", "d"}));
  EXPECT_EQ(keys(Filter().Active().Cloud("c1").Kind("agent")), (V{"d"}));
  EXPECT_EQ(keys(Filter().Cloud("nowhere")), V{});
  // Limited: the newest, newest first.
  EXPECT_EQ(keys(Filter().Limit(2)), (V{"e", "d"}));
  EXPECT_EQ(keys(Filter().Limit(100)), (V{"e", "d", "c", "b", "a"}));
  EXPECT_EQ(keys(Filter().Active().Limit(2)), (V{"d", "b"}));
  EXPECT_EQ(keys(Filter().Cloud("c2").Kind("run").Limit(1)), (V{"e"}));

  auto list = store_->List(Filter().Kind("run"));
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(Fields((*list)[1]), Fields(e));
}

TEST_F(StoreTest, ListCanLeaveTheRequestsOut) {
  Submission s = Full("with-request");
  ASSERT_TRUE(store_->Add(s));
  auto with = store_->List(Filter());
  ASSERT_TRUE(with);
  ASSERT_EQ(with->size(), 1u);
  EXPECT_EQ(Fields(with->front()), Fields(s));
  for (ListFilter filter :
       {ListFilter(Filter().WithoutRequests()),
        ListFilter(Filter().WithoutRequests().Active().Cloud(s.cloud).Limit(5))}) {
    auto without = store_->List(filter);
    ASSERT_TRUE(without) << without.error().ToString();
    ASSERT_EQ(without->size(), 1u);
    EXPECT_EQ(without->front().request_json, "");
    Submission expected = s;
    expected.request_json.clear();
    EXPECT_EQ(Fields(without->front()), Fields(expected));
  }
}

TEST_F(StoreTest, UpdateManyIsAllOrNothing) {
  Submission a = Intent("a"), b = Intent("b"), c = Intent("c");
  ASSERT_TRUE(store_->Add(a));
  ASSERT_TRUE(store_->Add(b));
  ASSERT_TRUE(store_->Add(c));
  Submission b_elsewhere = b;
  b_elsewhere.attempts = 9;
  ASSERT_TRUE(store_->Update(b_elsewhere));  // b is now stale
  const Submission a0 = a, c0 = c;
  clock_.Advance(10s);

  a.phase = c.phase = b.phase = Phase::kPending;
  std::vector<std::pair<Submission*, std::optional<Event>>> batch = {
      {&a, Ev("state", "a pending")},
      {&b, Ev("state", "b pending")},
      {&c, std::nullopt},
  };
  auto done = store_->UpdateMany(batch);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, Code::kConflict);
  EXPECT_NE(done.error().message.find("'b'"), std::string::npos) << done.error().message;
  // Nothing written, and no caller copy touched: a's row, written before the conflict, is back.
  EXPECT_EQ(Fields(*store_->Get("a")), Fields(a0));
  EXPECT_EQ(Fields(*store_->Get("b")), Fields(b_elsewhere));
  EXPECT_EQ(Fields(*store_->Get("c")), Fields(c0));
  EXPECT_EQ(a.version, 1);
  EXPECT_EQ(c.version, 1);
  EXPECT_EQ(store_->Events("", 0, 0)->size(), 3u);  // the three intents only

  b = *store_->Get("b");
  b.phase = Phase::kPending;
  ASSERT_TRUE(store_->UpdateMany(batch));
  for (const auto& [s, event] : batch) {
    EXPECT_EQ(s->version, s->key == "b" ? 3 : 2) << s->key;  // b was written once before
    EXPECT_EQ(s->updated_at, kStartSeconds + 10) << s->key;
    EXPECT_EQ(Fields(*store_->Get(s->key)), Fields(*s));
  }
  auto events = store_->Events("", 3, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].message, "a pending");
  EXPECT_EQ((*events)[1].message, "b pending");
}

TEST_F(StoreTest, UpdateManyEdgeCases) {
  std::vector<std::pair<Submission*, std::optional<Event>>> empty;
  EXPECT_TRUE(store_->UpdateMany(empty));

  std::vector<std::pair<Submission*, std::optional<Event>>> null_item = {{nullptr, std::nullopt}};
  auto done = store_->UpdateMany(null_item);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, Code::kInvalidInput);

  // A key twice: the second write conflicts with the first, and neither lands.
  Submission a = Intent("a");
  ASSERT_TRUE(store_->Add(a));
  Submission again = a;
  a.attempts = 1;
  again.attempts = 2;
  std::vector<std::pair<Submission*, std::optional<Event>>> twice = {{&a, std::nullopt},
                                                                     {&again, std::nullopt}};
  done = store_->UpdateMany(twice);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, Code::kConflict);
  EXPECT_EQ(store_->Get("a")->attempts, 0);

  // An unknown key fails the batch with kNotFound.
  Submission ghost = Intent("ghost");
  std::vector<std::pair<Submission*, std::optional<Event>>> unknown = {{&a, std::nullopt},
                                                                       {&ghost, std::nullopt}};
  done = store_->UpdateMany(unknown);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, Code::kNotFound);
  EXPECT_EQ(store_->Get("a")->version, 1);
}

TEST_F(StoreTest, UpdateManyOfTenThousandRows) {
  constexpr int kRows = 10'000;
  std::vector<Submission> rows;
  rows.reserve(kRows);
  for (int i = 0; i < kRows; ++i) {
    rows.push_back(Intent("job-" + std::to_string(i)));
    ASSERT_TRUE(store_->Add(rows.back()));
  }
  clock_.Advance(1min);
  std::vector<std::pair<Submission*, std::optional<Event>>> batch;
  batch.reserve(kRows);
  for (Submission& s : rows) {
    s.phase = Phase::kRunning;
    s.last_seen_at = kStartSeconds + 60;
    batch.emplace_back(&s, Ev("state", "running"));
  }
  auto done = store_->UpdateMany(batch);
  ASSERT_TRUE(done) << done.error().ToString();

  auto active = store_->List(Filter().Active());
  ASSERT_TRUE(active);
  ASSERT_EQ(active->size(), static_cast<size_t>(kRows));
  for (const Submission& s : *active) {
    ASSERT_EQ(s.phase, Phase::kRunning) << s.key;
    ASSERT_EQ(s.version, 2) << s.key;
  }
  EXPECT_EQ(store_->Events("", 0, 0)->size(), static_cast<size_t>(2 * kRows));
  EXPECT_EQ(rows.back().version, 2);
}

TEST_F(StoreTest, ConcurrentReadModifyWriteLosesNoUpdate) {
  Submission s = Intent("counter");
  ASSERT_TRUE(store_->Add(s));
  constexpr int kThreads = 4, kIncrements = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < kIncrements;) {
        auto current = store_->Get("counter");
        if (!current) return;
        ++current->attempts;
        auto done = store_->Update(*current);
        if (done) {
          ++i;
        } else if (done.error().code != Code::kConflict) {
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(store_->Get("counter")->attempts, kThreads * kIncrements);
}

TEST_F(StoreTest, ASyncedWritePastTheThresholdHasTheWalCheckpointedInTheBackground) {
  // Writes without a disk sync leave the WAL to grow (up to 16,000 frames); the next synced write
  // past 1000 frames asks for a checkpoint, which copies the WAL into the database file on the
  // checkpointer's thread, with no further call into the store.
  const std::string path = dir_.File("state.db");
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  std::vector<Submission> subs;
  for (int i = 0; i < 200; ++i) subs.push_back(Intent("s" + std::to_string(i)));
  std::vector<Submission*> added;
  for (Submission& s : subs) added.push_back(&s);
  ASSERT_TRUE(store->AddMany(added));
  const auto size_of = [](const std::string& file) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    return ec ? int64_t{0} : static_cast<int64_t>(size);
  };
  const int64_t file_before = size_of(path);
  const auto wal_frames = [&] { return (size_of(path + "-wal") - 32) / (4096 + 24); };
  int round = 0;
  for (; round < 400 && wal_frames() < 2500; ++round) {
    std::vector<std::pair<Submission*, std::optional<Event>>> seen;
    for (Submission& s : subs) {
      s.state_reason = "Priority" + std::to_string(round);
      seen.emplace_back(&s, Ev("state", s.state_reason));
    }
    ASSERT_TRUE(store->UpdateMany(seen, Sync::kProcess));
  }
  ASSERT_GE(wal_frames(), 2500) << "the writes never filled the WAL";
  std::this_thread::sleep_for(100ms);  // time for a checkpoint that should not have been asked
  EXPECT_EQ(size_of(path), file_before) << "writes without disk sync had the WAL checkpointed";

  subs[0].attempts = 1;
  ASSERT_TRUE(store->Update(subs[0]));
  // bounded: a checkpoint of ~2500 pages takes milliseconds
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (size_of(path) < file_before + 400 * 1024 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_GE(size_of(path), file_before + 400 * 1024) << "the WAL was not copied into the file";
  EXPECT_EQ(store->Get("s7")->state_reason, "Priority" + std::to_string(round - 1));

  // the last connection to close checkpoints the rest and removes the WAL
  store.reset();
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  auto reopened = OpenFile(path);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->Get("s199")->state_reason, "Priority" + std::to_string(round - 1));
  EXPECT_EQ(reopened->Get("s0")->attempts, 1);
}

TEST_F(StoreTest, WritesWithoutDiskSyncAreKeptAcrossReopenAndAreAllOrNothingToo) {
  const std::string path = dir_.File("state.db");
  Submission a = Intent("a"), b = Intent("b"), c = Intent("c");
  Record r{.kind = "agent", .name = "c", .cloud = "c1", .doc = "{}"};
  {
    auto store = OpenFile(path);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Add(a));
    ASSERT_TRUE(store->Add(b));
    std::vector<Submission*> added = {&c};
    std::vector<std::pair<Record*, std::optional<Event>>> records = {{&r, Ev("planned", "c")}};
    ASSERT_TRUE(store->AddMany(added, records, Sync::kProcess));
    Submission taken = Intent("a");
    std::vector<Submission*> again = {&taken};
    std::vector<std::pair<Record*, std::optional<Event>>> none;
    EXPECT_EQ(store->AddMany(again, none, Sync::kProcess).error().code, Code::kConflict);
    a.phase = Phase::kPending;
    std::vector<std::pair<Submission*, std::optional<Event>>> seen = {{&a, Ev("state", "pending")}};
    ASSERT_TRUE(store->UpdateMany(seen, Sync::kProcess));

    Submission stale = b;
    b.attempts = 2;
    ASSERT_TRUE(store->Update(b));
    stale.phase = Phase::kRunning;
    a.phase = Phase::kRunning;
    std::vector<std::pair<Submission*, std::optional<Event>>> racing = {{&a, std::nullopt},
                                                                        {&stale, std::nullopt}};
    auto refused = store->UpdateMany(racing, Sync::kProcess);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, Code::kConflict);
    a.phase = Phase::kPending;
    // and the next write, synced, goes through as ever
    b.phase = Phase::kCancelled;
    ASSERT_TRUE(store->Update(b, Ev("state", "cancelled")));
  }
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  EXPECT_EQ(Fields(*store->Get("a")), Fields(a));
  EXPECT_EQ(Fields(*store->Get("b")), Fields(b));
  EXPECT_EQ(Fields(*store->Get("c")), Fields(c));
  EXPECT_TRUE(store->GetRecord("agent", "c"));
  EXPECT_EQ(store->Events("a", 0, 0)->back().message, "pending");
}

TEST_F(StoreTest, StatePersistsAcrossReopen) {
  const std::string path = dir_.File("state.db");
  Submission s = Full("run-7");
  int64_t event_id = 0;
  {
    auto store = OpenFile(path);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Add(s));
    s.phase = Phase::kCompleting;
    ASSERT_TRUE(store->Update(s, Ev("state", "completing")));
    ASSERT_TRUE(store->SetMeta("cursor", "1700000000"));
    event_id = *store->AppendEvent("run-7", "warn", "last");
  }
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  auto got = store->Get("run-7");
  ASSERT_TRUE(got);
  EXPECT_EQ(Fields(*got), Fields(s));
  EXPECT_EQ(*store->GetMeta("cursor"), "1700000000");
  auto events = store->Events("run-7", 0, 0);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ(events->back().id, event_id);
  // New ids continue after the old ones.
  EXPECT_GT(*store->AppendEvent("run-7", "warn", "next"), event_id);
}

TEST_F(StoreTest, FileIsWalAndOwnerOnly) {
  const std::string path = dir_.File("state.db");
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  Submission s = Intent("run-7");
  ASSERT_TRUE(store->Add(s));

  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ModeOf(path + "-wal"), 0600u);
  EXPECT_EQ(ModeOf(path + ".lock"), 0600u);
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.Scalar("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.Scalar("PRAGMA user_version"), std::to_string(Store::SchemaVersion()));
  // WAL readers see committed writes while the store is open.
  EXPECT_EQ(raw.Scalar("SELECT phase FROM submissions WHERE key = 'run-7'"), "intent");
}

TEST_F(StoreTest, AStateFileOthersMayReadIsMadePrivate) {
  const std::string path = dir_.File("restored.db");
  ASSERT_TRUE(OpenFile(path));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(OpenFile(path));
  EXPECT_EQ(ModeOf(path), 0600u);
  // a -wal file others may read, beside a private database: each file is looked at
  std::ofstream(path + "-wal").flush();
  ASSERT_EQ(::chmod((path + "-wal").c_str(), 0644), 0);
  auto store = OpenFile(path);  // SQLite removes the -wal file when the last store closes
  ASSERT_TRUE(store);
  EXPECT_EQ(ModeOf(path + "-wal"), 0600u);
}

TEST_F(StoreTest, SecondOpenInTheSameProcessConflicts) {
  const std::string path = dir_.File("state.db");
  auto first = OpenFile(path);
  ASSERT_TRUE(first);
  auto second = Store::Open(path, clock_);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, Code::kConflict);
  EXPECT_EQ(second.error().message,
            "state file " + path + " is in use by another slurmfleet (pid " +
                std::to_string(::getpid()) + "); stop it or use another state file");
  first.reset();
  EXPECT_TRUE(OpenFile(path));  // the lock went with the first store
}

TEST_F(StoreTest, OpenFromAForkedChildConflicts) {
  const std::string path = dir_.File("state.db");
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // No gtest assertions and no destructors here: _exit reports the outcome.
    auto second = Store::Open(path, clock_);
    bool ok = !second && second.error().code == Code::kConflict &&
              second.error().message.find(path) != std::string::npos;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The parent's store is unaffected.
  Submission s = Intent("after");
  EXPECT_TRUE(store->Add(s));
}

TEST_F(StoreTest, LockDiesWithAKilledHolder) {
  const std::string path = dir_.File("state.db");
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    auto store = Store::Open(path, clock_);
    char ready = 'E';
    if (store) {
      Submission s = Intent("from-child");
      if ((*store)->Add(s)) ready = 'R';
    }
    [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], &ready, 1);
    while (true) ::pause();  // until SIGKILL
  }
  ::close(pipe_fds[1]);
  char ready = 0;
  ASSERT_EQ(::read(pipe_fds[0], &ready, 1), 1);
  ::close(pipe_fds[0]);
  ASSERT_EQ(ready, 'R');

  auto held = Store::Open(path, clock_);
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().code, Code::kConflict);
  EXPECT_NE(held.error().message.find("(pid " + std::to_string(child) + ")"), std::string::npos)
      << held.error().message;

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->Get("from-child"));  // committed before the kill, so it survived it
}

TEST_F(StoreTest, MigratesAFileAtVersionOne) {
  const std::string path = dir_.File("state.db");
  ASSERT_GE(Store::SchemaVersion(), 2);
  {
    RawDb raw(path);
    raw.Exec(std::string(Migrations()[0].sql));
    raw.Exec("PRAGMA user_version = 1");
    raw.Exec(
        "INSERT INTO submissions VALUES ('old', 'run', 'c1', 'o', '{}', 'pending', 1, 17, '', "
        "'PENDING', 'Priority', '', 0, 100, 101, 99, 101, 4)");
    raw.Exec("INSERT INTO events (key, at, type, message) VALUES ('old', 100, 'intent', 'm')");
    raw.Exec("INSERT INTO meta VALUES ('cursor', '101')");
  }
  for (int open = 0; open < 2; ++open) {  // the second open finds nothing to do
    auto store = OpenFile(path);
    ASSERT_TRUE(store);
    auto got = store->Get("old");
    ASSERT_TRUE(got) << got.error().ToString();
    EXPECT_EQ(got->phase, Phase::kPending);
    EXPECT_EQ(got->job_id, 17u);
    EXPECT_EQ(got->version, 4);
    EXPECT_EQ(got->request_json, "{}");  // moved to its own table by step 4
    EXPECT_EQ(*store->GetMeta("cursor"), "101");
    EXPECT_EQ(store->Events("old", 0, 0)->size(), 1u);
    store.reset();

    RawDb raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.Scalar("PRAGMA user_version"), std::to_string(Store::SchemaVersion()));
    EXPECT_EQ(
        raw.Scalar("SELECT count(*) FROM sqlite_master WHERE name = 'submissions_by_created'"),
        "1");
    EXPECT_EQ(raw.Scalar("SELECT count(*) FROM pragma_table_info('submissions') WHERE name = "
                         "'request_json'"),
              "0");
  }
}

TEST_F(StoreTest, MigratesEventsIntoStreamsKeepingEachKeysOrder) {
  const std::string path = dir_.File("state.db");
  ASSERT_GE(Store::SchemaVersion(), 5);
  {
    RawDb raw(path);
    for (int step = 0; step < 4; ++step) raw.Exec(std::string(Migrations()[step].sql));
    raw.Exec("PRAGMA user_version = 4");
    raw.Exec(
        "INSERT INTO events (key, at, type, message) VALUES ('b', 1, 'intent', 'b1'), "
        "('a', 2, 'intent', 'a1'), ('b', 3, 'submitted', 'b2'), ('a', 4, 'submitted', 'a2')");
  }
  auto store = OpenFile(path);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AppendEvent("a", "info", "a3"));
  ASSERT_TRUE(store->AppendEvent("c", "info", "c1"));
  auto messages = [&](const std::string& key, int64_t after) {
    std::vector<std::string> out;
    auto events = store->Events(key, after, 0);
    EXPECT_TRUE(events) << events.error().ToString();
    if (events) {
      for (const Event& e : *events) out.push_back(e.key + ":" + e.message);
    }
    return out;
  };
  EXPECT_EQ(messages("a", 0), (std::vector<std::string>{"a:a1", "a:a2", "a:a3"}));
  EXPECT_EQ(messages("a", 2), (std::vector<std::string>{"a:a2", "a:a3"}));
  EXPECT_EQ(messages("b", 0), (std::vector<std::string>{"b:b1", "b:b2"}));
  EXPECT_EQ(messages("c", 0), (std::vector<std::string>{"c:c1"}));
  EXPECT_TRUE(messages("never", 0).empty());
  EXPECT_EQ(messages("", 4), (std::vector<std::string>{"a:a3", "c:c1"}));
  store.reset();

  RawDb raw(path, SQLITE_OPEN_READONLY);
  // streams are numbered in order of each key's first event
  EXPECT_EQ(raw.Scalar("SELECT group_concat(key, ',') FROM (SELECT key FROM streams ORDER BY id)"),
            "b,a,c");
  EXPECT_EQ(raw.Scalar("SELECT count(*) FROM sqlite_master WHERE name = 'events_by_key'"), "0");
  // a key's events are read through the index, not by scanning every event
  EXPECT_EQ(raw.Scalar("EXPLAIN QUERY PLAN SELECT id, key, at, type, message FROM events WHERE id "
                       "> 0 AND stream = (SELECT id FROM streams WHERE key = 'a') ORDER BY id",
                       3),
            "SEARCH events USING INDEX events_by_stream (stream=? AND id>?)");
}

TEST_F(StoreTest, MigrationStepsAreNumberedInOrder) {
  auto steps = Migrations();
  ASSERT_FALSE(steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].version, static_cast<int>(i) + 1);
  EXPECT_EQ(Store::SchemaVersion(), steps.back().version);
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  const std::string path = dir_.File("state.db");
  {
    auto store = OpenFile(path);
    ASSERT_TRUE(store);
  }
  {
    RawDb raw(path);
    raw.Exec("PRAGMA user_version = " + std::to_string(Store::SchemaVersion() + 1));
  }
  auto store = Store::Open(path, clock_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, Code::kConflict);
  EXPECT_NE(store.error().message.find(path), std::string::npos);
  EXPECT_NE(store.error().message.find("newer than this build"), std::string::npos)
      << store.error().message;
}

TEST_F(StoreTest, AFileThatIsNotADatabaseIsAnErrorNamingIt) {
  const std::string path = dir_.File("state.db");
  {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    std::string junk(4096, 'x');
    ASSERT_EQ(::write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
    ::close(fd);
  }
  auto store = Store::Open(path, clock_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, Code::kInternal);
  EXPECT_EQ(store.error().where, path);
  EXPECT_FALSE(store.error().message.empty());
}

TEST_F(StoreTest, AMissingDirectoryIsAnErrorNamingTheFile) {
  const std::string path = dir_.File("no-such-dir/state.db");
  auto store = Store::Open(path, clock_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, Code::kInternal);
  EXPECT_EQ(store.error().where, path);
}

TEST_F(StoreTest, EmptyPathIsInvalid) {
  auto store = Store::Open("", clock_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, Code::kInvalidInput);
}

TEST_F(StoreTest, AddManyWithRecordsWritesBothOrNeither) {
  Submission s = Intent("with-record");
  Record r{.kind = "agent", .name = "with-record", .cloud = "c", .doc = "{}"};
  std::vector<Submission*> subs = {&s};
  std::vector<std::pair<Record*, std::optional<Event>>> records = {
      {&r, Event{0, "", 0, "planned", "node made"}}};
  ASSERT_TRUE(store_->AddMany(subs, records));
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(r.version, 1);
  EXPECT_TRUE(store_->Get("with-record"));
  EXPECT_TRUE(store_->GetRecord("agent", "with-record"));

  // the record clashes (stale version): the new submission is not written either
  Submission t = Intent("not-written");
  Record stale = r;
  stale.version = 7;
  std::vector<Submission*> more = {&t};
  std::vector<std::pair<Record*, std::optional<Event>>> clash = {{&stale, std::nullopt}};
  Status failed = store_->AddMany(more, clash);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, Code::kConflict);
  EXPECT_FALSE(store_->Get("not-written"));
  EXPECT_EQ(t.version, 0);
}

}  // namespace
}  // namespace slurmfleet::store

namespace slurmfleet::store {
namespace {

TEST_F(StoreTest, AddManyIsAllOrNothing) {
  Submission a = Intent("a"), b = Intent("b");
  std::vector<Submission*> both = {&a, &b};
  ASSERT_TRUE(store_->AddMany(both));
  EXPECT_EQ(a.version, 1);
  EXPECT_EQ(b.version, 1);
  EXPECT_EQ(store_->Events("", 0, 0)->size(), 2u);  // one intent event each

  Submission c = Intent("c"), again = Intent("a");
  std::vector<Submission*> clash = {&c, &again};
  auto added = store_->AddMany(clash);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().code, Code::kConflict);
  EXPECT_NE(added.error().message.find("'a'"), std::string::npos);
  EXPECT_FALSE(store_->Get("c")) << "rolled back with the clash";
  EXPECT_EQ(c.version, 0);
}

TEST_F(StoreTest, RecordsInsertUpdateAndConflict) {
  Record r{.kind = "agent", .name = "x", .cloud = "c", .doc = R"({"a":1})"};
  ASSERT_TRUE(store_->PutRecord(r, Event{0, "", 0, "planned", "p"}));
  EXPECT_EQ(r.version, 1);
  Record stale = r;
  r.doc = R"({"a":2})";
  r.active = false;
  ASSERT_TRUE(store_->PutRecord(r));
  EXPECT_EQ(r.version, 2);
  auto got = store_->GetRecord("agent", "x");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->doc, R"({"a":2})");
  EXPECT_FALSE(got->active);
  EXPECT_EQ(store_->PutRecord(stale).error().code, Code::kConflict);
  Record dup{.kind = "agent", .name = "x", .cloud = "c", .doc = "{}"};
  EXPECT_EQ(store_->PutRecord(dup).error().code, Code::kConflict);
  EXPECT_EQ(store_->GetRecord("agent", "nope").error().code, Code::kNotFound);
  EXPECT_EQ(store_->ListRecords("agent", true)->size(), 0u);
  EXPECT_EQ(store_->ListRecords("agent", false)->size(), 1u);
  auto events = store_->Events("x", 0, 0);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "planned");
}

TEST_F(StoreTest, PutRecordsIsAllOrNothing) {
  Record a{.kind = "agent", .name = "a", .cloud = "c", .doc = "{}"};
  Record b{.kind = "agent", .name = "b", .cloud = "c", .doc = "{}"};
  std::vector<std::pair<Record*, std::optional<Event>>> both = {{&a, std::nullopt},
                                                                {&b, std::nullopt}};
  ASSERT_TRUE(store_->PutRecords(both));
  Record c{.kind = "agent", .name = "c", .cloud = "c", .doc = "{}"};
  Record stale_a = a;
  stale_a.version = 7;
  std::vector<std::pair<Record*, std::optional<Event>>> clash = {
      {&c, Event{0, "", 0, "planned", "c"}}, {&stale_a, std::nullopt}};
  ASSERT_FALSE(store_->PutRecords(clash));
  EXPECT_FALSE(store_->GetRecord("agent", "c"));
  EXPECT_EQ(c.version, 0);
  EXPECT_TRUE(store_->Events("c", 0, 0)->empty());
}

}  // namespace
}  // namespace slurmfleet::store
