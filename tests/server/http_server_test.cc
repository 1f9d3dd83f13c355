#include "server/http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "server/fake_backend.h"
#include "server/version.h"
#include "store/store.h"

namespace slurmfleet::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr std::chrono::sys_seconds kStart{1700000000s};  // 2023-11-14T22:13:20Z
constexpr char kAdminToken[] = "adm-7f3c9e1b5a2d4c6e8f0a1b2c3d4e5f60";
constexpr char kReadToken[] = "rd-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
constexpr char kTemplatesToken[] = "tp-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
constexpr char kWrongToken[] = "wrong-99887766554433221100ffeeddcc";
constexpr size_t kMaxBody = 4096;

struct Answer {
  int status = 0;
  json body;
  httplib::Headers headers;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  std::string code() const { return body.value("/error/code"_json_pointer, std::string()); }
  std::string where() const { return body.value("/error/where"_json_pointer, std::string()); }
  std::string message() const { return body.value("/error/message"_json_pointer, std::string()); }
};

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "slurmfleet-server-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::path token_file = dir_ / "api-tokens";
    std::ofstream(token_file) << "admin jenkins " << kAdminToken << "\n"
                              << "read dashboard " << kReadToken << "\n"
                              << "templates pipelines " << kTemplatesToken << "\n";
    ASSERT_EQ(::chmod(token_file.c_str(), 0600), 0);
    auto tokens = ApiTokens::Load(token_file);
    ASSERT_TRUE(tokens) << tokens.error().ToString();
    tokens_ = std::move(*tokens);

    auto store = store::Store::Open(":memory:", clock_);
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);

    backend_ = std::make_unique<FakeBackend>(*store_);
    CloudInfo alpha;
    alpha.name = "alpha";
    alpha.slurm_url = "https://ops:hunter2@slurm.example:6820/base";
    alpha.api_version = "auto";
    alpha.max_agents = 10;
    alpha.active_submissions = 2;
    CloudInfo beta;
    beta.name = "beta";
    beta.slurm_url = "http://beta:6820";
    beta.api_version = "v0.0.44";
    beta.max_agents = 3;
    backend_->SetClouds({alpha, beta});

    StartServer();
  }

  void StartServer() {
    ServerOptions options;
    options.listen_host = "127.0.0.1";
    options.listen_port = 0;
    options.max_body_bytes = kMaxBody;
    options.worker_threads = 2;
    options.access_log = [this](const AccessLogEntry& entry) {
      std::lock_guard lock(log_mu_);
      log_.push_back(entry);
    };
    auto server = ApiServer::Start(options, *backend_, *store_, *tokens_, clock_);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
  }

  void TearDown() override {
    if (server_) server_->Stop();
    fs::remove_all(dir_);
    // No response body and no log line ever carries a token, good or bad.
    std::lock_guard lock(log_mu_);
    for (std::string_view token : {kAdminToken, kReadToken, kWrongToken}) {
      for (const auto& body : bodies_) EXPECT_EQ(body.find(token), std::string::npos) << body;
      for (const auto& entry : log_) {
        EXPECT_EQ(FormatAccessLog(entry).find(token), std::string::npos) << FormatAccessLog(entry);
      }
    }
  }

  Answer Call(const std::string& method, const std::string& path, const std::string& token,
              const std::string& body = {}, const std::string& content_type = "application/json",
              httplib::Headers headers = {}) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(10s);
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    httplib::Result result = [&] {
      if (method == "POST") return client.Post(path, headers, body, content_type);
      if (method == "DELETE") return client.Delete(path, headers);
      if (method == "PUT") return client.Put(path, headers, body, content_type);
      return client.Get(path, headers);
    }();
    Answer answer;
    if (!result) {
      ADD_FAILURE() << method << " " << path << ": " << httplib::to_string(result.error());
      return answer;
    }
    answer.status = result->status;
    answer.headers = result->headers;
    bodies_.push_back(result->body);
    if (answer.status == 204) {
      EXPECT_EQ(result->body, "") << "204 has no body";
      return answer;
    }
    EXPECT_EQ(answer.header("Content-Type"), "application/json") << method << " " << path;
    answer.body = json::parse(result->body, nullptr, false);
    EXPECT_FALSE(answer.body.is_discarded()) << result->body;
    return answer;
  }

  // A TCP connection to the server whose sends and receives give up after 20 s.
  int Connect() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    timeval timeout{20, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(server_->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    return fd;
  }

  // Sends `request` as written (what httplib's client would not send) and returns the whole
  // answer, read until the server closes the connection.
  // With `one_answer`, only until the first answer is whole (by its Content-Length): a server
  // that keeps the connection open then need not be waited for.
  std::string Raw(const std::string& request, bool one_answer = false) {
    const int fd = Connect();
    EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string answer;
    char buffer[4096];
    auto whole = [&answer] {
      const size_t head_end = answer.find("\r\n\r\n");
      const size_t length = answer.find("Content-Length: ");
      if (head_end == std::string::npos || length == std::string::npos) return false;
      return answer.size() >= head_end + 4 + std::stoul(answer.substr(length + 16));
    };
    for (ssize_t n; !(one_answer && whole()) && (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
      answer.append(buffer, n);
    }
    ::close(fd);
    bodies_.push_back(answer);
    return answer;
  }

  Answer Get(const std::string& path, const std::string& token = kReadToken) {
    return Call("GET", path, token);
  }
  Answer Post(const std::string& path, const json& body, const std::string& token = kAdminToken) {
    return Call("POST", path, token, body.dump());
  }
  Answer Delete(const std::string& path, const std::string& token = kAdminToken) {
    return Call("DELETE", path, token);
  }

  static json Job(const std::string& name = "build") {
    return {{"script", "#!/bin/bash\nmake\n"},
            {"name", name},
            {"environment", {"SECRET_TOKEN=s3cr3t-in-the-job"}}};
  }
  static json SubmitBody(const std::string& key, const std::string& name = "build") {
    json body = {{"cloud", "alpha"}, {"kind", "job"}, {"job", Job(name)}};
    if (!key.empty()) body["key"] = key;
    return body;
  }

  std::vector<AccessLogEntry> Log() {
    std::lock_guard lock(log_mu_);
    return log_;
  }

  FakeClock clock_{kStart};
  fs::path dir_;
  std::unique_ptr<ApiTokens> tokens_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<FakeBackend> backend_;
  std::unique_ptr<ApiServer> server_;
  std::vector<std::string> bodies_;
  std::mutex log_mu_;
  std::vector<AccessLogEntry> log_;
};

// --- unauthenticated endpoints ---

TEST_F(ApiServerTest, HealthNeedsNoToken) {
  Answer a = Call("GET", "/api/v1/health", "");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, json({{"status", "ok"}}));
}

