// Time as a dependency: wall time for timestamps that leave the process (Slurm's update_time, JWT
// exp), monotonic time for durations. Tests use FakeClock (tests/base/fake_clock.h), which moves
// only when told to.
#pragma once

#include <chrono>
#include <cstdint>

namespace slurmfleet {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;
};

// The real clocks. Stateless; safe from any thread.
class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now();
  }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
};

// The clock's wall time in whole seconds since the epoch, as the state file and Slurm keep it.
inline int64_t UnixSeconds(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::seconds>(clock.Now().time_since_epoch()).count();
}

}  // namespace slurmfleet
