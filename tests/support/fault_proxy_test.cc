// FaultProxy between CurlTransport and the real slurmrestd of the testbed: what each fault looks
// like to our transport, and that the proxy counts and logs what it saw. Needs the running testbed
// (see slurm/testbed_env.h); fails, never skips, without it.
#include "support/fault_proxy.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "auth/minting_token_source.h"
#include "base/clock.h"
#include "slurm/curl_transport.h"
#include "slurm/testbed_env.h"

namespace slurmfleet {
namespace {

using namespace std::chrono_literals;
using slurm::CurlTransport;
using slurm::HttpRequest;
using slurm::HttpResponse;
using slurm::TestbedEnv;

// in the newest API version the testbed serves
const std::string kPing = slurm::Testbed().Path("ping/");
const std::string kJobs = slurm::Testbed().Path("jobs/");
const std::string kDiag = slurm::Testbed().Path("diag/");
const std::string kSubmit = slurm::Testbed().Path("job/submit");

// 127.0.0.1:PORT of a URL such as "http://127.0.0.1:6820".
std::pair<std::string, int> HostPort(const std::string& url) {
  std::string rest = url.substr(url.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  size_t colon = rest.rfind(':');
  return {rest.substr(0, colon), std::stoi(rest.substr(colon + 1))};
}

// A port on 127.0.0.1 with nothing listening on it (bound, then closed).
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Sends `raw` to 127.0.0.1:port on a new connection and returns all it gets back until EOF.
std::string RawExchange(int port, const std::string& raw, bool close_early = false) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(raw.size()) &&
      !close_early) {
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(testbed_.url, "") << "SLURMRESTD_URL is not set: run the tests through "
                                   "scripts/test.sh, which starts the testbed and exports it";
    if (std::string jwt = TestbedEnv("SLURM_JWT"); !jwt.empty()) {
      token_ = Secret(jwt);
    } else {
      ASSERT_EQ(testbed_.Missing(), "");
      auth::MintingTokenSource minter(testbed_.jwt_key, testbed_.user, clock_);
      Result<auth::Token> t = minter.Get();
      ASSERT_TRUE(t) << t.error().ToString();
      token_ = t->jwt;
    }
    auto [host, port] = HostPort(testbed_.url);
    auto proxy = FaultProxy::Start(host, port, 42);
    ASSERT_TRUE(proxy) << proxy.error().ToString();
    proxy_ = std::move(*proxy);
    direct_ = NewTransport(testbed_.url);
    via_proxy_ = NewTransport(proxy_->url());
  }

  std::unique_ptr<CurlTransport> NewTransport(const std::string& url,
                                              std::chrono::milliseconds total = 10s) {
    slurm::TransportOptions o;
    o.base_url = url;
    o.connect_timeout = 2s;
    o.total_timeout = total;
    auto t = CurlTransport::Create(o);
    EXPECT_TRUE(t) << t.error().ToString();
    return t ? std::move(*t) : nullptr;
  }

  Result<HttpResponse> Send(CurlTransport& t, const std::string& method, const std::string& path,
                            const std::string& body = "") {
    return t.Send(HttpRequest{method, path, body, token_});
  }

  // The body of a submit for a held, harmless job named `name`.
  static std::string HeldJob(const std::string& name) {
    nlohmann::json job = {{"job",
                           {{"name", name},
                            {"hold", true},
                            {"current_working_directory", "/tmp"},
                            {"environment", {"PATH=/bin"}},
                            {"script", "#!/bin/bash\ntrue\n"}}}};
    return job.dump();
  }

  // The status of a response, or -1 for an error.
  int StatusOf(CurlTransport& t, const std::string& method, const std::string& path) {
    Result<HttpResponse> r = Send(t, method, path);
    return r ? static_cast<int>(r->status) : -1;
  }

  // The ids of the jobs named `name`, asked directly.
  std::vector<std::string> JobsNamed(const std::string& name) {
    std::vector<std::string> ids;
    Result<HttpResponse> r = Send(*direct_, "GET", kJobs);
    EXPECT_TRUE(r && r->status == 200);
    if (!r) return ids;
    nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_TRUE(body.contains("jobs")) << r->body;
    for (const auto& j : body.value("jobs", nlohmann::json::array())) {
      if (j["name"] == name) ids.push_back(std::to_string(j["job_id"].get<long>()));
    }
    return ids;
  }

