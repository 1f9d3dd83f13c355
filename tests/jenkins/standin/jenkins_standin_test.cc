// Tests of the stand-in Jenkins controller (test-only) against the rows of
// /work/shared/research/jenkins/CONTRACT.md, and of the standin-java agent script against it.
#include "jenkins/standin/jenkins_standin.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "jenkins/http_client.h"

extern char** environ;

namespace slurmfleet::standin {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using Snapshot = JenkinsStandin::Snapshot;

constexpr std::string_view kLq = "\xE2\x80\x98";
constexpr std::string_view kRq = "\xE2\x80\x99";

std::string Q(std::string_view name) {
  return std::string(kLq) + std::string(name) + std::string(kRq);
}

// A raw TCP client for /wsagents/: httplib's client cannot hold a never-ending response open.
class FakeAgent {
 public:
  // Sends the handshake with the given headers; returns the status code (0 on a socket error).
  int Connect(int port, const std::vector<std::pair<std::string, std::string>>& headers) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 0;
    std::string request =
        "GET /wsagents/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n";
    for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
    request += "\r\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) < 0) return 0;
    // Read up to the end of the head.
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    while (head_.find("\r\n\r\n") == std::string::npos) {
      char buffer[512];
      ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      head_.append(buffer, static_cast<size_t>(n));
    }
    if (head_.size() < 12) return 0;
    // An error reply's body may arrive after the head: read it too, up to its Content-Length.
    std::smatch length;
    if (std::regex_search(head_, length,
                          std::regex("Content-Length: ([0-9]+)", std::regex::icase))) {
      size_t want = head_.find("\r\n\r\n") + 4 + std::stoul(length[1]);
      while (head_.size() < want) {
        char buffer[512];
        ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        head_.append(buffer, static_cast<size_t>(n));
      }
    }
    return std::stoi(head_.substr(9, 3));
  }
  const std::string& head() const { return head_; }  // and an error reply's body
  // Whether the controller closed the connection within `timeout`.
  bool ClosedWithin(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    timeval tick{0, 100000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof tick);
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[256];
      ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return true;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return true;
    }
    return false;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  ~FakeAgent() { Close(); }

 private:
  int fd_ = -1;
  std::string head_;
};

class JenkinsStandinTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }

  void Start(JenkinsStandin::Options options) {
    standin_.reset();
    standin_ = JenkinsStandin::Start(std::move(options));
    ASSERT_TRUE(standin_);
  }

  httplib::Client Client(bool authenticated = true) {
    httplib::Client client("127.0.0.1", standin_->port());
    client.set_read_timeout(10, 0);
    if (authenticated) client.set_basic_auth(standin_->user(), standin_->api_token());
    // As slurmfleet's client does: texts are in the controller's locale (German) otherwise.
    client.set_default_headers({{"Accept-Language", "en"}});
    return client;
  }

  json GetJson(const std::string& path) {
    auto client = Client();
    auto res = client.Get(path);
    EXPECT_TRUE(res) << path;
    if (!res) return nullptr;
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    return json::parse(res->body, nullptr, false);
  }

  httplib::Result CreateNode(const std::string& name, const json& form,
                             const std::string& type = "hudson.slaves.DumbSlave") {
    auto client = Client();
    return client.Post("/computer/doCreateItem",
                       httplib::Params{{"name", name}, {"type", type}, {"json", form.dump()}});
  }

  void CreateAgentNode(const std::string& name, const std::string& labels,
                       const std::string& mode = "EXCLUSIVE", int executors = 1) {
    auto res = CreateNode(
        name, {{"name", name},
               {"nodeDescription", "slurm job pending"},
               {"numExecutors", std::to_string(executors)},
               {"remoteFS", "/scratch/jenkins/" + name},
               {"labelString", labels},
               {"mode", mode},
               {"launcher", {{"$class", "hudson.slaves.JNLPLauncher"}, {"webSocket", true}}},
               {"retentionStrategy", {{"$class", "hudson.slaves.RetentionStrategy$Always"}}},
               {"nodeProperties", {{"stapler-class-bag", "true"}}}});
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 302) << res->get_header_value("X-Error");
  }

  httplib::Result PostEmpty(const std::string& path) {
    auto client = Client();
    return client.Post(path, "", "application/x-www-form-urlencoded");
  }

  std::vector<std::pair<std::string, std::string>> AgentHeaders(const std::string& name) {
    return {{"Node-Name", name},
            {"Secret-Key", standin_->SecretFor(name)},
            {"X-Remoting-Capability", "test"}};
  }

  // The why text of the only queue item with this id.
  std::string Why(int64_t id) {
    json item = GetJson("/queue/item/" + std::to_string(id) + "/api/json?tree=why");
    return item.value("why", std::string("<none>"));
  }

  bool WaitFor(const std::function<bool(const Snapshot&)>& predicate,
               std::chrono::milliseconds timeout = 5s) {
    return standin_->WaitFor(predicate, timeout);
  }

  std::unique_ptr<JenkinsStandin> standin_;
};

TEST_F(JenkinsStandinTest, AuthenticationAndCommonHeaders) {
  auto anonymous = Client(false);
  auto res = anonymous.Get("/api/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_NE(res->body.find("Authentication required"), std::string::npos);

  httplib::Client wrong("127.0.0.1", standin_->port());
  wrong.set_basic_auth("admin", "11" + std::string(32, '0'));
  res = wrong.Get("/api/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), R"(Basic realm="Jenkins")");
  // A wrong token never falls back to anonymous, not even on anonymous paths.
  EXPECT_EQ(wrong.Get("/login")->status, 401);

  auto client = Client();
  res = client.Get("/api/json?tree=quietingDown,url");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("X-Jenkins"), "2.541.1");
  EXPECT_EQ(res->get_header_value("X-Jenkins-Session").size(), 8u);
  EXPECT_EQ(
      json::parse(res->body),
      json({{"_class", "hudson.model.Hudson"}, {"quietingDown", false}, {"url", standin_->url()}}));

  EXPECT_TRUE(std::regex_match(standin_->api_token(), std::regex("11[0-9a-f]{32}")));
  res = anonymous.Get("/jnlpJars/agent.jar");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body.substr(0, 2), "PK");
  EXPECT_EQ(anonymous.Get("/login")->status, 200);
  EXPECT_EQ(anonymous.Get("/health")->body, R"({"status":true})");
  EXPECT_EQ(anonymous.Get("/standin/stats")->status, 200);
  EXPECT_EQ(client.Get("/no/such/page")->status, 404);
}

