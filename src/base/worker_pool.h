// WorkerPool: runs work(0) ... work(n - 1), up to `width` calls at a time, on the calling thread
// and up to width - 1 threads that the pool starts at their first need and keeps until it is
// destroyed. It is for fan-outs that a loop repeats every pass: starting a thread costs a clone
// and a stack mapping each time, 0.3-0.5 ms apiece on the testbed's VM under load, so a wave of
// ten calls on fresh threads left one after another over 3-4 ms (docs/jenkins.md, "The life of
// an agent").
//
// Thread safety: Run() may be called from any thread; calls run one after another. With width 1
// (or n 1) everything runs on the calling thread, which keeps a caller's non-thread-safe fakes
// usable in tests. `work` must not throw and must not call Run() on the same pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace slurmfleet {

class WorkerPool {
 public:
  WorkerPool() = default;
  ~WorkerPool();  // joins the threads; no Run() may be in progress
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Returns when every call has returned.
  void Run(size_t n, size_t width, const std::function<void(size_t)>& work);

  size_t threads() const;  // started so far

 private:
  void Serve();

  std::mutex run_mu_;  // one Run() at a time
  mutable std::mutex mu_;
  std::condition_variable wanted_cv_;  // helpers wanted, or stopping
  std::condition_variable idle_cv_;    // no helper works on the current run any more
  std::vector<std::thread> threads_;   // guarded by mu_
  bool stopping_ = false;              // guarded by mu_
  // The current run, guarded by mu_ but for next_, which its callers share.
  const std::function<void(size_t)>* work_ = nullptr;
  size_t n_ = 0;
  size_t wanted_ = 0;  // helpers it may still take
  size_t busy_ = 0;    // helpers that took it and have not left it
  std::atomic<size_t> next_{0};
};

}  // namespace slurmfleet
