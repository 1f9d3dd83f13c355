// CurlTransport against a local HTTP server: SendAll keeps the requests' order, never has more
// than `at_once` in flight, gives every POST a connection of its own, and says when each left;
// with connections opened ahead, a POST takes one that is still fit, and a GET never does.
#include "slurm/curl_transport.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "connection_server.h"

namespace slurmfleet::slurm {
namespace {

using namespace std::chrono_literals;

// Answers every request with its own body, after a pause long enough for requests sent together
// to overlap; notes how many it was serving at once and from which client ports.
class EchoServer {
 public:
  EchoServer() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        widest_ = std::max(widest_, ++serving_);
        ports_.insert(req.remote_port);
        ++requests_;
      }
      std::this_thread::sleep_for(50ms);
      {
        std::lock_guard lock(mu_);
        --serving_;
      }
      res.set_content(req.body, "application/json");
    };
    server_.Post(".*", handler);
    server_.Get(".*", handler);
    // an idle kept-alive connection holds one of its threads this long
    server_.set_keep_alive_timeout(60);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~EchoServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int widest() {
    std::lock_guard lock(mu_);
    return widest_;
  }
  size_t ports() {
    std::lock_guard lock(mu_);
    return ports_.size();
  }
  int requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  int serving_ = 0, widest_ = 0, requests_ = 0;  // guarded by mu_
  std::set<int> ports_;                          // guarded by mu_
};

std::unique_ptr<CurlTransport> Make(const std::string& url) {
  TransportOptions t;
  t.base_url = url;
  t.total_timeout = 10s;
  auto transport = CurlTransport::Create(t);
  EXPECT_TRUE(transport) << transport.error().ToString();
  return std::move(*transport);
}

TEST(CurlTransportTest, SendAllAnswersInOrderWithAtMostAtOnceInFlight) {
  EchoServer server;
  auto transport = Make(server.url());
  std::vector<HttpRequest> posts;
  for (int i = 0; i < 8; ++i) posts.push_back({"POST", "/job/submit", std::to_string(i), {}});
  const auto before = std::chrono::steady_clock::now();
  std::vector<Result<HttpResponse>> answers = transport->SendAll(posts, 3);
  const auto after = std::chrono::steady_clock::now();
  ASSERT_EQ(answers.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(answers[i]) << answers[i].error().ToString();
    EXPECT_EQ(answers[i]->status, 200);
    EXPECT_EQ(answers[i]->body, std::to_string(i));
    EXPECT_GE(answers[i]->sent_at, before);
    EXPECT_LE(answers[i]->sent_at, after);
  }
  EXPECT_EQ(server.widest(), 3);
  EXPECT_EQ(server.ports(), 8u);  // a POST never reuses a connection: libcurl could resend it
}

TEST(CurlTransportTest, SendAllClosesEachConnectionSoAServerWithFewThreadsKeepsUp) {
  // httplib serves a connection with one of its 8 threads until the client closes it: were the
  // answered connections kept open, requests after the first 8 would wait out the 60 s keep-alive
  // and time out at 10 s.
  EchoServer server;
  auto transport = Make(server.url());
  std::vector<HttpRequest> posts(48, HttpRequest{"POST", "/job/submit", "{}", {}});
  std::vector<Result<HttpResponse>> answers = transport->SendAll(posts, 16);
  for (const Result<HttpResponse>& a : answers) ASSERT_TRUE(a) << a.error().ToString();
  EXPECT_EQ(server.requests(), 48);
}

// Established connections to 127.0.0.1:`port` (the client sides: their remote end is it).
int ConnectionsTo(int port) {
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // header
  int count = 0;
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    const int remote_port = std::stoi(remote.substr(remote.find(':') + 1), nullptr, 16);
    const bool loopback = remote.rfind("0100007F:", 0) == 0;
    if (loopback && remote_port == port && state == "01") ++count;
  }
  return count;
}

