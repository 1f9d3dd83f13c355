// HistoryPruner: keeps the state file from growing without end. A daemon records about five
// events per job and keeps every ended submission; over months of CI agents that is millions of
// rows. On a thread of its own, a while after the daemon starts and then every `interval`, it
// removes the history of keys that showed no sign of life for `keep` (Store::PruneHistory).
//
// Thread safety: RunOnce may be called from any thread. The destructor stops and joins the thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "base/clock.h"
#include "store/store.h"

namespace slurmfleet::store {

struct HistoryPrunerOptions {
  std::chrono::seconds keep{std::chrono::hours(24 * 30)};
  std::chrono::milliseconds first_delay{std::chrono::minutes(5)};  // after start-up's own work
  std::chrono::milliseconds interval{std::chrono::hours(1)};
  // Told what a run removed (when it removed anything) or why it failed.
  std::function<void(std::string_view)> log;
};

class HistoryPruner {
 public:
  // Starts the thread. `store` and `clock` must outlive the pruner.
  HistoryPruner(Store& store, const Clock& clock, HistoryPrunerOptions options);
  ~HistoryPruner();

  HistoryPruner(const HistoryPruner&) = delete;
  HistoryPruner& operator=(const HistoryPruner&) = delete;

  // Removes, now, the history older than `keep` by the clock, and says so through `log`.
  Result<PruneCounts> RunOnce();

  // Runs of the thread so far, finished or failed.
  uint64_t runs() const;

 private:
  void Serve();

  Store& store_;
  const Clock& clock_;
  const HistoryPrunerOptions options_;
  mutable std::mutex mu_;
  std::condition_variable stop_wanted_;
  bool stopping_ = false;  // guarded by mu_
  uint64_t runs_ = 0;      // guarded by mu_
  std::thread thread_;     // last: started when everything above is set
};

}  // namespace slurmfleet::store
