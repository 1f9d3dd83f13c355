// Store: the daemon's durable state in one SQLite file (WAL): submissions, their events, and a
// small key-value table for cursors. Schema migrations run on Open, from the first version on.
// Only one process may have a state file open: Open fails with kConflict, naming the file, when
// another instance holds it.
//
// Thread safety: all methods may be called from any thread (one connection, serialized by a
// mutex). Writes are on disk when the call returns (the WAL is synced after the commit, outside
// the mutex, so a disk sync never holds up the other threads), unless the caller asks for
// Sync::kProcess where it may.
//
// Errors: every SQLite failure comes back as an Error whose `where` is the file's path and whose
// message names the operation ("update submission 'run-7': disk I/O error ..."); kUnavailable
// when SQLite reports the file busy (someone else's write transaction outlasted the short busy
// timeout: back off), kInternal otherwise. Nothing throws. A failed write leaves both the file
// and the caller's Submission unchanged; the one exception is a failed disk sync after the
// commit (an I/O error of the disk), whose error says that the write took effect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "store/submission.h"

namespace slurmfleet::store {

struct ListFilter {
  bool active_only = false;  // only non-terminal phases
  std::string cloud;         // empty: every cloud
  std::string kind;          // empty: every kind
  size_t limit = 0;          // 0: no limit; newest first when limited
  bool requests = true;      // false: request_json is left empty, and the requests are not read
};

// What PruneHistory removed.
struct PruneCounts {
  int64_t keys = 0;  // keys whose whole history went
  int64_t submissions = 0;
  int64_t records = 0;
  int64_t events = 0;
  bool operator==(const PruneCounts&) const = default;
};

// How durable a write is when the call returns.
enum class Sync {
  kDisk,     // on disk: survives a power loss or an OS crash (fdatasync of the WAL per write)
  kProcess,  // survives this process dying (kill -9), not a power loss: for state whose loss
             // the daemon recovers from after a restart (observed again from Slurm, or cleaned
             // up as an orphan). A later kDisk write syncs it too.
};

class Store {
 public:
  // Opens (creating if needed, mode 0600) and migrates the state file; ":memory:" for tests
  // (no lock, no WAL, gone on close). `clock` stamps every write and must outlive the Store.
  // kConflict when another process (or another Store in this process) holds the file: the
  // message names the file and, when known, the holder's pid. kConflict too when the file's
  // schema is newer than this build knows. kInternal naming the file on SQLite errors.
  // Alongside the file live `<path>.lock` (the lock, holding the owner's pid; never deleted)
  // and SQLite's `<path>-wal` and `<path>-shm`.
  static Result<std::unique_ptr<Store>> Open(const std::string& path, const Clock& clock);
  ~Store();  // closes the file, then releases the lock

  // The state file's path as given to Open: the `where` of the store's own errors.
  const std::string& path() const;

  // Records a new intent and an "intent" event in one transaction. kConflict if the key exists.
  // Sets version to 1 and created_at/updated_at from the clock. kInvalidInput for an empty key.
  Status Add(Submission& submission);

  // Add for many intents in ONE transaction, all or nothing: on the first failure (kConflict
  // naming the key that exists) nothing is written and no submission is changed.
  Status AddMany(std::vector<Submission*>& submissions);
  // AddMany, and `records` written as PutRecords writes them, in the same ONE transaction (one
  // disk sync, unless Sync::kProcess): a caller's own state goes to disk together with the
  // intents it made. All or nothing, for both.
  Status AddMany(std::vector<Submission*>& submissions,
                 std::vector<std::pair<Record*, std::optional<Event>>>& records,
                 Sync sync = Sync::kDisk);

  // kNotFound for an unknown key.
  Result<Submission> Get(const std::string& key) const;

  // Unlimited: oldest first, by created_at then key. Limited: the `limit` newest, newest first
  // (created_at then key, both descending).
  Result<std::vector<Submission>> List(const ListFilter& filter) const;

  // Test-and-set: writes `submission` only if the stored version equals submission.version, then
  // bumps submission.version and updated_at. kConflict (nothing written) when the stored version
  // differs; kNotFound for an unknown key. `event`, when given, is appended in the same
  // transaction. created_at and request_json never change after Add: an Update leaves the stored
  // request as it is, whatever submission.request_json holds (a caller done submitting may drop
  // its copy). The event's id, key (submission.key) and at (now) are set by the store; only its
  // type and message are used.
  Status Update(Submission& submission, const std::optional<Event>& event = std::nullopt);

  // Update for many submissions in ONE transaction, all or nothing, with the same per-item
  // test-and-set and event semantics. On success every submission's version and updated_at are
  // bumped. On the first failure everything is rolled back, no submission is changed, and that
  // item's error is returned (kConflict or kNotFound naming its key). A key may appear at most
  // once: a repeat conflicts with its own earlier write. kInvalidInput for a null pointer. An
  // empty batch is success.
  Status UpdateMany(std::vector<std::pair<Submission*, std::optional<Event>>>& updates,
                    Sync sync = Sync::kDisk);

  // Appends an event (its id and `at` are set by the store) and returns its id. `key` need not
  // name a submission: the engine also records what it did to orphan jobs carrying our tag.
  Result<int64_t> AppendEvent(const std::string& key, const std::string& type,
                              const std::string& message);

  // Events with id > after_id, oldest first, at most `limit` (0: no limit); for one key, or every
  // key when `key` is empty. Start with after_id = 0; continue from the last id returned.
  Result<std::vector<Event>> Events(const std::string& key, int64_t after_id, size_t limit) const;

  // The id of the newest event, 0 when there is none: where a follower of Events() starts.
  Result<int64_t> LastEventId() const;

  // Writes a record. version 0: inserts it (kConflict if kind/name exists); otherwise test-and-set
  // as Update() does (kConflict when the stored version differs, kNotFound when it is gone).
  // `event`, when given, is appended under the record's name in the same transaction. On success
  // version, created_at and updated_at are set.
  Status PutRecord(Record& record, const std::optional<Event>& event = std::nullopt);

  // PutRecord for many records in ONE transaction, all or nothing: on the first failure nothing
  // is written and no record is changed. A name may appear at most once.
  Status PutRecords(std::vector<std::pair<Record*, std::optional<Event>>>& records);

  // kNotFound for an unknown kind/name.
  Result<Record> GetRecord(const std::string& kind, const std::string& name) const;

  // The records of `kind`, oldest first; only active ones when `active_only`.
  Result<std::vector<Record>> ListRecords(const std::string& kind, bool active_only) const;

  // Removes the whole history of every key that has shown no sign of life since `before` (unix
  // seconds): its submission (with its request) if that is terminal and was last written before,
  // its records if each is inactive and was last written before, and its events if each is older.
  // A key with a live submission, an active record, or a newer event keeps everything: a
  // long-lived agent's history is never cut in the middle. Works through the keys in order of
  // their first event, and stops at the first key whose first event is not older (keys first seen
  // later cannot be older), 64 keys per transaction with a millisecond's pause after each, so
  // that other threads' writes go between them. Then removes inactive records older than `before`
  // that never had an event.
  Result<PruneCounts> PruneHistory(int64_t before);

  // Small durable values (e.g. the tracker's update_time cursor). SetMeta overwrites; GetMeta
  // returns nullopt for a name never set.
  Status SetMeta(const std::string& name, const std::string& value);
  Result<std::optional<std::string>> GetMeta(const std::string& name) const;

  // The schema version this build writes (for `slurmfleet version` and tests).
  static int SchemaVersion();

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace slurmfleet::store
