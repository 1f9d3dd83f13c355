// Tracking N held jobs on the real testbed: one batched request per cycle (what slurmfleet does)
// against one GET per job (what per-agent pollers such as the Java plugin do), measured side by
// side in one run; plus the decode cost of a real N-job GET /jobs body, whole and with the
// engine's filter when none of its jobs is ours (other users' jobs, as the daemon reads them),
// each with and without the memo of the list before (slurm/job_list_memo.h); and the CPU time of
// fetching that list as the engine does, by a client whose memo knows it and by one whose memo
// is reset for every fetch.
//
//   tracking_bench [--jobs N] [--cycles C] [--api-version V] [--keep]
// Needs SLURMRESTD_URL, SLURM_JWT_KEY (and SLURM_USER) as testbed/testbed.sh env prints them.
// Not a test: it prints figures and never fails on them.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "auth/minting_token_source.h"
#include "base/clock.h"
#include "fleet/engine.h"
#include "slurm/curl_transport.h"
#include "slurm/dialect.h"
#include "slurm/job_list_decoder.h"
#include "slurm/job_list_stream.h"
#include "slurm/rest_client.h"

using namespace slurmfleet;
using Steady = std::chrono::steady_clock;

namespace {

std::string Env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
double Ms(F&& f) {
  auto start = Steady::now();
  f();
  return std::chrono::duration<double, std::milli>(Steady::now() - start).count();
}

// This process's CPU time (a fetch's receiving and decoding run in it; slurmrestd's do not).
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int Die(const std::string& what) {
  std::cerr << "tracking_bench: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 500, cycles = 5;
  std::string version = "v0.0.45";
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--jobs" && i + 1 < argc)
      jobs = std::atoi(argv[++i]);
    else if (a == "--cycles" && i + 1 < argc)
      cycles = std::atoi(argv[++i]);
    else if (a == "--api-version" && i + 1 < argc)
      version = argv[++i];
    else if (a == "--keep")
      keep = true;
    else
      return Die("usage: tracking_bench [--jobs N] [--cycles C] [--api-version V] [--keep]");
  }
  std::string url = Env("SLURMRESTD_URL"), key = Env("SLURM_JWT_KEY"),
              user = Env("SLURM_USER", "ci");
  if (url.empty() || key.empty())
    return Die("set SLURMRESTD_URL and SLURM_JWT_KEY (eval \"$(testbed/testbed.sh env)\")");

  SystemClock clock;
  slurm::TransportOptions transport_options;
  transport_options.base_url = url;
  auto transport = slurm::CurlTransport::Create(transport_options);
  if (!transport) return Die(transport.error().ToString());
  auth::MintingTokenSource tokens(key, user, clock);
  slurm::RestClientOptions options;
  options.api_version = version;
  auto connected = slurm::RestClient::Connect(**transport, tokens, options);
  if (!connected) return Die(connected.error().ToString());
  slurm::RestClient& client = **connected;

  // held jobs never start, so their number and states stay put while we measure
  const std::string prefix = "bench-track-";
  auto existing = client.ListJobs(prefix);
  if (!existing) return Die(existing.error().ToString());
  std::vector<uint32_t> ids;
  for (const slurm::JobInfo& j : *existing) {
    if (j.state.base == slurm::BaseState::kPending) ids.push_back(j.job_id);
  }
  double submit_ms = Ms([&] {
    while (static_cast<int>(ids.size()) < jobs) {
      slurm::JobRequest r;
      r.name = prefix + std::to_string(ids.size());
      r.script = "#!/bin/bash\ntrue\n";
      r.hold = true;
      r.current_working_directory = "/tmp";
      r.memory_per_node_mb = 10;
      r.environment = {{"PATH", "/usr/bin:/bin", false}};
      auto receipt = client.Submit(r);
      if (!receipt) {
        std::cerr << receipt.error().ToString() << "\n";
        std::exit(1);
      }
      ids.push_back(receipt->job_id);
    }
  });
  ids.resize(jobs);
  std::cout << fmt::format(
      "slurmrestd {} ({}), {} held jobs ready ({:.0f} ms to submit the missing ones)\n", url,
      version, ids.size(), submit_ms);

