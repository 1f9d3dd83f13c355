// The store's schema as an ordered list of steps, and the code that applies them. Step N takes a
// file from PRAGMA user_version N-1 to N; a new file starts at 0 and gets every step. Steps are
// append-only: once released, a step is never edited, only followed by another.
//
// Thread safety: none; called by Store::Open before the Store is shared.
#pragma once

#include <span>
#include <string_view>

#include "base/error.h"
#include "store/sqlite.h"

namespace slurmfleet::store {

struct Migration {
  int version;           // user_version after this step
  std::string_view sql;  // one or more statements; no BEGIN/COMMIT (Migrate wraps each step)
};

// Every step, oldest first; Migrations().back().version is the version this build writes.
std::span<const Migration> Migrations();

// Applies each step above the file's user_version, each in its own transaction that also sets
// user_version, so a crash leaves the file at the last complete step. A file already at the
// newest version is left alone. kConflict, naming the file and both versions, when the file's
// version is newer than this build knows: an older slurmfleet must not write a newer schema.
Status Migrate(sqlite::Connection& conn);

// The file's PRAGMA user_version.
Result<int> UserVersion(sqlite::Connection& conn);

}  // namespace slurmfleet::store
