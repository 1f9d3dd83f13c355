#include "store/history_pruner.h"

#include <fmt/format.h>

namespace slurmfleet::store {

HistoryPruner::HistoryPruner(Store& store, const Clock& clock, HistoryPrunerOptions options)
    : store_(store), clock_(clock), options_(std::move(options)), thread_([this] { Serve(); }) {}

HistoryPruner::~HistoryPruner() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_wanted_.notify_all();
  thread_.join();
}

Result<PruneCounts> HistoryPruner::RunOnce() {
  const int64_t now = UnixSeconds(clock_);
  const int64_t keep = options_.keep.count();
  const std::string span =
      keep % 86400 == 0 ? fmt::format("{} days", keep / 86400) : fmt::format("{} s", keep);
  Result<PruneCounts> pruned = store_.PruneHistory(now - keep);
  if (!options_.log) return pruned;
  if (!pruned) {
    options_.log("warning: removing the history idle for over " + span +
                 " failed (tried again at the next run): " + pruned.error().ToString());
  } else if (pruned->keys > 0 || pruned->records > 0) {
    options_.log(fmt::format(
        "removed the history idle for over {} (keys {}, submissions {}, records {}, events {})",
        span, pruned->keys, pruned->submissions, pruned->records, pruned->events));
  }
  return pruned;
}

uint64_t HistoryPruner::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

void HistoryPruner::Serve() {
  std::chrono::milliseconds wait = options_.first_delay;
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (stop_wanted_.wait_for(lock, wait, [this] { return stopping_; })) return;
    }
    (void)RunOnce();
    std::lock_guard lock(mu_);
    ++runs_;
    wait = options_.interval;
  }
}

}  // namespace slurmfleet::store