TEST(CurlTransportTest, AHandleKeepsOneIdleConnectionWhateverItsRequestsForcedOpen) {
  // A POST always gets a fresh connection; libcurl would keep the old ones too, up to five a
  // handle, and a server with a connection limit (slurmrestd: 124) stops accepting new ones.
  EchoServer server;
  auto transport = Make(server.url());
  const int port = std::stoi(server.url().substr(server.url().rfind(':') + 1));
  for (int i = 0; i < 8; ++i) {
    auto answer = transport->Send({"POST", "/job/submit", "{}", {}});
    ASSERT_TRUE(answer) << answer.error().ToString();
    auto get = transport->Send({"GET", "/jobs", "", {}});
    ASSERT_TRUE(get) << get.error().ToString();
  }
  EXPECT_EQ(server.ports(), 8u) << "each POST on a connection of its own";
  EXPECT_LE(ConnectionsTo(port), 1);
}

TEST(CurlTransportTest, SendAllToAPortNobodyListensOnSaysEachWasNeverSent) {
  int port = 0;
  {
    EchoServer gone;  // a port that was just free, then closed again
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  auto transport = Make("http://127.0.0.1:" + std::to_string(port));
  std::vector<Result<HttpResponse>> answers =
      transport->SendAll({{"POST", "/a", "{}", {}}, {"POST", "/b", "{}", {}}}, 4);
  ASSERT_EQ(answers.size(), 2u);
  for (const Result<HttpResponse>& a : answers) {
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, Code::kUnavailable);
  }
  EXPECT_EQ(answers[1].error().where, "POST /b");
}

TEST(CurlTransportTest, BaseUrlsAreHttpHttpsOrAnAbsoluteLocalSocket) {
  for (const char* good : {"http://h:6820", "https://h/", "unix:/run/slurmrestd.socket"}) {
    TransportOptions t;
    t.base_url = good;
    EXPECT_TRUE(CurlTransport::Create(t)) << good;
  }
  TransportOptions relative;
  relative.base_url = "unix:slurmrestd.socket";
  auto r = CurlTransport::Create(relative);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kInvalidInput);
  EXPECT_NE(r.error().message.find("absolute path"), std::string::npos) << r.error().message;
  TransportOptions bare;
  bare.base_url = "slurmrestd:6820";
  auto b = CurlTransport::Create(bare);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("unix:/path/to/slurmrestd.socket"), std::string::npos)
      << b.error().message;
}

// The CLI's --url and every configured slurmrestd URL come here: the shared check of base/url.h.
TEST(CurlTransportTest, AnHttpBaseUrlNeedsAHostAPortFrom1To65535AndNoSpaceOrFragment) {
  const std::pair<const char*, const char*> cases[] = {
      {"http:///",
       "'http:///' has no host; write the host after '//', e.g. "
       "http://slurmrestd:6820"},
      {"http://h ost:6820", "contains a space"},
      {"http://h:6820/#x", "has a fragment ('#')"},
      {"http://h:abc", "has a port that is not a number from 1 to 65535"},
      {"http://h:0", "has a port that is not a number from 1 to 65535"},
      {"http://h:99999", "has a port that is not a number from 1 to 65535"},
  };
  for (const auto& [url, expected] : cases) {
    TransportOptions t;
    t.base_url = url;
    auto r = CurlTransport::Create(t);
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().code, Code::kInvalidInput);
    EXPECT_EQ(r.error().where, "slurm url");
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << r.error().message;
    // an http:// URL is meant as one: no hint at local sockets
    EXPECT_EQ(r.error().message.find("unix:"), std::string::npos) << r.error().message;
  }
  TransportOptions v6;
  v6.base_url = "http://[::1]:6820/";
  EXPECT_TRUE(CurlTransport::Create(v6));
}

TEST(CurlTransportTest, ErrorsQuoteTheUrlWithoutItsUserAndPassword) {
  TransportOptions bare;
  bare.base_url = "u:SECRETMARK@slurmrestd:6820";
  auto b = CurlTransport::Create(bare);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().message.find("SECRETMARK"), std::string::npos) << b.error().message;
  EXPECT_EQ(b.error().message.find("'***@slurmrestd:6820' is not an http"), 0u)
      << b.error().message;

  TransportOptions with_scheme;
  with_scheme.base_url = "http://u:SECRETMARK@127.0.0.1:6820";
  auto w = CurlTransport::Create(with_scheme);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message.find("SECRETMARK"), std::string::npos) << w.error().message;
  EXPECT_EQ(w.error().message.find("'http://***@127.0.0.1:6820' holds a user name or password"), 0u)
      << w.error().message;
}

