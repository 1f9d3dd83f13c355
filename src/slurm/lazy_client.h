// LazyClient: a Client that connects (discovers the API version) on first use and again after a
// failed discovery, so a daemon can start while slurmrestd is down and recover on its own when it
// comes back. Until connected, every call answers kUnavailable with the reason.
// Thread-safe. `transport` and `tokens` must outlive it.
#pragma once

#include <memory>
#include <mutex>

#include "slurm/rest_client.h"

namespace slurmfleet::slurm {

class LazyClient final : public Client {
 public:
  LazyClient(Transport& transport, auth::TokenSource& tokens, RestClientOptions options);

  // The connected client, connecting now if needed.
  Result<RestClient*> Connected();

  std::string_view api_version() const override;
  std::string JobUser() override;
  Result<PingReport> Ping() override;
  Result<SubmitReceipt> Submit(const JobRequest& request) override;
  std::vector<Result<SubmitReceipt>> SubmitAll(const std::vector<JobRequest>& requests,
                                               size_t at_once) override;
  void SubmitReleased(const std::vector<JobRequest>& requests, size_t at_once,
                      const std::function<Release(size_t)>& release,
                      const std::function<void(size_t, Result<SubmitReceipt>)>& done) override;
  Result<SubmitReceipt> SubmitHet(const std::vector<JobRequest>& components) override;
  Result<std::vector<JobInfo>> GetJob(const JobRef& job) override;
  Result<JobsSnapshot> JobsChangedSince(std::optional<Seconds> since) override;
  Result<JobsSnapshot> JobsChangedSince(std::optional<Seconds> since,
                                        const JobFilter& keep) override;
  void Recycle(JobsSnapshot&& snapshot) override;
  Result<std::vector<JobStateEntry>> JobStates(const std::vector<uint32_t>& ids) override;
  Result<std::vector<JobStateEntry>> AllJobStates() override;
  Result<std::vector<JobInfo>> ListJobs(std::string_view name_prefix) override;
  Status Cancel(const JobRef& job, std::string_view signal = {}) override;

 private:
  Transport& transport_;
  auth::TokenSource& tokens_;
  RestClientOptions options_;
  mutable std::mutex mu_;
  std::unique_ptr<RestClient> client_;  // guarded by mu_; set once, never replaced
};

}  // namespace slurmfleet::slurm