TEST_F(ApiServerTest, ReadyFollowsTheBackend) {
  EXPECT_EQ(Call("GET", "/api/v1/ready", "").status, 200);
  backend_->SetReady(false);
  Answer a = Call("GET", "/api/v1/ready", "");
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.code(), "not_ready");
  EXPECT_EQ(a.header("Retry-After"), "5");
}

// --- read endpoints ---

TEST_F(ApiServerTest, Version) {
  Answer a = Get("/api/v1/version");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.body["slurmfleet"], std::string(kSlurmfleetVersion));
  EXPECT_EQ(a.body["slurmfleet"], "0.1.0");
  EXPECT_EQ(a.body["api"], "v1");
  EXPECT_EQ(a.body["store_schema"], store::Store::SchemaVersion());
  EXPECT_EQ(a.body["slurm_api_versions"], json({"v0.0.45", "v0.0.44", "v0.0.43", "v0.0.42"}));
}

TEST_F(ApiServerTest, CloudsHideCredentialsInUrls) {
  Answer a = Get("/api/v1/clouds");
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(a.body["clouds"].size(), 2u);
  const json& alpha = a.body["clouds"][0];
  EXPECT_EQ(alpha["name"], "alpha");
  EXPECT_EQ(alpha["slurm_url"], "https://***@slurm.example:6820/base");
  EXPECT_EQ(alpha["api_version"], "auto");
  EXPECT_EQ(alpha["max_agents"], 10);
  EXPECT_EQ(alpha["active_submissions"], 2);
  EXPECT_EQ(a.body["clouds"][1]["slurm_url"], "http://beta:6820");
  EXPECT_EQ(bodies_.back().find("hunter2"), std::string::npos);
}

TEST_F(ApiServerTest, SubmissionJsonHasEveryFieldButTheRequest) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 201);
  auto stored = store_->Get("run-7").value();
  stored.phase = store::Phase::kRunning;
  stored.job_id = 4242;
  stored.sluid = "sl-1";
  stored.slurm_state = "RUNNING";
  stored.attempts = 1;
  stored.submit_sent_at = 1700000005;
  stored.last_seen_at = 1700000010;
  ASSERT_TRUE(store_->Update(stored));

  Answer a = Get("/api/v1/submissions/run-7");
  ASSERT_EQ(a.status, 200) << a.body;
  const json& s = a.body;
  EXPECT_EQ(s["key"], "run-7");
  EXPECT_EQ(s["kind"], "job");
  EXPECT_EQ(s["cloud"], "alpha");
  EXPECT_EQ(s["owner"], "jenkins");
  EXPECT_EQ(s["phase"], "running");
  EXPECT_EQ(s["terminal"], false);
  EXPECT_EQ(s["attempts"], 1);
  EXPECT_EQ(s["job_id"], 4242);
  EXPECT_EQ(s["sluid"], "sl-1");
  EXPECT_EQ(s["slurm_state"], "RUNNING");
  EXPECT_EQ(s["state_reason"], "");
  EXPECT_EQ(s["failure"], "");
  EXPECT_EQ(s["cancel_requested"], false);
  EXPECT_EQ(s["created_at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(s["created_at_unix"], 1700000000);
  EXPECT_EQ(s["submit_sent_at"], "2023-11-14T22:13:25Z");
  EXPECT_EQ(s["submit_sent_at_unix"], 1700000005);
  EXPECT_EQ(s["last_seen_at_unix"], 1700000010);
  EXPECT_TRUE(s.contains("updated_at"));
  EXPECT_EQ(s["version"], stored.version);
  EXPECT_FALSE(s.contains("request_json"));
  EXPECT_FALSE(s.contains("job"));
  EXPECT_EQ(bodies_.back().find("s3cr3t-in-the-job"), std::string::npos);
}

TEST_F(ApiServerTest, NeverTimesAreNull) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 201);
  Answer a = Get("/api/v1/submissions/run-7");
  EXPECT_TRUE(a.body["job_id"].is_null());
  EXPECT_TRUE(a.body["submit_sent_at"].is_null());
  EXPECT_TRUE(a.body["submit_sent_at_unix"].is_null());
}

