// RestClient: the Client for a real slurmrestd, over a Transport, authenticated by a TokenSource,
// speaking one Dialect (pinned, or the newest one the server answers). Thread-safe: any number of
// threads may call it at once; each call is one or more independent HTTP requests.
//
// Retries: GET and DELETE are retried with jittered exponential backoff on connection errors and
// 502/503/504. A submit POST is retried only when the request provably never left this host; an
// unknown outcome comes back as kUnknownOutcome for the caller to resolve by looking the job up.
// Any request rejected for its token (401, or 511/error 1007) is retried once after
// TokenSource::Invalidate(), so a refreshed token file or a re-minted token recovers on its own.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "auth/token_source.h"
#include "slurm/client.h"
#include "slurm/dialect.h"
#include "slurm/job_list_decoder.h"
#include "slurm/job_list_stream.h"
#include "slurm/transport.h"

namespace slurmfleet::slurm {

struct RetryPolicy {
  int max_attempts = 4;  // for idempotent requests, the first attempt included
  std::chrono::milliseconds base_delay{200};
  std::chrono::milliseconds max_delay{5000};
};

struct RestClientOptions {
  std::string api_version = "auto";  // "auto" or one of SupportedVersions()
  RetryPolicy retry;
  // How to wait between retries; tests pass a recorder instead of sleeping.
  std::function<void(std::chrono::milliseconds)> sleep;
};

class RestClient final : public Client {
 public:
  // Resolves the API version: a pinned one must be one we speak (kInvalidInput otherwise); `auto`
  // asks the server, newest first, and takes the first version that answers. kUnavailable when
  // slurmrestd cannot be reached; kNotFound when it serves none of our versions.
  // `transport` and `tokens` must outlive the client.
  static Result<std::unique_ptr<RestClient>> Connect(Transport& transport,
                                                     auth::TokenSource& tokens,
                                                     RestClientOptions options);

  std::string_view api_version() const override { return dialect_->version; }
  std::string JobUser() override;
  const Dialect& dialect() const { return *dialect_; }
  // The versions `auto` found the server to answer (newest first); empty when pinned.
  const std::vector<std::string>& offered_versions() const { return offered_; }

  Result<PingReport> Ping() override;
  Result<SubmitReceipt> Submit(const JobRequest& request) override;
  // POSTs from this thread through Transport::SendReleased; a POST rejected for its token is
  // kAuth (the next call uses a new one).
  void SubmitReleased(const std::vector<JobRequest>& requests, size_t at_once,
                      const std::function<Release(size_t)>& release,
                      const std::function<void(size_t, Result<SubmitReceipt>)>& done) override;
  std::vector<Result<SubmitReceipt>> SubmitAll(const std::vector<JobRequest>& requests,
                                               size_t at_once) override;
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

  // HTTP requests sent so far, retries included (for benchmarks and request-count checks).
  uint64_t requests_sent() const { return requests_sent_.load(); }

 private:
  RestClient(Transport& transport, auth::TokenSource& tokens, RestClientOptions options,
             const Dialect* dialect, std::vector<std::string> offered);

  enum class Idempotent { kYes, kNo };
  // One exchange with retries and re-authentication: a 2xx answer, or the mapped error.
  Result<HttpResponse> Exchange(const std::string& method, const std::string& path,
                                const std::string& body, Idempotent idempotent, bool& reauthed,
                                JobListStream* stream = nullptr);
  // An exchange whose JSON answer is parsed whole; an auth error inside a 200 re-authenticates
  // once.
  Result<nlohmann::json> Call(const std::string& method, const std::string& path,
                              const std::string& body, Idempotent idempotent);
  // A GET whose answer `decode` turns into an Answer with errors: an auth error among them
  // re-authenticates once, others are kRejected. `stream`, when given, takes a 2xx body.
  template <typename Answer, typename Decode>
  Result<Answer> GetDecoded(const std::string& path, JobListStream* stream, Decode decode);
  // A GET whose answer is a job list, decoded job by job as it arrives (it can be tens of MB),
  // into room made for `expected_jobs`; only the jobs `keep` wants, when given, and then jobs sent
  // unchanged since the last such list are not parsed again.
  Result<JobListAnswer> CallJobList(const std::string& path, size_t expected_jobs,
                                    const JobFilter* keep = nullptr);
  // Both JobsChangedSince: every job without `keep`.
  Result<JobsSnapshot> ListChangedSince(std::optional<Seconds> since, const JobFilter* keep);
  Result<HttpResponse> SendOnce(const std::string& method, const std::string& path,
                                const std::string& body, JobListStream* stream);
  // A 2xx answer's JSON; kUnavailable (idempotent) or kUnknownOutcome when it is not JSON.
  Result<nlohmann::json> Parsed(const HttpResponse& r, const std::string& where,
                                Idempotent idempotent);
  Result<SubmitReceipt> PostSubmit(const nlohmann::json& body);
  // What a submit POST's answer says: the receipt, or why there is none (kAuth: the token).
  // `decoder` reads the usual shape; any other is read as a DOM, as PostSubmit reads it.
  Result<SubmitReceipt> SubmitAnswer(Result<HttpResponse>& answer, const std::string& path,
                                     JobSubmitDecoder& decoder);
  // The receipt in a submit answer, or kRejected with Slurm's words when it created no job.
  Result<SubmitReceipt> ReceiptFrom(const JobSubmitAnswer& answer, const std::string& path);
  Result<std::vector<JobStateEntry>> GetStates(const std::string& path);

  Transport& transport_;
  auth::TokenSource& tokens_;
  RestClientOptions options_;
  const Dialect* dialect_;
  std::vector<std::string> offered_;
  std::atomic<uint64_t> requests_sent_{0};
  // A little more than the last whole job list held, plus the jobs submitted since.
  std::atomic<size_t> expected_list_jobs_{0};
  std::mutex states_mu_;  // one jobs/state answer decoded at a time, with buffers kept warm
  JobStatesDecoder states_decoder_;
  // The filtered lists' jobs by their text (the engine's, taken again and again); a list that
  // finds it in use by another is decoded without it.
  std::mutex list_memo_mu_;
  JobListMemo list_memo_;
  // Guarded by list_memo_mu_. The last filtered list's jobs as handed out (their array), and
  // those given back with their texts' digests (or a failed list's), for the next list to write
  // over: the memo holds no decoded job, only where in that array each one is.
  const JobInfo* handed_out_ = nullptr;
  std::vector<JobInfo> recycled_;
  std::vector<uint64_t> recycled_digests_;
};

}  // namespace slurmfleet::slurm
