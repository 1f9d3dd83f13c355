#include "store/migrations.h"

#include <string>

namespace slurmfleet::store {
namespace {

// STRICT tables (SQLite >= 3.37) reject a value of the wrong type instead of storing it quietly.
// Phases are stored by name (PhaseName), so the file reads well in the sqlite3 shell and does not
// depend on the enum's order.
constexpr std::string_view kStep1 = R"sql(
CREATE TABLE submissions (
  key              TEXT NOT NULL PRIMARY KEY,
  kind             TEXT NOT NULL,
  cloud            TEXT NOT NULL,
  owner            TEXT NOT NULL,
  request_json     TEXT NOT NULL,
  phase            TEXT NOT NULL,
  attempts         INTEGER NOT NULL,
  job_id           INTEGER,
  sluid            TEXT NOT NULL,
  slurm_state      TEXT NOT NULL,
  state_reason     TEXT NOT NULL,
  failure          TEXT NOT NULL,
  cancel_requested INTEGER NOT NULL CHECK (cancel_requested IN (0, 1)),
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  submit_sent_at   INTEGER NOT NULL,
  last_seen_at     INTEGER NOT NULL,
  version          INTEGER NOT NULL
) STRICT;

-- AUTOINCREMENT: ids are never reused, even after the newest rows are gone, so they are safe as
-- a cursor.
CREATE TABLE events (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  key     TEXT NOT NULL,  -- no foreign key: orphan jobs (no submission) get events too
  at      INTEGER NOT NULL,
  type    TEXT NOT NULL,
  message TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_key ON events (key, id);

CREATE TABLE meta (
  name  TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
)sql";

// List orders by (created_at, key), both ways; without this index every List sorts the table.
constexpr std::string_view kStep2 = R"sql(
CREATE INDEX submissions_by_created ON submissions (created_at, key);
)sql";

// Records: small documents of the front ends (Jenkins agents, ephemeral templates), each a JSON
// object its owner (de)serializes; the store only indexes kind, name, cloud and liveness.
constexpr std::string_view kStep3 = R"sql(
CREATE TABLE records (
  kind       TEXT NOT NULL,
  name       TEXT NOT NULL,
  cloud      TEXT NOT NULL,
  active     INTEGER NOT NULL CHECK (active IN (0, 1)),
  doc        TEXT NOT NULL,
  version    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, name)
) STRICT;
CREATE INDEX records_by_activity ON records (kind, active, created_at, name);
)sql";

// A submission's request (a few KB: the batch script and its environment) is written once and
// read only to submit it, while tracking rewrites the submission's row at every state change, and
// SQLite rewrites a row whole: kept in the row, 10,000 changes would copy ~30 MB.
constexpr std::string_view kStep4 = R"sql(
CREATE TABLE requests (
  key          TEXT NOT NULL PRIMARY KEY,
  request_json TEXT NOT NULL
) STRICT;
INSERT INTO requests (key, request_json) SELECT key, request_json FROM submissions;
ALTER TABLE submissions DROP COLUMN request_json;
)sql";

// Events are found by their stream (a number given to each key at its first event, in order of
// first sight) instead of by key. Keys are random ("sf-" and 16 hex digits), so every event put an
// entry at a random place of an index by key: a pass writing 200 jobs' events dirtied about 200 of
// its pages, 7-30 us an event against about 3. Keys made together (a wave of submissions) get
// neighbouring streams, and their events land on a few pages at the index's end.
constexpr std::string_view kStep5 = R"sql(
CREATE TABLE streams (
  id  INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE
) STRICT;
ALTER TABLE events ADD COLUMN stream INTEGER NOT NULL DEFAULT 0;
INSERT INTO streams (key) SELECT key FROM events GROUP BY key ORDER BY MIN(id);
UPDATE events SET stream = (SELECT id FROM streams WHERE streams.key = events.key);
DROP INDEX events_by_key;
CREATE INDEX events_by_stream ON events (stream, id);
)sql";

// Records are found by name alone when a key's history is removed (a key names a submission, and
// the agent record of the same name): without this index each lookup read the whole table.
constexpr std::string_view kStep6 = R"sql(
CREATE INDEX records_by_name ON records (name);
)sql";

constexpr Migration kMigrations[] = {
    {1, kStep1}, {2, kStep2}, {3, kStep3}, {4, kStep4}, {5, kStep5}, {6, kStep6},
};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

Result<int> UserVersion(sqlite::Connection& conn) {
  auto query = conn.Prepare("PRAGMA user_version", "read schema version");
  if (!query) return std::unexpected(std::move(query.error()));
  auto row = query->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  if (!*row) return Fail(Code::kInternal, "read schema version: no row", conn.path());
  return static_cast<int>(query->Int(0));
}

Status Migrate(sqlite::Connection& conn) {
  auto current = UserVersion(conn);
  if (!current) return std::unexpected(std::move(current.error()));
  const int newest = kMigrations[std::size(kMigrations) - 1].version;
  if (*current > newest) {
    return Fail(Code::kConflict,
                "state file " + conn.path() + " has schema version " + std::to_string(*current) +
                    ", newer than this build knows (" + std::to_string(newest) +
                    "); run a newer slurmfleet or use another state file",
                conn.path());
  }
  for (const Migration& step : kMigrations) {
    if (step.version <= *current) continue;
    const std::string op = "migrate schema to version " + std::to_string(step.version);
    auto tx = sqlite::Transaction::Begin(conn, op);
    if (!tx) return std::unexpected(std::move(tx.error()));
    if (auto done = conn.Exec(step.sql, op); !done) return done;
    // user_version lives in the file header and changes inside the transaction, so the step and
    // its number commit together.
    if (auto done = conn.Exec("PRAGMA user_version = " + std::to_string(step.version), op); !done) {
      return done;
    }
    if (auto done = tx->Commit(op); !done) return done;
  }
  return {};
}

}  // namespace slurmfleet::store