TEST_F(JenkinsStandinTest, TreePrunesAndDepthZeroHidesNestedProperties) {
  CreateAgentNode("n1", "gpu");
  json pruned = GetJson(
      "/computer/n1/api/json?tree=displayName,assignedLabels[name],"
      "executors[number,idle,currentExecutable[url]]");
  EXPECT_EQ(pruned, json::parse(R"({"_class":"hudson.slaves.SlaveComputer","displayName":"n1",
      "assignedLabels":[{"name":"gpu"},{"name":"n1"}],
      "executors":[{"number":0,"idle":true,"currentExecutable":null}]})"));
  json plain = GetJson("/computer/n1/api/json");
  EXPECT_EQ(plain["executors"], json::parse("[{}]"));
  EXPECT_TRUE(plain.contains("offline"));
  EXPECT_TRUE(plain["absoluteRemotePath"].is_null());

  json set = GetJson("/computer/api/json?tree=computer[displayName,numExecutors],totalExecutors");
  ASSERT_EQ(set["computer"].size(), 2u);
  EXPECT_EQ(set["computer"][0]["_class"], "hudson.model.Hudson$MasterComputer");
  EXPECT_EQ(set["computer"][0]["displayName"], "Built-In Node");
  EXPECT_EQ(set["computer"][0]["numExecutors"], 0);
  EXPECT_EQ(set["computer"][1]["_class"], "hudson.slaves.SlaveComputer");

  auto client = Client();
  EXPECT_EQ(client.Get("/api/json?tree=items[id")->status, 400);
}

TEST_F(JenkinsStandinTest, CreateNodeHonoursTheFormAndRedirects) {
  auto res = CreateNode("slurm-gpu-1", {{"name", "ignored"},
                                        {"nodeDescription", "slurm job 12"},
                                        {"numExecutors", "2"},
                                        {"remoteFS", "/scratch/x"},
                                        {"labelString", "gpu  slurm"},
                                        {"mode", "EXCLUSIVE"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Location"), "/computer/");  // Jetty 12: the path alone
  json node = GetJson(
      "/computer/slurm-gpu-1/api/json?tree=description,numExecutors,"
      "assignedLabels[name],offline,offlineCause,offlineCauseReason,idle");
  EXPECT_EQ(node["description"], "slurm job 12");
  EXPECT_EQ(node["numExecutors"], 2);
  EXPECT_EQ(node["assignedLabels"],
            json::parse(R"([{"name":"gpu"},{"name":"slurm"},{"name":"slurm-gpu-1"}])"));
  EXPECT_EQ(node["offline"], true);
  EXPECT_TRUE(node["offlineCause"].is_null());  // never connected
  EXPECT_EQ(node["offlineCauseReason"], "");
  auto stats = standin_->Stats();
  ASSERT_NE(stats.FindNode("slurm-gpu-1"), nullptr);
  EXPECT_TRUE(stats.FindNode("slurm-gpu-1")->exclusive);
  EXPECT_EQ(stats.FindNode("slurm-gpu-1")->remote_fs, "/scratch/x");
  EXPECT_EQ(stats.nodes_created, 1u);
  EXPECT_EQ(stats.max_nodes_seen, 1u);
  // python-jenkins' spelling of the type works too.
  EXPECT_EQ(CreateNode("n2", json::object(), "hudson.slaves.DumbSlave$DescriptorImpl")->status,
            302);
}

TEST_F(JenkinsStandinTest, CreateNodeErrors) {
  CreateAgentNode("slurm-gpu-1", "gpu");
  auto res = CreateNode("slurm-gpu-1", json::object());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->get_header_value("X-Error"),
            "Agent called " + Q("slurm-gpu-1") + " already exists");

  struct Case {
    std::string name;
    std::string x_error;
  };
  for (const auto& c : std::vector<Case>{{"a:b", Q(":") + " is an unsafe character"},
                                         {"a/b", Q("/") + " is an unsafe character"},
                                         {"x.", "A name cannot end with " + Q(".")},
                                         {"..", "\xE2\x80\x9C..\xE2\x80\x9D is not allowed name"},
                                         {"  ", "Query parameter 'name' is required"}}) {
    res = CreateNode(c.name, json::object());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << c.name;
    EXPECT_EQ(res->get_header_value("X-Error"), c.x_error) << c.name;
  }
  auto client = Client();
  res = client.Post("/computer/doCreateItem", httplib::Params{{"type", "hudson.slaves.DumbSlave"}});
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->get_header_value("X-Error"), "Query parameter 'name' is required");
  res = client.Post("/computer/doCreateItem",
                    httplib::Params{{"name", "n"}, {"type", "hudson.slaves.DumbSlave"}});
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->get_header_value("X-Error").find("expects a form submission"), std::string::npos);
  res = client.Post(
      "/computer/doCreateItem",
      httplib::Params{{"name", "n"}, {"type", "hudson.slaves.DumbSlave"}, {"json", ""}});
  EXPECT_EQ(res->status, 400);
  res = client.Post(
      "/computer/doCreateItem",
      httplib::Params{{"name", "n"}, {"type", "hudson.slaves.DumbSlave"}, {"json", "{"}});
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(CreateNode("n", json::object(), "hudson.slaves.NoSuchSlave")->status, 500);
  EXPECT_EQ(CreateNode("n", {{"mode", "SOMETIMES"}})->status, 500);
  EXPECT_EQ(client.Get("/computer/doCreateItem")->status, 404);
  EXPECT_EQ(standin_->Stats().nodes.size(), 1u);
}

TEST_F(JenkinsStandinTest, JnlpSecretIsStablePerName) {
  CreateAgentNode("slurm-gpu-1", "gpu");
  auto client = Client();
  auto res = client.Get("/computer/slurm-gpu-1/jenkins-agent.jnlp");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/x-java-jnlp-file");
  std::smatch match;
  ASSERT_TRUE(
      std::regex_search(res->body, match, std::regex("<argument>([0-9a-f]{64})</argument>")));
  std::string secret = match[1];
  EXPECT_EQ(secret, standin_->SecretFor("slurm-gpu-1"));
  EXPECT_LT(res->body.find(secret), res->body.find("<argument>slurm-gpu-1</argument>"));
  EXPECT_NE(res->body.find("<argument>-webSocket</argument>"), std::string::npos);
  EXPECT_NE(res->body.find("<argument>" + standin_->url() + "</argument>"), std::string::npos);
  EXPECT_EQ(client.Get("/computer/slurm-gpu-1/slave-agent.jnlp")->body, res->body);
  EXPECT_NE(standin_->SecretFor("slurm-gpu-2"), secret);

  ASSERT_EQ(PostEmpty("/computer/slurm-gpu-1/doDelete")->status, 302);
  EXPECT_EQ(client.Get("/computer/slurm-gpu-1/jenkins-agent.jnlp")->status, 404);
  CreateAgentNode("slurm-gpu-1", "gpu");
  EXPECT_EQ(client.Get("/computer/slurm-gpu-1/jenkins-agent.jnlp")->body, res->body);
}

