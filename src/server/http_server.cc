#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <exception>
#include <expected>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "auth/jwt.h"
#include "base/json_depth.h"
#include "base/json_strict.h"
#include "base/listen_backlog.h"
#include "base/url.h"
#include "server/version.h"
#include "slurm/dialect.h"

namespace slurmfleet::server {
namespace {

using nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr size_t kDefaultLimit = 100;
constexpr size_t kMaxLimit = 1000;
constexpr size_t kMaxKeyLength = 128;
constexpr size_t kMaxLoggedPath = 512;
constexpr const char* kChallenge = R"(Bearer realm="slurmfleet")";

// An error as the API reports it: {"error": {"code", "message", "where"}} with `status`.
struct ApiError {
  int status = 500;
  std::string code;
  std::string message;
  std::string where;
  Headers headers;
};

struct Reply {
  int status = 200;
  json body;
  Headers headers;
};

using Outcome = std::expected<Reply, ApiError>;

std::unexpected<ApiError> Reject(int status, std::string code, std::string message,
                                 std::string where = {}, Headers headers = {}) {
  return std::unexpected(
      ApiError{status, std::move(code), std::move(message), std::move(where), std::move(headers)});
}

// Errors from the store and the engine, by what the client should do next. kAuth is the daemon's
// own Slurm credential failing: a gateway problem, never the client's 401.
ApiError ToApiError(const Error& error) {
  switch (error.code) {
    case Code::kInvalidInput:
      return {400, "invalid_input", error.message, error.where, {}};
    case Code::kRejected:
      return {422, "rejected", error.message, error.where, {}};
    case Code::kAuth:
      return {502, "upstream_auth", error.message, error.where, {}};
    case Code::kUnavailable:
      return {503, "unavailable", error.message, error.where, {}};
    case Code::kUnknownOutcome:
      return {504, "unknown_outcome", error.message, error.where, {}};
    case Code::kNotFound:
      return {404, "not_found", error.message, error.where, {}};
    case Code::kConflict:
      return {409, "conflict", error.message, error.where, {}};
    case Code::kForbidden:
      return {403, "forbidden", error.message, error.where, {}};
    case Code::kInternal:
      return {500, "internal", error.message, error.where, {}};
  }
  return {500, "internal", error.message, error.where, {}};
}

// Invalid UTF-8 (from a URL, or a Slurm reason) becomes U+FFFD instead of an exception.
std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

json ErrorBody(const ApiError& error) {
  return {{"error", {{"code", error.code}, {"message", error.message}, {"where", error.where}}}};
}

void Write(httplib::Response& res, int status, const json& body, const Headers& headers) {
  res.status = status;
  for (const auto& [name, value] : headers) res.set_header(name, value);
  res.set_header("Cache-Control", "no-store");
  if (status != 204) res.set_content(Dump(body), "application/json");  // 204 has no body
}

void WriteError(httplib::Response& res, const ApiError& error) {
  Write(res, error.status, ErrorBody(error), error.headers);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

// For log lines: no control characters (a %0A in a URL must not start a forged log line).
std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(std::min(text.size(), kMaxLoggedPath));
  for (char c : text.substr(0, kMaxLoggedPath)) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? '?' : c);
  }
  if (text.size() > kMaxLoggedPath) out += "...";
  return out;
}

// ISO-8601 UTC and unix seconds side by side; both null for 0 ("never").
void PutTime(json& out, const std::string& name, int64_t unix_seconds) {
  if (unix_seconds == 0) {
    out[name] = nullptr;
    out[name + "_unix"] = nullptr;
    return;
  }
  out[name] = auth::FormatUtc(std::chrono::sys_seconds(std::chrono::seconds(unix_seconds)));
  out[name + "_unix"] = unix_seconds;
}

// Every field but request_json: requests may carry secrets (environment, tokens).
json SubmissionJson(const store::Submission& s) {
  json out = {
      {"key", s.key},
      {"kind", s.kind},
      {"cloud", s.cloud},
      {"owner", s.owner},
      {"phase", std::string(store::PhaseName(s.phase))},
      {"terminal", store::IsTerminal(s.phase)},
      {"attempts", s.attempts},
      {"job_id", s.job_id ? json(*s.job_id) : json(nullptr)},
      {"sluid", s.sluid},
      {"slurm_state", s.slurm_state},
      {"state_reason", s.state_reason},
      {"failure", s.failure},
      {"cancel_requested", s.cancel_requested},
      {"version", s.version},
  };
  PutTime(out, "created_at", s.created_at);
  PutTime(out, "updated_at", s.updated_at);
  PutTime(out, "submit_sent_at", s.submit_sent_at);
  PutTime(out, "last_seen_at", s.last_seen_at);
  return out;
}

json EventJson(const store::Event& e) {
  json out = {{"id", e.id}, {"key", e.key}, {"type", e.type}, {"message", e.message}};
  PutTime(out, "at", e.at);
  return out;
}

json CloudJson(const CloudInfo& c) {
  return {{"name", c.name},
          {"slurm_url", WithoutUserinfo(c.slurm_url)},
          {"api_version", c.api_version},
          {"max_agents", c.max_agents},
          {"active_submissions", c.active_submissions}};
}

json ReportJson(const std::string& cloud, const ConnectionReport& r) {
  return {{"cloud", cloud},
          {"ok", r.ok},
          {"api_version", r.api_version},
          {"offered_versions", r.offered_versions},
          {"slurm_release", r.slurm_release},
          {"cluster", r.cluster},
          {"token_user", r.token_user},
          {"token_source", r.token_source},
          {"message", r.message}};
}

