// RunConcurrently: work(0) ... work(n - 1), up to `width` calls at a time, on the calling thread
// and width - 1 helper threads; returns when all are done. With width 1 (or n 1) everything runs
// on the calling thread, which keeps a caller's non-thread-safe fakes usable in tests.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace slurmfleet {

template <typename Work>
void RunConcurrently(size_t n, size_t width, Work work) {
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t i = next++; i < n; i = next++) work(i);
  };
  std::vector<std::thread> helpers;
  for (size_t k = 1; k < std::min(width, n); ++k) helpers.emplace_back(drain);
  drain();
  for (std::thread& t : helpers) t.join();
}

}  // namespace slurmfleet
