#include "base/kept_thread.h"

#include <utility>

namespace slurmfleet {

KeptThread::~KeptThread() {
  {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return !busy_; });
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KeptThread::Start(std::function<void()> task) {
  {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return !busy_; });
    if (!thread_.joinable()) thread_ = std::thread([this] { Serve(); });
    task_ = std::move(task);
    busy_ = true;
  }
  changed_.notify_all();
}

void KeptThread::Wait() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return !busy_; });
}

void KeptThread::Serve() {
  std::unique_lock lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return task_ != nullptr || stopping_; });
    if (!task_) return;  // stopping, with nothing left to run
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    lock.unlock();
    task();
    task = nullptr;  // what it holds is gone before Wait() returns
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace slurmfleet