json AgentJson(const AgentView& a) {
  json j = {{"name", a.name},
            {"cloud", a.cloud},
            {"template", a.template_name},
            {"phase", a.phase},
            {"labels", a.labels},
            {"job_id", nullptr},
            {"slurm_state", a.slurm_state},
            {"state_reason", a.state_reason},
            {"build_url", a.build_url},
            {"builds", a.builds},
            {"outcome", a.outcome}};
  if (a.job_id) j["job_id"] = *a.job_id;
  PutTime(j, "created_at", a.created_ms / 1000);
  PutTime(j, "connected_at", a.connected_ms / 1000);
  return j;
}

json JenkinsJson(const JenkinsReport& r) {
  return {{"configured", r.configured},    {"reachable", r.reachable},
          {"url", WithoutUserinfo(r.url)}, {"version", r.version},
          {"label_mode", r.label_mode},    {"label_reason", r.label_reason},
          {"message", r.message},          {"live_agents", r.live_agents}};
}

json TemplateJson(const TemplateView& t) {
  json j = {{"name", t.name},
            {"label", t.label},
            {"cloud", t.cloud},
            {"ephemeral", t.ephemeral},
            {"owner", t.owner}};
  if (t.ephemeral) PutTime(j, "expires_at", t.expires_at);
  return j;
}

// The cloud-stats level of an event: FAIL, WARN or OK.
std::string_view EventLevel(std::string_view type) {
  if (type == "failed" || type == "lost") return "FAIL";
  if (type == "warn" || type == "skipped" || type == "absent") return "WARN";
  return "OK";
}

bool IsJsonContentType(const httplib::Request& req) {
  std::string type = req.get_header_value("Content-Type");
  std::string_view media = type;
  media = Trim(media.substr(0, media.find(';')));
  return Lower(media) == "application/json";
}

std::expected<json, ApiError> ParseBody(const std::string& body) {
  if (Trim(body).empty())
    return Reject(400, "invalid_input", "the body is empty; send a JSON object");
  if (JsonNestingDepth(body) > kMaxJsonDepth) {
    return Reject(400, "invalid_input",
                  "the body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  std::expected<json, JsonRefusal> parsed = ParseJsonStrictly(body);
  if (!parsed) return Reject(400, "invalid_input", "the body " + parsed.error().Describe());
  return std::move(*parsed);
}

// The owner goes into events, the daemon's log and every listing: a name, not a document.
std::optional<ApiError> CheckOwner(std::string_view owner) {
  // Long enough for a Jenkins job's full name and build number (the pipeline library's owner).
  constexpr size_t kMaxOwnerLength = 1024;
  const bool control = std::any_of(owner.begin(), owner.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (owner.size() <= kMaxOwnerLength && !control) return std::nullopt;
  return ApiError{400,
                  "invalid_input",
                  "must be at most " + std::to_string(kMaxOwnerLength) +
                      " bytes without control characters (a user or build name)",
                  "owner",
                  {}};
}

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::expected<size_t, ApiError> ParseLimit(const httplib::Request& req) {
  if (!req.has_param("limit")) return kDefaultLimit;
  auto value = ParseUnsigned(req.get_param_value("limit"));
  if (!value || *value < 1 || *value > kMaxLimit) {
    return Reject(400, "invalid_input",
                  "limit must be a whole number from 1 to " + std::to_string(kMaxLimit),
                  "query.limit");
  }
  return static_cast<size_t>(*value);
}

std::expected<int64_t, ApiError> ParseAfter(const httplib::Request& req) {
  if (!req.has_param("after")) return 0;
  auto value = ParseUnsigned(req.get_param_value("after"));
  if (!value || *value > static_cast<uint64_t>(INT64_MAX)) {
    return Reject(400, "invalid_input", "after must be an event id (a whole number, 0 or more)",
                  "query.after");
  }
  return static_cast<int64_t>(*value);
}

// The key travels in the job's tag (fleet/job_tag.h), whose parts take these characters only.
bool ValidKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyLength) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '-' || c == '_' || c == '.';
  });
}

std::string JoinQuoted(const std::set<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += "'" + Printable(name) + "'";
  }
  return out;
}

}  // namespace

std::string FormatAccessLog(const AccessLogEntry& entry) {
  std::string line = entry.method + " " + entry.path + " " + std::to_string(entry.status) + " " +
                     std::to_string(entry.duration_ms) +
                     "ms principal=" + (entry.principal.empty() ? "-" : entry.principal);
  if (!entry.detail.empty()) line += " detail=\"" + Printable(entry.detail) + "\"";
  return line;
}

class ApiServer::Impl {
 public:
  Impl(ServerOptions options, Backend& backend, store::Store& store, ApiTokens& tokens,
       const Clock& clock)
      : options_(std::move(options)),
        backend_(backend),
        store_(store),
        tokens_(tokens),
        clock_(clock) {}

  ~Impl() { Stop(); }

  Status Listen();
  void Stop();
  int port() const { return port_; }

 private:
  using Handler = Outcome (Impl::*)(const httplib::Request&, const Principal&);

  struct Route {
    std::string method;
    std::regex pattern;
    std::optional<Scope> scope;    // nullopt: no token needed
    std::set<std::string> params;  // the query parameters it takes
    Handler handler;
  };

  // What the access log needs to know about a request in flight.
  struct Context {
    std::string method;
    std::string path;
    std::chrono::steady_clock::time_point start;
    std::string principal;
    std::string detail;
  };