  void CancelDirectly(const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    nlohmann::json body = {{"jobs", ids}};
    Result<HttpResponse> r = Send(*direct_, "DELETE", kJobs, body.dump());
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : r.error().ToString());
  }

  static std::string UniqueName() {
    static std::atomic<int> n{0};
    return "proxy-test-" + std::to_string(::getpid()) + "-" + std::to_string(++n) + "-" +
           std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  }

  slurm::Testbed testbed_;
  SystemClock clock_;
  Secret token_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<CurlTransport> direct_;
  std::unique_ptr<CurlTransport> via_proxy_;
};

// The keys of a JSON object, and of the objects and first array elements inside it.
std::vector<std::string> Shape(const nlohmann::json& j, const std::string& at = "") {
  std::vector<std::string> keys;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      keys.push_back(at + "/" + k);
      for (auto& inner : Shape(v, at + "/" + k)) keys.push_back(inner);
    }
  } else if (j.is_array() && !j.empty()) {
    for (auto& inner : Shape(j.front(), at + "/0")) keys.push_back(inner);
  }
  return keys;
}

TEST_F(FaultProxyTest, ForwardsPingUnchanged) {
  Result<HttpResponse> direct = Send(*direct_, "GET", kPing);
  Result<HttpResponse> proxied = Send(*via_proxy_, "GET", kPing);
  ASSERT_TRUE(direct) << direct.error().ToString();
  ASSERT_TRUE(proxied) << proxied.error().ToString();
  EXPECT_EQ(proxied->status, 200);
  EXPECT_EQ(proxied->content_type, direct->content_type);
  auto a = nlohmann::json::parse(direct->body, nullptr, false);
  auto b = nlohmann::json::parse(proxied->body, nullptr, false);
  ASSERT_FALSE(b.is_discarded()) << proxied->body;
  EXPECT_EQ(Shape(b), Shape(a));
  EXPECT_EQ(b["pings"][0]["responding"], true);
}

TEST_F(FaultProxyTest, WithoutATokenTheAnswerIsTheSameAsDirectly) {
  Result<HttpResponse> direct = direct_->Send(HttpRequest{"GET", kPing, "", Secret()});
  Result<HttpResponse> proxied = via_proxy_->Send(HttpRequest{"GET", kPing, "", Secret()});
  ASSERT_TRUE(direct) << direct.error().ToString();
  ASSERT_TRUE(proxied) << proxied.error().ToString();
  EXPECT_NE(proxied->status, 200);
  EXPECT_EQ(proxied->status, direct->status);
}

TEST_F(FaultProxyTest, KeepsTheClientConnectionAlive) {
  for (int i = 0; i < 4; ++i) {
    Result<HttpResponse> r = Send(*via_proxy_, "GET", i % 2 ? kDiag : kPing);
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(proxy_->Connections(), 1);
  EXPECT_EQ(proxy_->TotalRequests(), 4);
}

TEST_F(FaultProxyTest, CountsAndLogsEveryRequest) {
  ASSERT_TRUE(Send(*via_proxy_, "GET", std::string(kJobs) + "?update_time=1"));
  ASSERT_TRUE(Send(*via_proxy_, "GET", kJobs));
  ASSERT_TRUE(Send(*via_proxy_, "GET", kPing));
  EXPECT_EQ(proxy_->TotalRequests(), 3);
  EXPECT_EQ(proxy_->Count("GET", kJobs), 2);
  EXPECT_EQ(proxy_->Count("GET", kPing), 1);
  EXPECT_EQ(proxy_->Count("POST", kJobs), 0);
  EXPECT_EQ(proxy_->Counts().size(), 2u);
  std::vector<RequestRecord> log = proxy_->Requests();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].method, "GET");
  EXPECT_EQ(log[0].path, std::string(kJobs) + "?update_time=1");
  EXPECT_EQ(log[0].fault, Fault::kNone);
  EXPECT_EQ(log[0].upstream_status, 200);
  EXPECT_EQ(log[0].client_status, 200);
  EXPECT_EQ(log[2].path, kPing);

  proxy_->ResetCounts();
  EXPECT_EQ(proxy_->TotalRequests(), 0);
  EXPECT_EQ(proxy_->Count("GET", kJobs), 0);
  EXPECT_TRUE(proxy_->Requests().empty());
}