TEST_F(JenkinsStandinTest, DrainAndDelete) {
  CreateAgentNode("n1", "gpu");
  auto client = Client();
  auto res = client.Post("/computer/n1/changeOfflineCause",
                         httplib::Params{{"offlineMessage", "draining: slurm job 12 done"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Location"), "/computer/n1/");
  json node = GetJson(
      "/computer/n1/api/json?tree=temporarilyOffline,offlineCauseReason,"
      "offlineCause[description]");
  EXPECT_EQ(node["temporarilyOffline"], true);
  EXPECT_EQ(node["offlineCauseReason"], "draining: slurm job 12 done");
  EXPECT_EQ(node["offlineCause"]["_class"], "hudson.slaves.OfflineCause$UserCause");
  // changeOfflineCause is idempotent; toggleOffline flips back online.
  EXPECT_EQ(PostEmpty("/computer/n1/changeOfflineCause")->status, 302);
  EXPECT_TRUE(standin_->Stats().FindNode("n1")->temporarily_offline);
  EXPECT_EQ(PostEmpty("/computer/n1/toggleOffline")->status, 302);
  EXPECT_FALSE(standin_->Stats().FindNode("n1")->temporarily_offline);

  res = client.Get("/computer/n1/changeOfflineCause");
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "POST");
  EXPECT_EQ(client.Get("/computer/n1/toggleOffline")->status, 405);
  EXPECT_EQ(client.Get("/computer/n1/doDelete")->status, 405);
  EXPECT_EQ(PostEmpty("/computer/missing/changeOfflineCause")->status, 404);
  EXPECT_EQ(PostEmpty("/computer/missing/doDelete")->status, 404);
  EXPECT_EQ(client.Get("/computer/missing/api/json")->status, 404);

  res = PostEmpty("/computer/n1/doDelete");
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Location"), "/computer/");
  EXPECT_EQ(client.Get("/computer/n1/api/json")->status, 404);
  auto stats = standin_->Stats();
  EXPECT_EQ(stats.nodes_deleted, 1u);
  EXPECT_EQ(stats.CountRequests("POST", "/computer/*"), 7u);
}

// Redirect targets are paths, the node name encoded as the request encoded it.
TEST_F(JenkinsStandinTest, RedirectsArePathsAsJettySendsThem) {
  CreateAgentNode("a b", "gpu");
  auto res = PostEmpty("/computer/a%20b/changeOfflineCause");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 302);
  // sent as /computer/a%20b/; httplib's client decodes header values as it reads them
  EXPECT_EQ(res->get_header_value("Location"), "/computer/a b/");
  EXPECT_TRUE(standin_->Stats().FindNode("a b")->temporarily_offline);
  res = PostEmpty("/computer/a%20b/doDelete?x=1");
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Location"), "/computer/");
}

// Texts follow the request's Accept-Language (highest quality first), else the default locale.
TEST_F(JenkinsStandinTest, TextsAreInTheRequestsLanguage) {
  CreateAgentNode("slurm-gpu-1", "gpu");
  int64_t id = standin_->EnqueueFreestyle("gpu-job", "cpu", 10s);
  const auto ask = [&](const std::string& accept_language) {
    httplib::Client client("127.0.0.1", standin_->port());
    client.set_basic_auth(standin_->user(), standin_->api_token());
    httplib::Headers headers;
    if (!accept_language.empty()) headers.emplace("Accept-Language", accept_language);
    auto item = client.Get("/queue/item/" + std::to_string(id) + "/api/json?tree=why", headers);
    auto created = client.Post(
        "/computer/doCreateItem", headers,
        httplib::Params{
            {"name", "slurm-gpu-1"}, {"type", "hudson.slaves.DumbSlave"}, {"json", "{}"}});
    EXPECT_TRUE(item && created);
    EXPECT_EQ(created->status, 400);
    return std::pair{json::parse(item->body).value("why", std::string()),
                     created->get_header_value("X-Error")};
  };
  const std::pair english{"There are no nodes with the label " + Q("cpu"),
                          "Agent called " + Q("slurm-gpu-1") + " already exists"};
  const std::pair german{
      std::string("Es gibt keine Knoten mit dem Label \u201Ecpu\u201C"),
      std::string("Ein Agent mit dem Namen \u201Eslurm-gpu-1\u201C existiert bereits.")};
  EXPECT_EQ(ask(""), german);  // the default locale is German
  EXPECT_EQ(ask("fr"), german);
  EXPECT_EQ(ask("de-DE"), german);
  EXPECT_EQ(ask("en"), english);
  EXPECT_EQ(ask("en-US,en;q=0.9"), english);
  EXPECT_EQ(ask("de;q=0.5, en"), english);
  EXPECT_EQ(ask("en;q=0, de"), german);

  JenkinsStandin::Options options;
  options.default_locale = "en";
  Start(options);
  CreateAgentNode("slurm-gpu-1", "gpu");
  id = standin_->EnqueueFreestyle("gpu-job", "cpu", 10s);
  EXPECT_EQ(ask(""), english);
  EXPECT_EQ(ask("de"), german);

  options.default_locale = "fr";
  EXPECT_EQ(JenkinsStandin::Start(options), nullptr);
}

// Why texts in German, as Messages_de.properties words them.
TEST_F(JenkinsStandinTest, GermanWhyTexts) {
  const auto why = [&](int64_t id) {
    httplib::Client client("127.0.0.1", standin_->port());
    client.set_basic_auth(standin_->user(), standin_->api_token());
    auto res = client.Get("/queue/item/" + std::to_string(id) + "/api/json?tree=why");
    EXPECT_TRUE(res);
    return json::parse(res->body).value("why", std::string());
  };
  const int64_t id = standin_->EnqueueFreestyle("gpu-job", "gpu", 10s);
  EXPECT_EQ(why(id), "Warte auf den n\u00e4chsten freien Build-Prozessor");
  CreateAgentNode("gpu-1", "gpu");
  EXPECT_EQ(why(id), "gpu-1 ist offline");
  CreateAgentNode("gpu-2", "gpu");
  EXPECT_EQ(why(id), "Alle Knoten des Labels \u201Egpu\u201C sind offline");
  CreateAgentNode("other", "arm");
  FakeAgent other;
  ASSERT_EQ(other.Connect(standin_->port(), AgentHeaders("other")), 101);
  const int64_t unlabeled = standin_->EnqueueFreestyle("any-job", "", 10s);
  const std::string reserved =
      "\u201C ist f\u00fcr Projekte mit passendem Label-Ausdruck reserviert";
  EXPECT_EQ(why(unlabeled),
            "\u201Egpu-1" + reserved + "; \u201Egpu-2" + reserved + "; \u201Eother" + reserved);
  standin_->SetQuietingDown(true);
  EXPECT_EQ(why(id), "Jenkins wird heruntergefahren");
}

TEST_F(JenkinsStandinTest, NodeConfigXmlReadsAndReplacesTheNode) {
  CreateAgentNode("slurm-gpu-1", "gpu slurm");
  auto client = Client();
  auto res = client.Get("/computer/slurm-gpu-1/config.xml");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/xml");
  EXPECT_EQ(res->body,
            "<?xml version=\"1.1\" encoding=\"UTF-8\"?>\n"
            "<slave>\n"
            "  <name>slurm-gpu-1</name>\n"
            "  <description>slurm job pending</description>\n"
            "  <remoteFS>/scratch/jenkins/slurm-gpu-1</remoteFS>\n"
            "  <numExecutors>1</numExecutors>\n"
            "  <mode>EXCLUSIVE</mode>\n"
            "  <retentionStrategy class=\"hudson.slaves.RetentionStrategy$Always\"/>\n"
            "  <launcher class=\"hudson.slaves.JNLPLauncher\">\n"
            "    <workDirSettings>\n"
            "      <disabled>false</disabled>\n"
            "      <internalDir>remoting</internalDir>\n"
            "      <failIfWorkDirIsMissing>false</failIfWorkDirIsMissing>\n"
            "    </workDirSettings>\n"
            "    <webSocket>true</webSocket>\n"
            "  </launcher>\n"
            "  <label>gpu slurm</label>\n"
            "  <nodeProperties/>\n"
            "</slave>");

  // The posted node replaces it: entities, CDATA and comments read as XML does.
  res = client.Post("/computer/slurm-gpu-1/config.xml",
                    "<?xml version='1.1' encoding='UTF-8'?>\n<slave>\n"
                    "  <name>slurm-gpu-1</name>\n"
                    "  <description>slurm job 12345 &lt;a&amp;b&gt; &#233;<![CDATA[ <x>]]>"
                    "<!-- c --></description>\n"
                    "  <remoteFS>/scratch/y</remoteFS>\n  <numExecutors>2</numExecutors>\n"
                    "  <mode>NORMAL</mode>\n  <label>cpu</label>\n"
                    "  <nodeProperties><p><description>nested</description></p></nodeProperties>\n"
                    "</slave>\n",
                    "application/xml");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  auto stats = standin_->Stats();
  const auto* node = stats.FindNode("slurm-gpu-1");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->description, "slurm job 12345 <a&b> \xC3\xA9 <x>");
  EXPECT_EQ(node->remote_fs, "/scratch/y");
  EXPECT_EQ(node->num_executors, 2);
  EXPECT_FALSE(node->exclusive);
  EXPECT_EQ(node->labels, std::vector<std::string>{"cpu"});
  json computer = GetJson(
      "/computer/slurm-gpu-1/api/json?tree=description,numExecutors,assignedLabels[name],"
      "executors[idle]");
  EXPECT_EQ(computer["description"], "slurm job 12345 <a&b> \xC3\xA9 <x>");
  EXPECT_EQ(computer["numExecutors"], 2);
  EXPECT_EQ(computer["executors"].size(), 2u);
  EXPECT_EQ(computer["assignedLabels"], json::parse(R"([{"name":"cpu"},{"name":"slurm-gpu-1"}])"));
  res = client.Get("/computer/slurm-gpu-1/config.xml");
  EXPECT_NE(res->body.find("<description>slurm job 12345 &lt;a&amp;b&gt; \xC3\xA9 &lt;x&gt;"
                           "</description>"),
            std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find("<webSocket>true</webSocket>"), std::string::npos);  // kept

  // Errors, as Computer.doConfigDotXml / updateByXml answer them.
  res =
      client.Post("/computer/slurm-gpu-1/config.xml",
                  "<hudson.slaves.Cloud-Slave><name>slurm-gpu-1</name></hudson.slaves.Cloud-Slave>",
                  "application/xml");
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->body, "Node types do not match");
  EXPECT_EQ(
      client.Post("/computer/slurm-gpu-1/config.xml", "<slave><name>x</name>", "application/xml")
          ->status,
      500);
  EXPECT_EQ(client
                .Post("/computer/slurm-gpu-1/config.xml", "<slave><name>other</name></slave>",
                      "application/xml")
                ->status,
            400);  // a rename: not modelled
  EXPECT_EQ(client.Put("/computer/slurm-gpu-1/config.xml", "<slave/>", "application/xml")->status,
            400);  // "huh?": sendError(SC_BAD_REQUEST)
  EXPECT_EQ(client.Get("/computer/missing/config.xml")->status, 404);
  EXPECT_EQ(client
                .Post("/computer/missing/config.xml", "<slave><name>missing</name></slave>",
                      "application/xml")
                ->status,
            404);
  EXPECT_EQ(standin_->Stats().FindNode("slurm-gpu-1")->description,
            "slurm job 12345 <a&b> \xC3\xA9 <x>");
}