TEST_F(ApiServerTest, ListFiltersAndLimits) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("a1")).status, 201);
  clock_.Advance(1s);
  json agent = SubmitBody("a2");
  agent["kind"] = "agent";
  ASSERT_EQ(Post("/api/v1/submissions", agent).status, 201);
  clock_.Advance(1s);
  json beta = SubmitBody("b1");
  beta["cloud"] = "beta";
  ASSERT_EQ(Post("/api/v1/submissions", beta).status, 201);
  auto done = store_->Get("a1").value();
  done.phase = store::Phase::kSucceeded;
  ASSERT_TRUE(store_->Update(done));

  auto keys = [](const Answer& a) {
    std::set<std::string> out;
    for (const auto& s : a.body["submissions"]) out.insert(s["key"].get<std::string>());
    return out;
  };
  Answer all = Get("/api/v1/submissions");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(keys(all), (std::set<std::string>{"a1", "a2", "b1"}));
  EXPECT_EQ(all.body["truncated"], false);
  EXPECT_EQ(keys(Get("/api/v1/submissions?active=true")), (std::set<std::string>{"a2", "b1"}));
  EXPECT_EQ(keys(Get("/api/v1/submissions?active=false")),
            (std::set<std::string>{"a1", "a2", "b1"}));
  EXPECT_EQ(keys(Get("/api/v1/submissions?cloud=beta")), (std::set<std::string>{"b1"}));
  EXPECT_EQ(keys(Get("/api/v1/submissions?kind=agent&cloud=alpha")), (std::set<std::string>{"a2"}));

  Answer limited = Get("/api/v1/submissions?limit=2");
  ASSERT_EQ(limited.status, 200);
  EXPECT_EQ(limited.body["submissions"].size(), 2u);
  EXPECT_EQ(limited.body["truncated"], true);
}

TEST_F(ApiServerTest, EventsFollowWithACursor) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("r1")).status, 201);
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("r2")).status, 201);
  ASSERT_TRUE(store_->AppendEvent("r1", "submitted", "job 17"));

  Answer page = Get("/api/v1/events?limit=2");
  ASSERT_EQ(page.status, 200) << page.body;
  ASSERT_EQ(page.body["events"].size(), 2u);
  EXPECT_EQ(page.body["more"], true);
  const json& first = page.body["events"][0];
  EXPECT_EQ(first["key"], "r1");
  EXPECT_EQ(first["type"], "intent");
  EXPECT_EQ(first["at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(first["at_unix"], 1700000000);
  int64_t cursor = page.body["next_after"];
  EXPECT_EQ(cursor, page.body["events"][1]["id"].get<int64_t>());

  Answer rest = Get("/api/v1/events?after=" + std::to_string(cursor));
  ASSERT_EQ(rest.status, 200);
  ASSERT_EQ(rest.body["events"].size(), 1u);
  EXPECT_EQ(rest.body["events"][0]["message"], "job 17");
  EXPECT_EQ(rest.body["more"], false);
  cursor = rest.body["next_after"];

  Answer none = Get("/api/v1/events?after=" + std::to_string(cursor));
  EXPECT_EQ(none.body["events"].size(), 0u);
  EXPECT_EQ(none.body["next_after"], cursor);

  Answer one = Get("/api/v1/submissions/r1/events");
  ASSERT_EQ(one.status, 200) << one.body;
  ASSERT_EQ(one.body["events"].size(), 2u);
  for (const auto& e : one.body["events"]) EXPECT_EQ(e["key"], "r1");
  Answer after = Get("/api/v1/submissions/r1/events?after=" +
                     std::to_string(one.body["events"][0]["id"].get<int64_t>()) + "&limit=5");
  ASSERT_EQ(after.body["events"].size(), 1u);
  EXPECT_EQ(after.body["events"][0]["type"], "submitted");
}

// --- admin endpoints ---

TEST_F(ApiServerTest, SubmitCreatesThenRepeatsIdempotently) {
  Answer created = Post("/api/v1/submissions", SubmitBody("run-7"));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.header("Location"), "/api/v1/submissions/run-7");
  EXPECT_EQ(created.body["key"], "run-7");
  EXPECT_EQ(created.body["phase"], "intent");
  ASSERT_EQ(backend_->submits().size(), 1u);
  EXPECT_EQ(backend_->submits()[0].job, Job());
  EXPECT_EQ(backend_->submits()[0].owner, "jenkins");

  Answer again = Post("/api/v1/submissions", SubmitBody("run-7"));
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body, created.body);

  Answer other = Post("/api/v1/submissions", SubmitBody("run-7", "another-name"));
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(other.code(), "conflict");
  EXPECT_EQ(other.where(), "key");
}

TEST_F(ApiServerTest, SubmitWithoutKeyOrOwner) {
  json body = SubmitBody("");
  body["owner"] = "nightly-run-12";
  Answer a = Post("/api/v1/submissions", body);
  ASSERT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(a.body["key"], "job-1");
  EXPECT_EQ(a.body["owner"], "nightly-run-12");
  EXPECT_EQ(backend_->submits().back().key, "");
}

