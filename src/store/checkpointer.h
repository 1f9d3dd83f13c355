// Checkpointer: copies a WAL-mode database's log back into its file (a PASSIVE checkpoint) on a
// thread and connection of its own, when asked. A checkpoint writes up to the whole log into the
// file and syncs both: 12-65 ms on the testbed. Run by the writer whose commit crossed the
// threshold, it held the Store's one lock all that time, and every write of the other threads
// (the engine's, the provisioner's) waited behind it. Here the writer only asks; the checkpoint
// runs while writers go on appending to the log.
//
// Thread safety: Request() may be called from any thread, also from inside SQLite's WAL hook of
// another connection. The destructor stops and joins the thread and closes its connection.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/error.h"
#include "store/sqlite.h"

namespace slurmfleet::store {

class Checkpointer {
 public:
  // Opens its own connection to `path`, a database already in WAL mode, and starts its thread.
  // kInternal naming the file when the connection cannot be opened.
  static Result<std::unique_ptr<Checkpointer>> Start(const std::string& path);
  ~Checkpointer();

  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Asks for a checkpoint and returns at once. Requests made while one is waiting are one; a
  // request made while one runs gets another after it.
  void Request();

  // Checkpoints run to their end so far (complete or not: PASSIVE copies what no reader needs).
  uint64_t completed() const;

 private:
  explicit Checkpointer(std::unique_ptr<sqlite::Connection> conn);
  void Serve();

  std::unique_ptr<sqlite::Connection> conn_;  // the thread's alone
  mutable std::mutex mu_;
  std::condition_variable wanted_;
  bool requested_ = false;  // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  uint64_t completed_ = 0;  // guarded by mu_
  std::thread thread_;      // last: started when everything above is set
};

}  // namespace slurmfleet::store
