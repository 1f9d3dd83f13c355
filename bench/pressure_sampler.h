// Samples, every `every`, how long at least one task of the machine has waited for a CPU and for
// I/O (PSI's "some" totals in /proc/pressure/{cpu,io}), and how much time the hypervisor took from
// this VM's CPUs (steal, in /proc/stat), each read through an open descriptor: cheap enough for
// 1 ms. A bench sets a slow step beside them: while it ran, did the machine have more runnable
// tasks than CPUs, tasks stalled on the disk, or CPUs taken by the host? Linux 4.20+; without the
// files the figures read 0. Steal counts in the kernel's 10 ms ticks, summed over the CPUs.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace slurmfleet::bench {

class PressureSampler {
 public:
  using Steady = std::chrono::steady_clock;
  explicit PressureSampler(std::chrono::milliseconds every);
  ~PressureSampler();  // stops
  PressureSampler(const PressureSampler&) = delete;
  PressureSampler& operator=(const PressureSampler&) = delete;

  void Stop();

  struct Window {
    double cpu_stall_ms = 0;  // wall time in which some runnable task had no CPU
    double io_stall_ms = 0;   // wall time in which some task waited for I/O
    double steal_ms = 0;      // CPU time the host took, summed over this VM's CPUs
    double span_ms = 0;       // the samples' span that covers the window (>= the window)
  };
  // From the last sample at or before `from` to the first at or after `to`.
  Window Between(Steady::time_point from, Steady::time_point to) const;
  // The CPU the sampling thread itself used, so a reader knows what it added.
  double OwnCpuMs() const;

 private:
  struct Sample {
    Steady::time_point at;
    uint64_t cpu_stall_us;  // PSI "some" totals
    uint64_t io_stall_us;
    uint64_t steal_ticks;  // /proc/stat, USER_HZ
  };
  void Loop(std::chrono::milliseconds every);
  Sample Take() const;

  int cpu_fd_ = -1;
  int io_fd_ = -1;
  int stat_fd_ = -1;
  mutable std::mutex mu_;
  std::vector<Sample> samples_;
  double sampler_cpu_ms_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace slurmfleet::bench
