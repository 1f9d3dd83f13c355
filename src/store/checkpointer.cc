#include "store/checkpointer.h"

#include <sqlite3.h>

#include <utility>

namespace slurmfleet::store {

Result<std::unique_ptr<Checkpointer>> Checkpointer::Start(const std::string& path) {
  auto conn = sqlite::Connection::Open(path);
  if (!conn) return std::unexpected(std::move(conn.error()));
  // A connection finds the WAL when it first reads; until then a checkpoint does nothing.
  if (auto read = (*conn)->Exec("PRAGMA schema_version", "read the state file"); !read) {
    return std::unexpected(std::move(read.error()));
  }
  return std::unique_ptr<Checkpointer>(new Checkpointer(std::move(*conn)));
}

Checkpointer::Checkpointer(std::unique_ptr<sqlite::Connection> conn)
    : conn_(std::move(conn)), thread_([this] { Serve(); }) {}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wanted_.notify_all();
  thread_.join();
}

void Checkpointer::Request() {
  {
    std::lock_guard lock(mu_);
    requested_ = true;
  }
  wanted_.notify_all();
}

uint64_t Checkpointer::completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

void Checkpointer::Serve() {
  std::unique_lock lock(mu_);
  while (true) {
    wanted_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_) return;
    requested_ = false;
    lock.unlock();
    // PASSIVE, as SQLite's automatic one: it never waits for readers or the writer, and what
    // they still use is copied by a later one. A failure (busy, I/O) leaves the log to grow
    // until the next request; the Store's writes do not depend on it.
    sqlite3_wal_checkpoint_v2(conn_->handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                              nullptr);
    lock.lock();
    ++completed_;
  }
}

}  // namespace slurmfleet::store