TEST_F(ApiServerTest, SubmitRejectsBadBodies) {
  struct Case {
    std::string body;
    std::string where;
  };
  const Case cases[] = {
      {R"({"cloud": "alpha", "kind": "job", "job": {"token": "s3cr3t-in-the-job")", ""},
      {"", ""},
      {"[1, 2]", ""},
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "jobb": 1})", "jobb"},
      {R"({"cloud": "", "kind": "job", "job": {}})", "cloud"},
      {R"({"cloud": "alpha", "kind": 3, "job": {}})", "kind"},
      {R"({"cloud": "alpha", "kind": "batch", "job": {}})", "kind"},
      {R"({"cloud": "alpha", "kind": "job", "job": "sleep 1"})", "job"},
      {R"({"cloud": "alpha", "kind": "job"})", "job"},
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "key": "a/b"})", "key"},
      // the job's tag separates its parts with ':'
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "key": "a:b"})", "key"},
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "key": "ci@host"})", "key"},
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "owner": 7})", "owner"},
      {std::string(100, '[') + std::string(100, ']'), ""},
      // nlohmann reads these silently: the last "kind" wins; 1e400 threw out of range (500)
      {R"({"cloud": "alpha", "kind": "job", "kind": "run", "job": {}})", ""},
      {R"({"cloud": "alpha", "kind": "job", "job": {"cpus_per_task": 1e400}})", ""},
      // the owner goes into log lines and events
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "owner": "eve\nreceived SIGTERM"})",
       "owner"},
      {R"({"cloud": "alpha", "kind": "job", "job": {}, "owner": ")" + std::string(1025, 'o') +
           R"("})",
       "owner"},
  };
  for (const auto& c : cases) {
    Answer a = Call("POST", "/api/v1/submissions", kAdminToken, c.body);
    EXPECT_EQ(a.status, 400) << c.body << " -> " << a.body;
    EXPECT_EQ(a.code(), "invalid_input") << c.body;
    EXPECT_EQ(a.where(), c.where) << c.body;
    EXPECT_EQ(bodies_.back().find("s3cr3t"), std::string::npos) << bodies_.back();
  }
  EXPECT_TRUE(backend_->submits().empty());
}

TEST_F(ApiServerTest, ASubmissionWithoutACloudIsTheBackendsToPlace) {
  Answer a = Call("POST", "/api/v1/submissions", kAdminToken, R"({"kind": "run", "job": {}})");
  ASSERT_EQ(backend_->submits().size(), 1u);
  EXPECT_EQ(backend_->submits().back().cloud, "") << "the batch section's engine, when configured";
  EXPECT_EQ(a.where(), "cloud") << "this backend has no batch section";
}

TEST_F(ApiServerTest, SubmitPassesTheEnginesErrorPath) {
  backend_->FailNextSubmit(
      Error{Code::kInvalidInput, "'8X' is not a size; use e.g. 8G", "job.memory_per_node"});
  Answer a = Post("/api/v1/submissions", SubmitBody("run-7"));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.where(), "job.memory_per_node");
  EXPECT_EQ(a.message(), "'8X' is not a size; use e.g. 8G");

  backend_->FailNextSubmit(Error{Code::kInternal, "database is locked", "state.db"});
  EXPECT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 500);
  backend_->FailNextSubmit(Error{Code::kAuth, "slurm token expired", ""});
  EXPECT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 502);
}

TEST_F(ApiServerTest, SubmitNeedsJson) {
  Answer a = Call("POST", "/api/v1/submissions", kAdminToken, SubmitBody("k").dump(), "text/plain");
  EXPECT_EQ(a.status, 415);
  EXPECT_EQ(a.code(), "unsupported_media_type");
  EXPECT_EQ(Call("POST", "/api/v1/submissions", kAdminToken, SubmitBody("k").dump(),
                 "Application/JSON; charset=utf-8")
                .status,
            201);
}

TEST_F(ApiServerTest, AFormBodyIsNoJsonEvenWhereItsFieldsLookLikeParameters) {
  Answer a = Call("POST", "/api/v1/submissions", kAdminToken, "kind=job&cloud=alpha",
                  "application/x-www-form-urlencoded");
  EXPECT_EQ(a.status, 415);
  EXPECT_EQ(a.code(), "unsupported_media_type");
}

TEST_F(ApiServerTest, AKindFilterIsOneOfTheKinds) {
  Answer a = Get("/api/v1/submissions?kind=jobs");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.where(), "query.kind");
  EXPECT_EQ(Get("/api/v1/submissions?kind=agent").status, 200);
}

TEST_F(ApiServerTest, ABodyLengthIsOneNumber) {
  const std::string head =
      "POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
      std::string(kAdminToken) + "\r\nContent-Type: application/json\r\n";
  for (const std::string lengths :
       {"Content-Length: 2\r\nContent-Length: 40\r\n", "Content-Length: 1, 2\r\n",
        "Content-Length: abc\r\n", "Content-Length: 0x10\r\n"}) {
    std::string answer = Raw(head + lengths + "\r\n{}", /*one_answer=*/true);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << lengths << answer;
    EXPECT_NE(answer.find("send one Content-Length header"), std::string::npos) << answer;
  }
  EXPECT_TRUE(backend_->submits().empty());
}

TEST_F(ApiServerTest, TooLargeBody) {
  json body = SubmitBody("big");
  body["job"]["script"] = std::string(kMaxBody, 'x');
  Answer a = Post("/api/v1/submissions", body);
  EXPECT_EQ(a.status, 413);
  EXPECT_EQ(a.code(), "too_large");
  EXPECT_TRUE(backend_->submits().empty());
}

TEST_F(ApiServerTest, CommandsWaitUntilReady) {
  backend_->SetReady(false);
  EXPECT_EQ(Post("/api/v1/submissions", SubmitBody("k")).status, 503);
  EXPECT_EQ(Delete("/api/v1/submissions/k").status, 503);
  EXPECT_EQ(Post("/api/v1/clouds/alpha/test-connection", json::object()).status, 503);
  EXPECT_TRUE(backend_->submits().empty());
  // Reads still work while draining.
  EXPECT_EQ(Get("/api/v1/submissions").status, 200);
}