TEST_F(FaultProxyTest, DroppedResponseIsAnUnknownOutcome) {
  proxy_->AddRule({.path_prefix = kPing, .fault = Fault::kDropResponse, .times = 1});
  Result<HttpResponse> r = Send(*via_proxy_, "GET", kPing);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome) << r.error().ToString();
  std::vector<RequestRecord> log = proxy_->Requests();
  ASSERT_EQ(log.size(), 1u);  // on a fresh connection libcurl does not resend
  EXPECT_EQ(log[0].fault, Fault::kDropResponse);
  EXPECT_EQ(log[0].upstream_status, 200);  // it did reach slurmrestd
  EXPECT_EQ(log[0].client_status, 0);

  Result<HttpResponse> again = Send(*via_proxy_, "GET", kPing);  // times = 1: spent
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->status, 200);
}

TEST_F(FaultProxyTest, DroppedSubmitResponseStillCreatedTheJob) {
  const std::string name = UniqueName();
  proxy_->AddRule({.method = "POST", .path_prefix = kSubmit, .fault = Fault::kDropResponse});
  Result<HttpResponse> r = Send(*via_proxy_, "POST", kSubmit, HeldJob(name));
  std::vector<std::string> ids = JobsNamed(name);
  CancelDirectly(ids);

  ASSERT_FALSE(r) << r->body;
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome) << r.error().ToString();
  EXPECT_EQ(ids.size(), 1u) << "the submit took effect although its response was lost";
  EXPECT_EQ(proxy_->Count("POST", kSubmit), 1);

  // The GET through the proxy sees the job too: the rule matches POSTs only.
  Result<HttpResponse> jobs = Send(*via_proxy_, "GET", kJobs);
  ASSERT_TRUE(jobs) << jobs.error().ToString();
  EXPECT_NE(jobs->body.find(name), std::string::npos);
}

// DISABLED: fails today. When a response is lost on a connection libcurl reused, libcurl resends
// the request on a fresh connection by itself (its "retry on a dead reused connection"), so one
// CurlTransport::Send of a submit makes two jobs; the proxy counts two POSTs. Transport promises
// never to retry. Enable once CurlTransport stops reusing connections for non-idempotent requests
// (for instance CURLOPT_FRESH_CONNECT for POST).
TEST_F(FaultProxyTest, SubmitIsNeverResentOnAReusedConnection) {
  const std::string name = UniqueName();
  ASSERT_EQ(StatusOf(*via_proxy_, "GET", kPing), 200);  // leaves a connection to reuse
  proxy_->AddRule({.method = "POST", .path_prefix = kSubmit, .fault = Fault::kDropResponse});
  Result<HttpResponse> r = Send(*via_proxy_, "POST", kSubmit, HeldJob(name));
  std::vector<std::string> ids = JobsNamed(name);
  CancelDirectly(ids);

  EXPECT_FALSE(r);
  EXPECT_EQ(proxy_->Count("POST", kSubmit), 1);
  EXPECT_EQ(ids.size(), 1u);
}

TEST_F(FaultProxyTest, Respond503AnswersWithoutForwarding) {
  proxy_->AddRule({.fault = Fault::kRespond503, .times = 1});
  Result<HttpResponse> r = Send(*via_proxy_, "GET", kPing);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->content_type, "application/json");
  auto body = nlohmann::json::parse(r->body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << r->body;
  EXPECT_FALSE(body["errors"].empty());
  ASSERT_EQ(proxy_->Requests().size(), 1u);
  EXPECT_EQ(proxy_->Requests()[0].upstream_status, 0);
  EXPECT_EQ(proxy_->Requests()[0].client_status, 503);
  // the connection stays usable after a 503
  ASSERT_TRUE(Send(*via_proxy_, "GET", kPing));
  EXPECT_EQ(proxy_->Connections(), 1);
}

