#include "base/worker_pool.h"

#include <algorithm>

namespace slurmfleet {

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wanted_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

size_t WorkerPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_.size();
}

void WorkerPool::Run(size_t n, size_t width, const std::function<void(size_t)>& work) {
  if (n == 0) return;
  const size_t helpers = std::min(std::max<size_t>(width, 1), n) - 1;
  if (helpers == 0) {
    for (size_t i = 0; i < n; ++i) work(i);
    return;
  }
  std::lock_guard run(run_mu_);
  {
    std::lock_guard lock(mu_);
    while (threads_.size() < helpers) threads_.emplace_back([this] { Serve(); });
    work_ = &work;
    n_ = n;
    next_ = 0;
    wanted_ = helpers;
  }
  wanted_cv_.notify_all();
  for (size_t i = next_++; i < n; i = next_++) work(i);
  std::unique_lock lock(mu_);
  wanted_ = 0;  // every index is taken: a helper that wakes only now has nothing to do
  idle_cv_.wait(lock, [this] { return busy_ == 0; });
  work_ = nullptr;
}

void WorkerPool::Serve() {
  std::unique_lock lock(mu_);
  for (;;) {
    wanted_cv_.wait(lock, [this] { return stopping_ || wanted_ > 0; });
    if (stopping_) return;
    --wanted_;
    ++busy_;
    const std::function<void(size_t)>& work = *work_;
    const size_t n = n_;
    lock.unlock();
    for (size_t i = next_++; i < n; i = next_++) work(i);
    lock.lock();
    if (--busy_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace slurmfleet
