#include "slurm/rest_client.h"

#include <algorithm>
#include <random>
#include <thread>

#include "slurm/job_list_decoder.h"
#include "slurm/json_fields.h"
#include "slurm/response_errors.h"

namespace slurmfleet::slurm {
namespace {

bool RetryableStatus(long status) { return status == 502 || status == 503 || status == 504; }

std::chrono::milliseconds Backoff(const RetryPolicy& policy, int attempt) {
  // full jitter: uniform in [0, min(max, base * 2^attempt)]
  thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t cap = std::min<int64_t>(
      policy.max_delay.count(), policy.base_delay.count() * (int64_t{1} << std::min(attempt, 20)));
  std::uniform_int_distribution<int64_t> dist(cap / 2, std::max<int64_t>(cap, 1));
  return std::chrono::milliseconds(dist(rng));
}

// "GET /slurm/v0.0.45/jobs/state/?job_id=1&...", for errors: a many-job query can be kilobytes
// long, so a long request is named by its path alone.
std::string RequestName(const std::string& method, const std::string& path) {
  return method + " " + (path.size() > 120 ? path.substr(0, path.find('?')) : path);
}

}  // namespace

RestClient::RestClient(Transport& transport, auth::TokenSource& tokens, RestClientOptions options,
                       const Dialect* dialect, std::vector<std::string> offered)
    : transport_(transport),
      tokens_(tokens),
      options_(std::move(options)),
      dialect_(dialect),
      offered_(std::move(offered)) {
  if (!options_.sleep) {
    options_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
}

Result<std::unique_ptr<RestClient>> RestClient::Connect(Transport& transport,
                                                        auth::TokenSource& tokens,
                                                        RestClientOptions options) {
  if (options.api_version != "auto") {
    const Dialect* d = FindDialect(options.api_version);
    if (!d) {
      return Fail(Code::kInvalidInput,
                  "'" + options.api_version +
                      "' is not an API version slurmfleet speaks; use auto or one of " +
                      SupportedVersions(),
                  "api version");
    }
    return std::unique_ptr<RestClient>(
        new RestClient(transport, tokens, std::move(options), d, {}));
  }
  // Ask each version's ping, newest first. A version that is not served answers 404; any other
  // answer (200, even a 511 for a bad token) means the server speaks it.
  // Slurm 24.11 authenticates before it routes (401 for every path without a token), so ask
  // with the token when there is one.
  std::vector<std::string> offered;
  const Dialect* chosen = nullptr;
  Result<auth::Token> token = tokens.Get();
  bool auth_refused = false;
  for (const Dialect& d : AllDialects()) {
    Result<HttpResponse> r =
        transport.Send({"GET", d.Path("/ping/"), "", token ? token->jwt : Secret()});
    if (!r) {
      if (r.error().code == Code::kUnknownOutcome) r.error().code = Code::kUnavailable;
      return std::unexpected(r.error());
    }
    if (r->status == 404) continue;
    if (r->status == 401) {
      auth_refused = true;
      continue;
    }
    offered.emplace_back(d.version);
    if (!chosen) chosen = &d;
  }
  if (!chosen && auth_refused) {
    if (!token) return std::unexpected(token.error());
    return Fail(Code::kAuth,
                "slurmrestd refused the token before saying which API versions it serves; refresh "
                "the token",
                "GET /slurm/*/ping");
  }
  if (!chosen) {
    return Fail(Code::kNotFound,
                "slurmrestd serves none of the API versions slurmfleet speaks (" +
                    SupportedVersions() + "); it needs Slurm 24.11 or newer",
                "GET /slurm/*/ping");
  }
  return std::unique_ptr<RestClient>(
      new RestClient(transport, tokens, std::move(options), chosen, std::move(offered)));
}

Result<HttpResponse> RestClient::SendOnce(const std::string& method, const std::string& path,
                                          const std::string& body, JobListStream* stream) {
  Result<auth::Token> token = tokens_.Get();
  if (!token) return std::unexpected(token.error());
  requests_sent_.fetch_add(1);
  if (stream) stream->Reset();  // an earlier attempt may have written part of its answer
  return transport_.Send({method, path, body, token->jwt, stream});
}

Result<HttpResponse> RestClient::Exchange(const std::string& method, const std::string& path,
                                          const std::string& body, Idempotent idempotent,
                                          bool& reauthed, JobListStream* stream) {
  const std::string where = RequestName(method, path);
  const bool retry_ok = idempotent == Idempotent::kYes;
  for (int attempt = 0;; ++attempt) {
    Result<HttpResponse> r = SendOnce(method, path, body, stream);
    bool can_retry = attempt + 1 < options_.retry.max_attempts;
    if (!r) {
      Error e = r.error();
      if (e.code == Code::kAuth) return std::unexpected(e);  // no token at all: nothing to retry
      // a POST whose request never left this host is as safe to resend as a GET
      bool retryable =
          e.code == Code::kUnavailable || (retry_ok && e.code == Code::kUnknownOutcome);
      if (retryable && can_retry) {
        options_.sleep(Backoff(options_.retry, attempt));
        continue;
      }
      if (retry_ok && e.code == Code::kUnknownOutcome) e.code = Code::kUnavailable;
      return std::unexpected(e);
    }
    if (r->status >= 200 && r->status < 300) return r;
    Error e = ErrorForStatus(r->status, r->body, retry_ok, where, tokens_.FixWhenRejected());
    if (e.code == Code::kAuth && !reauthed) {
      // the file may have been refreshed or the minted token expired: one more try, fresh token
      tokens_.Invalidate();
      reauthed = true;
      continue;
    }
    if (retry_ok && RetryableStatus(r->status) && can_retry) {
      options_.sleep(Backoff(options_.retry, attempt));
      continue;
    }
    return std::unexpected(e);
  }
}

namespace {

bool AuthRejected(const std::vector<SlurmMessage>& errors) {
  for (const SlurmMessage& m : errors) {
    if (m.error_number == kSlurmAuthError) return true;
  }
  return false;
}

// A submit answer read as a DOM: lenient, as a wrong type reads as absent.
JobSubmitAnswer SubmitAnswerOf(const nlohmann::json& body) {
  JsonFields f(body, "");
  JobSubmitAnswer answer;
  answer.job_id = f.UInt32("job_id");
  answer.step_id = f.String("step_id");
  answer.user_message = f.String("job_submit_user_msg");
  answer.errors = ErrorsOf(body);
  answer.warnings = WarningsOf(body);
  return answer;
}

}  // namespace

Result<nlohmann::json> RestClient::Parsed(const HttpResponse& r, const std::string& where,
                                          Idempotent idempotent) {
  nlohmann::json parsed = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return Fail(
        idempotent == Idempotent::kYes ? Code::kUnavailable : Code::kUnknownOutcome,
        "slurmrestd answered HTTP " + std::to_string(r.status) + " with a body that is not JSON",
        where);
  }
  return parsed;
}

Result<nlohmann::json> RestClient::Call(const std::string& method, const std::string& path,
                                        const std::string& body, Idempotent idempotent) {
  bool reauthed = false;
  for (;;) {
    Result<HttpResponse> r = Exchange(method, path, body, idempotent, reauthed);
    if (!r) return std::unexpected(r.error());
    Result<nlohmann::json> parsed = Parsed(*r, method + " " + path, idempotent);
    if (!parsed) return parsed;
    if (AuthRejected(ErrorsOf(*parsed))) {
      if (reauthed)
        return std::unexpected(ErrorForStatus(511, r->body, idempotent == Idempotent::kYes,
                                              method + " " + path, tokens_.FixWhenRejected()));
      tokens_.Invalidate();
      reauthed = true;
      continue;
    }
    return parsed;
  }
}

template <typename Answer, typename Decode>
Result<Answer> RestClient::GetDecoded(const std::string& path, JobListStream* stream,
                                      Decode decode) {
  const std::string where = RequestName("GET", path);
  bool reauthed = false;
  for (;;) {
    Result<HttpResponse> r = Exchange("GET", path, "", Idempotent::kYes, reauthed, stream);
    if (!r) return std::unexpected(r.error());
    Result<Answer> answer = decode(r->body);
    if (!answer) {
      const Error& e = answer.error();
      return Fail(Code::kInternal, e.message, e.where.empty() ? where : where + " " + e.where);
    }
    if (AuthRejected(answer->errors)) {
      if (reauthed)
        return Fail(Code::kAuth, "slurmrestd rejected the token: " + DescribeAll(answer->errors),
                    where);
      tokens_.Invalidate();
      reauthed = true;
      continue;
    }
    if (!answer->errors.empty()) return Fail(Code::kRejected, DescribeAll(answer->errors), where);
    return answer;
  }
}

Result<JobListAnswer> RestClient::CallJobList(const std::string& path, size_t expected_jobs,
                                              const JobFilter* keep) {
  // decoded as it arrives: a full list is never held whole
  std::unique_lock memo_lock(list_memo_mu_, std::try_to_lock);
  const bool memo = keep && memo_lock.owns_lock();
  JobListStream stream(*dialect_, keep, memo ? &list_memo_ : nullptr);
  if (memo) {
    handed_out_ = nullptr;
    stream.Reuse(std::move(recycled_), std::move(recycled_digests_));
  }
  stream.Reserve(expected_jobs);
  Result<JobListAnswer> answer =
      GetDecoded<JobListAnswer>(path, &stream, [&stream](const std::string& body) {
        if (!body.empty()) stream.Write(body);  // a transport that does not stream
        return stream.Finish();
      });
  // the memo knows where the jobs it learnt are held: the next list takes them from there
  if (memo && answer && answer->listed > 0) {
    handed_out_ = answer->jobs.data();
  } else if (memo) {
    stream.GiveBack(recycled_, recycled_digests_);
  }
  return answer;
}

void RestClient::Recycle(JobsSnapshot&& snapshot) {
  // a list being read holds the lock for as long as it takes (seconds on a big cluster): the
  // snapshot is freed instead of waiting for it
  std::unique_lock lock(list_memo_mu_, std::try_to_lock);
  if (!lock.owns_lock() || !handed_out_ || snapshot.jobs.data() != handed_out_ ||
      snapshot.jobs.size() != snapshot.digests.size()) {
    return;
  }
  recycled_ = std::move(snapshot.jobs);
  recycled_digests_ = std::move(snapshot.digests);
  handed_out_ = nullptr;
}

std::string RestClient::JobUser() {
  Result<auth::Token> token = tokens_.Get();
  return token ? token->user : std::string();
}

Result<PingReport> RestClient::Ping() {
  Result<nlohmann::json> body = Call("GET", dialect_->Path("/ping/"), "", Idempotent::kYes);
  if (!body) return std::unexpected(body.error());
  const std::string where = "GET " + dialect_->Path("/ping/");
  PingReport report;
  report.api_version = std::string(dialect_->version);
  report.offered_versions = offered_;
  if (const auto meta = body->find("meta"); meta != body->end() && meta->is_object()) {
    if (auto slurm = meta->find("slurm"); slurm != meta->end() && slurm->is_object()) {
      JsonFields s(*slurm, "meta.slurm");
      report.slurm_release = s.String("release");
      report.cluster = s.String("cluster");
    }
  }
  const nlohmann::json* pings = JsonFields(*body, "").Array("pings");
  if (!pings || pings->empty()) return Fail(Code::kInternal, "ping answer has no pings[]", where);
  // the primary controller decides; backups may be down
  const nlohmann::json* chosen = &pings->front();
  for (const nlohmann::json& p : *pings) {
    if (p.is_object() && p.value("primary", false)) chosen = &p;
  }
  JsonFields p(*chosen, "pings[]");
  report.controller = p.String("hostname");
  report.responding = p.Bool("responding");
  if (auto l = p.OptionalNoValUInt64("latency")) report.latency_us = static_cast<int64_t>(*l);
  std::string status = p.String("status");
  if (!report.responding) {
    // Ping answers 200 even when slurmctld rejected our token. v0.0.45 says so in `status`; older
    // versions only say "DOWN", so ask once more with a request that does need a valid token.
    if (status.find("authentication") != std::string::npos) {
      tokens_.Invalidate();
      return Fail(Code::kAuth,
                  "slurmctld rejected the token (" + status +
                      "): it is bad, expired, or for another user; " + tokens_.FixWhenRejected(),
                  where);
    }
    Result<nlohmann::json> probe =
        Call("GET", dialect_->Path("/jobs/state/?job_id=1"), "", Idempotent::kYes);
    if (!probe && probe.error().code == Code::kAuth) return std::unexpected(probe.error());
    return Fail(Code::kUnavailable,
                "slurmctld " + report.controller + " is not responding (" +
                    (status.empty() ? p.String("pinged") : status) + ")",
                where);
  }
  return report;
}

Result<SubmitReceipt> RestClient::PostSubmit(const nlohmann::json& request) {
  const std::string path = dialect_->Path("/job/submit");
  Result<nlohmann::json> body = Call("POST", path, request.dump(), Idempotent::kNo);
  if (!body) return std::unexpected(body.error());
  return ReceiptFrom(SubmitAnswerOf(*body), path);
}

Result<SubmitReceipt> RestClient::ReceiptFrom(const JobSubmitAnswer& answer,
                                              const std::string& path) {
  if (answer.job_id == 0 || !answer.errors.empty()) {
    // Slurm answers a wrongly typed field with 200, no job_id and only a warning
    std::string why = DescribeAll(answer.errors);
    std::string warned = DescribeAll(answer.warnings);
    if (!why.empty() && !warned.empty()) why += "; ";
    why += warned;
    return Fail(Code::kRejected, "Slurm did not create the job" + (why.empty() ? "" : ": " + why),
                "POST " + path);
  }
  expected_list_jobs_.fetch_add(1);
  SubmitReceipt receipt;
  receipt.job_id = answer.job_id;
  receipt.step_id = answer.step_id;
  receipt.user_message = answer.user_message;
  for (const SlurmMessage& w : answer.warnings) receipt.warnings.push_back(Describe(w));
  return receipt;
}

namespace {
bool TokenRejected(const Result<SubmitReceipt>& r) { return !r && r.error().code == Code::kAuth; }
}  // namespace

Result<SubmitReceipt> RestClient::Submit(const JobRequest& request) {
  return PostSubmit(EncodeSubmit(*dialect_, std::span(&request, 1), /*redact_secrets=*/false));
}

std::vector<Result<SubmitReceipt>> RestClient::SubmitAll(const std::vector<JobRequest>& requests,
                                                         size_t at_once) {
  const std::string path = dialect_->Path("/job/submit");
  const std::string where = "POST " + path;
  std::vector<Result<SubmitReceipt>> results(requests.size(), Fail(Code::kInternal, "not sent"));
  std::vector<std::string> bodies;
  for (const JobRequest& r : requests) {
    bodies.push_back(EncodeSubmit(*dialect_, std::span(&r, 1), /*redact_secrets=*/false).dump());
  }
  std::vector<size_t> todo(requests.size());
  for (size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  // A token slurmrestd rejects is renewed once and the rejected requests are sent again together;
  // it rejects them before creating any job.
  for (bool reauthed = false; !todo.empty(); reauthed = true) {
    Result<auth::Token> token = tokens_.Get();
    if (!token) {
      for (size_t i : todo) results[i] = std::unexpected(token.error());
      break;
    }
    std::vector<HttpRequest> posts;
    for (size_t i : todo) posts.push_back({"POST", path, bodies[i], token->jwt});
    requests_sent_.fetch_add(posts.size());
    std::vector<Result<HttpResponse>> answers = transport_.SendAll(posts, at_once);
    std::vector<size_t> rejected;
    JobSubmitDecoder decoder;
    for (size_t k = 0; k < todo.size(); ++k) {
      const size_t i = todo[k];
      results[i] = SubmitAnswer(answers[k], path, decoder);
      if (!reauthed && TokenRejected(results[i])) rejected.push_back(i);
    }
    if (!rejected.empty()) tokens_.Invalidate();
    todo = std::move(rejected);
  }
  return results;
}

void RestClient::SubmitReleased(const std::vector<JobRequest>& requests, size_t at_once,
                                const std::function<Release(size_t)>& release,
                                const std::function<void(size_t, Result<SubmitReceipt>)>& done) {
  const std::string path = dialect_->Path("/job/submit");
  Result<auth::Token> token = tokens_.Get();
  if (!token) {
    RunReleased(requests.size(), 1, release,
                [&](size_t i) { done(i, std::unexpected(token.error())); });
    return;
  }
  bool rejected = false;
  JobSubmitDecoder decoder;  // the sending thread's: answers are read one at a time there
  transport_.SendReleased(
      requests.size(), at_once,
      [&](size_t i, HttpRequest& post) {
        const Release r = release(i);
        if (r != Release::kNow) return r;
        // encoded here, on the sending thread, as each POST is about to leave
        post = {
            "POST", path,
            EncodeSubmit(*dialect_, std::span(&requests[i], 1), /*redact_secrets=*/false).dump(),
            token->jwt};
        requests_sent_.fetch_add(1);
        return r;
      },
      [&](size_t i, Result<HttpResponse> answer) {
        Result<SubmitReceipt> receipt = SubmitAnswer(answer, path, decoder);
        // rejected before any job was made: the caller sends it again, with a new token
        rejected = rejected || TokenRejected(receipt);
        done(i, std::move(receipt));
      });
  if (rejected) tokens_.Invalidate();
}

Result<SubmitReceipt> RestClient::SubmitAnswer(Result<HttpResponse>& r, const std::string& path,
                                               JobSubmitDecoder& decoder) {
  const std::string where = "POST " + path;
  if (!r) return std::unexpected(r.error());
  if (r->status < 200 || r->status >= 300) {
    return std::unexpected(
        ErrorForStatus(r->status, r->body, /*idempotent=*/false, where, tokens_.FixWhenRejected()));
  }
  Result<JobSubmitAnswer> answer = decoder.Decode(r->body);
  if (!answer) {
    Result<nlohmann::json> parsed = Parsed(*r, where, Idempotent::kNo);
    if (!parsed) return std::unexpected(parsed.error());
    answer = SubmitAnswerOf(*parsed);
  }
  if (AuthRejected(answer->errors)) {
    return std::unexpected(
        ErrorForStatus(511, r->body, /*idempotent=*/false, where, tokens_.FixWhenRejected()));
  }
  return ReceiptFrom(*answer, path);
}

Result<SubmitReceipt> RestClient::SubmitHet(const std::vector<JobRequest>& components) {
  if (components.size() < 2) {
    return Fail(Code::kInvalidInput, "a heterogeneous job needs at least two components", "jobs");
  }
  return PostSubmit(EncodeSubmit(*dialect_, components, /*redact_secrets=*/false));
}

Result<std::vector<JobInfo>> RestClient::GetJob(const JobRef& job) {
  const std::string path = dialect_->Path("/job/" + job.PathSegment(dialect_->has_sluid));
  Result<JobListAnswer> answer = CallJobList(path, 1);
  if (!answer) return std::unexpected(answer.error());
  if (answer->jobs.empty()) return Fail(Code::kNotFound, "no such job", "GET " + path);
  return std::move(answer->jobs);
}

Result<JobsSnapshot> RestClient::JobsChangedSince(std::optional<Seconds> since) {
  return ListChangedSince(since, nullptr);
}

Result<JobsSnapshot> RestClient::JobsChangedSince(std::optional<Seconds> since,
                                                  const JobFilter& keep) {
  return ListChangedSince(since, &keep);
}

Result<JobsSnapshot> RestClient::ListChangedSince(std::optional<Seconds> since,
                                                  const JobFilter* keep) {
  std::string path = dialect_->Path("/jobs/");
  if (since) path += "?update_time=" + std::to_string(since->time_since_epoch().count());
  // about as many jobs as the last list that came back whole, plus those submitted since: room
  // for them is made once
  Result<JobListAnswer> answer = CallJobList(path, expected_list_jobs_.load(), keep);
  if (!answer) return std::unexpected(answer.error());
  if (!answer->jobs.empty()) {
    expected_list_jobs_.store(answer->jobs.size() + answer->jobs.size() / 16);
  }
  JobsSnapshot snapshot;
  // "nothing changed" is an empty list with last_update 0 (and a warning saying so)
  snapshot.changed = !(answer->jobs.empty() && since && !answer->last_update);
  snapshot.jobs = std::move(answer->jobs);
  snapshot.listed = answer->listed;
  snapshot.parsed = answer->parsed;
  snapshot.digests = std::move(answer->digests);
  snapshot.last_update =
      answer->last_update
          ? Seconds(std::chrono::seconds(static_cast<int64_t>(*answer->last_update)))
          : since;
  return snapshot;
}

Result<std::vector<JobStateEntry>> RestClient::JobStates(const std::vector<uint32_t>& ids) {
  std::vector<JobStateEntry> out;
  if (ids.empty()) return out;  // an empty filter would return every job
  // One job_id parameter per job: the documented CSV form answers 500 "Unspecified error" for two
  // or more ids on Slurm 26.05.5 (every API version).
  std::string path = dialect_->Path("/jobs/state/");
  for (size_t i = 0; i < ids.size(); ++i) {
    path += i ? "&job_id=" : "?job_id=";
    path += std::to_string(ids[i]);
  }
  return GetStates(path);
}

Result<std::vector<JobStateEntry>> RestClient::AllJobStates() {
  return GetStates(dialect_->Path("/jobs/state/"));
}

Result<std::vector<JobStateEntry>> RestClient::GetStates(const std::string& path) {
  Result<JobStatesAnswer> answer =
      GetDecoded<JobStatesAnswer>(path, nullptr, [this](std::string& body) {
        std::lock_guard lock(states_mu_);
        return states_decoder_.Decode(body);
      });
  if (!answer) return std::unexpected(answer.error());
  return std::move(answer->jobs);
}

Result<std::vector<JobInfo>> RestClient::ListJobs(std::string_view name_prefix) {
  Result<JobsSnapshot> all = JobsChangedSince(std::nullopt);
  if (!all) return std::unexpected(all.error());
  std::vector<JobInfo> out;
  for (JobInfo& j : all->jobs) {
    if (j.name.starts_with(name_prefix)) out.push_back(std::move(j));
  }
  return out;
}

Status RestClient::Cancel(const JobRef& job, std::string_view signal) {
  Result<auth::Token> token = tokens_.Get();
  if (!token) return std::unexpected(token.error());
  Result<std::vector<JobInfo>> info = GetJob(job);
  if (!info) return std::unexpected(info.error());
  const JobInfo& leader = info->front();
  const std::string where = "DELETE " + dialect_->Path("/jobs/") + " job " + job.ToString();
  // A plain user's cancel of another user's job makes slurmctld 26.05.5 hang: never send it.
  if (token->user.empty()) {
    return Fail(
        Code::kRejected,
        "refusing to cancel: the token does not say which user it belongs to, so job ownership "
        "cannot be checked; use a token made by 'scontrol token' or minted by slurmfleet",
        where);
  }
  if (leader.user_name != token->user) {
    return Fail(Code::kRejected,
                "refusing to cancel job " + job.ToString() + ": it belongs to user '" +
                    leader.user_name + "', not to the token's user '" + token->user + "'",
                where);
  }
  BaseState b = leader.state.base;
  bool live = b == BaseState::kPending || b == BaseState::kRunning || b == BaseState::kSuspended;
  if (!live) return {};  // already ended: nothing to do

  nlohmann::json request = {{"jobs", {job.PathSegment(dialect_->has_sluid)}}};
  if (!signal.empty()) request["signal"] = std::string(signal);
  Result<nlohmann::json> body =
      Call("DELETE", dialect_->Path("/jobs/"), request.dump(), Idempotent::kYes);
  if (!body) return std::unexpected(body.error());
  if (std::vector<SlurmMessage> errors = ErrorsOf(*body); !errors.empty()) {
    return Fail(Code::kRejected, DescribeAll(errors), where);
  }
  if (const nlohmann::json* status = JsonFields(*body, "").Array("status")) {
    for (const nlohmann::json& s : *status) {
      const nlohmann::json* err = JsonFields(s, "status[]").Object("error");
      if (!err) continue;
      JsonFields e(*err, "status[].error");
      uint32_t code = e.UInt32("code");
      if (code == 0 || code == kSlurmAlreadyDone) continue;
      std::string text = "[" + std::to_string(code) + "] " + e.String("string");
      if (code == kSlurmInvalidJobId) return Fail(Code::kNotFound, "no such job " + text, where);
      return Fail(Code::kRejected, "Slurm did not signal the job: " + text, where);
    }
  }
  return {};
}

}  // namespace slurmfleet::slurm