TEST_F(ApiServerTest, CancelRecordsTheRequest) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 201);
  Answer a = Delete("/api/v1/submissions/run-7");
  EXPECT_EQ(a.status, 202) << a.body;
  EXPECT_EQ(a.body["cancel_requested"], true);
  EXPECT_EQ(a.body["key"], "run-7");
  EXPECT_EQ(backend_->cancels(), std::vector<std::string>{"run-7"});
  EXPECT_EQ(Get("/api/v1/submissions/run-7").body["cancel_requested"], true);
}

TEST_F(ApiServerTest, TestConnection) {
  ConnectionReport report;
  report.ok = true;
  report.api_version = "v0.0.45";
  report.offered_versions = {"v0.0.45", "v0.0.44"};
  report.slurm_release = "25.05.3";
  report.cluster = "linux";
  report.token_user = "slurm";
  report.token_source = "token file /etc/slurmfleet/jwt";
  backend_->SetReport(report);
  Answer a = Call("POST", "/api/v1/clouds/alpha/test-connection", kAdminToken);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.body["cloud"], "alpha");
  EXPECT_EQ(a.body["ok"], true);
  EXPECT_EQ(a.body["api_version"], "v0.0.45");
  EXPECT_EQ(a.body["offered_versions"], json({"v0.0.45", "v0.0.44"}));
  EXPECT_EQ(a.body["slurm_release"], "25.05.3");
  EXPECT_EQ(a.body["cluster"], "linux");
  EXPECT_EQ(a.body["token_user"], "slurm");
  EXPECT_EQ(a.body["token_source"], "token file /etc/slurmfleet/jwt");
  EXPECT_EQ(a.body["message"], "");

  Answer unknown = Call("POST", "/api/v1/clouds/gamma/test-connection", kAdminToken);
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.message().find("alpha, beta"), std::string::npos) << unknown.body;

  backend_->FailNextTestConnection(Error{Code::kUnavailable, "connection refused", "alpha"});
  EXPECT_EQ(Call("POST", "/api/v1/clouds/alpha/test-connection", kAdminToken).status, 503);
}

