// The engine at scale on the real testbed: N held jobs tracked by one engine. Prints, measured in
// one run: requests per tracking pass, CPU time per pass (steady, and when the job list changed),
// process RSS; and submit throughput of the engine against raw concurrent POSTs of the same job
// to the same slurmrestd, as a ratio.
//
//   engine_bench [--jobs N] [--seconds S] [--raw-threads T] [--script-bytes B] [--others M]
//                [--full-every F] [--raw-every K] [--rest-ms R] [--one-thread-arm] [--quiet]
//                [--keep]
// Each job's batch script is padded to B bytes (default 2048): the example templates' agents
// render 2.2-3.2 KB requests, and the request is what every intent, row and pass carries.
// While tracking, a job of someone else's is submitted before each pass, as on any cluster in use:
// then every full list is the whole list. --quiet leaves the cluster still. --others M holds M more
// jobs of someone else's (untagged) before tracking: a cluster where other users' jobs dominate.
// --full-every F asks for the full list every F seconds instead of the engine's 30 (it still
// spaces lists by a second per thousand jobs), for more full passes to take a median of.
// --one-thread-arm adds a raw arm that sends as the engine does, from one thread through libcurl's
// multi interface. --raw-every K puts a raw round after every K-th engine round (default: as many
// raw jobs as fit beside the engine's in the testbed's 20,000; K=1 at 10,000 jobs needs a testbed
// started with TESTBED_MAX_JOBS=30000). The raw arms' jobs are cancelled before tracking, which
// waits until slurmctld no longer lists them, so that tracking sees the engine's jobs alone.
// --rest-ms R: each submit round of either arm starts R ms (default 1000) after the last ended.
// Needs SLURMRESTD_URL and SLURM_JWT_KEY (eval "$(testbed/testbed.sh env)"). Not a test.
#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include "auth/minting_token_source.h"
#include "base/allocator_tuning.h"
#include "fleet/engine.h"
#include "slurm/curl_transport.h"
#include "slurm/dialect.h"
#include "slurm/rest_client.h"

using namespace slurmfleet;
using Steady = std::chrono::steady_clock;

namespace {

// The whole process's CPU time: a pass runs its slurmrestd request on a helper thread, and
// nothing else runs in this process during a pass.
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// This thread's CPU time: a pass's own work, without the helper thread that receives its answer.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Context switches of the whole process so far, voluntary (waits) and not: each costs CPU that
// slurmctld and slurmrestd then lack on a small machine.
long Switches() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_nvcsw + u.ru_nivcsw;
}