TEST_F(FaultProxyTest, ResetBeforeForwardIsAnError) {
  proxy_->AddRule({.fault = Fault::kResetBeforeForward, .times = 1});
  Result<HttpResponse> r = Send(*via_proxy_, "GET", kPing);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome) << r.error().ToString();
  ASSERT_EQ(proxy_->Requests().size(), 1u);
  EXPECT_EQ(proxy_->Requests()[0].fault, Fault::kResetBeforeForward);
  EXPECT_EQ(proxy_->Requests()[0].upstream_status, 0);
}

TEST_F(FaultProxyTest, DelayedRequestStillSucceeds) {
  proxy_->AddRule({.path_prefix = kPing, .fault = Fault::kDelay, .delay = 300ms});
  auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = Send(*via_proxy_, "GET", kPing);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(proxy_->Requests()[0].fault, Fault::kDelay);
}

TEST_F(FaultProxyTest, BlackholeEndsInTheClientsTimeout) {
  auto impatient = NewTransport(proxy_->url(), 300ms);
  proxy_->AddRule({.fault = Fault::kBlackhole, .times = 1});
  Result<HttpResponse> r = Send(*impatient, "GET", kPing);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUnknownOutcome) << r.error().ToString();
  ASSERT_EQ(proxy_->Requests().size(), 1u);
  EXPECT_EQ(proxy_->Requests()[0].fault, Fault::kBlackhole);
  EXPECT_EQ(proxy_->Requests()[0].upstream_status, 0);
  Result<HttpResponse> again = Send(*impatient, "GET", kPing);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->status, 200);
}

TEST_F(FaultProxyTest, TimesCountsOnlyMatchingRequests) {
  proxy_->AddRule({.method = "GET", .path_prefix = kPing, .fault = Fault::kRespond503, .times = 2});
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kPing), 503);
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kDiag), 200);  // no match: not spent
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kPing), 503);
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kPing), 200);
  EXPECT_EQ(proxy_->Count("GET", kPing), 3);
}

TEST_F(FaultProxyTest, FirstMatchingRuleWinsAndClearRulesRemovesThem) {
  proxy_->AddRule({.method = "GET", .path_prefix = kPing, .fault = Fault::kNone});
  proxy_->AddRule({.fault = Fault::kRespond503});
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kPing), 200);
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kDiag), 503);
  proxy_->ClearRules();
  EXPECT_EQ(StatusOf(*via_proxy_, "GET", kDiag), 200);
}

// The faults chosen by probability, for 40 pings through a fresh proxy seeded with `seed`.
std::vector<Fault> FaultsFor(uint64_t seed, const std::string& upstream, double probability) {
  auto [host, port] = HostPort(upstream);
  auto proxy = FaultProxy::Start(host, port, seed);
  EXPECT_TRUE(proxy);
  if (!proxy) return {};
  (*proxy)->AddRule({.fault = Fault::kRespond503, .probability = probability});
  slurm::TransportOptions o;
  o.base_url = (*proxy)->url();
  auto t = CurlTransport::Create(o);
  for (int i = 0; i < 40; ++i) EXPECT_TRUE((*t)->Send(HttpRequest{"GET", kPing, "", Secret()}));
  std::vector<Fault> faults;
  for (const RequestRecord& r : (*proxy)->Requests()) faults.push_back(r.fault);
  return faults;
}

TEST_F(FaultProxyTest, ProbabilityIsReproducibleForASeed) {
  std::vector<Fault> a = FaultsFor(7, testbed_.url, 0.5);
  std::vector<Fault> b = FaultsFor(7, testbed_.url, 0.5);
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);
  auto n503 = std::ranges::count(a, Fault::kRespond503);
  EXPECT_GT(n503, 5);
  EXPECT_LT(n503, 35);
  EXPECT_NE(FaultsFor(8, testbed_.url, 0.5), a);
  EXPECT_EQ(std::ranges::count(FaultsFor(7, testbed_.url, 0.0), Fault::kRespond503), 0);
}