  void AddRoute(std::string method, const std::string& pattern, std::optional<Scope> scope,
                std::set<std::string> params, Handler handler);
  void Serve(const Route& route, const httplib::Request& req, httplib::Response& res);
  std::expected<Principal, ApiError> Authenticate(const httplib::Request& req) const;
  std::optional<ApiError> CheckParams(const httplib::Request& req, const Route& route) const;
  std::optional<ApiError> RequireReady() const;
  // ToApiError, less the state file's path the store's errors name as their `where`: that is no
  // place in the request, and the server's file layout is not the client's business.
  ApiError FromError(const Error& error) const;
  void Note(const httplib::Request& req, std::string principal, std::string detail);
  httplib::Server::HandlerResponse OnError(const httplib::Request& req, httplib::Response& res);
  void OnLogged(const httplib::Request& req, const httplib::Response& res);

  Outcome Health(const httplib::Request& req, const Principal&);
  Outcome Ready(const httplib::Request& req, const Principal&);
  Outcome Version(const httplib::Request& req, const Principal&);
  Outcome Clouds(const httplib::Request& req, const Principal&);
  Outcome TestConnection(const httplib::Request& req, const Principal&);
  Outcome ListSubmissions(const httplib::Request& req, const Principal&);
  Outcome GetSubmission(const httplib::Request& req, const Principal&);
  Outcome SubmissionEvents(const httplib::Request& req, const Principal&);
  Outcome AllEvents(const httplib::Request& req, const Principal&);
  Outcome Submit(const httplib::Request& req, const Principal& principal);
  Outcome Cancel(const httplib::Request& req, const Principal&);

  Outcome Agents(const httplib::Request& req, const Principal&);
  Outcome GetAgent(const httplib::Request& req, const Principal&);
  Outcome Activities(const httplib::Request& req, const Principal&);
  Outcome JenkinsStatus(const httplib::Request& req, const Principal&);
  Outcome ListTemplates(const httplib::Request& req, const Principal&);
  Outcome RegisterTemplate(const httplib::Request& req, const Principal& principal);
  Outcome TouchTemplate(const httplib::Request& req, const Principal&);
  Outcome ReleaseTemplate(const httplib::Request& req, const Principal&);

  Outcome EventPage(const std::string& key, const httplib::Request& req);

  const ServerOptions options_;
  Backend& backend_;
  store::Store& store_;
  ApiTokens& tokens_;
  const Clock& clock_;

  httplib::Server http_;
  std::vector<std::unique_ptr<Route>> routes_;  // stable addresses: handlers point at them
  std::thread listener_;
  int listen_fd_ = -1;  // httplib's listening socket, once bound
  int port_ = 0;

  std::mutex contexts_mu_;
  // Keyed by the Request's address, which is unique while the request is in flight.
  std::unordered_map<const httplib::Request*, Context> contexts_;  // guarded by contexts_mu_
};

void ApiServer::Impl::AddRoute(std::string method, const std::string& pattern,
                               std::optional<Scope> scope, std::set<std::string> params,
                               Handler handler) {
  auto route = std::make_unique<Route>(
      Route{method, std::regex(pattern), scope, std::move(params), handler});
  const Route* r = route.get();
  auto serve = [this, r](const httplib::Request& req, httplib::Response& res) {
    Serve(*r, req, res);
  };
  if (method == "GET") {
    http_.Get(pattern, serve);
  } else if (method == "POST") {
    http_.Post(pattern, serve);
  } else if (method == "DELETE") {
    http_.Delete(pattern, serve);
  }
  routes_.push_back(std::move(route));
}