// Page faults of the whole process so far that found the page in memory (a first touch of memory
// given back or newly mapped): in a VM each costs about 14 us of CPU.
long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// "VmRSS" (now) or "VmHWM" (the peak so far), in KiB.
long StatusKiB(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A distribution-free interval that holds the median of what `sorted` samples with at least 95%
// confidence: its k-th smallest and k-th largest values, for the largest k with
// P(Binomial(n, 1/2) < k) <= 2.5%. Empty below six values, where no such k exists.
std::optional<std::pair<double, double>> MedianInterval95(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  double below = 0;  // P(Binomial(n, 1/2) < k)
  double term = 1;   // C(n, k) / 2^n, built up without overflow
  for (size_t i = 0; i < n; ++i) term /= 2;
  size_t k = 0;
  while (k < n / 2 && below + term <= 0.025) {
    below += term;
    term = term * static_cast<double>(n - k) / static_cast<double>(k + 1);
    ++k;
  }
  if (k == 0) return std::nullopt;
  return std::make_pair(sorted[k - 1], sorted[n - k]);
}

slurm::JobRequest Held(const std::string& name, size_t script_bytes) {
  slurm::JobRequest r;
  r.name = name;
  r.script = "#!/bin/bash\n";
  if (script_bytes > r.script.size() + 7) {
    r.script += "#" + std::string(script_bytes - r.script.size() - 7, 'x') + "\n";
  }
  r.script += "true\n";
  r.current_working_directory = "/tmp";
  r.memory_per_node_mb = 10;
  r.hold = true;
  r.environment = {{"PATH", "/usr/bin:/bin", false}};
  return r;
}

// Notes when the first GET leaves after Arm(), and the process's CPU time then: the tracking
// request that ends a pass's submitting. Also when the pass's first POST left and its last answer
// came, which split the pass into the engine's work before its POSTs, the POSTs, and its work
// after them.
class MarkingTransport final : public slurm::Transport {
 public:
  explicit MarkingTransport(slurm::Transport& inner) : inner_(inner) {}
  Result<slurm::HttpResponse> Send(const slurm::HttpRequest& request) override {
    if (request.method == "GET") {
      std::lock_guard lock(mu_);
      if (armed_ && !first_get_) {
        first_get_ = Steady::now();
        cpu_at_first_get_ = CpuMs();
        switches_at_first_get_ = Switches();
      }
    }
    return inner_.Send(request);
  }
  std::vector<Result<slurm::HttpResponse>> SendAll(const std::vector<slurm::HttpRequest>& requests,
                                                   size_t at_once) override {
    return inner_.SendAll(requests, at_once);  // the engine sends only POSTs this way
  }
  void SendReleased(size_t count, size_t at_once,
                    const std::function<Release(size_t, slurm::HttpRequest&)>& next,
                    const std::function<void(size_t, Result<slurm::HttpResponse>)>& done) override {
    inner_.SendReleased(
        count, at_once,
        [&](size_t i, slurm::HttpRequest& request) {
          const Release release = next(i, request);
          std::lock_guard lock(mu_);
          if (release == Release::kNow && armed_ && !first_post_) first_post_ = Steady::now();
          return release;
        },
        [&](size_t i, Result<slurm::HttpResponse> response) {
          {
            std::lock_guard lock(mu_);
            if (armed_) last_answer_ = Steady::now();
          }
          done(i, std::move(response));
        });
  }
  void Arm() {
    std::lock_guard lock(mu_);
    armed_ = true;
    first_get_.reset();
    first_post_.reset();
    last_answer_.reset();
  }
  std::optional<Steady::time_point> FirstPost() {
    std::lock_guard lock(mu_);
    return first_post_;
  }
  std::optional<Steady::time_point> LastAnswer() {
    std::lock_guard lock(mu_);
    return last_answer_;
  }
  std::optional<Steady::time_point> FirstGet() {
    std::lock_guard lock(mu_);
    armed_ = false;
    return first_get_;
  }
  double CpuAtFirstGet() {
    std::lock_guard lock(mu_);
    return cpu_at_first_get_;
  }
  long SwitchesAtFirstGet() {
    std::lock_guard lock(mu_);
    return switches_at_first_get_;
  }

 private:
  slurm::Transport& inner_;
  std::mutex mu_;
  bool armed_ = false;
  std::optional<Steady::time_point> first_get_;    // guarded by mu_
  std::optional<Steady::time_point> first_post_;   // guarded by mu_
  std::optional<Steady::time_point> last_answer_;  // guarded by mu_
  double cpu_at_first_get_ = 0;                    // guarded by mu_
  long switches_at_first_get_ = 0;                 // guarded by mu_
};

// POSTs `body` as a submit `count` times over `threads` threads, as fast as slurmrestd takes them;
// returns how many failed.
int PostConcurrently(slurm::Transport& transport, const std::string& body, const Secret& jwt,
                     int count, int threads) {
  std::atomic<int> next{0}, failures{0};
  std::vector<std::thread> posters;
  for (int k = 0; k < threads; ++k) {
    posters.emplace_back([&] {
      while (next.fetch_add(1) < count) {
        auto r = transport.Send({"POST", "/slurm/v0.0.45/job/submit", body, jwt});
        if (!r || r->status != 200) ++failures;
      }
    });
  }
  for (std::thread& p : posters) p.join();
  return failures;
}

// The same POSTs, `at_once` in flight from this one thread through libcurl's multi interface, as
// the engine sends its own; returns how many failed.
int PostFromOneThread(slurm::Transport& transport, const std::string& body, const Secret& jwt,
                      int count, int at_once) {
  std::vector<slurm::HttpRequest> posts(count, {"POST", "/slurm/v0.0.45/job/submit", body, jwt});
  int failures = 0;
  for (const Result<slurm::HttpResponse>& r : transport.SendAll(posts, at_once)) {
    if (!r || r->status != 200) ++failures;
  }
  return failures;
}

// One raw arm's totals over its rounds.
struct RawArm {
  double s = 0, cpu_ms = 0;
  long switches = 0;
  int jobs = 0;
  std::vector<double> round_s;  // seconds per job in each round
};

int Die(const std::string& why) {
  std::cerr << "engine_bench: " << why << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 2000, seconds = 40, others = 0, full_every = 0, raw_every = 0, rest_ms = 1000;
  int raw_threads = 0;  // 0: as many as the engine has POSTs in flight
  size_t script_bytes = 2048;
  bool keep = false, quiet = false, one_thread_arm = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--jobs" && i + 1 < argc)
      jobs = std::atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atoi(argv[++i]);
    else if (a == "--raw-threads" && i + 1 < argc)
      raw_threads = std::atoi(argv[++i]);
    else if (a == "--script-bytes" && i + 1 < argc)
      script_bytes = std::strtoul(argv[++i], nullptr, 10);
    else if (a == "--others" && i + 1 < argc)
      others = std::atoi(argv[++i]);
    else if (a == "--full-every" && i + 1 < argc)
      full_every = std::atoi(argv[++i]);
    else if (a == "--raw-every" && i + 1 < argc)
      raw_every = std::atoi(argv[++i]);
    else if (a == "--rest-ms" && i + 1 < argc)
      rest_ms = std::atoi(argv[++i]);
    else if (a == "--keep")
      keep = true;
    else if (a == "--quiet")
      quiet = true;
    else if (a == "--one-thread-arm")
      one_thread_arm = true;
    else
      return Die(
          "usage: engine_bench [--jobs N] [--seconds S] [--raw-threads T] [--script-bytes B] "
          "[--others M] [--full-every F] [--raw-every K] [--rest-ms R] [--one-thread-arm] "
          "[--quiet] [--keep]");
  }
  const char* url = std::getenv("SLURMRESTD_URL");
  const char* key = std::getenv("SLURM_JWT_KEY");
  const char* user_env = std::getenv("SLURM_USER");
  if (!url || !key)
    return Die("set SLURMRESTD_URL and SLURM_JWT_KEY (eval \"$(testbed/testbed.sh env)\")");
  std::string user = user_env ? user_env : "ci";

  TuneAllocatorForDaemon();  // as `slurmfleet serve` does
  const long rss_at_start = StatusKiB("VmRSS");
  SystemClock clock;
  slurm::TransportOptions t;
  t.base_url = url;
  t.total_timeout =
      std::chrono::seconds(300);  // a full list of 10,000 jobs takes slurmrestd a while
  auto transport = slurm::CurlTransport::Create(t);
  if (!transport) return Die(transport.error().ToString());
  auth::MintingTokenSource tokens(key, user, clock);
  slurm::RestClientOptions ro;
  ro.api_version = "v0.0.45";
  MarkingTransport marking(**transport);
  auto client = slurm::RestClient::Connect(marking, tokens, ro);
  if (!client) return Die(client.error().ToString());

  std::mt19937_64 rng{std::random_device{}()};
  std::string instance = "bench" + std::to_string(rng() % 1000000);
  std::filesystem::path db = std::filesystem::temp_directory_path() / (instance + ".db");
  auto store = store::Store::Open(db.string(), clock);
  if (!store) return Die(store.error().ToString());
  fleet::EngineOptions eo;
  eo.cloud = "bench";
  eo.instance = instance;
  eo.max_submits_per_pass = static_cast<size_t>(jobs);
  if (full_every > 0) eo.full_list_interval = std::chrono::seconds(full_every);
  if (raw_threads <= 0) raw_threads = static_cast<int>(eo.submit_concurrency);
  auto engine = fleet::Engine::Create(**store, **client, clock, eo);
  if (!engine) return Die(engine.error().ToString());

  // 1. submit throughput, in alternating rounds so that both arms meet the same range of
  // slurmctld load: the engine (intents recorded, then one pass sends them; its time ends when
  // that pass's tracking request leaves, after every outcome is recorded) ...
  (*engine)->Tick();  // the first pass takes the full job list; not part of submitting
  std::string body =
      slurm::EncodeSubmit(
          *slurm::FindDialect("v0.0.45"),
          std::vector<slurm::JobRequest>{Held("bench-raw-" + instance, script_bytes)}, false)
          .dump();
  auto token = tokens.Get();
  if (!token) return Die(token.error().ToString());
  // one DELETE with filters cancels every job of this run; also when the bench gives up midway
  auto cancel_named = [&](const std::string& name) {
    nlohmann::json kill = {{"user_name", user}, {"job_name", name}};
    return (*transport)->Send({"DELETE", "/slurm/v0.0.45/jobs/", kill.dump(), token->jwt});
  };
  auto cancel_all = [&] {
    for (std::string name :
         {"bench-" + instance, "bench-raw-" + instance, "bench-other-" + instance}) {
      (void)cancel_named(name);
    }
  };
  auto give_up = [&](const std::string& why) {
    cancel_all();
    return Die(why + " (this run's jobs are cancelled)");
  };
  // Rounds of the same size in both arms, so that both pay the same ramp at a round's start and
  // end. slurmctld's job table limits how many raw jobs a run can add, so a raw round follows
  // every `stride`-th engine round; each raw round is also compared with the engine rounds just
  // before and after it, which met the same load, and the spread of those ratios is printed.
  const int round_size = std::min(jobs, 200);
  const int rounds = std::max(1, jobs / round_size);
  const int stride = raw_every > 0 ? raw_every : std::max(1, jobs / 2000);
  std::vector<double> engine_round_s;  // seconds per job in each round
  // each engine round's ms from its start to its first POST, from there to its last answer, and
  // from there to its first GET
  std::vector<double> head_ms, posts_ms, tail_ms;
  std::vector<double> raw_round_ms;  // each round of the raw arm (16 threads)
  std::vector<int> raw_after;        // the engine round each raw round follows
  double engine_s = 0, engine_cpu_ms = 0;
  long engine_switches = 0;
  // Raw POSTs from as many threads as the engine has in flight; with --one-thread-arm also the
  // same number in flight from one thread through libcurl's multi interface, which is how the
  // engine sends. The second tells what of the engine's gap to the first is that way of sending,
  // and what is its own bookkeeping.
  RawArm raw, one_thread;
  int failures = 0;
  // Every round of either arm starts --rest-ms after the last one ended, so that what slurmctld
  // defers after a burst of submits lands in neither arm's rounds. Back to back, an engine round
  // began after its intents were written (200 synced writes) and a raw round right after an
  // engine round: only raw rounds met that work.
  Steady::time_point last_round_end = Steady::now();
  auto rest = [&] {
    std::this_thread::sleep_until(last_round_end + std::chrono::milliseconds(rest_ms));
  };
  for (int round = 0; round < rounds; ++round) {
    const int n = jobs / rounds + (round < jobs % rounds ? 1 : 0);
    for (int i = 0; i < n; ++i) {
      if (auto s =
              (*engine)->AddIntent("", "job", "bench", Held("bench-" + instance, script_bytes));
          !s)
        return give_up(s.error().ToString());
    }
    rest();
    marking.Arm();
    auto t0 = Steady::now();
    double cpu0 = CpuMs();
    long switches0 = Switches();
    fleet::PassStats pass = (*engine)->Tick();
    last_round_end = Steady::now();
    std::optional<Steady::time_point> first_post = marking.FirstPost(),
                                      last_answer = marking.LastAnswer();
    std::optional<Steady::time_point> tracked = marking.FirstGet();
    if (first_post && last_answer && tracked) {
      auto ms = [](Steady::duration d) {
        return std::chrono::duration<double, std::milli>(d).count();
      };
      head_ms.push_back(ms(*first_post - t0));
      posts_ms.push_back(ms(*last_answer - *first_post));
      tail_ms.push_back(ms(*tracked - *last_answer));
    }
    engine_cpu_ms += (tracked ? marking.CpuAtFirstGet() : CpuMs()) - cpu0;
    engine_switches += (tracked ? marking.SwitchesAtFirstGet() : Switches()) - switches0;
    const double took = std::chrono::duration<double>(tracked.value_or(Steady::now()) - t0).count();
    engine_s += took;
    engine_round_s.push_back(took / n);
    if (pass.submitted != n)
      return give_up(fmt::format("engine submitted {} of {}", pass.submitted, n));
    if (round % stride != stride / 2 || round == rounds - 1) continue;

    // ... against raw POSTs of the same body, without any bookkeeping: with two raw arms, both
    // after the same engine round, each going first every other time
    auto raw_round = [&](RawArm& arm, bool threads) {
      rest();
      const auto started = Steady::now();
      const double cpu_before = CpuMs();
      const long switches_before = Switches();
      failures += threads
                      ? PostConcurrently(**transport, body, token->jwt, round_size, raw_threads)
                      : PostFromOneThread(**transport, body, token->jwt, round_size, raw_threads);
      last_round_end = Steady::now();
      const double raw_took = std::chrono::duration<double>(last_round_end - started).count();
      arm.s += raw_took;
      arm.round_s.push_back(raw_took / round_size);
      if (threads) raw_round_ms.push_back(raw_took * 1000);
      arm.cpu_ms += CpuMs() - cpu_before;
      arm.switches += Switches() - switches_before;
      arm.jobs += round_size;
    };
    const bool threads_first = !one_thread_arm || raw_after.size() % 2 == 0;
    raw_round(threads_first ? raw : one_thread, threads_first);
    if (one_thread_arm) raw_round(threads_first ? one_thread : raw, !threads_first);
    raw_after.push_back(round);
  }
  if (raw.round_s.empty()) {
    return give_up(
        fmt::format("no raw round ran: one follows every --raw-every-th engine round of 200 jobs "
                    "but never the last; {} rounds are too few (use --jobs 400 or more, or a "
                    "smaller --raw-every)",
                    rounds));
  }
  const double engine_rate = jobs / engine_s, raw_rate = raw.jobs / raw.s,
               one_thread_rate = one_thread.jobs / one_thread.s;
  // each raw round against the engine rounds just before and after it, which met the same load
  auto local = [&](const RawArm& arm) {
    std::vector<double> ratios;
    for (size_t k = 0; k < arm.round_s.size(); ++k) {
      const int r = raw_after[k];
      ratios.push_back(arm.round_s[k] * 2 / (engine_round_s[r] + engine_round_s[r + 1]));
    }
    std::sort(ratios.begin(), ratios.end());
    return ratios;
  };
  std::cout << fmt::format(
      "submit: engine {:.0f} jobs/s ({} jobs in {} passes of {}: intents marked in one "
      "transaction per chunk before its POSTs, {} POSTs in flight, outcomes recorded as they "
      "come)\n",
      engine_rate, jobs, rounds, jobs / rounds, eo.submit_concurrency);
  std::cout << fmt::format(
      "        every job's submit body: {} bytes (--script-bytes {}); every round of either arm "
      "starts {} ms after the last one ended (--rest-ms)\n",
      body.size(), script_bytes, rest_ms);
  std::cout << fmt::format(
      "        raw    {:.0f} jobs/s ({} POSTs over {} threads, {} rounds of {}, {} failed)\n",
      raw_rate, raw.jobs, raw_threads, raw.round_s.size(), round_size, failures);
  if (one_thread_arm) {
    std::cout << fmt::format(
        "        raw, one thread {:.0f} jobs/s ({} POSTs, {} at a time through libcurl's multi "
        "interface, as the engine sends; each raw round after the same engine round, each arm "
        "first every other time)\n",
        one_thread_rate, one_thread.jobs, raw_threads);
  }
  std::cout << fmt::format("        ratio engine/raw = {:.2f}", engine_rate / raw_rate);
  if (one_thread_arm) {
    std::cout << fmt::format(" (engine/raw one thread {:.2f}, raw one thread/raw {:.2f})",
                             engine_rate / one_thread_rate, one_thread_rate / raw_rate);
  }
  std::cout << "\n";
  for (const auto& [name, arm] :
       {std::pair<const char*, const RawArm*>{"raw", &raw}, {"raw, one thread", &one_thread}}) {
    std::vector<double> ratios = local(*arm);
    if (ratios.empty()) continue;
    std::optional<std::pair<double, double>> interval = MedianInterval95(ratios);
    std::cout << fmt::format(
        "        each {} round against the engine rounds around it: min {:.2f}, median {:.2f}{}, "
        "max {:.2f}\n",
        name, ratios.front(), Median(ratios),
        interval ? fmt::format(" (95% interval {:.2f}-{:.2f})", interval->first, interval->second)
                 : "",
        ratios.back());
  }
  if (!head_ms.empty()) {
    std::cout << fmt::format(
        "        an engine round of {} (medians): {:.1f} ms before its first POST, {:.1f} ms from "
        "there to its last answer, {:.1f} ms from there to the tracking request; a raw round "
        "{:.1f} ms\n",
        jobs / rounds, Median(head_ms), Median(posts_ms), Median(tail_ms), Median(raw_round_ms));
  }
  // This process shares the machine's cores with slurmrestd and slurmctld: its own CPU per job
  // is what it takes away from them.
  auto per_job = [](double total, int n) { return n > 0 ? total / n : 0.0; };
  std::cout << fmt::format(
      "        CPU of this process per job: engine {:.0f} us, raw {:.0f} us; context switches "
      "per job: engine {:.1f}, raw {:.1f} (over the same spans as the rates)\n",
      engine_cpu_ms * 1000 / jobs, per_job(raw.cpu_ms * 1000, raw.jobs),
      double(engine_switches) / jobs, per_job(double(raw.switches), raw.jobs));
  if (one_thread_arm) {
    std::cout << fmt::format(
        "        raw one thread: CPU per job {:.0f} us, context switches per job {:.1f}\n",
        per_job(one_thread.cpu_ms * 1000, one_thread.jobs),
        per_job(double(one_thread.switches), one_thread.jobs));
  }
  const long submit_peak = StatusKiB("VmHWM");

  // The raw arms' jobs would make every full list longer: cancelled, and waited for until
  // slurmctld purges them (MinJobAge after they end), so that tracking lists what it would
  // without the raw arms. Every other job of the bench is held, so the wait ends when no listed
  // job has ended (earlier runs' leftovers are waited out too).
  if (auto r = cancel_named("bench-raw-" + instance); !r || r->status != 200)
    return give_up("could not cancel the raw arms' jobs");
  const auto purge_started = Steady::now();
  size_t listed = 0, ended = 0;
  do {
    if (ended > 0) std::this_thread::sleep_for(std::chrono::seconds(2));
    auto states = (*client)->AllJobStates();
    if (!states) return give_up("could not list the jobs: " + states.error().ToString());
    listed = states->size();
    ended = std::count_if(states->begin(), states->end(), [](const slurm::JobStateEntry& e) {
      return e.state.base != slurm::BaseState::kPending;
    });
  } while (ended > 0 && Steady::now() - purge_started < std::chrono::seconds(600));
  std::cout << fmt::format(
      "        the raw arms' jobs cancelled; {:.0f} s later slurmctld listed {} jobs, {} of them "
      "ended{}\n",
      std::chrono::duration<double>(Steady::now() - purge_started).count(), listed, ended,
      ended == 0 ? "" : ": tracking lists those too");

  // 2. tracking passes over every job, as the engine chooses them, about one a second (the
  // engine's fast interval while jobs are pending) for `seconds`: light ones (jobs/state of our
  // jobs, plus the own GET of a few changed ones) and full ones (the whole job list: for garbage
  // collection and, with this many pending jobs, their reasons, every 30 s). slurmctld answers a
  // job list asked with update_time either "no change" or with every job, whatever changed: one
  // job of someone else's submitted before each pass makes it every job, as on a cluster in use.
  const std::string other =
      slurm::EncodeSubmit(*slurm::FindDialect("v0.0.45"),
                          std::vector<slurm::JobRequest>{Held("bench-other-" + instance, 0)}, false)
          .dump();
  if (others > 0 && PostConcurrently(**transport, other, token->jwt, others, raw_threads) > 0)
    return give_up("could not submit the other users' jobs");
  // What the submit phase left free in the allocator, the raw arms' threads' memory included,
  // goes back to the system first, as the engine's first full pass would give it back (its
  // malloc_trim): the peak from here on is tracking's alone, not the raw arms'.
  const long rss_submitted = StatusKiB("VmRSS");
  malloc_trim(0);
  const long rss_tracking = StatusKiB("VmRSS");
  std::ofstream("/proc/self/clear_refs") << "5";
  std::vector<double> light_cpu, full_cpu, all_cpu;
  std::vector<double> full_engine_cpu;  // of each full pass, on the engine's thread
  std::vector<int> full_changes;        // state changes each full pass recorded (events written)
  std::vector<size_t> full_parsed, full_listed;  // each full pass: jobs parsed, jobs listed
  std::vector<long> full_faults;                 // page faults in each full pass
  uint64_t requests = 0;
  int done = 0;
  const auto tracking_ends = Steady::now() + std::chrono::seconds(seconds);
  for (; Steady::now() < tracking_ends || (full_cpu.empty() && done < seconds + 40); ++done) {
    if (done > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    if (!quiet) {
      auto r = (*transport)->Send({"POST", "/slurm/v0.0.45/job/submit", other, token->jwt});
      if (!r || r->status != 200) return give_up("could not submit another user's job");
    }
    uint64_t before = (*client)->requests_sent();
    double c0 = CpuMs();
    const double t0 = ThreadCpuMs();
    const long faults0 = MinorFaults();
    fleet::PassStats s = (*engine)->Tick();
    const double cpu = CpuMs() - c0;
    (s.full_list ? full_cpu : light_cpu).push_back(cpu);
    if (s.full_list) {
      full_engine_cpu.push_back(ThreadCpuMs() - t0);
      full_changes.push_back(s.state_changes);
      full_parsed.push_back(s.jobs_parsed);
      full_listed.push_back(s.jobs_listed);
      full_faults.push_back(MinorFaults() - faults0);
    }
    all_cpu.push_back(cpu);
    requests += (*client)->requests_sent() - before;
    if (s.slurm_error) return give_up("a pass failed: " + s.slurm_error->ToString());
    if (s.tracking_requests != 1)
      return give_up("a pass did not make exactly one tracking request");
  }
  const long rss_after = StatusKiB("VmRSS");  // before this bench's own asking
  auto all = (*client)->AllJobStates();
  size_t in_slurm = all ? all->size() : 0;
  std::cout << fmt::format(
      "tracking {} jobs ({} jobs in slurmctld, {} of them held for someone else by --others), {} "
      "passes:\n",
      jobs, in_slurm, others, done);
  std::cout << fmt::format("  requests per pass: {:.2f}\n", double(requests) / done);
  std::cout << fmt::format("  light pass (jobs/state): {} passes, {:.2f} ms CPU (median)\n",
                           light_cpu.size(), Median(light_cpu));
  std::cout << fmt::format(
      "  full pass (job list)   : {} passes, {:.2f} ms CPU (median; on the engine's thread "
      "{:.2f}, the rest receiving the list)\n",
      full_cpu.size(), Median(full_cpu), Median(full_engine_cpu));
  // The first two full passes also fault in the two arrays that alternate from list to list (the
  // client's memo, the engine's list of jobs), once for the daemon's life; the first records the
  // held jobs' new reasons too. What every later list costs is the median from the third on.
  if (full_cpu.size() >= 3) {
    std::vector<double> steady(full_cpu.begin() + 2, full_cpu.end());
    std::vector<double> steady_engine(full_engine_cpu.begin() + 2, full_engine_cpu.end());
    std::cout << fmt::format(
        "  full pass, third on     : {} passes, {:.2f} ms CPU (median; on the engine's thread "
        "{:.2f}), max {:.2f}\n",
        steady.size(), Median(steady), Median(steady_engine),
        *std::max_element(steady.begin(), steady.end()));
  }
  // The first full list after the submits sees every held job's reason change (None ->
  // JobHeldUser) and records an event for each; later ones find nothing new of ours (with
  // --quiet, slurmctld answers them "no change"). Each is shown apart.
  for (size_t i = 0; i < full_cpu.size(); ++i) {
    std::cout << fmt::format(
        "    full pass {}: {:.2f} ms CPU ({:.2f} on the engine's thread), {} of {} listed jobs "
        "parsed, {} state changes recorded, {} page faults\n",
        i + 1, full_cpu[i], full_engine_cpu[i], full_parsed[i], full_listed[i], full_changes[i],
        full_faults[i]);
  }
  std::cout << fmt::format("  every pass             : {:.2f} ms CPU (mean over {} passes)\n",
                           std::accumulate(all_cpu.begin(), all_cpu.end(), 0.0) / done, done);
  std::cout << fmt::format(
      "  RSS {:.1f} MiB after the passes, peak while tracking {:.1f} MiB (this process: engine, "
      "store, client; {:.1f} MiB before the engine was made, {:.1f} MiB peak while submitting, "
      "{:.1f} MiB after it, {:.1f} MiB once what it left free was given back)\n",
      rss_after / 1024.0, StatusKiB("VmHWM") / 1024.0, rss_at_start / 1024.0, submit_peak / 1024.0,
      rss_submitted / 1024.0, rss_tracking / 1024.0);

  if (!keep) {
    cancel_all();
    std::cout << "cancelled this run's jobs (--keep to leave them)\n";
  }
  std::filesystem::remove(db);
  std::filesystem::remove(db.string() + "-wal");
  std::filesystem::remove(db.string() + "-shm");
  std::filesystem::remove(db.string() + ".lock");
  return 0;
}