  const size_t state_query_limit = fleet::EngineOptions().max_ids_per_state_query;
  std::vector<double> batched_ms, state_ms, per_job_ms;
  uint64_t batched_requests = 0, state_requests = 0, per_job_requests = 0;
  for (int c = 0; c < cycles; ++c) {
    uint64_t before = client.requests_sent();
    batched_ms.push_back(Ms([&] {
      auto snapshot = client.JobsChangedSince(std::nullopt);
      if (!snapshot) std::exit(Die(snapshot.error().ToString()));
    }));
    batched_requests += client.requests_sent() - before;

    before = client.requests_sent();
    state_ms.push_back(Ms([&] {
      // as the engine asks: slurmctld refuses a long id list ("Insane message length")
      auto states = ids.size() > state_query_limit ? client.AllJobStates() : client.JobStates(ids);
      if (!states) std::exit(Die(states.error().ToString()));
    }));
    state_requests += client.requests_sent() - before;

    before = client.requests_sent();
    per_job_ms.push_back(Ms([&] {
      for (uint32_t id : ids) {
        auto job = client.GetJob({id, ""});
        if (!job) std::exit(Die(job.error().ToString()));
      }
    }));
    per_job_requests += client.requests_sent() - before;
  }
  auto row = [&](const char* what, uint64_t requests, const std::vector<double>& ms) {
    std::cout << fmt::format("  {:<34} {:>6} requests/cycle {:>10.1f} ms/cycle (median of {})\n",
                             what, requests / cycles, Median(ms), cycles);
  };
  std::cout << fmt::format("tracking {} jobs, {} cycles each:\n", ids.size(), cycles);
  row("batched GET /jobs (full job info)", batched_requests, batched_ms);
  row(ids.size() > state_query_limit ? "batched GET /jobs/state (all jobs)"
                                     : "batched GET /jobs/state?job_id=...",
      state_requests, state_ms);
  row("one GET /job/{id} per job", per_job_requests, per_job_ms);
  std::cout << fmt::format(
      "  ratio per-job / batched: {:.0f}x the requests, {:.1f}x the wall time (full info), "
      "{:.1f}x (jobs/state)\n",
      static_cast<double>(per_job_requests) / std::max<uint64_t>(batched_requests, 1),
      Median(per_job_ms) / Median(batched_ms), Median(per_job_ms) / Median(state_ms));

  // parse throughput of a real body
  auto token = tokens.Get();
  if (!token) return Die(token.error().ToString());
  auto body = (*transport)->Send({"GET", "/slurm/" + version + "/jobs/", "", token->jwt});
  if (!body || body->status != 200) return Die("GET /jobs failed");
  const slurm::Dialect& dialect = *slurm::FindDialect(version);
  size_t decoded = 0;
  int reps = 20;
  double parse_ms = Ms([&] {
    for (int i = 0; i < reps; ++i) {
      std::string copy = body->body;
      auto answer = slurm::DecodeJobList(dialect, copy);
      if (!answer) std::exit(Die(answer.error().ToString()));
      decoded += answer->jobs.size();
    }
  });
  double mb = static_cast<double>(body->body.size()) * reps / (1024.0 * 1024.0);
  std::cout << fmt::format(
      "parse + decode of a real GET /jobs body ({:.2f} MiB, {} jobs): {:.1f} MiB/s, {:.2f} ms per "
      "body\n",
      body->body.size() / (1024.0 * 1024.0), decoded / reps, mb / (parse_ms / 1000.0),
      parse_ms / reps);