TEST_F(ApiServerTest, ABodilessPostIsAnsweredAtOnceNotAfterTheReadTimeout) {
  // curl -X POST sends neither Content-Length nor Transfer-Encoding: the request has no body.
  // Waiting for one would end in a 400 after httplib's 5 s read timeout.
  std::string answer = Raw(std::string("POST /api/v1/clouds/alpha/test-connection HTTP/1.1\r\n") +
                           "Host: 127.0.0.1\r\nAuthorization: Bearer " + kAdminToken +
                           "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer;
}

TEST_F(ApiServerTest, AChunkedBodyIsRefusedBeforeItIsRead) {
  // httplib 0.11 would read a chunked body past the payload limit; this one, complete and four
  // times the limit, is refused with its headers, even though it comes with an admin token.
  std::string body = SubmitBody("chunked").dump();
  body.resize(4 * kMaxBody, ' ');
  std::string request = std::string("POST /api/v1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n") +
                        "Authorization: Bearer " + kAdminToken +
                        "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n" +
                        fmt::format("{:x}\r\n", body.size()) + body + "\r\n0\r\n\r\n";
  std::string answer = Raw(request);
  EXPECT_EQ(answer.rfind("HTTP/1.1 411 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("\"length_required\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("Content-Length header"), std::string::npos) << answer;
  EXPECT_TRUE(backend_->submits().empty());
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;

  // A client that goes on sending after the answer: httplib 0.11 takes what follows for requests
  // (answering each) and closes the connection after a few. So of a 64 MB body, at most what the
  // kernel's socket buffers hold goes out; the whole of it would be read into memory before.
  const int fd = Connect();
  const std::string head = request.substr(0, request.find("\r\n\r\n") + 4);
  const std::string chunk = fmt::format("{:x}\r\n{}\r\n", 1 << 16, std::string(1 << 16, 'a'));
  size_t sent = 0;
  constexpr size_t kStream = 64u << 20;
  for (ssize_t n = ::send(fd, head.data(), head.size(), MSG_NOSIGNAL); n > 0 && sent < kStream;
       n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL)) {
    sent += static_cast<size_t>(n);
  }
  ::close(fd);
  EXPECT_LT(sent, kStream / 4);
  EXPECT_TRUE(backend_->submits().empty());
  EXPECT_EQ(Get("/api/v1/health").status, 200);
}

// --- authentication and authorization ---

TEST_F(ApiServerTest, EveryTokenedEndpointNeedsAToken) {
  const std::pair<std::string, std::string> endpoints[] = {
      {"GET", "/api/v1/version"},
      {"GET", "/api/v1/clouds"},
      {"POST", "/api/v1/clouds/alpha/test-connection"},
      {"GET", "/api/v1/submissions"},
      {"POST", "/api/v1/submissions"},
      {"GET", "/api/v1/submissions/k"},
      {"DELETE", "/api/v1/submissions/k"},
      {"GET", "/api/v1/submissions/k/events"},
      {"GET", "/api/v1/events"},
  };
  for (const auto& [method, path] : endpoints) {
    Answer none = Call(method, path, "", "{}");
    EXPECT_EQ(none.status, 401) << method << " " << path;
    EXPECT_EQ(none.code(), "unauthenticated");
    EXPECT_EQ(none.header("WWW-Authenticate"), R"(Bearer realm="slurmfleet")");

    Answer wrong = Call(method, path, kWrongToken, "{}");
    EXPECT_EQ(wrong.status, 401) << method << " " << path;
    EXPECT_NE(wrong.header("WWW-Authenticate").find("invalid_token"), std::string::npos);
  }
  EXPECT_TRUE(backend_->submits().empty());
}

TEST_F(ApiServerTest, OnlyBearerCredentialsCount) {
  httplib::Headers basic = {{"Authorization", std::string("Basic ") + kAdminToken}};
  EXPECT_EQ(Call("GET", "/api/v1/clouds", "", "", "", basic).status, 401);
  httplib::Headers bare = {{"Authorization", kAdminToken}};
  EXPECT_EQ(Call("GET", "/api/v1/clouds", "", "", "", bare).status, 401);
  httplib::Headers lower = {{"Authorization", std::string("bearer  ") + kReadToken}};
  EXPECT_EQ(Call("GET", "/api/v1/clouds", "", "", "", lower).status, 200);
  // a proxy in front may have checked either of two
  httplib::Headers two = {{"Authorization", std::string("Bearer ") + kReadToken},
                          {"Authorization", std::string("Bearer ") + kAdminToken}};
  Answer both = Call("GET", "/api/v1/clouds", "", "", "", two);
  EXPECT_EQ(both.status, 401);
  EXPECT_EQ(both.message(), "send one Authorization header, not several");
}

TEST_F(ApiServerTest, ReadTokensCannotChangeAnything) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 201);
  Answer submit = Post("/api/v1/submissions", SubmitBody("run-8"), kReadToken);
  EXPECT_EQ(submit.status, 403);
  EXPECT_EQ(submit.code(), "forbidden");
  EXPECT_NE(submit.message().find("dashboard"), std::string::npos);
  EXPECT_EQ(Delete("/api/v1/submissions/run-7", kReadToken).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/clouds/alpha/test-connection", kReadToken).status, 403);
  EXPECT_EQ(backend_->submits().size(), 1u);
  EXPECT_TRUE(backend_->cancels().empty());
  // Admin tokens read too.
  EXPECT_EQ(Get("/api/v1/submissions", kAdminToken).status, 200);
}

// The token pipelines hold (the shared library's) manages ephemeral templates and reads, but can
// neither submit nor cancel jobs nor test connections.
TEST_F(ApiServerTest, TemplatesTokensManageTemplatesOnly) {
  ASSERT_EQ(Post("/api/v1/submissions", SubmitBody("run-7")).status, 201);
  Answer submit = Post("/api/v1/submissions", SubmitBody("run-8"), kTemplatesToken);
  EXPECT_EQ(submit.status, 403);
  EXPECT_NE(submit.message().find("has scope templates; this endpoint needs admin"),
            std::string::npos)
      << submit.message();
  EXPECT_EQ(Delete("/api/v1/submissions/run-7", kTemplatesToken).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/clouds/alpha/test-connection", kTemplatesToken).status, 403);
  EXPECT_EQ(backend_->submits().size(), 1u);
  EXPECT_TRUE(backend_->cancels().empty());
  EXPECT_EQ(Get("/api/v1/submissions", kTemplatesToken).status, 200);

  json body = {{"cloud", "local"}, {"json", R"({"job": {"partition": "gpu"}})"}};
  Answer read_only = Post("/api/v1/templates", body, kReadToken);
  EXPECT_EQ(read_only.status, 403);
  EXPECT_NE(read_only.message().find("this endpoint needs templates or admin"), std::string::npos)
      << read_only.message();
  Answer a = Post("/api/v1/templates", body, kTemplatesToken);
  ASSERT_EQ(a.status, 201) << a.body;
  const std::string name = a.body["name"];
  EXPECT_EQ(a.body["owner"], "pipelines");
  EXPECT_EQ(Call("POST", "/api/v1/templates/" + name + "/touch", kTemplatesToken).status, 200);
  EXPECT_EQ(Delete("/api/v1/templates/" + name, kTemplatesToken).status, 204);
}

// --- query parameters, unknown paths ---

TEST_F(ApiServerTest, BadQueryParameters) {
  Answer unknown = Get("/api/v1/submissions?activ=true&zz=1");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.where(), "query");
  EXPECT_NE(unknown.message().find("'activ', 'zz'"), std::string::npos) << unknown.body;
  EXPECT_EQ(Get("/api/v1/clouds?verbose=1").status, 400);
  EXPECT_EQ(Get("/api/v1/submissions?limit=1&limit=2").status, 400);
  EXPECT_EQ(Get("/api/v1/submissions?active=yes").where(), "query.active");
  for (const std::string limit : {"0", "-1", "abc", "1001", "", "10x", "99999999999999999999"}) {
    Answer a = Get("/api/v1/events?limit=" + limit);
    EXPECT_EQ(a.status, 400) << limit;
    EXPECT_EQ(a.where(), "query.limit") << limit;
  }
  EXPECT_EQ(Get("/api/v1/events?limit=1000").status, 200);
  EXPECT_EQ(Get("/api/v1/events?after=-5").where(), "query.after");
}

TEST_F(ApiServerTest, NotFound) {
  Answer key = Get("/api/v1/submissions/nope");
  EXPECT_EQ(key.status, 404);
  EXPECT_EQ(key.code(), "not_found");
  // the store names its file as where it failed; that is not a place in the request
  EXPECT_EQ(key.where(), "") << key.body;
  for (const Answer& a :
       {Get("/api/v1/submissions/nope/events"), Delete("/api/v1/submissions/nope")}) {
    EXPECT_EQ(a.status, 404);
    EXPECT_EQ(a.where(), "") << a.body;
  }

  Answer path = Get("/api/v1/nothing-here");
  EXPECT_EQ(path.status, 404);
  EXPECT_EQ(path.code(), "not_found");
  EXPECT_EQ(Call("GET", "/", "").status, 404);

  Answer long_uri = Get("/api/v1/submissions/" + std::string(9000, 'k'));
  EXPECT_EQ(long_uri.status, 414);
  EXPECT_EQ(long_uri.code(), "uri_too_long");

  Answer method = Call("PUT", "/api/v1/submissions", kAdminToken, "{}");
  EXPECT_EQ(method.status, 405);
  EXPECT_EQ(method.header("Allow"), "GET, POST");
}

// --- access log, lifecycle ---

TEST_F(ApiServerTest, AccessLogLeavesOutQueryAndCredentials) {
  Get("/api/v1/submissions?limit=5&cloud=alpha");
  Call("GET", "/api/v1/clouds", kWrongToken);
  Call("GET", "/api/v1/health%0Aforged", "");
  server_->Stop();  // the log line is written after the response: wait for the workers
  auto log = Log();
  ASSERT_EQ(log.size(), 3u);
  // Workers log after answering, so lines may come in any order.
  auto line = [&](const std::string& path) {
    for (const auto& entry : log) {
      if (entry.path == path) return entry;
    }
    ADD_FAILURE() << "no log line for " << path;
    return AccessLogEntry{};
  };
  AccessLogEntry list = line("/api/v1/submissions");
  EXPECT_EQ(list.method, "GET");
  EXPECT_EQ(list.status, 200);
  EXPECT_EQ(list.principal, "dashboard");
  EXPECT_EQ(list.duration_ms, 0);  // the fake clock stood still
  EXPECT_EQ(FormatAccessLog(list), "GET /api/v1/submissions 200 0ms principal=dashboard");
  AccessLogEntry denied = line("/api/v1/clouds");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.principal, "");
  EXPECT_EQ(FormatAccessLog(denied), "GET /api/v1/clouds 401 0ms principal=-");
  EXPECT_EQ(line("/api/v1/health?forged").status, 404);
}

