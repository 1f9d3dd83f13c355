// A Client talks to one slurmrestd through one API dialect. Safe to call from any thread.
// Never throws: HTTP, libcurl and JSON failures all come back as an Error whose `where` names the
// request ("POST /slurm/v0.0.45/job/submit") and whose message carries Slurm's errors[]/warnings[].
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/run_concurrently.h"
#include "slurm/job.h"
#include "slurm/job_filter.h"

namespace slurmfleet::slurm {

struct PingReport {
  std::string api_version;                    // the dialect in use, e.g. "v0.0.45"
  std::vector<std::string> offered_versions;  // what the server answered to, newest first
  std::string slurm_release;                  // "26.05.5"
  std::string cluster;                        // "testbed"
  std::string controller;                     // hostname of the responding slurmctld
  bool responding = false;
  int64_t latency_us = 0;
};

class Client {
 public:
  virtual ~Client() = default;

  virtual std::string_view api_version() const = 0;

  // kAuth when slurmctld rejects the token (ping answers 200 with responding=false then).
  virtual Result<PingReport> Ping() = 0;

  // Never retried here: after kUnknownOutcome, look the job up by its name or comment tag first.
  // A 200 without job_id (Slurm's answer to a wrongly typed field) is kRejected with the warnings.
  virtual Result<SubmitReceipt> Submit(const JobRequest& request) = 0;
  // Each request as Submit would send it, up to `at_once` POSTs in flight together, all from the
  // calling thread; the results in the same order. Unlike Submit, a POST that provably never left
  // (kUnavailable) is not retried here: it is the caller's to send again.
  virtual std::vector<Result<SubmitReceipt>> SubmitAll(const std::vector<JobRequest>& requests,
                                                       size_t at_once) = 0;
  // SubmitAll for a caller that releases requests while they are being sent and wants each
  // answer as soon as it comes: the i-th is sent once release(i) says kNow (asked in order;
  // kLater: asked again a millisecond later; kNever: neither it nor any after it is sent), up to
  // `at_once` in flight, and done(i, result) is called, one call at a time, as each ends.
  // Returns when every POST that left has ended. As with SubmitAll, a POST that provably never
  // left (kUnavailable) or whose token was rejected (kAuth) is the caller's to send again. This
  // default sends from `at_once` threads through Submit, which may already have retried it.
  virtual void SubmitReleased(const std::vector<JobRequest>& requests, size_t at_once,
                              const std::function<Release(size_t)>& release,
                              const std::function<void(size_t, Result<SubmitReceipt>)>& done) {
    std::mutex mu;
    RunReleased(requests.size(), at_once, release, [&](size_t i) {
      Result<SubmitReceipt> receipt = Submit(requests[i]);
      std::lock_guard lock(mu);
      done(i, std::move(receipt));
    });
  }
  // A heterogeneous job: one component per request, script taken from the first; returns the
  // leader's id.
  virtual Result<SubmitReceipt> SubmitHet(const std::vector<JobRequest>& components) = 0;

  // Every component of the job (one for a plain job). kNotFound for an unknown id or SLUID.
  virtual Result<std::vector<JobInfo>> GetJob(const JobRef& job) = 0;

  // Every job, in one HTTP request, if anything changed since `since`; `changed` false otherwise.
  // Pass the previous snapshot's last_update back as `since` (nullopt: everything).
  virtual Result<JobsSnapshot> JobsChangedSince(std::optional<Seconds> since) = 0;
  // The same, for a caller that needs only the jobs `keep` wants: the others may be left out of
  // `jobs` (RestClient leaves them out, and reads each only up to its id and comment).
  virtual Result<JobsSnapshot> JobsChangedSince(std::optional<Seconds> since,
                                                const JobFilter& keep) = 0;
  // Gives back the last snapshot the filtered JobsChangedSince returned, its jobs and digests as
  // they came, once the caller is done with it: the next list may then be written over them
  // (RestClient takes a job sent again unchanged from there instead of parsing it, and leaves it
  // as it is at the same place). Any other snapshot is simply freed, and so is this one while
  // another list is being read. Never waits for a list.
  virtual void Recycle(JobsSnapshot&&) {}

  // The states of the given jobs, in one HTTP request. Unknown ids are simply absent. Keep `ids`
  // to a few hundred: slurmctld refuses a long list ("Insane message length").
  virtual Result<std::vector<JobStateEntry>> JobStates(const std::vector<uint32_t>& ids) = 0;
  // The states of every job slurmctld knows, in one HTTP request (about 60 bytes per job).
  virtual Result<std::vector<JobStateEntry>> AllJobStates() = 0;

  // Jobs whose name starts with `prefix` (all jobs for an empty prefix).
  virtual Result<std::vector<JobInfo>> ListJobs(std::string_view name_prefix) = 0;

  // Sends `signal` ("KILL", "TERM", ...; empty = cancel). Refuses with kRejected, before sending
  // anything, when the job belongs to another user than the token's (a plain user's cancel of
  // another user's job hangs slurmctld 26.05.5). A job that already ended is success. kNotFound
  // for an unknown job.
  virtual Status Cancel(const JobRef& job, std::string_view signal = {}) = 0;

  // The Slurm user the jobs this client submits run as (its token's user), or empty when the
  // token does not say (or there is none yet).
  virtual std::string JobUser() = 0;
};

}  // namespace slurmfleet::slurm