TEST_F(JenkinsStandinTest, HttpClientSetsTheDescriptionAndNothingElse) {
  CreateAgentNode("slurm-gpu-1", "gpu slurm");
  auto client = Client();
  std::string before = client.Get("/computer/slurm-gpu-1/config.xml")->body;

  auto dir =
      std::filesystem::temp_directory_path() / ("standin-desc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << standin_->api_token() << "\n";
  jenkins::HttpClientOptions options;
  options.base_url = standin_->url();
  options.user = standin_->user();
  options.api_token_file = dir / "token";
  auto jenkins = jenkins::HttpClient::Create(options);
  ASSERT_TRUE(jenkins) << jenkins.error().ToString();
  auto done = (*jenkins)->SetDescription("slurm-gpu-1", "slurm job 12345 <\"a\" & 'b'>");
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(standin_->Stats().FindNode("slurm-gpu-1")->description,
            "slurm job 12345 <\"a\" & 'b'>");
  std::string after = client.Get("/computer/slurm-gpu-1/config.xml")->body;
  std::string old_line = "<description>slurm job pending</description>";
  std::string expected = before;
  expected.replace(expected.find(old_line), old_line.size(),
                   "<description>slurm job 12345 &lt;&quot;a&quot; &amp; &#39;b&#39;&gt;"
                   "</description>");
  EXPECT_EQ(after, expected);

  // A node without a description gets one after its <name>.
  ASSERT_EQ(CreateNode("n2", {{"remoteFS", "/scratch/n2"}})->status, 302);
  ASSERT_TRUE((*jenkins)->SetDescription("n2", "slurm job 7"));
  EXPECT_EQ(standin_->Stats().FindNode("n2")->description, "slurm job 7");

  EXPECT_EQ((*jenkins)->SetDescription("missing", "x").error().code, Code::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST_F(JenkinsStandinTest, WebSocketAgentHandshake) {
  CreateAgentNode("n1", "gpu");
  FakeAgent incomplete;
  EXPECT_EQ(incomplete.Connect(standin_->port(), {{"Node-Name", "n1"}}), 400);
  EXPECT_NE(incomplete.head().find("only for use from agent.jar"), std::string::npos)
      << incomplete.head();
  FakeAgent unknown;
  EXPECT_EQ(unknown.Connect(standin_->port(), AgentHeaders("nobody")), 400);
  FakeAgent wrong;
  EXPECT_EQ(wrong.Connect(standin_->port(), {{"Node-Name", "n1"},
                                             {"Secret-Key", standin_->SecretFor("n2")},
                                             {"X-Remoting-Capability", "x"}}),
            403);

  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  EXPECT_NE(agent.head().find("X-Remoting-Minimum-Version: "), std::string::npos);
  EXPECT_NE(agent.head().find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            std::string::npos);
  json node = GetJson("/computer/n1/api/json?tree=offline,absoluteRemotePath");
  EXPECT_EQ(node["offline"], false);
  EXPECT_EQ(node["absoluteRemotePath"], "/scratch/jenkins/n1");

  FakeAgent second;
  EXPECT_EQ(second.Connect(standin_->port(), AgentHeaders("n1")), 400);
  EXPECT_NE(second.head().find("n1 is already connected to this controller. Rejecting this "
                               "connection."),
            std::string::npos);

  // The node is connected exactly as long as the TCP connection lives.
  agent.Close();
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return !s.FindNode("n1")->connected; }, 2s));
  node = GetJson("/computer/n1/api/json?tree=offline,absoluteRemotePath,offlineCauseReason");
  EXPECT_TRUE(node["absoluteRemotePath"].is_null());
  EXPECT_EQ(node["offlineCauseReason"], "Connection was broken");

  FakeAgent again;
  ASSERT_EQ(again.Connect(standin_->port(), AgentHeaders("n1")), 101);
  EXPECT_TRUE(standin_->DisconnectAgent("n1"));
  EXPECT_TRUE(again.ClosedWithin(2s));
  EXPECT_EQ(standin_->Stats().FindNode("n1")->connections, 2);
}

