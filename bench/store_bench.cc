// store_bench: how much a synced writer slows the store's other writers. An engine-like writer
// (50 submissions and their events a write, no disk sync, every 2 ms) runs alone, then beside a
// provisioner-like one (10 intents and 10 agent records a write, synced, every 10 ms), and the
// two are printed side by side with the ratio of their percentiles. The state file is a real one
// (in --dir, default /var/tmp) so that syncs and checkpoints cost what they cost on that disk.
// See bench/README.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "store/store.h"

namespace {

using namespace slurmfleet;
using Steady = std::chrono::steady_clock;

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
  size_t n = 0, over_5ms = 0;
};

Percentiles Of(std::vector<double> ms) {
  Percentiles p;
  if (ms.empty()) return p;
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * ms.size()))]; };
  p.p50 = at(0.5);
  p.p99 = at(0.99);
  p.max = ms.back();
  p.n = ms.size();
  p.over_5ms = size_t(std::count_if(ms.begin(), ms.end(), [](double x) { return x > 5; }));
  return p;
}

void Print(const std::string& what, const Percentiles& p) {
  std::cout << fmt::format("  {:<44} {:>6} {:>8.2f} {:>8.2f} {:>8.2f} {:>9}\n", what, p.n, p.p50,
                           p.p99, p.max, p.over_5ms);
}

double Ms(Steady::time_point since) {
  return std::chrono::duration<double, std::milli>(Steady::now() - since).count();
}

store::Submission NewIntent(const std::string& key) {
  store::Submission s;
  s.key = key;
  s.kind = "job";
  s.cloud = "bench";
  s.owner = "store_bench";
  s.request_json = std::string(2000, 'x');  // about an agent's rendered request
  return s;
}

int Die(const std::string& why) {
  std::cerr << "store_bench: " << why << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 15;
  std::filesystem::path dir = "/var/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      return Die("usage: store_bench [--seconds S] [--dir DIR]");
    }
  }
  if (seconds <= 0) return Die("--seconds must be positive");
  const std::filesystem::path path = dir / fmt::format("store_bench-{}.db", ::getpid());
  const auto remove_files = [&] {
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
      std::error_code ignored;
      std::filesystem::remove(path.string() + suffix, ignored);
    }
  };
  SystemClock clock;
  auto store = store::Store::Open(path.string(), clock);
  if (!store) return Die(store.error().ToString());

  std::vector<store::Submission> tracked;
  for (int i = 0; i < 500; ++i) tracked.push_back(NewIntent("tracked-" + std::to_string(i)));
  std::vector<store::Submission*> added;
  for (store::Submission& s : tracked) added.push_back(&s);
  if (auto done = (*store)->AddMany(added); !done) return Die(done.error().ToString());

  std::atomic<bool> failed{false};
  // Runs the engine-like writer for the bench's time, with the provisioner-like one beside it
  // when `beside`; returns each one's write latencies.
  auto run = [&](bool beside, int& round, int& wave) {
    std::atomic<bool> stop{false};
    std::vector<double> engine_ms, provisioner_ms;
    std::thread engine([&] {
      while (!stop) {
        std::vector<std::pair<store::Submission*, std::optional<store::Event>>> seen;
        for (int j = 0; j < 50; ++j) {
          store::Submission& s = tracked[size_t(round * 50 + j) % tracked.size()];
          s.state_reason = "Priority" + std::to_string(round);
          seen.emplace_back(&s, store::Event{0, s.key, 0, "state", s.state_reason});
        }
        const auto t0 = Steady::now();
        if (!(*store)->UpdateMany(seen, store::Sync::kProcess)) failed = true;
        engine_ms.push_back(Ms(t0));
        ++round;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    std::thread provisioner([&] {
      while (beside && !stop) {
        std::vector<store::Record> records(10);
        std::vector<std::pair<store::Record*, std::optional<store::Event>>> put;
        std::vector<store::Submission> intents;
        for (int j = 0; j < 10; ++j) {
          const std::string name = "agent-" + std::to_string(wave * 10 + j);
          records[size_t(j)] = {.kind = "agent",
                                .name = name,
                                .cloud = "bench",
                                .active = true,
                                .doc = "{\"phase\":\"" + std::string(600, 'p') + "\"}",
                                .version = 0,
                                .created_at = 0,
                                .updated_at = 0};
          intents.push_back(NewIntent(name));
        }
        for (store::Record& r : records) {
          put.emplace_back(&r, store::Event{0, r.name, 0, "submitted", "agent wave"});
        }
        std::vector<store::Submission*> new_intents;
        for (store::Submission& s : intents) new_intents.push_back(&s);
        const auto t0 = Steady::now();
        if (!(*store)->AddMany(new_intents, put, store::Sync::kDisk)) failed = true;
        provisioner_ms.push_back(Ms(t0));
        ++wave;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    stop = true;
    engine.join();
    provisioner.join();
    return std::pair{Of(engine_ms), Of(provisioner_ms)};
  };
  int round = 0, wave = 0;
  auto [alone, unused] = run(false, round, wave);
  auto [engine_beside, provisioner] = run(true, round, wave);
  store->reset();
  remove_files();
  if (failed) return Die("a write failed");

  std::cout << fmt::format("store_bench: {} s each, state file in {}\n", seconds, dir.string());
  std::cout << fmt::format("  {:<44} {:>6} {:>8} {:>8} {:>8} {:>9}\n", "write latency, ms", "n",
                           "p50", "p99", "max", "over 5 ms");
  Print("engine-like writes, alone", alone);
  Print("engine-like writes, beside synced writes", engine_beside);
  Print("provisioner-like synced writes", provisioner);
  std::cout << fmt::format(
      "  engine-like writes beside synced writes / alone: p50 {:.2f}x, p99 {:.2f}x\n",
      engine_beside.p50 / alone.p50, engine_beside.p99 / alone.p99);
  return 0;
}
