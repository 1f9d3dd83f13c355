#include "store/sqlite.h"

#include <sqlite3.h>

#include <string>

namespace slurmfleet::store::sqlite {

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path) {
  sqlite3* db = nullptr;
  // NOMUTEX: the Store serializes every call with its own mutex, so SQLite's would be redundant.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open state file: ";
    message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);  // a handle is returned even on failure; closing null is harmless
    return Fail(Code::kInternal, std::move(message), path);
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Connection>(new Connection(path, db));
}

Connection::~Connection() {
  cache_.clear();  // statements first: sqlite3_close refuses while any is unfinalized
  sqlite3_close(db_);
}

void Connection::StmtFinalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

Status Connection::Exec(std::string_view sql, std::string_view op) {
  std::string text(sql);
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(ErrorFor(rc, op));
  return {};
}

Result<Query> Connection::Prepare(std::string_view sql, std::string_view op) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return std::unexpected(ErrorFor(rc, op));
    }
    it = cache_.emplace(std::string(sql), std::unique_ptr<sqlite3_stmt, StmtFinalizer>(stmt)).first;
  }
  return Query(this, it->second.get(), op);
}

Error Connection::ErrorFor(int rc, std::string_view op) const {
  Code code = Code::kInternal;
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) code = Code::kUnavailable;
  std::string message(op);
  message += ": ";
  // sqlite3_errmsg describes the most recent failing call on this connection; use it only when
  // it is about this rc (bind errors, for one, do not always set it).
  if (sqlite3_extended_errcode(db_) == rc) {
    message += sqlite3_errmsg(db_);
  } else {
    message += sqlite3_errstr(rc);
  }
  message += " (sqlite code " + std::to_string(rc) + ")";
  return Error{code, std::move(message), path_};
}

int64_t Connection::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }

int Connection::Changes() const { return sqlite3_changes(db_); }

Query::Query(Query&& other) noexcept
    : conn_(other.conn_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      op_(std::move(other.op_)),
      bind_rc_(other.bind_rc_),
      last_rc_(other.last_rc_) {}

Query::~Query() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Query::Check(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Query& Query::Bind(int index, int64_t value) {
  Check(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Query& Query::Bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies, so the caller's string may die before Step.
  Check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Query& Query::BindRef(int index, std::string_view value) {
  // SQLITE_STATIC: valid until the statement is reset or rebound, which ~Query does
  Check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8));
  return *this;
}

Query& Query::BindNull(int index) {
  Check(sqlite3_bind_null(stmt_, index));
  return *this;
}

Result<bool> Query::Step() {
  if (bind_rc_ != SQLITE_OK) {
    last_rc_ = bind_rc_;
    return std::unexpected(conn_->ErrorFor(bind_rc_, op_));
  }
  last_rc_ = sqlite3_step(stmt_);
  if (last_rc_ == SQLITE_ROW) return true;
  if (last_rc_ == SQLITE_DONE) return false;
  return std::unexpected(conn_->ErrorFor(last_rc_, op_));
}

Status Query::Run() {
  auto row = Step();
  if (!row) return std::unexpected(std::move(row.error()));
  if (*row) return Fail(Code::kInternal, op_ + ": statement returned a row", conn_->path());
  return {};
}

bool Query::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

int64_t Query::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Query::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  int size = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

Result<Transaction> Transaction::Begin(Connection& conn, std::string_view op) {
  auto begin = conn.Prepare("BEGIN IMMEDIATE", op);
  if (!begin) return std::unexpected(std::move(begin.error()));
  if (auto ran = begin->Run(); !ran) return std::unexpected(std::move(ran.error()));
  return Transaction(&conn);
}

Status Transaction::Commit(std::string_view op) {
  auto commit = conn_->Prepare("COMMIT", op);
  if (!commit) return std::unexpected(std::move(commit.error()));
  // On failure (e.g. SQLITE_BUSY, SQLITE_FULL) the transaction may still be open; the
  // destructor rolls it back.
  if (auto ran = commit->Run(); !ran) return std::unexpected(std::move(ran.error()));
  conn_ = nullptr;
  return {};
}

Transaction::~Transaction() {
  if (conn_ == nullptr) return;
  // If SQLite already rolled back on its own (some I/O errors do), ROLLBACK fails with "no
  // transaction is active"; either way nothing of this transaction remains, so it is ignored.
  if (sqlite3_get_autocommit(conn_->handle()) == 0) {
    sqlite3_exec(conn_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

}  // namespace slurmfleet::store::sqlite
