// A Clock that moves only when told to (Advance/Set), for tests that run time forward.
#pragma once

#include <mutex>

#include "base/clock.h"

namespace slurmfleet {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::chrono::system_clock::time_point start) : now_(start) {}

  std::chrono::system_clock::time_point Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  std::chrono::steady_clock::time_point Monotonic() const override {
    std::lock_guard lock(mu_);
    return std::chrono::steady_clock::time_point(now_.time_since_epoch());
  }
  void Advance(std::chrono::system_clock::duration d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  std::chrono::system_clock::time_point now_;
};

}  // namespace slurmfleet