TEST_F(JenkinsStandinTest, ManyAgentsStayConnectedAtOnce) {
  constexpr int kAgents = 24;
  std::vector<FakeAgent> agents(kAgents);
  for (int i = 0; i < kAgents; ++i) {
    CreateAgentNode("a" + std::to_string(i), "cpu");
    ASSERT_EQ(agents[i].Connect(standin_->port(), AgentHeaders("a" + std::to_string(i))), 101);
  }
  // The API still answers while every agent holds a worker thread.
  json set = GetJson("/computer/api/json?tree=totalExecutors");
  EXPECT_EQ(set["totalExecutors"], kAgents);
  EXPECT_EQ(standin_->Stats().max_connected_seen, static_cast<size_t>(kAgents));
  for (int i = 0; i < kAgents; ++i) {
    ASSERT_EQ(PostEmpty("/computer/a" + std::to_string(i) + "/doDelete")->status, 302);
    EXPECT_TRUE(agents[i].ClosedWithin(2s)) << i;
  }
  auto stats = standin_->Stats();
  EXPECT_EQ(stats.max_nodes_seen, static_cast<size_t>(kAgents));
  EXPECT_EQ(stats.nodes.size(), 0u);
}

TEST_F(JenkinsStandinTest, SchedulerRunsAMatchingItemAndLeavesALeftItem) {
  CreateAgentNode("gpu-1", "gpu linux");
  int64_t unlabeled = standin_->EnqueueFreestyle("plain", "", 100ms);
  int64_t id = standin_->EnqueueFreestyle("folder/gpu-job", "gpu && linux", 300ms);
  json queue = GetJson(
      "/queue/api/json?tree=items[id,buildable,blocked,pending,stuck,why,task[name,url,"
      "labelExpression]]");
  ASSERT_EQ(queue["items"].size(), 2u);
  json item = queue["items"][0];  // buildable items newest first, as Queue.getItems()
  EXPECT_EQ(item["id"], id);
  EXPECT_EQ(item["_class"], "hudson.model.Queue$BuildableItem");
  EXPECT_EQ(item["pending"], false);
  EXPECT_EQ(item["stuck"], true);
  EXPECT_EQ(item["why"], Q("gpu-1") + " is offline");
  EXPECT_EQ(item["task"]["labelExpression"], "gpu && linux");
  EXPECT_EQ(item["task"]["name"], "gpu-job");
  EXPECT_EQ(item["task"]["url"], standin_->url() + "job/folder/job/gpu-job/");
  EXPECT_FALSE(GetJson("/queue/api/json")["items"][0]["task"].contains("labelExpression"));

  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("gpu-1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 1; }));
  json left = GetJson("/queue/item/" + std::to_string(id) + "/api/json");
  EXPECT_EQ(left["_class"], "hudson.model.Queue$LeftItem");
  EXPECT_EQ(left["cancelled"], false);
  EXPECT_EQ(left["executable"]["number"], 1);
  std::string run_url = standin_->url() + "job/folder/job/gpu-job/1/";
  EXPECT_EQ(left["executable"]["url"], run_url);
  json node =
      GetJson("/computer/gpu-1/api/json?tree=idle,executors[idle,currentExecutable[url,number]]");
  EXPECT_EQ(node["idle"], false);
  EXPECT_EQ(node["executors"][0]["currentExecutable"]["url"], run_url);
  // EXCLUSIVE: the unlabeled item never runs here.
  EXPECT_EQ(Why(unlabeled), "Waiting for next available executor");

  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.completed_builds.size() == 1; }));
  json run = GetJson(
      "/job/folder/job/gpu-job/1/api/json?tree=number,queueId,building,result,"
      "builtOn,url");
  EXPECT_EQ(run, json({{"_class", "hudson.model.FreeStyleBuild"},
                       {"building", false},
                       {"builtOn", "gpu-1"},
                       {"number", 1},
                       {"queueId", id},
                       {"result", "SUCCESS"},
                       {"url", run_url}}));
  EXPECT_EQ(GetJson("/job/folder/job/gpu-job/lastBuild/api/json?tree=number")["number"], 1);
  auto idle = GetJson("/computer/gpu-1/api/json?tree=idle");
  EXPECT_EQ(idle["idle"], true);
  EXPECT_EQ(standin_->Stats().queue_length, 1u);
}

