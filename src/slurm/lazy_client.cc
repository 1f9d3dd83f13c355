#include "slurm/lazy_client.h"

namespace slurmfleet::slurm {

LazyClient::LazyClient(Transport& transport, auth::TokenSource& tokens, RestClientOptions options)
    : transport_(transport), tokens_(tokens), options_(std::move(options)) {}

Result<RestClient*> LazyClient::Connected() {
  std::lock_guard lock(mu_);
  if (!client_) {
    Result<std::unique_ptr<RestClient>> c = RestClient::Connect(transport_, tokens_, options_);
    if (!c) {
      Error e = c.error();
      // configuration problems stay what they are; everything else is "try again later"
      if (e.code != Code::kInvalidInput) e.code = Code::kUnavailable;
      return std::unexpected(e);
    }
    client_ = std::move(*c);
  }
  return client_.get();
}

std::string_view LazyClient::api_version() const {
  std::lock_guard lock(mu_);
  return client_ ? client_->api_version() : std::string_view();
}

namespace {

// Runs `call` on the connected client, or returns why there is none.
template <typename Call>
auto OnConnected(LazyClient& lazy, Call&& call) -> decltype(call(std::declval<RestClient&>())) {
  Result<RestClient*> c = lazy.Connected();
  if (!c) return std::unexpected(c.error());
  return call(**c);
}

}  // namespace

std::string LazyClient::JobUser() {
  Result<RestClient*> c = Connected();
  return c ? (*c)->JobUser() : std::string();
}

Result<PingReport> LazyClient::Ping() {
  return OnConnected(*this, [](RestClient& c) { return c.Ping(); });
}
Result<SubmitReceipt> LazyClient::Submit(const JobRequest& r) {
  return OnConnected(*this, [&](RestClient& c) { return c.Submit(r); });
}
std::vector<Result<SubmitReceipt>> LazyClient::SubmitAll(const std::vector<JobRequest>& requests,
                                                         size_t at_once) {
  Result<RestClient*> c = Connected();
  if (!c) return std::vector<Result<SubmitReceipt>>(requests.size(), std::unexpected(c.error()));
  return (*c)->SubmitAll(requests, at_once);
}
void LazyClient::SubmitReleased(const std::vector<JobRequest>& requests, size_t at_once,
                                const std::function<Release(size_t)>& release,
                                const std::function<void(size_t, Result<SubmitReceipt>)>& done) {
  Result<RestClient*> c = Connected();
  if (c) return (*c)->SubmitReleased(requests, at_once, release, done);
  // not connected: what is released fails at once, as Submit would
  RunReleased(requests.size(), 1, release, [&](size_t i) { done(i, std::unexpected(c.error())); });
}

Result<SubmitReceipt> LazyClient::SubmitHet(const std::vector<JobRequest>& parts) {
  return OnConnected(*this, [&](RestClient& c) { return c.SubmitHet(parts); });
}
Result<std::vector<JobInfo>> LazyClient::GetJob(const JobRef& j) {
  return OnConnected(*this, [&](RestClient& c) { return c.GetJob(j); });
}
Result<JobsSnapshot> LazyClient::JobsChangedSince(std::optional<Seconds> since) {
  return OnConnected(*this, [&](RestClient& c) { return c.JobsChangedSince(since); });
}

Result<JobsSnapshot> LazyClient::JobsChangedSince(std::optional<Seconds> since,
                                                  const JobFilter& keep) {
  return OnConnected(*this, [&](RestClient& c) { return c.JobsChangedSince(since, keep); });
}
void LazyClient::Recycle(JobsSnapshot&& snapshot) {
  RestClient* client = nullptr;
  {
    std::lock_guard lock(mu_);
    client = client_.get();  // never replaced once set
  }
  if (client) client->Recycle(std::move(snapshot));
}
Result<std::vector<JobStateEntry>> LazyClient::JobStates(const std::vector<uint32_t>& ids) {
  return OnConnected(*this, [&](RestClient& c) { return c.JobStates(ids); });
}
Result<std::vector<JobStateEntry>> LazyClient::AllJobStates() {
  return OnConnected(*this, [](RestClient& c) { return c.AllJobStates(); });
}
Result<std::vector<JobInfo>> LazyClient::ListJobs(std::string_view prefix) {
  return OnConnected(*this, [&](RestClient& c) { return c.ListJobs(prefix); });
}
Status LazyClient::Cancel(const JobRef& j, std::string_view signal) {
  return OnConnected(*this, [&](RestClient& c) { return c.Cancel(j, signal); });
}

}  // namespace slurmfleet::slurm
