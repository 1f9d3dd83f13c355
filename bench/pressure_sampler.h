// Samples, every `every`, how long at least one task of the machine has waited for a CPU and for
// I/O (PSI's "some" totals in /proc/pressure/{cpu,io}), and how much time the hypervisor took from
// this VM's CPUs (steal, in /proc/stat), each read through an open descriptor: cheap enough for
// 1 ms. A bench sets a slow step beside them: while it ran, did the machine have more runnable
// tasks than CPUs, tasks stalled on the disk, or CPUs taken by the host? Linux 4.20+; without the
// files the figures read 0. Steal counts in the kernel's 10 ms ticks, summed over the CPUs.
//
// A host that does not report steal (the testbed's VM reads 0 since boot) still takes its vCPUs
// away now and then, and the guest sees nothing of it: a task on a vCPU the host stopped is
// "running" as far as the guest knows. So one sampling thread is pinned to each CPU, and each
// notes how much later than `every` it woke, less whatever PSI says some task waited for a CPU
// meanwhile (its own wait included): what is left is time in which its vCPU ran nothing of the
// guest's. That is a lower bound: a stop that falls between two of its sleeps' ends is seen only
// in part, and a CPU wait elsewhere in the same span hides as much of it.
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
    double steal_ms = 0;      // CPU time the host took, summed over this VM's CPUs (as reported)
    // per CPU: how long its pinned sampler woke late with no CPU wait to explain it
    std::vector<double> stood_still_ms;
    double span_ms = 0;  // the samples' span that covers the window (>= the window)
  };
  // From the last sample at or before `from` to the first at or after `to`.
  Window Between(Steady::time_point from, Steady::time_point to) const;
  // The CPU the sampling threads themselves used, so a reader knows what they added.
  double OwnCpuMs() const;

 private:
  struct Sample {
    Steady::time_point at;
    uint64_t cpu_stall_us;  // PSI "some" totals
    uint64_t io_stall_us;
    uint64_t steal_ticks;  // /proc/stat, USER_HZ
  };
  struct Lateness {
    Steady::time_point at;  // when the sampler woke
    double ms;              // beyond `every`, less the CPU wait PSI counted meanwhile
  };
  void Loop(size_t cpu);
  Sample Take() const;

  std::chrono::milliseconds every_;
  int cpu_fd_ = -1;
  int io_fd_ = -1;
  int stat_fd_ = -1;
  mutable std::mutex mu_;
  std::vector<Sample> samples_;              // taken by the sampler of CPU 0
  std::vector<std::vector<Lateness>> late_;  // per CPU, only the wake-ups over 1 ms late
  double sampler_cpu_ms_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace slurmfleet::bench