Status ApiServer::Impl::Listen() {
  const std::string address = options_.listen_host + ":" + std::to_string(options_.listen_port);
  if (options_.listen_port < 0 || options_.listen_port > 65535) {
    return Fail(Code::kInvalidInput, "listen port must be from 0 to 65535", "listen " + address);
  }
  if (options_.max_body_bytes == 0 || options_.worker_threads == 0) {
    return Fail(Code::kInvalidInput, "max_body_bytes and worker_threads must be positive",
                "listen " + address);
  }

  const std::string v1(kApiPrefix);
  const std::string key = "([^/]+)";
  AddRoute("GET", v1 + "/health", std::nullopt, {}, &Impl::Health);
  AddRoute("GET", v1 + "/ready", std::nullopt, {}, &Impl::Ready);
  AddRoute("GET", v1 + "/version", Scope::kRead, {}, &Impl::Version);
  AddRoute("GET", v1 + "/clouds", Scope::kRead, {}, &Impl::Clouds);
  AddRoute("POST", v1 + "/clouds/" + key + "/test-connection", Scope::kAdmin, {},
           &Impl::TestConnection);
  AddRoute("GET", v1 + "/submissions", Scope::kRead, {"active", "cloud", "kind", "limit"},
           &Impl::ListSubmissions);
  AddRoute("POST", v1 + "/submissions", Scope::kAdmin, {}, &Impl::Submit);
  AddRoute("GET", v1 + "/submissions/" + key, Scope::kRead, {}, &Impl::GetSubmission);
  AddRoute("DELETE", v1 + "/submissions/" + key, Scope::kAdmin, {}, &Impl::Cancel);
  AddRoute("GET", v1 + "/submissions/" + key + "/events", Scope::kRead, {"after", "limit"},
           &Impl::SubmissionEvents);
  AddRoute("GET", v1 + "/events", Scope::kRead, {"after", "limit"}, &Impl::AllEvents);
  AddRoute("GET", v1 + "/agents", Scope::kRead, {"all", "limit"}, &Impl::Agents);
  AddRoute("GET", v1 + "/agents/" + key, Scope::kRead, {}, &Impl::GetAgent);
  AddRoute("GET", v1 + "/activities", Scope::kRead, {"after", "limit", "agent", "cloud"},
           &Impl::Activities);
  AddRoute("GET", v1 + "/jenkins", Scope::kRead, {}, &Impl::JenkinsStatus);
  AddRoute("GET", v1 + "/templates", Scope::kRead, {}, &Impl::ListTemplates);
  AddRoute("POST", v1 + "/templates", Scope::kTemplates, {}, &Impl::RegisterTemplate);
  AddRoute("POST", v1 + "/templates/" + key + "/touch", Scope::kTemplates, {},
           &Impl::TouchTemplate);
  AddRoute("DELETE", v1 + "/templates/" + key, Scope::kTemplates, {}, &Impl::ReleaseTemplate);

  http_.set_payload_max_length(options_.max_body_bytes);
  // httplib's default also sets SO_REUSEPORT, which lets a second daemon bind the same port and
  // silently take half the connections. SO_REUSEADDR alone still allows a quick restart.
  http_.set_socket_options([this](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd_ = sock;
  });
  const size_t threads = options_.worker_threads;
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Runs before httplib reads a body, so it decides how much of one is read.
  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard lock(contexts_mu_);
      contexts_[&req] = Context{req.method, req.path, clock_.Monotonic(), {}, {}};
    }
    // The request is not const where httplib keeps it, only in this handler's signature.
    auto& request = const_cast<httplib::Request&>(req);
    if (req.has_header("Transfer-Encoding")) {
      // cpp-httplib 0.11 reads a chunked body whole, past the payload limit: refused unread. The
      // answer says Connection: close so that the client stops sending; httplib itself takes
      // what the client still sends for requests, answering each, up to its keep-alive limit.
      request.headers.erase("Connection");
      request.set_header("Connection", "close");
      WriteError(res, {411,
                       "length_required",
                       "send the body with a Content-Length header; chunked bodies are not "
                       "accepted",
                       {},
                       {}});
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string length = req.get_header_value("Content-Length");
    if (req.get_header_value_count("Content-Length") > 1 ||
        (req.has_header("Content-Length") &&
         (length.empty() || length.find_first_not_of("0123456789") != std::string::npos))) {
      // httplib would take the first of two, and read "abc" as 0: a proxy in front may have
      // read another length, and the rest of this body as a request of its own (RFC 9112, 6.3).
      request.headers.erase("Connection");
      request.set_header("Connection", "close");
      WriteError(res, {400,
                       "invalid_input",
                       "send one Content-Length header holding the body's length in bytes",
                       "Content-Length",
                       {}});
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!req.has_header("Content-Length")) {
      // No Content-Length and no Transfer-Encoding means no body (RFC 9112, 6.3); httplib 0.11
      // would wait for one until its read timeout.
      request.set_header("Content-Length", "0");
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http_.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) { return OnError(req, res); }));
  http_.set_exception_handler([this](const httplib::Request& req, httplib::Response& res,
                                     std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    Note(req, {}, what);
    WriteError(res, {500, "internal", "internal error; the daemon's log has the details", {}, {}});
  });
  http_.set_logger(
      [this](const httplib::Request& req, const httplib::Response& res) { OnLogged(req, res); });

  errno = 0;
  bool bound = false;
  if (options_.listen_port == 0) {
    port_ = http_.bind_to_any_port(options_.listen_host);
    bound = port_ > 0;
  } else {
    bound = http_.bind_to_port(options_.listen_host, options_.listen_port);
    port_ = options_.listen_port;
  }
  if (!bound) {
    std::string reason = errno != 0 ? std::strerror(errno) : "unknown host or address";
    return Fail(Code::kInvalidInput, "cannot listen: " + reason + "; pick another address or port",
                "listen " + address);
  }

  WidenListenBacklog(listen_fd_);
  listener_ = std::thread([this] { http_.listen_after_bind(); });
  // Stop() only works on a running server: return once it is, so Stop() never misses it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!http_.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Fail(Code::kInternal, "the HTTP listener did not start within 10 s",
                  "listen " + address);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return {};
}

void ApiServer::Impl::Stop() {
  http_.stop();
  if (listener_.joinable()) listener_.join();
}

void ApiServer::Impl::Serve(const Route& route, const httplib::Request& req,
                            httplib::Response& res) {
  std::string thrown;  // what a handler threw, for the log
  Outcome outcome = [&]() -> Outcome {
    Principal principal;
    if (route.scope) {
      auto authenticated = Authenticate(req);
      if (!authenticated) return std::unexpected(authenticated.error());
      principal = std::move(*authenticated);
      Note(req, principal.name, {});
      if (!Grants(principal.scope, *route.scope)) {
        const std::string needed(ScopeName(*route.scope));
        return Reject(
            403, "forbidden",
            "token '" + principal.name + "' has scope " + std::string(ScopeName(principal.scope)) +
                "; this endpoint needs " + (needed == "admin" ? needed : needed + " or admin"),
            {},
            {{"WWW-Authenticate", std::string(kChallenge) +
                                      R"(, error="insufficient_scope", scope=")" + needed + "\""}});
      }
    }
    // Before the parameters: httplib reads a form body's fields into them.
    if ((!req.body.empty() || !req.files.empty()) && !IsJsonContentType(req)) {
      return Reject(415, "unsupported_media_type",
                    "send the body as Content-Type: application/json");
    }
    if (auto bad = CheckParams(req, route)) return std::unexpected(std::move(*bad));
    try {
      return (this->*route.handler)(req, principal);
    } catch (const json::exception& e) {
      // Its text may quote the body (a job's environment can hold a credential): its id only.
      thrown = "JSON exception " + std::to_string(e.id);
    } catch (const std::exception& e) {
      thrown = e.what();
    }
    return Reject(500, "internal", "internal error; the daemon's log has the details");
  }();
  if (outcome) {
    Write(res, outcome->status, outcome->body, outcome->headers);
  } else {
    if (outcome.error().status >= 500) {
      Note(req, {}, thrown.empty() ? outcome.error().message : thrown);
    }
    WriteError(res, outcome.error());
  }
}

