// RunReleased: work(0) ... work(n - 1), up to `width` calls at a time, on the calling thread and
// width - 1 helper threads, for work that its caller releases while it runs: work(i) starts once
// release(i) says kNow. With width 1 (or n 1) everything runs on the calling thread, which keeps a
// caller's non-thread-safe fakes usable in tests. Indices are released in order; kLater is asked
// again a millisecond later, kNever ends it (neither that index nor any after it runs).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace slurmfleet {

enum class Release { kNow, kLater, kNever };

template <typename ReleaseFn, typename Work>
void RunReleased(size_t n, size_t width, ReleaseFn release, Work work) {
  std::mutex mu;
  size_t next = 0;     // guarded by mu
  bool ended = false;  // guarded by mu
  auto take = [&]() -> std::optional<size_t> {
    std::lock_guard lock(mu);  // in order: the others wait for the same index anyway
    while (!ended && next < n) {
      switch (release(next)) {
        case Release::kNow:
          return next++;
        case Release::kNever:
          ended = true;
          break;
        case Release::kLater:
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          break;
      }
    }
    return std::nullopt;
  };
  auto drain = [&] {
    while (std::optional<size_t> i = take()) work(*i);
  };
  std::vector<std::thread> helpers;
  for (size_t k = 1; k < std::min(width, n); ++k) helpers.emplace_back(drain);
  drain();
  for (std::thread& t : helpers) t.join();
}

}  // namespace slurmfleet