TEST_F(ApiServerTest, AnOccupiedPortIsAnError) {
  ServerOptions options;
  options.listen_host = "127.0.0.1";
  options.listen_port = server_->port();
  auto second = ApiServer::Start(options, *backend_, *store_, *tokens_, clock_);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, Code::kInvalidInput);
  EXPECT_NE(second.error().where.find(std::to_string(server_->port())), std::string::npos);
}

TEST_F(ApiServerTest, StopIsIdempotent) {
  server_->Stop();
  server_->Stop();
  server_.reset();
}

}  // namespace
}  // namespace slurmfleet::server

namespace slurmfleet::server {
namespace {

TEST_F(ApiServerTest, AgentsListsLiveOnesUnlessAllIsAsked) {
  AgentView live{"c-cpu-1-0",
                 "c",
                 "cpu",
                 "online",
                 {"linux"},
                 17u,
                 "RUNNING",
                 "None",
                 "http://j/job/x/1/",
                 1,
                 1'800'000'000'000,
                 1'800'000'042'000,
                 ""};
  AgentView ended = live;
  ended.name = "c-cpu-1-1";
  ended.phase = "done";
  ended.outcome = "its one build finished";
  backend_->SetAgents({live, ended});
  Answer a = Get("/api/v1/agents");
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(a.body["agents"].size(), 1u);
  EXPECT_EQ(a.body["agents"][0]["name"], "c-cpu-1-0");
  EXPECT_EQ(a.body["agents"][0]["job_id"], 17);
  EXPECT_EQ(a.body["agents"][0]["connected_at_unix"], 1'800'000'042);
  EXPECT_EQ(Get("/api/v1/agents?all=true").body["agents"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/agents?all=maybe").status, 400);
  EXPECT_EQ(Get("/api/v1/agents/c-cpu-1-1").body["outcome"], "its one build finished");
  EXPECT_EQ(Get("/api/v1/agents/nope").status, 404);
  EXPECT_EQ(Get("/api/v1/agents", "").status, 401);
}

TEST_F(ApiServerTest, ActivitiesAreAgentEventsWithLevels) {
  backend_->SetAgents(
      {AgentView{"c-cpu-1-0", "c", "cpu", "launching", {}, {}, "", "", "", 0, 1, 0, ""}});
  ASSERT_TRUE(store_->AppendEvent("c-cpu-1-0", "submitted", "Submitted Slurm job 5"));
  ASSERT_TRUE(store_->AppendEvent("some-run", "submitted", "Submitted Slurm job 6"));
  ASSERT_TRUE(store_->AppendEvent("c-cpu-1-0", "warn", "Slurm job 5 still PENDING after 61s"));
  ASSERT_TRUE(store_->AppendEvent("queue-9", "skipped", "cloud c serves only the folders a"));
  ASSERT_TRUE(store_->AppendEvent("c-cpu-1-0", "failed", "Timeout waiting for agent"));
  Answer a = Get("/api/v1/activities");
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(a.body["activities"].size(), 4u) << a.body;  // not the run's event
  EXPECT_EQ(a.body["activities"][0]["level"], "OK");
  EXPECT_EQ(a.body["activities"][1]["level"], "WARN");
  EXPECT_EQ(a.body["activities"][2]["key"], "queue-9");
  EXPECT_EQ(a.body["activities"][3]["level"], "FAIL");
  Answer page = Get("/api/v1/activities?limit=2");
  ASSERT_EQ(page.body["activities"].size(), 2u);
  EXPECT_TRUE(page.body["more"].get<bool>());
  Answer rest =
      Get("/api/v1/activities?after=" + std::to_string(page.body["next_after"].get<int64_t>()));
  EXPECT_EQ(rest.body["activities"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/activities?agent=c-cpu-1-0").body["activities"].size(), 3u);
  EXPECT_EQ(Get("/api/v1/activities?agent=ghost").status, 404);
}

// The plugin's Cloud Statistics filter by cloud name: one cloud's agents, nothing else.
TEST_F(ApiServerTest, ActivitiesOfOneCloud) {
  backend_->SetAgents(
      {AgentView{"c-cpu-1-0", "c", "cpu", "launching", {}, {}, "", "", "", 0, 1, 0, ""},
       AgentView{"d-gpu-1-0", "d", "gpu", "launching", {}, {}, "", "", "", 0, 1, 0, ""}});
  backend_->SetClouds({CloudInfo{"c", "http://s:6820", "v0.0.45", 4, 0},
                       CloudInfo{"d", "http://t:6820", "v0.0.45", 4, 0}});
  ASSERT_TRUE(store_->AppendEvent("c-cpu-1-0", "submitted", "Submitted Slurm job 5"));
  ASSERT_TRUE(store_->AppendEvent("d-gpu-1-0", "submitted", "Submitted Slurm job 6"));
  ASSERT_TRUE(store_->AppendEvent("queue-9", "skipped", "cloud c serves only the folders a"));
  ASSERT_TRUE(store_->AppendEvent("c-cpu-1-0", "connected", "Agent connected after 3s"));
  Answer c = Get("/api/v1/activities?cloud=c");
  ASSERT_EQ(c.status, 200) << c.body;
  ASSERT_EQ(c.body["activities"].size(), 2u) << c.body;
  for (const json& e : c.body["activities"]) EXPECT_EQ(e["key"], "c-cpu-1-0");
  EXPECT_EQ(Get("/api/v1/activities?cloud=d").body["activities"].size(), 1u);
  EXPECT_EQ(Get("/api/v1/activities").body["activities"].size(), 4u);
  Answer ghost = Get("/api/v1/activities?cloud=ghost");
  EXPECT_EQ(ghost.status, 404);
  EXPECT_NE(ghost.body.dump().find("configured: c, d"), std::string::npos) << ghost.body;
  EXPECT_EQ(Get("/api/v1/activities?cloud=d&agent=c-cpu-1-0").status, 404);
}

TEST_F(ApiServerTest, EphemeralTemplatesRegisterTouchAndRelease) {
  json body = {
      {"cloud", "local"}, {"json", R"({"job": {"partition": "gpu"}})"}, {"ttlSeconds", 600}};
  EXPECT_EQ(Post("/api/v1/templates", body, kReadToken).status, 403);
  Answer a = Post("/api/v1/templates", body);
  ASSERT_EQ(a.status, 201) << a.body;
  const std::string name = a.body["name"];
  EXPECT_EQ(a.body["label"], "slurmfleet-" + name);
  EXPECT_EQ(a.body["owner"], "jenkins") << "the token's name when the body names nobody";
  EXPECT_TRUE(a.body.contains("expires_at_unix"));
  ASSERT_EQ(backend_->registered().size(), 1u);
  EXPECT_EQ(backend_->registered()[0].ttl_seconds, 600);
  EXPECT_EQ(Get("/api/v1/templates").body["templates"].size(), 1u);
  EXPECT_EQ(Post("/api/v1/templates/" + name + "/touch", json::object()).status, 200);
  Answer gone = Delete("/api/v1/templates/" + name);
  EXPECT_EQ(gone.status, 204);
  EXPECT_EQ(Delete("/api/v1/templates/" + name).status, 404);

  Answer bad = Post("/api/v1/templates", {{"cloud", "local"}, {"json", "{\"bogus\": 1}"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"]["where"], "json.job.bogus");
  EXPECT_EQ(Post("/api/v1/templates", {{"cloud", "nope"}, {"json", "{}"}}).status, 404);
  EXPECT_EQ(Post("/api/v1/templates", {{"json", "{}"}}).body["error"]["where"], "cloud");
  EXPECT_EQ(Post("/api/v1/templates", {{"cloud", "local"}, {"json", "{}"}, {"ttlSeconds", -1}})
                .body["error"]["where"],
            "ttlSeconds");
  EXPECT_EQ(Post("/api/v1/templates", {{"cloud", "local"}, {"json", "{}"}, {"extra", 1}})
                .body["error"]["where"],
            "extra");

  Answer job = Post("/api/v1/templates", {{"cloud", "local"}, {"json", "{}"}, {"job", "team/x"}});
  EXPECT_EQ(job.status, 201) << job.body;
  EXPECT_EQ(backend_->registered().back().job, "team/x");
  Answer outside =
      Post("/api/v1/templates", {{"cloud", "local"}, {"json", "{}"}, {"job", "elsewhere/x"}});
  EXPECT_EQ(outside.status, 403);
  EXPECT_EQ(outside.body["error"]["code"], "forbidden");
  EXPECT_EQ(outside.body["error"]["where"], "job");
  EXPECT_EQ(Post("/api/v1/templates", {{"cloud", "local"}, {"json", "{}"}, {"job", 3}})
                .body["error"]["where"],
            "job");
}

TEST_F(ApiServerTest, JenkinsStatusSaysWhichLabelSourceIsUsed) {
  Answer a = Get("/api/v1/jenkins");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.body["label_mode"], "script");
  EXPECT_EQ(a.body["reachable"], true);
  Answer t = Call("POST", "/api/v1/clouds/alpha/test-connection", kAdminToken);
  EXPECT_EQ(t.body["jenkins"]["label_mode"], "script");
}

}  // namespace
}  // namespace slurmfleet::server