TEST_F(FaultProxyTest, UpstreamDownIsAnErrorAndTheProxyRecovers) {
  ASSERT_TRUE(Send(*via_proxy_, "GET", kPing));  // leaves a keep-alive connection open
  proxy_->SetUpstreamDown(true);
  Result<HttpResponse> r = Send(*via_proxy_, "GET", kPing);
  ASSERT_FALSE(r) << r->status;
  EXPECT_EQ(proxy_->TotalRequests(), 1);  // nothing reached the "server"
  auto fresh = NewTransport(proxy_->url());
  EXPECT_FALSE(Send(*fresh, "GET", kPing));

  proxy_->SetUpstreamDown(false);
  Result<HttpResponse> back = Send(*via_proxy_, "GET", kPing);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->status, 200);
  EXPECT_EQ(proxy_->TotalRequests(), 2);
}

TEST_F(FaultProxyTest, UnreachableUpstreamIsA502) {
  auto proxy = FaultProxy::Start("127.0.0.1", ClosedPort(), 1);
  ASSERT_TRUE(proxy) << proxy.error().ToString();
  auto t = NewTransport((*proxy)->url());
  Result<HttpResponse> r = Send(*t, "GET", kPing);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->status, 502);
  EXPECT_EQ((*proxy)->Count("GET", kPing), 1);
  ASSERT_EQ((*proxy)->Requests().size(), 1u);
  EXPECT_EQ((*proxy)->Requests()[0].client_status, 502);
  EXPECT_EQ(StatusOf(*t, "GET", kPing), 502);  // and keeps answering
}

TEST_F(FaultProxyTest, ChunkedRequestIsA501) {
  std::string reply = RawExchange(proxy_->port(),
                                  "POST /slurm/v0.0.45/job/submit HTTP/1.1\r\nHost: x\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 501 ")) << reply;
  EXPECT_EQ(proxy_->TotalRequests(), 0);
}

TEST_F(FaultProxyTest, SurvivesClientsThatHangUpMidRequest) {
  RawExchange(proxy_->port(), "GET /slurm/v0.0.45/ping/ HTTP/1.1\r\nHost: x\r\n", true);
  RawExchange(proxy_->port(), "POST /x HTTP/1.1\r\nContent-Length: 100\r\n\r\n{", true);
  Result<HttpResponse> r = Send(*via_proxy_, "GET", kPing);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(proxy_->TotalRequests(), 1);
}

TEST_F(FaultProxyTest, StopEndsHangingRequests) {
  proxy_->AddRule({.path_prefix = kPing, .fault = Fault::kBlackhole});
  proxy_->AddRule({.path_prefix = kDiag, .fault = Fault::kDelay, .delay = 60s});
  std::thread a([&] { EXPECT_FALSE(Send(*via_proxy_, "GET", kPing)); });
  std::thread b([&] { EXPECT_FALSE(Send(*via_proxy_, "GET", kDiag)); });
  while (proxy_->TotalRequests() < 2) std::this_thread::sleep_for(10ms);
  auto start = std::chrono::steady_clock::now();
  proxy_->Stop();
  a.join();
  b.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  proxy_->Stop();  // idempotent
}

// A one-shot upstream on a loopback port that answers any request with `response`, then closes.
class ScriptedUpstream {
 public:
  explicit ScriptedUpstream(std::string response) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 4);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, response = std::move(response)] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buf[4096];
      ssize_t n;
      while (got.find("\r\n\r\n") == std::string::npos && (n = ::recv(c, buf, sizeof buf, 0)) > 0) {
        got.append(buf, static_cast<size_t>(n));
      }
      ::send(c, response.data(), response.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  ~ScriptedUpstream() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(FaultProxyTest, ReframesChunkedAndCloseDelimitedResponses) {
  for (const char* response :
       {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\n{\"a\":\r\n3;x=y\r\n 1}\r\n0\r\nTrailer: t\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"a\": "
        "1}"}) {
    ScriptedUpstream upstream(response);
    auto proxy = FaultProxy::Start("127.0.0.1", upstream.port(), 1);
    ASSERT_TRUE(proxy) << proxy.error().ToString();
    auto t = NewTransport((*proxy)->url());
    Result<HttpResponse> r = Send(*t, "GET", kPing);
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "{\"a\": 1}");
    EXPECT_EQ(r->content_type, "application/json");
  }
}

}  // namespace
}  // namespace slurmfleet