TEST_F(JenkinsStandinTest, WhyTextsFollowTheNodes) {
  int64_t id = standin_->EnqueueFreestyle("gpu-job", "gpu", 10s);
  EXPECT_EQ(Why(id), "Waiting for next available executor");  // no agents at all

  // A busy cpu node: no idle executor refuses, so the label decides the text.
  CreateAgentNode("cpu-1", "cpu");
  FakeAgent cpu;
  ASSERT_EQ(cpu.Connect(standin_->port(), AgentHeaders("cpu-1")), 101);
  standin_->EnqueueFreestyle("cpu-job", "cpu", 10s);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 1; }));
  EXPECT_EQ(Why(id), "There are no nodes with the label " + Q("gpu"));

  CreateAgentNode("gpu-1", "gpu");
  EXPECT_EQ(Why(id), Q("gpu-1") + " is offline");
  // The label decides, not the causes of the idle executors that refused (CONTRACT.md 2.3).
  CreateAgentNode("other", "arm");
  FakeAgent other;
  ASSERT_EQ(other.Connect(standin_->port(), AgentHeaders("other")), 101);
  EXPECT_EQ(Why(id), Q("gpu-1") + " is offline");
  CreateAgentNode("gpu-2", "gpu");
  EXPECT_EQ(Why(id), "All nodes of label " + Q("gpu") + " are offline");
  // Without a label, the idle executors' causes show while the controller has an idle one.
  const int64_t unlabeled = standin_->EnqueueFreestyle("any-job", "", 10s);
  const std::string reserved = " is reserved for jobs with matching label expression";
  EXPECT_EQ(Why(unlabeled),
            Q("gpu-1") + reserved + "; " + Q("gpu-2") + reserved + "; " + Q("other") + reserved);

  standin_->SetQuietingDown(true);
  EXPECT_EQ(Why(id), "Jenkins is about to shut down");
  EXPECT_EQ(GetJson("/api/json?tree=quietingDown")["quietingDown"], true);
  standin_->SetQuietingDown(false);

  json label = GetJson(
      "/label/gpu/api/json?tree=name,busyExecutors,idleExecutors,totalExecutors,"
      "offline,nodes[nodeName],loadStatistics[queueLength[sec10[latest]]]");
  EXPECT_EQ(label["name"], "gpu");
  EXPECT_EQ(label["offline"], true);
  EXPECT_EQ(label["nodes"].size(), 2u);
  // a moving average sampled every 10 s: at most one sample (0.1) was taken with the item queued
  const double queued = label["loadStatistics"]["queueLength"]["sec10"]["latest"].get<double>();
  EXPECT_TRUE(queued == 0.0 || std::abs(queued - 0.1) < 1e-9) << queued;
  json expression = GetJson("/label/gpu%26%26linux/api/json?tree=name,nodes[nodeName]");
  EXPECT_EQ(expression["_class"], "hudson.model.labels.LabelExpression$And");
  EXPECT_EQ(expression["name"], "gpu&&linux");
  EXPECT_EQ(expression["nodes"], json::array());
}

TEST_F(JenkinsStandinTest, ALabelsQueueLengthIsAMovingAverageNotACount) {
  JenkinsStandin::Options options;
  options.load_sample_interval = 200ms;
  Start(options);
  const auto length = [&] {
    return GetJson("/label/gpu/api/json?tree=loadStatistics[queueLength[sec10[latest]]]")
        ["loadStatistics"]["queueLength"]["sec10"]["latest"]
            .get<double>();
  };
  for (int i = 0; i < 10; ++i) standin_->EnqueueFreestyle("gpu-job", "gpu", 10s);
  const double first = length();
  EXPECT_GE(first, 0.0);
  EXPECT_LE(first, 1.0 + 1e-9) << "ten items, at most one sample";
  std::this_thread::sleep_for(1s);
  const double later = length();
  EXPECT_GT(later, first);
  EXPECT_LT(later, 10.0);
  CreateAgentNode("gpu-1", "gpu", "EXCLUSIVE", 10);
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("gpu-1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 10; }));
  std::this_thread::sleep_for(500ms);
  const double decaying = length();
  EXPECT_GT(decaying, 0.0) << "it decays slowly after the items left";
  EXPECT_LT(decaying, later + 1e-9);
}

TEST_F(JenkinsStandinTest, QuietPeriodMakesWaitingItems) {
  JenkinsStandin::Options options;
  options.quiet_period = 5s;
  Start(options);
  int64_t id = standin_->EnqueueFreestyle("j", "gpu", 1s);
  json item = GetJson("/queue/item/" + std::to_string(id) + "/api/json");
  EXPECT_EQ(item["_class"], "hudson.model.Queue$WaitingItem");
  EXPECT_EQ(item["buildable"], false);
  EXPECT_TRUE(item.contains("timestamp"));
  EXPECT_TRUE(item["why"].get<std::string>().starts_with("In the quiet period. Expires in 4."))
      << item["why"];
}

TEST_F(JenkinsStandinTest, NonConcurrentJobsBlock) {
  CreateAgentNode("n1", "gpu", "NORMAL", 2);
  standin_->SetConcurrentBuild("serial", false);
  standin_->EnqueueFreestyle("serial", "", 2s);
  int64_t second = standin_->EnqueueFreestyle("serial", "", 2s);
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 1; }));
  json item = GetJson("/queue/item/" + std::to_string(second) + "/api/json?tree=blocked,why");
  EXPECT_EQ(item["_class"], "hudson.model.Queue$BlockedItem");
  EXPECT_EQ(item["blocked"], true);
  EXPECT_EQ(item["why"], "Build #1 is already in progress");
}