TEST(CurlTransportTest, ASocketNobodyListensOnIsNeverSentAndSaysWhatToCheck) {
  const std::string path = ::testing::TempDir() + "/no-slurmrestd-here.socket";
  auto transport = Make("unix:" + path);
  Result<HttpResponse> answer = transport->Send({"POST", "/slurm/v0.0.45/job/submit", "{}", {}});
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code, Code::kUnavailable);  // never sent: safe to send again
  EXPECT_NE(answer.error().message.find("cannot reach slurmrestd at unix:" + path),
            std::string::npos)
      << answer.error().message;
  EXPECT_NE(answer.error().message.find("listens on that socket"), std::string::npos)
      << answer.error().message;
}

TEST(CurlTransportTest, SendReleasedSendsOnlyWhatIsReleasedWithAtMostAtOnceInFlight) {
  EchoServer server;
  auto transport = Make(server.url());
  int asked_for_3 = 0;
  std::vector<std::pair<size_t, std::string>> answers;
  transport->SendReleased(
      5, 2,
      [&](size_t i, HttpRequest& request) {
        if (i == 3 && ++asked_for_3 < 3) return Release::kLater;  // released a moment later
        if (i == 4) return Release::kNever;
        request = {"POST", "/job/submit", "body-" + std::to_string(i), {}};
        return Release::kNow;
      },
      [&](size_t i, Result<HttpResponse> answer) {
        ASSERT_TRUE(answer) << answer.error().ToString();
        answers.emplace_back(i, answer->body);
      });
  ASSERT_EQ(answers.size(), 4u);
  std::sort(answers.begin(), answers.end());
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(answers[i], std::make_pair(i, "body-" + std::to_string(i)));
  EXPECT_EQ(asked_for_3, 3);
  EXPECT_EQ(server.requests(), 4);
  EXPECT_EQ(server.widest(), 2);
  EXPECT_EQ(server.ports(), 4u);
}

TEST(CurlTransportTest, SendReportsWhenTheRequestLeft) {
  EchoServer server;
  auto transport = Make(server.url());
  const auto before = std::chrono::steady_clock::now();
  Result<HttpResponse> r = transport->Send({"GET", "/ping", "", {}});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_GE(r->sent_at, before);
  EXPECT_LE(r->sent_at, std::chrono::steady_clock::now() - 40ms);  // before the 50 ms pause
}

// n bytes, not all alike, so a piece lost or repeated shows.
std::string Bytes(size_t n) {
  std::string body(n, 'x');
  for (size_t i = 0; i < n; i += 4099) body[i] = static_cast<char>('a' + i % 26);
  return body;
}

// Collects a streamed answer as it arrives.
class Collected final : public BodyStream {
 public:
  void Write(std::string_view bytes) override { text.append(bytes); }
  std::string text;
};

// A streamed answer over TCP makes its socket wait for up to 256 KB before waking: whatever the
// answer's length, its last bytes must still wake it (a mark set too high would hold them until
// the timeout), and a connection kept after it must wake for a small answer's first byte.
TEST(CurlTransportTest, AStreamedAnswerOfAnyLengthArrivesWholeAndItsConnectionServesTheNext) {
  httplib::Server server;
  server.Get(R"(/bytes/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(Bytes(std::stoul(req.matches[1])), "application/json");
  });
  server.set_keep_alive_timeout(60);
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(1ms);
  auto transport = Make("http://127.0.0.1:" + std::to_string(port));
  const size_t mark = 256 * 1024;
  for (size_t n :
       {size_t{1}, size_t{1000}, mark - 1, mark, mark + 1, 3 * mark + 123, size_t{5'000'000}}) {
    Collected got;
    HttpRequest streamed{"GET", "/bytes/" + std::to_string(n), "", {}};
    streamed.stream = &got;
    Result<HttpResponse> r = transport->Send(streamed);
    ASSERT_TRUE(r) << n << " bytes: " << r.error().ToString();
    EXPECT_TRUE(got.text == Bytes(n)) << n << " bytes: got " << got.text.size();
    Result<HttpResponse> small = transport->Send({"GET", "/bytes/10", "", {}});
    ASSERT_TRUE(small) << "after " << n << " bytes: " << small.error().ToString();
    EXPECT_EQ(small->body.size(), 10u);
  }
  transport.reset();  // its kept connections would hold the server's threads
  server.stop();
  thread.join();
}