ApiError ApiServer::Impl::FromError(const Error& error) const {
  ApiError api = ToApiError(error);
  if (api.where == store_.path()) api.where.clear();
  return api;
}

std::expected<Principal, ApiError> ApiServer::Impl::Authenticate(
    const httplib::Request& req) const {
  const Headers challenge = {{"WWW-Authenticate", kChallenge}};
  if (!req.has_header("Authorization")) {
    return Reject(401, "unauthenticated",
                  "this endpoint needs an API token: send `Authorization: Bearer <token>`", {},
                  challenge);
  }
  if (req.get_header_value_count("Authorization") > 1) {
    // Which one a proxy in front checked is unknown: neither is taken.
    return Reject(401, "unauthenticated", "send one Authorization header, not several", {},
                  challenge);
  }
  std::string header = req.get_header_value("Authorization");
  std::string_view value = Trim(header);
  size_t space = value.find_first_of(" \t");
  if (space == std::string_view::npos || Lower(value.substr(0, space)) != "bearer") {
    return Reject(401, "unauthenticated", "the Authorization header must be `Bearer <token>`", {},
                  challenge);
  }
  auto principal = tokens_.Authorize(Trim(value.substr(space + 1)));
  if (!principal) {
    return Reject(401, "unauthenticated", "the API token is not valid", {},
                  {{"WWW-Authenticate", std::string(kChallenge) + R"(, error="invalid_token")"}});
  }
  return *principal;
}

std::optional<ApiError> ApiServer::Impl::CheckParams(const httplib::Request& req,
                                                     const Route& route) const {
  std::set<std::string> unknown;
  std::set<std::string> repeated;
  for (const auto& [name, value] : req.params) {
    if (!route.params.contains(name)) {
      unknown.insert(name);
    } else if (req.get_param_value_count(name) > 1) {
      repeated.insert(name);
    }
  }
  if (!unknown.empty()) {
    std::string takes = "takes no query parameters";
    if (!route.params.empty()) takes = "takes " + JoinQuoted(route.params);
    return ApiError{400,
                    "invalid_input",
                    std::string(unknown.size() == 1 ? "unknown query parameter "
                                                    : "unknown query parameters ") +
                        JoinQuoted(unknown) + "; this endpoint " + takes,
                    "query",
                    {}};
  }
  if (!repeated.empty()) {
    return ApiError{400,
                    "invalid_input",
                    "query parameter " + JoinQuoted(repeated) + " given more than once",
                    "query",
                    {}};
  }
  return std::nullopt;
}

std::optional<ApiError> ApiServer::Impl::RequireReady() const {
  if (backend_.Ready()) return std::nullopt;
  return ApiError{503,
                  "not_ready",
                  "slurmfleet is starting up or shutting down; retry shortly",
                  {},
                  {{"Retry-After", "5"}}};
}

void ApiServer::Impl::Note(const httplib::Request& req, std::string principal, std::string detail) {
  std::lock_guard lock(contexts_mu_);
  auto it = contexts_.find(&req);
  if (it == contexts_.end()) return;
  if (!principal.empty()) it->second.principal = std::move(principal);
  if (!detail.empty()) it->second.detail = std::move(detail);
}

httplib::Server::HandlerResponse ApiServer::Impl::OnError(const httplib::Request& req,
                                                          httplib::Response& res) {
  // Called for every status >= 400, including the ones our handlers wrote: keep those.
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
  ApiError error{res.status, "http_error", "HTTP error " + std::to_string(res.status), {}, {}};
  switch (res.status) {
    case 404: {
      std::set<std::string> allowed;
      for (const auto& route : routes_) {
        if (std::regex_match(req.path, route->pattern)) allowed.insert(route->method);
      }
      if (allowed.empty()) {
        error = {404, "not_found", "no endpoint " + req.method + " " + Printable(req.path), {}, {}};
      } else {
        std::string list;
        for (const auto& method : allowed) list += (list.empty() ? "" : ", ") + method;
        error = {405,
                 "method_not_allowed",
                 req.method + " is not allowed on " + Printable(req.path) + "; use " + list,
                 {},
                 {{"Allow", list}}};
      }
      break;
    }
    case 413:
      error = {413,
               "too_large",
               "the body is larger than " + std::to_string(options_.max_body_bytes) + " bytes",
               {},
               {}};
      break;
    case 400:
      error = {400, "bad_request", "malformed HTTP request", {}, {}};
      break;
    case 414:
      error = {414, "uri_too_long", "the request URI is too long", {}, {}};
      break;
    default:
      break;
  }
  WriteError(res, error);
  return httplib::Server::HandlerResponse::Handled;
}

