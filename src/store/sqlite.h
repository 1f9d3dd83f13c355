// A thin RAII layer over the SQLite C API, for the store only: a Connection that owns one
// sqlite3*, caches its prepared statements, and turns every result code into an Error naming the
// file and the operation; a Query that borrows one cached statement for one use; a Transaction
// that rolls back unless committed. Never throws.
//
// Thread safety: none. A Connection and everything borrowed from it is used by one thread at a
// time (the Store serializes with its mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace slurmfleet::store::sqlite {

class Query;

class Connection {
 public:
  // Opens `path` read-write, creating it if absent (SQLite's default mode; the Store creates the
  // file itself first when the mode matters). Extended result codes are on.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path);
  ~Connection();  // finalizes every cached statement, then closes the handle

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements that return no rows we need (DDL, pragmas). Not cached.
  Status Exec(std::string_view sql, std::string_view op);

  // Borrows the cached statement for `sql`, preparing it on first use. The Query resets the
  // statement when it is destroyed, so at most one Query per SQL text may be alive at a time.
  // `op` names the operation in errors ("update submission 'run-7'").
  Result<Query> Prepare(std::string_view sql, std::string_view op);

  // An Error for a failed call that returned `rc`: kUnavailable for SQLITE_BUSY/LOCKED (another
  // writer; back off), kInternal otherwise. The message carries sqlite3_errmsg when it is about rc.
  Error ErrorFor(int rc, std::string_view op) const;

  int64_t LastInsertRowid() const;
  int Changes() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  Connection(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  struct StmtFinalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };

  std::string path_;
  sqlite3* db_;
  std::map<std::string, std::unique_ptr<sqlite3_stmt, StmtFinalizer>, std::less<>> cache_;
};

// One use of a cached statement. Bind* are 1-based like SQLite's; a binding error is kept and
// returned by the next Step. Columns are 0-based and valid only after Step returned true.
class Query {
 public:
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;
  Query(const Query&) = delete;
  ~Query();  // resets the statement and clears its bindings

  Query& Bind(int index, int64_t value);
  Query& Bind(int index, std::string_view value);  // SQLite copies the text
  // Without a copy: SQLite reads the caller's text in place, which must stay alive and unchanged
  // until this Query is gone. For the rows a tracking pass writes by the ten thousand, where the
  // copies cost a third of the write.
  Query& BindRef(int index, std::string_view value);
  Query& BindNull(int index);

  // true: a row is ready; false: the statement is done. A constraint violation comes back as
  // kInternal with the extended code available from last_rc(), so callers can map it.
  Result<bool> Step();
  // Steps a statement that must not return rows.
  Status Run();

  int last_rc() const { return last_rc_; }
  bool IsNull(int column) const;
  int64_t Int(int column) const;
  std::string Text(int column) const;

 private:
  friend class Connection;
  Query(Connection* conn, sqlite3_stmt* stmt, std::string_view op)
      : conn_(conn), stmt_(stmt), op_(op) {}
  void Check(int rc);

  Connection* conn_;
  sqlite3_stmt* stmt_;
  std::string op_;
  int bind_rc_ = 0;  // SQLITE_OK
  int last_rc_ = 0;
};

// BEGIN IMMEDIATE on construction (Begin), ROLLBACK on destruction unless Commit succeeded.
// IMMEDIATE takes the write lock up front, so a transaction never fails half-way on an upgrade.
class Transaction {
 public:
  static Result<Transaction> Begin(Connection& conn, std::string_view op);
  Transaction(Transaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit(std::string_view op);

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}
  Connection* conn_;  // null once committed or rolled back
};

}  // namespace slurmfleet::store::sqlite
