#include "pressure_sampler.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace slurmfleet::bench {

namespace {

// "some avg10=... avg60=... avg300=... total=<us>" on the first line
uint64_t ReadSomeTotalUs(int fd) {
  char buf[256];
  const ssize_t n = fd < 0 ? -1 : ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* at = std::strstr(buf, "total=");
  return at ? std::strtoull(at + 6, nullptr, 10) : 0;
}

// "cpu  user nice system idle iowait irq softirq steal ..." on the first line
uint64_t ReadStealTicks(int fd) {
  char buf[256];
  const ssize_t n = fd < 0 ? -1 : ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* at = buf + 3;  // past "cpu"
  uint64_t field = 0;
  for (int i = 0; i < 8; ++i) {
    char* end = nullptr;
    field = std::strtoull(at, &end, 10);
    if (end == at) return 0;
    at = end;
  }
  return field;
}

}  // namespace

PressureSampler::PressureSampler(std::chrono::milliseconds every)
    : every_(every),
      cpu_fd_(::open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC)),
      io_fd_(::open("/proc/pressure/io", O_RDONLY | O_CLOEXEC)),
      stat_fd_(::open("/proc/stat", O_RDONLY | O_CLOEXEC)) {
  samples_.push_back(Take());
  const size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  late_.resize(cpus);
  for (size_t cpu = 0; cpu < cpus; ++cpu) threads_.emplace_back([this, cpu] { Loop(cpu); });
}

PressureSampler::~PressureSampler() {
  Stop();
  for (int fd : {cpu_fd_, io_fd_, stat_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

void PressureSampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

PressureSampler::Sample PressureSampler::Take() const {
  return {Steady::now(), ReadSomeTotalUs(cpu_fd_), ReadSomeTotalUs(io_fd_),
          ReadStealTicks(stat_fd_)};
}

void PressureSampler::Loop(size_t cpu) {
  // Unpinned (no such CPU, or not allowed), its lateness still counts, for whichever vCPU it ran
  // on.
  cpu_set_t only;
  CPU_ZERO(&only);
  CPU_SET(cpu, &only);
  (void)::pthread_setaffinity_np(::pthread_self(), sizeof only, &only);
  Steady::time_point last = Steady::now();
  uint64_t last_stall_us = ReadSomeTotalUs(cpu_fd_);
  for (;;) {
    std::this_thread::sleep_for(every_);
    const Sample s = cpu == 0 ? Take() : Sample{Steady::now(), ReadSomeTotalUs(cpu_fd_), 0, 0};
    const double late = std::chrono::duration<double, std::milli>(s.at - last - every_).count() -
                        static_cast<double>(s.cpu_stall_us - last_stall_us) / 1e3;
    last = s.at;
    last_stall_us = s.cpu_stall_us;
    std::lock_guard lock(mu_);
    if (cpu == 0) samples_.push_back(s);
    // a wake-up from an idle CPU and the timer's slack take tens of microseconds, not a millisecond
    if (late > 1.0) late_[cpu].push_back({s.at, late});
    if (stop_) break;
  }
  timespec used{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
  std::lock_guard lock(mu_);
  sampler_cpu_ms_ +=
      static_cast<double>(used.tv_sec) * 1e3 + static_cast<double>(used.tv_nsec) / 1e6;
}

PressureSampler::Window PressureSampler::Between(Steady::time_point from,
                                                 Steady::time_point to) const {
  std::lock_guard lock(mu_);
  auto after_from =
      std::upper_bound(samples_.begin(), samples_.end(), from,
                       [](Steady::time_point t, const Sample& s) { return t < s.at; });
  auto first = after_from == samples_.begin() ? after_from : std::prev(after_from);
  auto last = std::lower_bound(samples_.begin(), samples_.end(), to,
                               [](const Sample& s, Steady::time_point t) { return s.at < t; });
  if (last == samples_.end()) last = std::prev(samples_.end());
  Window w{static_cast<double>(last->cpu_stall_us - first->cpu_stall_us) / 1e3,
           static_cast<double>(last->io_stall_us - first->io_stall_us) / 1e3,
           static_cast<double>(last->steal_ticks - first->steal_ticks) * 1e3 /
               static_cast<double>(::sysconf(_SC_CLK_TCK)),
           {},
           std::chrono::duration<double, std::milli>(last->at - first->at).count()};
  // A late wake-up's unexplained time is taken to lie just before it; only the part of it
  // inside [from, to] counts.
  for (const std::vector<Lateness>& cpu : late_) {
    double still = 0;
    for (const Lateness& l : cpu) {
      const auto begin = l.at - std::chrono::duration_cast<Steady::duration>(
                                    std::chrono::duration<double, std::milli>(l.ms));
      const auto overlap = std::min(l.at, to) - std::max(begin, from);
      if (overlap > Steady::duration::zero()) {
        still += std::chrono::duration<double, std::milli>(overlap).count();
      }
    }
    w.stood_still_ms.push_back(still);
  }
  return w;
}

double PressureSampler::OwnCpuMs() const {
  std::lock_guard lock(mu_);
  return sampler_cpu_ms_;
}

}  // namespace slurmfleet::bench