TEST_F(JenkinsStandinTest, ScriptConsole) {
  std::string script = R"(import groovy.json.JsonOutput
def q = jenkins.model.Jenkins.get().queue
println JsonOutput.toJson(q.items.collect { [id: it.id, cls: it.class.simpleName,
  label: it.assignedLabel?.expression, buildable: it.buildable, why: it.why,
  task: it.task.fullDisplayName] }))";
  CreateAgentNode("n1", "cpu");
  int64_t id = standin_->EnqueuePipeline("f/p", "gpu", 1s);
  auto client = Client();
  EXPECT_EQ(client.Get("/scriptText")->status, 405);
  auto res = client.Post("/scriptText", httplib::Params{{"script", script}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, R"([{"id":)" + std::to_string(id) +
                           R"(,"cls":"BuildableItem","label":"gpu","buildable":true,)"
                           R"("why":"There are no nodes with the label \u2018gpu\u2019",)"
                           R"("task":"part of f \u00bb p #1"}])"
                           "\n");
  EXPECT_EQ(client.Post("/scriptText", httplib::Params{{"script", "println 1"}})->body, "");
  standin_->SetAdminister(false);
  res = client.Post("/scriptText", httplib::Params{{"script", script}});
  EXPECT_EQ(res->status, 403);
  EXPECT_EQ(res->get_header_value("X-Required-Permission"), "hudson.model.Hudson.Administer");
}

TEST_F(JenkinsStandinTest, PipelineNodeBlock) {
  CreateAgentNode("n1", "gpu");
  int64_t id = standin_->EnqueuePipeline("f/p", "gpu", 200ms);
  json item = GetJson("/queue/item/" + std::to_string(id) +
                      "/api/json?tree=task[name,url,labelExpression]");
  std::string run_url = standin_->url() + "job/f/job/p/1/";
  EXPECT_EQ(item["task"], json({{"_class",
                                 "org.jenkinsci.plugins.workflow.support.steps."
                                 "ExecutorStepExecution$PlaceholderTask"},
                                {"name", "part of f \xC2\xBB p #1"},
                                {"url", run_url}}));
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.completed_builds.size() == 1; }));
  json run = GetJson("/job/f/job/p/1/api/json?tree=building,result,builtOn,queueId");
  EXPECT_EQ(run, json({{"_class", "org.jenkinsci.plugins.workflow.job.WorkflowRun"},
                       {"building", false},
                       {"result", "SUCCESS"},
                       {"queueId", id}}));
}

TEST_F(JenkinsStandinTest, LosingTheAgentAbortsTheBuild) {
  CreateAgentNode("n1", "gpu");
  standin_->EnqueueFreestyle("a", "gpu", 30s);
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 1; }));
  ASSERT_EQ(PostEmpty("/computer/n1/doDelete")->status, 302);
  EXPECT_TRUE(agent.ClosedWithin(2s));
  auto stats = standin_->Stats();
  ASSERT_EQ(stats.completed_builds.size(), 1u);
  EXPECT_EQ(stats.completed_builds[0].result, "ABORTED");
  EXPECT_EQ(stats.completed_builds[0].built_on, "n1");

  CreateAgentNode("n2", "gpu");
  standin_->EnqueueFreestyle("b", "gpu", 30s);
  FakeAgent second;
  ASSERT_EQ(second.Connect(standin_->port(), AgentHeaders("n2")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 1; }));
  second.Close();  // the agent process dies
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.completed_builds.size() == 2; }));
  EXPECT_EQ(standin_->Stats().completed_builds[1].result, "ABORTED");
}

// A Pipeline node block is not a freestyle build: when its agent is lost, its executor stays
// busy (the block waits for the agent to come back) until the node is removed.
TEST_F(JenkinsStandinTest, LosingTheAgentOfAPipelineBlockKeepsItsExecutorUntilTheNodeGoes) {
  CreateAgentNode("n1", "gpu");
  standin_->EnqueuePipeline("f/p", "gpu", 300ms);
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) {
    return s.running_builds.size() == 1 && s.running_builds[0].built_on == "n1";
  }));
  agent.Close();  // the agent process dies
  ASSERT_TRUE(WaitFor([](const Snapshot& s) {
    const auto* node = s.FindNode("n1");
    return node != nullptr && !node->connected;
  }));
  std::this_thread::sleep_for(
      600ms);  // past the block's duration: it does not end without its agent
  auto stats = standin_->Stats();
  EXPECT_TRUE(stats.completed_builds.empty());
  json node = GetJson("/computer/n1/api/json?tree=offline,executors[currentExecutable[url]]");
  EXPECT_EQ(node["offline"], true);
  EXPECT_EQ(node["executors"][0]["currentExecutable"]["url"], standin_->url() + "job/f/job/p/1/");

  ASSERT_EQ(PostEmpty("/computer/n1/doDelete")->status, 302);
  stats = standin_->Stats();
  ASSERT_EQ(stats.completed_builds.size(), 1u);
  EXPECT_EQ(stats.completed_builds[0].result, "ABORTED");
}

TEST_F(JenkinsStandinTest, APipelineBlockWhoseAgentComesBackFinishes) {
  CreateAgentNode("n1", "gpu");
  standin_->EnqueuePipeline("f/p", "gpu", 300ms);
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) {
    return s.running_builds.size() == 1 && s.running_builds[0].built_on == "n1";
  }));
  agent.Close();
  ASSERT_TRUE(WaitFor([](const Snapshot& s) {
    const auto* node = s.FindNode("n1");
    return node != nullptr && !node->connected && node->building;
  }));
  FakeAgent again;
  ASSERT_EQ(again.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.completed_builds.size() == 1; }));
  EXPECT_EQ(standin_->Stats().completed_builds[0].result, "SUCCESS");
}