void ApiServer::Impl::OnLogged(const httplib::Request& req, const httplib::Response& res) {
  std::optional<Context> context;
  {
    std::lock_guard lock(contexts_mu_);
    auto it = contexts_.find(&req);
    if (it != contexts_.end()) {
      // A request that failed before routing (malformed) may reuse the address of one whose
      // response could not be written: only trust a context recorded for this very request.
      if (it->second.method == req.method && it->second.path == req.path) {
        context = std::move(it->second);
      }
      contexts_.erase(it);
    }
  }
  if (!options_.access_log) return;
  AccessLogEntry entry;
  entry.method = Printable(req.method);
  entry.path = Printable(req.path);
  entry.status = res.status;
  if (context) {
    entry.duration_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Monotonic() - context->start)
            .count();
    entry.principal = std::move(context->principal);
    entry.detail = std::move(context->detail);
  }
  options_.access_log(entry);
}

Outcome ApiServer::Impl::Health(const httplib::Request&, const Principal&) {
  return Reply{200, {{"status", "ok"}}, {}};
}

Outcome ApiServer::Impl::Ready(const httplib::Request&, const Principal&) {
  if (auto not_ready = RequireReady()) return std::unexpected(std::move(*not_ready));
  return Reply{200, {{"status", "ready"}}, {}};
}

Outcome ApiServer::Impl::Version(const httplib::Request&, const Principal&) {
  json versions = json::array();
  for (const auto& dialect : slurm::AllDialects()) versions.push_back(std::string(dialect.version));
  return Reply{200,
               {{"slurmfleet", std::string(kSlurmfleetVersion)},
                {"api", std::string(kApiPrefix.substr(kApiPrefix.rfind('/') + 1))},
                {"store_schema", store::Store::SchemaVersion()},
                {"slurm_api_versions", versions}},
               {}};
}

Outcome ApiServer::Impl::Clouds(const httplib::Request&, const Principal&) {
  json clouds = json::array();
  for (const auto& cloud : backend_.Clouds()) clouds.push_back(CloudJson(cloud));
  return Reply{200, {{"clouds", clouds}}, {}};
}

Outcome ApiServer::Impl::TestConnection(const httplib::Request& req, const Principal&) {
  if (auto not_ready = RequireReady()) return std::unexpected(std::move(*not_ready));
  const std::string name = req.matches[1];
  auto clouds = backend_.Clouds();
  bool known = std::any_of(clouds.begin(), clouds.end(),
                           [&](const CloudInfo& cloud) { return cloud.name == name; });
  if (!known) {
    std::string names;
    for (const auto& cloud : clouds) names += (names.empty() ? "" : ", ") + cloud.name;
    return Reject(404, "not_found",
                  "no cloud named '" + name + "'; configured: " + (names.empty() ? "none" : names),
                  "cloud");
  }
  auto report = backend_.TestConnection(name);
  if (!report) return std::unexpected(FromError(report.error()));
  json body = ReportJson(name, *report);
  body["jenkins"] = JenkinsJson(backend_.Jenkins());
  return Reply{200, body, {}};
}

Outcome ApiServer::Impl::ListSubmissions(const httplib::Request& req, const Principal&) {
  store::ListFilter filter;
  if (req.has_param("active")) {
    std::string active = req.get_param_value("active");
    if (active == "true") {
      filter.active_only = true;
    } else if (active != "false") {
      return Reject(400, "invalid_input", "active must be true or false", "query.active");
    }
  }
  filter.cloud = req.get_param_value("cloud");
  filter.kind = req.get_param_value("kind");
  if (req.has_param("kind") && filter.kind != "job" && filter.kind != "run" &&
      filter.kind != "agent") {
    return Reject(400, "invalid_input", "kind must be job, run or agent", "query.kind");
  }
  auto limit = ParseLimit(req);
  if (!limit) return std::unexpected(limit.error());
  // One more than asked, to tell the client whether there is more.
  filter.limit = *limit + 1;
  filter.requests = false;  // never answered
  auto list = store_.List(filter);
  if (!list) return std::unexpected(FromError(list.error()));
  bool truncated = list->size() > *limit;
  if (truncated) list->resize(*limit);
  json items = json::array();
  for (const auto& submission : *list) items.push_back(SubmissionJson(submission));
  return Reply{200, {{"submissions", items}, {"truncated", truncated}}, {}};
}

Outcome ApiServer::Impl::GetSubmission(const httplib::Request& req, const Principal&) {
  auto submission = store_.Get(req.matches[1]);
  if (!submission) return std::unexpected(FromError(submission.error()));
  return Reply{200, SubmissionJson(*submission), {}};
}

Outcome ApiServer::Impl::EventPage(const std::string& key, const httplib::Request& req) {
  auto after = ParseAfter(req);
  if (!after) return std::unexpected(after.error());
  auto limit = ParseLimit(req);
  if (!limit) return std::unexpected(limit.error());
  auto events = store_.Events(key, *after, *limit + 1);
  if (!events) return std::unexpected(FromError(events.error()));
  bool more = events->size() > *limit;
  if (more) events->resize(*limit);
  json items = json::array();
  for (const auto& event : *events) items.push_back(EventJson(event));
  int64_t next = events->empty() ? *after : events->back().id;
  return Reply{200, {{"events", items}, {"next_after", next}, {"more", more}}, {}};
}

Outcome ApiServer::Impl::SubmissionEvents(const httplib::Request& req, const Principal&) {
  const std::string key = req.matches[1];
  // An unknown key is a 404, not an empty page a client would poll forever.
  auto submission = store_.Get(key);
  if (!submission) return std::unexpected(FromError(submission.error()));
  return EventPage(key, req);
}