std::unique_ptr<CurlTransport> MakeWithConnectionsAhead(const std::string& url, size_t ahead) {
  TransportOptions t;
  t.base_url = url;
  t.total_timeout = 10s;
  t.connections_ahead = ahead;
  auto transport = CurlTransport::Create(t);
  EXPECT_TRUE(transport) << transport.error().ToString();
  return std::move(*transport);
}

TEST(CurlTransportTest, PostsGoOnConnectionsOpenedAheadAndGetsNever) {
  ConnectionServer server;
  auto transport = MakeWithConnectionsAhead(server.url(), 2);
  // the first request teaches the server's address: two connections are opened after it
  ASSERT_TRUE(transport->Send({"GET", "/ping", "", {}}));
  ASSERT_TRUE(server.WaitAccepted(3));

  const auto before_posts = std::chrono::steady_clock::now();
  std::vector<Result<HttpResponse>> answers =
      transport->SendAll({{"POST", "/job/submit", "{}", {}}, {"POST", "/job/submit", "{}", {}}}, 2);
  for (const Result<HttpResponse>& a : answers) {
    ASSERT_TRUE(a) << a.error().ToString();
    EXPECT_EQ(a->status, 200);
  }
  std::vector<std::chrono::steady_clock::time_point> accepted = server.RequestsAcceptedAt();
  ASSERT_EQ(accepted.size(), 3u);
  EXPECT_LT(accepted[1], before_posts);
  EXPECT_LT(accepted[2], before_posts);
  EXPECT_TRUE(server.WaitAccepted(5));  // the two taken are replaced after the batch

  const auto before_get = std::chrono::steady_clock::now();
  ASSERT_TRUE(transport->Send({"GET", "/jobs/", "", {}}));
  accepted = server.RequestsAcceptedAt();
  ASSERT_EQ(accepted.size(), 4u);
  EXPECT_GE(accepted[3], before_get);  // a connection of its own, made for it
}

TEST(CurlTransportTest, APostNeverGoesOnAConnectionTheServerClosedWhileItWaited) {
  ConnectionServer server;
  auto transport = MakeWithConnectionsAhead(server.url(), 2);
  ASSERT_TRUE(transport->Send({"GET", "/ping", "", {}}));
  ASSERT_TRUE(server.WaitAccepted(3));
  server.CloseIdle();  // as a server or proxy ending idle connections
  std::this_thread::sleep_for(50ms);

  const auto before = std::chrono::steady_clock::now();
  Result<HttpResponse> answer = transport->Send({"POST", "/job/submit", "{}", {}});
  ASSERT_TRUE(answer) << answer.error().ToString();  // not an unknown outcome
  EXPECT_EQ(answer->status, 200);
  std::vector<std::chrono::steady_clock::time_point> accepted = server.RequestsAcceptedAt();
  ASSERT_EQ(accepted.size(), 2u);
  EXPECT_GE(accepted[1], before);
}

TEST(CurlTransportTest, WithoutConnectionsAheadNothingIsOpenedBeforeARequest) {
  ConnectionServer server;
  auto transport = MakeWithConnectionsAhead(server.url(), 0);
  ASSERT_TRUE(transport->Send({"GET", "/ping", "", {}}));
  ASSERT_TRUE(transport->Send({"POST", "/job/submit", "{}", {}}));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(server.accepted(), 2u);
}

}  // namespace
}  // namespace slurmfleet::slurm