TEST_F(JenkinsStandinTest, RestartKeepsNodesAndQueueButDropsAgents) {
  CreateAgentNode("n1", "gpu");
  standin_->EnqueueFreestyle("a", "gpu", 30s);
  int64_t waiting = standin_->EnqueueFreestyle("b", "cpu", 1s);
  FakeAgent agent;
  ASSERT_EQ(agent.Connect(standin_->port(), AgentHeaders("n1")), 101);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.running_builds.size() == 1; }));
  std::string before = standin_->Stats().session;

  standin_->Restart();
  EXPECT_TRUE(agent.ClosedWithin(2s));
  auto stats = standin_->Stats();
  EXPECT_NE(stats.session, before);
  ASSERT_EQ(stats.completed_builds.size(), 1u);
  EXPECT_EQ(stats.completed_builds[0].result, "ABORTED");
  EXPECT_NE(stats.FindNode("n1"), nullptr);
  EXPECT_EQ(stats.queue_length, 1u);
  auto client = Client();
  EXPECT_EQ(client.Get("/api/json")->get_header_value("X-Jenkins-Session"), stats.session);
  EXPECT_EQ(Why(waiting), "There are no nodes with the label " + Q("cpu"));
  EXPECT_GT(standin_->EnqueueFreestyle("c", "", 1s), waiting);
  // The agent may connect again.
  FakeAgent again;
  EXPECT_EQ(again.Connect(standin_->port(), AgentHeaders("n1")), 101);
}

// ---- the standin-java agent script, run on this host ----

struct Process {
  pid_t pid = -1;
  std::filesystem::path stderr_path;

  // Exit code, or nullopt if it did not exit within `timeout`.
  std::optional<int> WaitExit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return std::nullopt;
  }
  std::string Stderr() const {
    std::ifstream in(stderr_path);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }
  ~Process() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

class StandinJavaTest : public JenkinsStandinTest {
 protected:
  void SetUp() override {
    JenkinsStandinTest::SetUp();
    dir_ = std::filesystem::temp_directory_path() /
           ("standin-java-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "agent.jar") << "PK";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Process> Run(const std::vector<std::string>& args) {
    auto process = std::make_unique<Process>();
    process->stderr_path = dir_ / ("stderr-" + std::to_string(runs_++));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, process->stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> all = {"/bin/bash", STANDIN_JAVA};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawn(&process->pid, "/bin/bash", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0);
    return process;
  }

  std::filesystem::path dir_;
  int runs_ = 0;
};

TEST_F(StandinJavaTest, ConnectsBuildsAndExitsAfterItsNodeIsDeleted) {
  CreateAgentNode("slurm-gpu-1", "gpu");
  {
    std::ofstream secret(dir_ / "secret");
    secret << standin_->SecretFor("slurm-gpu-1") << "\n";
  }
  auto agent = Run({"-jar", (dir_ / "agent.jar").string(), "-url", standin_->url(), "-name",
                    "slurm-gpu-1", "-secret", "@" + (dir_ / "secret").string(), "-webSocket",
                    "-workDir", (dir_ / "work").string(), "-noReconnectAfter", "2s"});
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.FindNode("slurm-gpu-1")->connected; }, 10s))
      << agent->Stderr();
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "work" / "remoting"));
  json node = GetJson("/computer/slurm-gpu-1/api/json?tree=absoluteRemotePath,offline");
  EXPECT_FALSE(node["absoluteRemotePath"].is_null());
  EXPECT_EQ(standin_->Stats().CountRequests("GET", "/login"), 1u);

  standin_->EnqueueFreestyle("gpu-job", "gpu", 200ms);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.completed_builds.size() == 1; }));
  EXPECT_EQ(standin_->Stats().completed_builds[0].result, "SUCCESS");
  EXPECT_EQ(standin_->Stats().completed_builds[0].built_on, "slurm-gpu-1");

  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(PostEmpty("/computer/slurm-gpu-1/doDelete")->status, 302);
  auto rc = agent->WaitExit(8s);
  ASSERT_TRUE(rc) << agent->Stderr();
  EXPECT_EQ(*rc, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
  std::string log = agent->Stderr();
  EXPECT_NE(log.find("INFO: Connected"), std::string::npos) << log;
  EXPECT_NE(log.find("INFO: Terminated"), std::string::npos) << log;
  EXPECT_NE(log.find("no such agent"), std::string::npos) << log;
  EXPECT_NE(log.find("Bailing out"), std::string::npos) << log;
}

TEST_F(StandinJavaTest, ReconnectsAfterADroppedConnectionWithALiteralSecret) {
  CreateAgentNode("n1", "gpu");
  auto agent = Run({"-jar", (dir_ / "agent.jar").string(), "-url", standin_->url(), "-name", "n1",
                    "-secret", standin_->SecretFor("n1"), "-webSocket", "-workDir",
                    (dir_ / "work").string(), "-noReconnectAfter", "10m"});
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.FindNode("n1")->connected; }, 10s))
      << agent->Stderr();
  ASSERT_TRUE(standin_->DisconnectAgent("n1"));
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return s.FindNode("n1")->connections == 2; }, 10s))
      << agent->Stderr();
  ::kill(agent->pid, SIGTERM);
  auto rc = agent->WaitExit(5s);
  ASSERT_TRUE(rc);
  EXPECT_EQ(*rc, 143);
  ASSERT_TRUE(WaitFor([](const Snapshot& s) { return !s.FindNode("n1")->connected; }, 3s));
}

TEST_F(StandinJavaTest, ArgumentErrorsPrintUsageAndExitZero) {
  std::string jar = (dir_ / "agent.jar").string();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-jar", jar, "-bogus"},
           {"-jar", jar, "-url", standin_->url(), "-name", "n1", "-webSocket"},  // no -secret
           {"-jar", jar, "-url", standin_->url(), "-name", "n1", "-secret", "x", "-webSocket",
            "-noReconnect", "-noReconnectAfter", "5m"},
           {"-jar", jar, "-url", standin_->url(), "-name", "n1", "-secret", "x", "-webSocket",
            "-noReconnectAfter", "soon"},
           {"-jar", jar, "-secret", "@" + (dir_ / "missing").string()}}) {
    auto process = Run(args);
    auto rc = process->WaitExit(5s);
    ASSERT_TRUE(rc);
    EXPECT_EQ(*rc, 0) << args.back();
    EXPECT_NE(process->Stderr().find("java -jar agent.jar [options...]"), std::string::npos)
        << process->Stderr();
  }
  auto missing = Run({"-jar", (dir_ / "nope.jar").string(), "-url", standin_->url()});
  auto rc = missing->WaitExit(5s);
  ASSERT_TRUE(rc);
  EXPECT_EQ(*rc, 1);
  EXPECT_NE(missing->Stderr().find("Error: Unable to access jarfile"), std::string::npos);
  EXPECT_EQ(standin_->Stats().CountRequests("GET", "/wsagents/"), 0u);
}

}  // namespace
}  // namespace slurmfleet::standin