Outcome ApiServer::Impl::AllEvents(const httplib::Request& req, const Principal&) {
  return EventPage("", req);
}

Outcome ApiServer::Impl::Agents(const httplib::Request& req, const Principal&) {
  bool all = false;
  if (req.has_param("all")) {
    std::string value = req.get_param_value("all");
    if (value != "true" && value != "false") {
      return Reject(400, "invalid_input", "all must be true or false", "query.all");
    }
    all = value == "true";
  }
  auto limit = ParseLimit(req);
  if (!limit) return std::unexpected(limit.error());
  json items = json::array();
  for (const AgentView& a : backend_.Agents(all, *limit)) items.push_back(AgentJson(a));
  return Reply{200, {{"agents", items}}, {}};
}

Outcome ApiServer::Impl::GetAgent(const httplib::Request& req, const Principal&) {
  const std::string name = req.matches[1];
  for (const AgentView& a : backend_.Agents(true, 0)) {
    if (a.name == name) return Reply{200, AgentJson(a), {}};
  }
  return Reject(404, "not_found", "no agent is named '" + name + "'", "name");
}

Outcome ApiServer::Impl::Activities(const httplib::Request& req, const Principal&) {
  auto after = ParseAfter(req);
  if (!after) return std::unexpected(after.error());
  auto limit = ParseLimit(req);
  if (!limit) return std::unexpected(limit.error());
  const std::string agent = req.get_param_value("agent");
  const std::string cloud = req.get_param_value("cloud");
  if (!cloud.empty()) {
    const std::vector<CloudInfo> clouds = backend_.Clouds();
    if (std::none_of(clouds.begin(), clouds.end(),
                     [&](const CloudInfo& c) { return c.name == cloud; })) {
      std::string known;
      for (const CloudInfo& c : clouds) known += (known.empty() ? "" : ", ") + c.name;
      return Reject(404, "not_found", "no cloud is named '" + cloud + "'; configured: " + known,
                    "query.cloud");
    }
  }
  std::set<std::string> agents;
  for (const AgentView& a : backend_.Agents(true, 0)) {
    if (cloud.empty() || a.cloud == cloud) agents.insert(a.name);
  }
  if (!agent.empty() && !agents.contains(agent)) {
    return Reject(404, "not_found",
                  "no agent is named '" + agent + "'" + (cloud.empty() ? "" : " in cloud " + cloud),
                  "query.agent");
  }
  // Provisioning activity: each agent's own stream (its submission's events included), the queue
  // items it could not serve, ephemeral templates and Jenkins itself. For one cloud: its agents'.
  auto relevant = [&agents, &cloud](const std::string& key) {
    return agents.contains(key) || (cloud.empty() && (key.starts_with("queue-") ||
                                                      key.starts_with("eph-") || key == "jenkins"));
  };
  json items = json::array();
  int64_t next = *after;
  bool more = false;
  constexpr size_t kScan = 1000;
  while (items.size() < *limit) {
    auto events = store_.Events(agent, next, kScan);
    if (!events) return std::unexpected(FromError(events.error()));
    for (const store::Event& e : *events) {
      if (items.size() == *limit) {
        more = true;
        break;
      }
      next = e.id;
      if (!relevant(e.key)) continue;
      json j = EventJson(e);
      j["level"] = std::string(EventLevel(e.type));
      items.push_back(std::move(j));
    }
    if (more || events->size() < kScan) break;
  }
  return Reply{200, {{"activities", items}, {"next_after", next}, {"more", more}}, {}};
}

Outcome ApiServer::Impl::JenkinsStatus(const httplib::Request&, const Principal&) {
  return Reply{200, JenkinsJson(backend_.Jenkins()), {}};
}

Outcome ApiServer::Impl::ListTemplates(const httplib::Request&, const Principal&) {
  json items = json::array();
  for (const TemplateView& t : backend_.Templates()) items.push_back(TemplateJson(t));
  return Reply{200, {{"templates", items}}, {}};
}

Outcome ApiServer::Impl::RegisterTemplate(const httplib::Request& req, const Principal& principal) {
  if (auto not_ready = RequireReady()) return std::unexpected(std::move(*not_ready));
  if (!IsJsonContentType(req)) {
    return Reject(415, "unsupported_media_type", "send the body as Content-Type: application/json");
  }
  auto body = ParseBody(req.body);
  if (!body) return std::unexpected(body.error());
  if (!body->is_object()) return Reject(400, "invalid_input", "the body must be a JSON object");
  TemplateCommand command;
  for (const auto& [name, value] : body->items()) {
    if (name == "cloud" && value.is_string()) {
      command.cloud = value.get<std::string>();
    } else if (name == "json" && value.is_string()) {
      command.json = value.get<std::string>();
    } else if (name == "json" && value.is_object()) {
      command.json = value.dump();
    } else if (name == "owner" && value.is_string()) {
      command.owner = value.get<std::string>();
    } else if (name == "job" && value.is_string()) {
      command.job = value.get<std::string>();
    } else if (name == "ttlSeconds" && value.is_number_integer() && value.get<int64_t>() > 0) {
      command.ttl_seconds = value.get<int64_t>();
    } else if (name == "cloud" || name == "json" || name == "owner" || name == "job" ||
               name == "ttlSeconds") {
      return Reject(400, "invalid_input",
                    name == "ttlSeconds" ? "must be a positive whole number of seconds"
                    : name == "json"     ? "must be the template JSON, as a string or an object"
                                         : "must be a string",
                    name);
    } else {
      return Reject(400, "invalid_input",
                    "unknown field; the body takes cloud, json, ttlSeconds, owner and job", name);
    }
  }
  if (command.cloud.empty()) return Reject(400, "invalid_input", "missing; name a cloud", "cloud");
  if (command.json.empty()) {
    return Reject(400, "invalid_input",
                  "missing; give the template JSON, e.g. {\"job\": {\"partition\": \"gpu\"}}",
                  "json");
  }
  if (auto e = CheckOwner(command.owner)) return std::unexpected(std::move(*e));
  if (command.owner.empty()) command.owner = principal.name;
  auto registered = backend_.RegisterTemplate(command);
  if (!registered) return std::unexpected(FromError(registered.error()));
  return Reply{201,
               TemplateJson(*registered),
               {{"Location", std::string(kApiPrefix) + "/templates/" + registered->name}}};
}