  // As the daemon reads a full list: split as it arrives (16 KB pieces) and decoded job by job,
  // once whole and once with the engine's filter wanting none of these jobs, which is how it sees
  // other users' jobs. Then both again as the daemon reads a list sent again unchanged (since a
  // job elsewhere in the cluster changed): with a memo of the list before. Alternated, so every
  // arm meets the same machine.
  // A memo arm hands each list's decoded jobs to the next (JobListStream::Reuse), as the client
  // does for the engine: the memo knows where in them each job is, and holds no copy of its own.
  struct Kept {
    std::vector<slurm::JobInfo> jobs;
    std::vector<uint64_t> digests;
  };
  auto stream_ms = [&](const slurm::JobFilter* keep_only, slurm::JobListMemo* memo, Kept* kept) {
    std::optional<Result<slurm::JobListAnswer>> answer;
    const double ms = Ms([&] {
      slurm::JobListStream stream(dialect, keep_only, memo);
      if (kept) stream.Reuse(std::move(kept->jobs), std::move(kept->digests));
      std::string_view text = body->body;
      for (size_t at = 0; at < text.size(); at += 16384) stream.Write(text.substr(at, 16384));
      answer = stream.Finish();
    });
    if (!*answer) std::exit(Die(answer->error().ToString()));
    if (kept) *kept = {std::move((*answer)->jobs), std::move((*answer)->digests)};
    return ms;
  };
  std::string whole_text = body->body;
  auto all = slurm::DecodeJobList(dialect, whole_text);
  if (!all) return Die(all.error().ToString());
  slurm::JobFilter mine{"slurmfleet:not-this-cluster:", {}};
  for (const slurm::JobInfo& j : all->jobs) mine.ids.push_back(j.job_id);
  std::sort(mine.ids.begin(), mine.ids.end());
  const slurm::JobFilter others{"slurmfleet:not-this-cluster:", {}};
  slurm::JobListMemo mine_memo, others_memo;
  Kept mine_kept, others_kept;
  stream_ms(&mine, &mine_memo, &mine_kept);
  stream_ms(&others, &others_memo, &others_kept);
  std::vector<double> whole_ms, filtered_ms, whole_memo_ms, filtered_memo_ms;
  for (int i = 0; i < reps; ++i) {
    whole_ms.push_back(stream_ms(&mine, nullptr, nullptr));
    filtered_ms.push_back(stream_ms(&others, nullptr, nullptr));
    whole_memo_ms.push_back(stream_ms(&mine, &mine_memo, &mine_kept));
    filtered_memo_ms.push_back(stream_ms(&others, &others_memo, &others_kept));
  }
  std::cout << fmt::format(
      "streamed decode of that body, median of {}: {:.2f} ms when every job is ours (read "
      "whole), {:.2f} ms with the engine's filter when none of the jobs is ours (ratio {:.2f})\n"
      "the same body sent again unchanged, with the memo of the list before: {:.2f} ms when "
      "every job is ours (ratio to without {:.2f}), {:.2f} ms when none is (ratio {:.2f})\n",
      reps, Median(whole_ms), Median(filtered_ms), Median(filtered_ms) / Median(whole_ms),
      Median(whole_memo_ms), Median(whole_memo_ms) / Median(whole_ms), Median(filtered_memo_ms),
      Median(filtered_memo_ms) / Median(filtered_ms));

  // The same, end to end as the engine fetches its full list (its filter, through RestClient),
  // alternately by two clients that each read it before: one asks with the same filter every
  // time (its memo knows every job), the other with a tag prefix that changes every time (its
  // memo forgets everything: every job is parsed). CPU time of this process, receiving included.
  auto second = slurm::RestClient::Connect(**transport, tokens, options);
  if (!second) return Die(second.error().ToString());
  slurm::JobFilter changing = mine;
  // Each list is handed back (Recycle) once read, as the engine does.
  auto fetch_cpu = [&](slurm::RestClient& by, const slurm::JobFilter& filter) {
    const double c0 = CpuMs();
    auto snapshot = by.JobsChangedSince(std::nullopt, filter);
    if (!snapshot) std::exit(Die(snapshot.error().ToString()));
    const double cpu = CpuMs() - c0;
    by.Recycle(std::move(*snapshot));
    return cpu;
  };
  fetch_cpu(client, mine);
  fetch_cpu(**second, changing);
  std::vector<double> warm_cpu, cold_cpu;
  const int fetches = 5;
  for (int i = 0; i < fetches; ++i) {
    changing.comment_prefix = "slurmfleet:not-this-cluster-" + std::to_string(i) + ":";
    cold_cpu.push_back(fetch_cpu(**second, changing));
    warm_cpu.push_back(fetch_cpu(client, mine));
  }
  std::cout << fmt::format(
      "the full list fetched with the engine's filter, every job ours, median of {}: {:.2f} ms "
      "CPU with every job parsed, {:.2f} ms with the memo of the list before (ratio {:.2f})\n",
      fetches, Median(cold_cpu), Median(warm_cpu), Median(warm_cpu) / Median(cold_cpu));

  if (!keep) {
    for (uint32_t id : ids) (void)client.Cancel({id, ""});
    std::cout << "cancelled the held jobs (use --keep to reuse them next run)\n";
  }
  return 0;
}