Outcome ApiServer::Impl::TouchTemplate(const httplib::Request& req, const Principal&) {
  auto touched = backend_.TouchTemplate(req.matches[1]);
  if (!touched) return std::unexpected(FromError(touched.error()));
  return Reply{200, TemplateJson(*touched), {}};
}

Outcome ApiServer::Impl::ReleaseTemplate(const httplib::Request& req, const Principal&) {
  auto released = backend_.ReleaseTemplate(req.matches[1]);
  if (!released) return std::unexpected(FromError(released.error()));
  return Reply{204, nullptr, {}};
}

Outcome ApiServer::Impl::Submit(const httplib::Request& req, const Principal& principal) {
  if (auto not_ready = RequireReady()) return std::unexpected(std::move(*not_ready));
  if (!IsJsonContentType(req)) {
    return Reject(415, "unsupported_media_type", "send the body as Content-Type: application/json");
  }
  auto body = ParseBody(req.body);
  if (!body) return std::unexpected(body.error());
  if (!body->is_object()) return Reject(400, "invalid_input", "the body must be a JSON object");

  static constexpr std::string_view kFields[] = {"cloud", "kind", "owner", "job", "key"};
  for (const auto& [name, value] : body->items()) {
    if (std::find(std::begin(kFields), std::end(kFields), name) == std::end(kFields)) {
      return Reject(400, "invalid_input",
                    "unknown field; the body takes cloud, kind, owner, job and key", name);
    }
  }
  auto string_field = [&](const char* name, bool required,
                          std::string& out) -> std::optional<ApiError> {
    auto it = body->find(name);
    if (it == body->end() || it->is_null()) {
      if (!required) return std::nullopt;
      return ApiError{400, "invalid_input", "missing; give a non-empty string", name, {}};
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      return ApiError{400, "invalid_input", "must be a non-empty string", name, {}};
    }
    out = it->get<std::string>();
    return std::nullopt;
  };

  SubmitCommand command;
  if (auto e = string_field("cloud", false, command.cloud)) return std::unexpected(std::move(*e));
  if (auto e = string_field("kind", true, command.kind)) return std::unexpected(std::move(*e));
  if (command.kind != "job" && command.kind != "run" && command.kind != "agent") {
    return Reject(400, "invalid_input",
                  "'" + command.kind + "' is not a kind; write job, run or agent", "kind");
  }
  if (auto e = string_field("owner", false, command.owner)) return std::unexpected(std::move(*e));
  if (auto e = CheckOwner(command.owner)) return std::unexpected(std::move(*e));
  if (auto e = string_field("key", false, command.key)) return std::unexpected(std::move(*e));
  if (command.owner.empty()) command.owner = principal.name;
  if (!command.key.empty() && !ValidKey(command.key)) {
    return Reject(400, "invalid_input",
                  "may hold only letters, digits and `-_.`, at most " +
                      std::to_string(kMaxKeyLength) + " characters",
                  "key");
  }
  auto job = body->find("job");
  if (job == body->end() || !job->is_object()) {
    return Reject(400, "invalid_input", "must be a job_desc object, e.g. {\"script\": \"...\"}",
                  "job");
  }
  command.job = std::move(*job);

  // The Backend answers a repeated POST with the existing submission; tell the two apart for the
  // status code. A concurrent first POST of the same key may still see 201 twice: harmless.
  bool existed = !command.key.empty() && store_.Get(command.key).has_value();
  auto submission = backend_.Submit(command);
  if (!submission) return std::unexpected(FromError(submission.error()));
  std::string location = std::string(kApiPrefix) + "/submissions/" + PercentEncode(submission->key);
  return Reply{existed ? 200 : 201, SubmissionJson(*submission), {{"Location", location}}};
}

Outcome ApiServer::Impl::Cancel(const httplib::Request& req, const Principal&) {
  if (auto not_ready = RequireReady()) return std::unexpected(std::move(*not_ready));
  const std::string key = req.matches[1];
  auto cancelled = backend_.Cancel(key);
  if (!cancelled) return std::unexpected(FromError(cancelled.error()));
  return Reply{202, {{"key", key}, {"cancel_requested", true}}, {}};
}

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ApiServer::~ApiServer() = default;

Result<std::unique_ptr<ApiServer>> ApiServer::Start(ServerOptions options, Backend& backend,
                                                    store::Store& store, ApiTokens& tokens,
                                                    const Clock& clock) {
  auto impl = std::make_unique<Impl>(std::move(options), backend, store, tokens, clock);
  if (auto listening = impl->Listen(); !listening) return std::unexpected(listening.error());
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

void ApiServer::Stop() { impl_->Stop(); }

int ApiServer::port() const { return impl_->port(); }

}  // namespace slurmfleet::server
