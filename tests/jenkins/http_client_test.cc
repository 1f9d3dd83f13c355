#include "jenkins/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace slurmfleet::jenkins {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// Distinctive, so that a leak into any message is easy to find.
constexpr char kUser[] = "slurmfleet";
constexpr char kToken[] = "11a5e7c0de5ec4e7d00d1e5ca1ab1e0b0b";
constexpr char kNewToken[] = "11f4e54b4d9e0c2a7b3f1e8d6c5a4b3c2d";
constexpr char kSecret[] = "feedface0123456789abcdef0123456789abcdef0123456789abcdefc0ffee00";

// CONTRACT.md §2.5, as the daemon must post it.
constexpr char kExactLabelsScript[] = R"(
import groovy.json.JsonOutput
def q = jenkins.model.Jenkins.get().queue
println JsonOutput.toJson(q.items.collect { [id: it.id, cls: it.class.simpleName,
  label: it.assignedLabel?.expression, buildable: it.buildable, why: it.why,
  task: it.task.fullDisplayName] }))";

std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(SLURMFLEET_TESTDATA_DIR) + "/jenkins/testdata/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    out += std::string{kAlphabet[(n >> 18) & 63], kAlphabet[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += std::string{kAlphabet[(n >> 18) & 63], kAlphabet[(n >> 12) & 63],
                       kAlphabet[(n >> 6) & 63], '='};
  }
  return out;
}

std::string BasicAuth(const std::string& token) { return "Basic " + Base64(kUser + (":" + token)); }

// Decodes an application/x-www-form-urlencoded body ourselves, so the test does not depend on how
// the server library treats '+'.
std::map<std::string, std::string> DecodeForm(std::string_view body) {
  auto decode = [](std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '%' && i + 2 < text.size()) {
        out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        out += text[i] == '+' ? ' ' : text[i];
      }
    }
    return out;
  };
  std::map<std::string, std::string> fields;
  while (!body.empty()) {
    std::string_view pair = body.substr(0, body.find('&'));
    size_t eq = pair.find('=');
    fields[decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : decode(pair.substr(eq + 1));
    body.remove_prefix(std::min(body.size(), pair.size() + 1));
  }
  return fields;
}

struct Seen {
  std::string method;
  std::string target;                        // raw, as sent: path and query
  std::string path;                          // decoded
  std::map<std::string, std::string> query;  // decoded
  std::string body;
  httplib::Headers headers;
  int remote_port = 0;  // the client's side of the connection: equal for a reused one

  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

struct Answer {
  int status = 200;
  std::string body = {};
  std::string content_type = "application/json;charset=utf-8";
  httplib::Headers headers = {};
  std::chrono::milliseconds delay{0};
  std::string accept_token = {};  // when set, any other Basic credentials get a 401
};

// A stand-in for Jenkins' HTTP API: answers "METHOD /path" with a scripted Answer (404 when none)
// and records every request.
class FakeJenkins {
 public:
  FakeJenkins() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Seen seen{req.method, req.target, req.path, {}, req.body, req.headers, req.remote_port};
      for (const auto& [name, value] : req.params) seen.query[name] = value;
      Answer answer;
      {
        std::lock_guard lock(mu_);
        seen_.push_back(seen);
        auto it = answers_.find(req.method + " " + req.path);
        if (it == answers_.end()) {
          answer.status = 404;
          answer.body = "<html>Not Found</html>";
          answer.content_type = "text/html";
        } else {
          answer = it->second;
        }
      }
      if (answer.delay.count() > 0) std::this_thread::sleep_for(answer.delay);
      if (!answer.accept_token.empty() &&
          seen.Header("Authorization") != BasicAuth(answer.accept_token)) {
        res.status = 401;
        res.set_header("WWW-Authenticate", "Basic realm=\"Jenkins\"");
        return;
      }
      res.status = answer.status;
      for (const auto& [name, value] : answer.headers) res.set_header(name, value);
      res.set_content(answer.body, answer.content_type.c_str());
    };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }

  ~FakeJenkins() {
    server_.stop();
    thread_.join();
  }

  void On(const std::string& method_and_path, Answer answer) {
    std::lock_guard lock(mu_);
    answers_[method_and_path] = std::move(answer);
  }

  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, Answer> answers_;  // guarded by mu_
  std::vector<Seen> seen_;                 // guarded by mu_
};

Answer Json(const std::string& testdata_name, httplib::Headers headers = {}) {
  return Answer{.body = Testdata(testdata_name), .headers = std::move(headers)};
}

Answer Reply(int status, httplib::Headers headers = {}) {
  return Answer{.status = status,
                .body = "<html>error page</html>",
                .content_type = "text/html",
                .headers = std::move(headers)};
}

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "slurmfleet-jenkins-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    token_file_ = dir_ / "api-token";
    WriteToken(std::string(kToken) + "\n");
    client_ = MakeClient();
  }

  void TearDown() override { fs::remove_all(dir_); }

  void WriteToken(const std::string& content) { std::ofstream(token_file_) << content; }

  HttpClientOptions Options() {
    HttpClientOptions options;
    options.base_url = jenkins_.url();
    options.user = kUser;
    options.api_token_file = token_file_;
    options.connect_timeout = 2s;
    options.total_timeout = 5s;
    return options;
  }

  std::unique_ptr<HttpClient> MakeClient(std::optional<HttpClientOptions> options = {}) {
    auto client = HttpClient::Create(options ? *options : Options());
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  // The one request the fake saw, checked for Basic auth with the current token.
  Seen Only() {
    auto seen = jenkins_.seen();
    EXPECT_EQ(seen.size(), 1u);
    if (seen.empty()) return {};
    EXPECT_EQ(seen[0].Header("Authorization"), BasicAuth(kToken));
    return seen[0];
  }

  FakeJenkins jenkins_;
  fs::path dir_;
  fs::path token_file_;
  std::unique_ptr<HttpClient> client_;
};

// The error of a failed result, checked never to hold the token or the agent secret.
template <typename T>
Error ErrorOf(const Result<T>& result) {
  EXPECT_FALSE(result) << "expected an error";
  if (result) return {};
  std::string text = result.error().ToString();
  EXPECT_EQ(text.find(kToken), std::string::npos) << text;
  EXPECT_EQ(text.find(kNewToken), std::string::npos) << text;
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_EQ(text.find(Base64(std::string(kUser) + ":" + kToken)), std::string::npos) << text;
  return result.error();
}

// --- Create --------------------------------------------------------------------------------

TEST_F(HttpClientTest, CreateRejectsBadOptionsNamingThem) {
  auto with = [&](auto change) {
    HttpClientOptions options = Options();
    change(options);
    return ErrorOf(HttpClient::Create(options));
  };
  Error e = with([](auto& o) { o.base_url = "ftp://jenkins/"; });
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_EQ(e.where, "base_url");
  e = with([](auto& o) { o.base_url = ""; });
  EXPECT_EQ(e.where, "base_url");
  e = with([](auto& o) { o.base_url = "http:///x"; });
  EXPECT_EQ(e.where, "base_url");
  // the shared check of base/url.h, beyond the scheme
  const std::pair<const char*, const char*> bad_urls[] = {
      {"http://jenkins:0/", "' has a port that is not a number from 1 to 65535"},
      {"http://jenkins:99999/", "' has a port that is not a number from 1 to 65535"},
      {"http://jenkins/#x", "' has a fragment ('#')"},
      {"http://jen kins/", "' contains a space"},
      {"http://:8080/", "' has no host; write the host after '//', e.g. http://jenkins:8080/"},
  };
  for (const auto& [url, expected] : bad_urls) {
    e = with([url](auto& o) { o.base_url = url; });
    EXPECT_EQ(e.code, Code::kInvalidInput) << url;
    EXPECT_EQ(e.where, "base_url") << url;
    EXPECT_NE(e.message.find(std::string("'") + url + expected), std::string::npos) << e.message;
  }
  e = with([](auto& o) { o.base_url = "https://admin:hunter2@jenkins/"; });
  EXPECT_EQ(e.where, "base_url");
  EXPECT_EQ(e.ToString().find("hunter2"), std::string::npos) << e.ToString();
  for (const char* url : {"admin:hunter2@jenkins:8080/", "ftp://admin:hunter2@jenkins/"}) {
    e = with([url](auto& o) { o.base_url = url; });
    EXPECT_EQ(e.where, "base_url");
    EXPECT_EQ(e.ToString().find("hunter2"), std::string::npos) << e.ToString();
    EXPECT_NE(e.ToString().find("***@jenkins"), std::string::npos) << e.ToString();
  }
  e = with([](auto& o) { o.user = ""; });
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_EQ(e.where, "user");
  e = with([](auto& o) { o.total_timeout = 0ms; });
  EXPECT_EQ(e.where, "total_timeout");
  e = with([](auto& o) { o.connect_timeout = -1ms; });
  EXPECT_EQ(e.where, "connect_timeout");
  e = with([](auto& o) { o.ca_file = "/nonexistent/site-ca.pem"; });
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_EQ(e.where, "ca_file");
  EXPECT_TRUE(jenkins_.seen().empty());
}

TEST_F(HttpClientTest, CreateNamesAnUnreadableTokenFileAndTheFix) {
  auto missing = Options();
  missing.api_token_file = dir_ / "no-such-file";
  Error e = ErrorOf(HttpClient::Create(missing));
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_EQ(e.where, "api_token_file");
  EXPECT_NE(e.message.find((dir_ / "no-such-file").string()), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("API Token"), std::string::npos) << e.message;

  WriteToken(" \n\t");
  e = ErrorOf(HttpClient::Create(Options()));
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_NE(e.message.find("is empty"), std::string::npos) << e.message;

  auto directory = Options();
  directory.api_token_file = dir_;
  e = ErrorOf(HttpClient::Create(directory));
  EXPECT_EQ(e.where, "api_token_file");
  EXPECT_NE(e.message.find(dir_.string() + " is a directory; name the file in it"),
            std::string::npos)
      << e.message;

  WriteToken(std::string(kToken) + " " + kNewToken);
  e = ErrorOf(HttpClient::Create(Options()));
  EXPECT_EQ(e.code, Code::kInvalidInput);
}

TEST_F(HttpClientTest, BaseUrlPrefixGetsATrailingSlash) {
  auto options = Options();
  options.base_url = jenkins_.url() + "/jenkins";
  auto client = MakeClient(options);
  jenkins_.On("GET /jenkins/api/json", Json("discover.json", {{"X-Jenkins", "2.541.1"}}));
  ASSERT_TRUE(client->Discover());
  EXPECT_EQ(Only().path, "/jenkins/api/json");
}

// --- Discover ------------------------------------------------------------------------------

TEST_F(HttpClientTest, DiscoverReadsVersionSessionAndRootUrl) {
  jenkins_.On("GET /api/json",
              Json("discover.json", {{"X-Jenkins", "2.541.1"}, {"X-Jenkins-Session", "4f1a2b3c"}}));
  auto info = client_->Discover();
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->version, "2.541.1");
  EXPECT_EQ(info->session, "4f1a2b3c");
  EXPECT_FALSE(info->quieting_down);
  EXPECT_EQ(info->root_url, "http://127.0.0.1:8080/");

  Seen seen = Only();
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.target, "/api/json?tree=quietingDown%2Curl");
  EXPECT_EQ(seen.query["tree"], "quietingDown,url");
}

TEST_F(HttpClientTest, DiscoverWithoutXJenkinsIsNotJenkins) {
  jenkins_.On("GET /api/json", Json("discover.json"));
  Error e = ErrorOf(client_->Discover());
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_NE(e.message.find("X-Jenkins"), std::string::npos);
}

TEST_F(HttpClientTest, DiscoverSeesQuietingDownAndNullUrl) {
  jenkins_.On("GET /api/json", Answer{.body = R"({"quietingDown":true,"url":null})",
                                      .headers = {{"X-Jenkins", "2.541.1"}}});
  auto info = client_->Discover();
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_TRUE(info->quieting_down);
  EXPECT_EQ(info->root_url, "");
}

// --- Queue ---------------------------------------------------------------------------------

TEST_F(HttpClientTest, QueueAsksInEnglishWithAnEncodedTree) {
  jenkins_.On("GET /queue/api/json", Json("queue.json"));
  auto items = client_->Queue();
  ASSERT_TRUE(items) << items.error().ToString();

  Seen seen = Only();
  EXPECT_EQ(seen.Header("Accept-Language"), "en");
  EXPECT_EQ(seen.query["tree"],
            "items[id,buildable,blocked,pending,stuck,why,inQueueSince,task[name,url,"
            "labelExpression]]");
  EXPECT_EQ(seen.target.find_first_of("[]{},"), std::string::npos) << seen.target;
  EXPECT_NE(seen.target.find("items%5Bid%2Cbuildable"), std::string::npos) << seen.target;

  ASSERT_EQ(items->size(), 4u);
  const QueueItem& freestyle = (*items)[0];
  EXPECT_EQ(freestyle.id, 3);
  EXPECT_EQ(freestyle.item_class, "hudson.model.Queue$BuildableItem");
  EXPECT_TRUE(freestyle.buildable);
  EXPECT_FALSE(freestyle.blocked);
  EXPECT_FALSE(freestyle.pending);
  EXPECT_TRUE(freestyle.stuck);
  EXPECT_EQ(freestyle.why, "There are no nodes with the label \u2018gpu\u2019");
  EXPECT_EQ(freestyle.in_queue_since_ms, 1767225600000);
  EXPECT_EQ(freestyle.task_name, "gpu-job");
  EXPECT_EQ(freestyle.task_url, "http://127.0.0.1:8080/job/gpu-job/");
  EXPECT_EQ(freestyle.task_class, "hudson.model.FreeStyleProject");
  EXPECT_EQ(freestyle.label, "gpu");
  EXPECT_EQ(freestyle.label_source, LabelSource::kLabelExpression);
  EXPECT_TRUE(freestyle.WantsExecutor());

  const QueueItem& pipeline = (*items)[1];
  EXPECT_EQ(pipeline.label, std::nullopt);  // a placeholder task exports no label
  EXPECT_EQ(pipeline.label_source, LabelSource::kNone);
  EXPECT_EQ(pipeline.FolderPath(), "team-a");
  EXPECT_TRUE(pipeline.WantsExecutor());

  const QueueItem& roaming = (*items)[2];
  EXPECT_EQ(roaming.label, "");  // labelExpression null: may roam
  EXPECT_EQ(roaming.label_source, LabelSource::kLabelExpression);
  EXPECT_TRUE(roaming.pending);
  EXPECT_FALSE(roaming.WantsExecutor());

  EXPECT_EQ((*items)[3].item_class, "hudson.model.Queue$WaitingItem");
  EXPECT_FALSE((*items)[3].WantsExecutor());
}

TEST_F(HttpClientTest, EmptyQueue) {
  jenkins_.On("GET /queue/api/json",
              Answer{.body = R"({"_class":"hudson.model.Queue","items":[]})"});
  auto items = client_->Queue();
  ASSERT_TRUE(items) << items.error().ToString();
  EXPECT_TRUE(items->empty());
}

// --- ExactLabels ---------------------------------------------------------------------------

TEST_F(HttpClientTest, ExactLabelsPostsTheContractScript) {
  jenkins_.On("POST /scriptText", Answer{.body = Testdata("exact_labels.txt"),
                                         .content_type = "text/plain;charset=utf-8"});
  auto labels = client_->ExactLabels();
  ASSERT_TRUE(labels) << labels.error().ToString();
  EXPECT_EQ(*labels, (std::map<int64_t, std::string>{{3, "gpu"}, {4, "gpu&&linux"}, {5, ""}}));

  Seen seen = Only();
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/scriptText");
  EXPECT_EQ(seen.Header("Content-Type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(DecodeForm(seen.body),
            (std::map<std::string, std::string>{{"script", kExactLabelsScript}}));
}

TEST_F(HttpClientTest, ExactLabelsWithoutAdministerIsRejected) {
  jenkins_.On("POST /scriptText",
              Reply(403, {{"X-You-Are-Authenticated-As", kUser},
                          {"X-Required-Permission", "hudson.model.Hudson.Administer"}}));
  Error e = ErrorOf(client_->ExactLabels());
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_NE(e.message.find("hudson.model.Hudson.Administer"), std::string::npos) << e.message;
  EXPECT_EQ(e.where, "POST /scriptText");
}

TEST_F(HttpClientTest, ExactLabelsWhenTheScriptFails) {
  jenkins_.On("POST /scriptText",
              Answer{.body = "groovy.lang.MissingPropertyException: No such property: q\n\tat ...",
                     .content_type = "text/plain"});
  Error e = ErrorOf(client_->ExactLabels());
  EXPECT_EQ(e.code, Code::kInternal);
  EXPECT_EQ(e.where, "POST /scriptText");
}

// --- Computers -----------------------------------------------------------------------------

TEST_F(HttpClientTest, ComputersFetchesEveryFieldTheModelHolds) {
  jenkins_.On("GET /computer/api/json", Json("computers.json"));
  auto computers = client_->Computers();
  ASSERT_TRUE(computers) << computers.error().ToString();

  Seen seen = Only();
  EXPECT_EQ(seen.query["tree"],
            "computer[_class,displayName,description,offline,temporarilyOffline,idle,numExecutors,"
            "offlineCauseReason,absoluteRemotePath,assignedLabels[name],"
            "executors[idle,currentExecutable[url,number]]]");
  EXPECT_EQ(seen.target.find_first_of("[]{},"), std::string::npos) << seen.target;

  ASSERT_EQ(computers->size(), 3u);
  const Computer& builtin = (*computers)[0];
  EXPECT_EQ(builtin.name, "Built-In Node");
  EXPECT_EQ(builtin.computer_class, "hudson.model.Hudson$MasterComputer");
  EXPECT_EQ(builtin.num_executors, 0);
  EXPECT_TRUE(builtin.executors.empty());

  const Computer& busy = (*computers)[1];
  EXPECT_EQ(busy.name, "slurm-gpu-1");
  EXPECT_EQ(busy.computer_class, "hudson.slaves.SlaveComputer");
  EXPECT_EQ(busy.description, "slurm-provisioner:12345");
  EXPECT_TRUE(busy.offline);  // draining, yet still running its build
  EXPECT_TRUE(busy.temporarily_offline);
  EXPECT_FALSE(busy.idle);
  EXPECT_EQ(busy.num_executors, 1);
  EXPECT_TRUE(busy.connected());
  EXPECT_EQ(busy.absolute_remote_path, "/scratch/jenkins/slurm-gpu-1");
  EXPECT_EQ(busy.offline_cause_reason, "draining: slurm job 12345 done after this build");
  EXPECT_EQ(busy.labels, (std::vector<std::string>{"gpu", "slurm", "slurm-gpu-1"}));
  ASSERT_EQ(busy.executors.size(), 1u);
  EXPECT_FALSE(busy.executors[0].idle);
  EXPECT_EQ(busy.executors[0].current_url, "http://127.0.0.1:8080/job/gpu-job/1/");
  EXPECT_EQ(busy.executors[0].current_number, 1);
  EXPECT_TRUE(busy.building());

  const Computer& pending = (*computers)[2];
  EXPECT_FALSE(pending.connected());
  EXPECT_TRUE(pending.idle);
  EXPECT_FALSE(pending.building());
  ASSERT_EQ(pending.executors.size(), 1u);
  EXPECT_EQ(pending.executors[0].current_url, "");
}

TEST_F(HttpClientTest, GetComputerAndItsAbsence) {
  jenkins_.On("GET /computer/slurm-gpu-1/api/json", Json("computer.json"));
  auto computer = client_->GetComputer("slurm-gpu-1");
  ASSERT_TRUE(computer) << computer.error().ToString();
  EXPECT_EQ(computer->name, "slurm-gpu-1");
  EXPECT_EQ(computer->description, "slurm job pending");
  EXPECT_FALSE(computer->connected());
  Seen seen = Only();
  EXPECT_EQ(seen.path, "/computer/slurm-gpu-1/api/json");
  EXPECT_NE(seen.query["tree"].find("absoluteRemotePath"), std::string::npos);

  Error e = ErrorOf(client_->GetComputer("slurm-gpu-9"));
  EXPECT_EQ(e.code, Code::kNotFound);
  EXPECT_EQ(e.where, "GET /computer/slurm-gpu-9/api/json");
}

// --- Fate and Run (CONTRACT.md 2.6, 9) ------------------------------------------------------

TEST_F(HttpClientTest, FateOfAnItemThatLeftNamesItsRun) {
  jenkins_.On("GET /queue/item/3/api/json", Json("left_item.json"));
  auto fate = client_->Fate(3);
  ASSERT_TRUE(fate) << fate.error().ToString();
  EXPECT_TRUE(fate->left);
  EXPECT_FALSE(fate->cancelled);
  EXPECT_EQ(fate->executable_url, "https://jenkins.example.org/job/gpu-job/1/");
  Seen seen = Only();
  EXPECT_EQ(seen.query["tree"], "cancelled,executable[url]");
  EXPECT_EQ(ErrorOf(client_->Fate(4)).code, Code::kNotFound);
}

TEST_F(HttpClientTest, RunIsAskedByItsPathWhateverRootUrlJenkinsWrote) {
  jenkins_.On("GET /job/gpu-job/1/api/json", Json("run.json"));
  // the configured root URL names another host than the one slurmfleet reaches Jenkins on
  auto run = client_->Run("https://jenkins.example.org/job/gpu-job/1/");
  ASSERT_TRUE(run) << run.error().ToString();
  EXPECT_FALSE(run->building);
  EXPECT_EQ(run->result, "SUCCESS");
  EXPECT_EQ(run->built_on, "slurm-gpu-1");
  EXPECT_EQ(Only().query["tree"], "building,result,builtOn");
  EXPECT_EQ(ErrorOf(client_->Run("https://jenkins.example.org/computer/x/")).code,
            Code::kInvalidInput);
  EXPECT_EQ(ErrorOf(client_->Run("not a url")).code, Code::kInvalidInput);
}

TEST_F(HttpClientTest, RunBelowAContextPath) {
  HttpClientOptions options = Options();
  options.base_url = jenkins_.url() + "/ci/";
  auto client = MakeClient(options);
  jenkins_.On("GET /ci/job/f/job/p/7/api/json", Json("run.json"));
  auto run = client->Run("http://jenkins.example.org/ci/job/f/job/p/7/");
  ASSERT_TRUE(run) << run.error().ToString();
  EXPECT_EQ(run->built_on, "slurm-gpu-1");
}

// --- CreateNode ----------------------------------------------------------------------------

NodeSpec GpuNode() {
  return NodeSpec{.name = "slurm-gpu-1",
                  .description = "slurm-provisioner:12345",
                  .remote_fs = "/scratch/jenkins/slurm-gpu-1",
                  .labels = "gpu slurm",
                  .mode = NodeMode::kExclusive,
                  .num_executors = 1};
}

// libcurl silently sends a request again on a fresh connection when a reused one turns out dead:
// harmless for the label script, and for a create (a repeat is refused as "already exists" and the
// node adopted), not for a POST that drains or deletes a node.
TEST_F(HttpClientTest, OnlyAPostThatMustNotBeSentTwiceOpensAConnectionOfItsOwn) {
  jenkins_.On("POST /scriptText", Answer{.body = Testdata("exact_labels.txt"),
                                         .content_type = "text/plain;charset=utf-8"});
  const Answer redirect{
      .status = 302, .body = "", .headers = {{"Location", jenkins_.url() + "/computer/"}}};
  jenkins_.On("POST /computer/doCreateItem", redirect);
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete", redirect);
  ASSERT_TRUE(client_->ExactLabels());
  ASSERT_TRUE(client_->CreateNode(GpuNode()));
  ASSERT_TRUE(client_->DeleteNode("slurm-gpu-1"));
  ASSERT_TRUE(client_->DeleteNode("slurm-gpu-1"));
  ASSERT_TRUE(client_->ExactLabels());

  std::vector<Seen> seen = jenkins_.seen();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[1].remote_port, seen[0].remote_port) << "a create reuses the connection";
  EXPECT_NE(seen[2].remote_port, seen[1].remote_port);
  EXPECT_NE(seen[3].remote_port, seen[2].remote_port);
  // a delete's connection is kept too: the script goes out on one of the three
  EXPECT_TRUE(seen[4].remote_port == seen[0].remote_port ||
              seen[4].remote_port == seen[2].remote_port ||
              seen[4].remote_port == seen[3].remote_port);
}

TEST_F(HttpClientTest, CreateNodePostsTheContractFormAndTakes302AsSuccess) {
  jenkins_.On(
      "POST /computer/doCreateItem",
      Answer{.status = 302, .body = "", .headers = {{"Location", jenkins_.url() + "/computer/"}}});
  auto created = client_->CreateNode(GpuNode());
  ASSERT_TRUE(created) << created.error().ToString();

  Seen seen = Only();  // and no GET of the redirect target
  EXPECT_EQ(seen.target, "/computer/doCreateItem");
  EXPECT_EQ(seen.Header("Content-Type"), "application/x-www-form-urlencoded");
  auto form = DecodeForm(seen.body);
  ASSERT_EQ(form.size(), 3u) << seen.body;
  EXPECT_EQ(form["name"], "slurm-gpu-1");
  EXPECT_EQ(form["type"], "hudson.slaves.DumbSlave");
  EXPECT_EQ(json::parse(form["json"]), json::parse(R"({
    "name": "slurm-gpu-1",
    "nodeDescription": "slurm-provisioner:12345",
    "numExecutors": "1",
    "remoteFS": "/scratch/jenkins/slurm-gpu-1",
    "labelString": "gpu slurm",
    "mode": "EXCLUSIVE",
    "launcher": {"$class": "hudson.slaves.JNLPLauncher", "webSocket": true,
                 "workDirSettings": {"disabled": false, "workDirPath": "", "internalDir": "remoting",
                                     "failIfWorkDirIsMissing": false}},
    "retentionStrategy": {"$class": "hudson.slaves.RetentionStrategy$Always"},
    "nodeProperties": {"stapler-class-bag": "true"}
  })"));
}

TEST_F(HttpClientTest, CreateNodeInNormalModeWithSpecialCharacters) {
  jenkins_.On("POST /computer/doCreateItem", Reply(302));
  NodeSpec node = GpuNode();
  node.mode = NodeMode::kNormal;
  node.num_executors = 2;
  node.description = "a & b = \"c\" + 100%";
  ASSERT_TRUE(client_->CreateNode(node));
  auto spec = json::parse(DecodeForm(Only().body)["json"]);
  EXPECT_EQ(spec["mode"], "NORMAL");
  EXPECT_EQ(spec["numExecutors"], "2");
  EXPECT_EQ(spec["nodeDescription"], "a & b = \"c\" + 100%");
}

TEST_F(HttpClientTest, CreateNodeTakenNameIsAConflict) {
  jenkins_.On("POST /computer/doCreateItem",
              Reply(400, {{"X-Error", "Agent called \u2018slurm-gpu-1\u2019 already exists"}}));
  Error e = ErrorOf(client_->CreateNode(GpuNode()));
  EXPECT_EQ(e.code, Code::kConflict);
  EXPECT_EQ(e.where, "POST /computer/doCreateItem");
}

TEST_F(HttpClientTest, CreateNodeConflictSurvivesMangledQuotes) {
  // Jetty may send the quotes as ISO-8859-1 '?' or raw bytes: only the ASCII part is matched.
  for (std::string header : {std::string("Agent called ?slurm-gpu-1? already exists"),
                             std::string("Agent called \x91slurm-gpu-1\x92 already exists")}) {
    jenkins_.On("POST /computer/doCreateItem", Reply(400, {{"X-Error", header}}));
    EXPECT_EQ(ErrorOf(client_->CreateNode(GpuNode())).code, Code::kConflict) << header;
  }
}

TEST_F(HttpClientTest, CreateNodeOther400IsRejectedWithTheXErrorText) {
  jenkins_.On("POST /computer/doCreateItem",
              Reply(400, {{"X-Error", "\u2018\u2026\u2019 is an unsafe character"}}));
  Error e = ErrorOf(client_->CreateNode(GpuNode()));
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_NE(e.message.find("is an unsafe character"), std::string::npos) << e.message;
  for (unsigned char c : e.message) EXPECT_LT(c, 0x80) << e.message;  // stays ASCII
}

TEST_F(HttpClientTest, CreateNodeMissingPermissionNamesIt) {
  jenkins_.On("POST /computer/doCreateItem",
              Reply(403, {{"X-You-Are-Authenticated-As", kUser},
                          {"X-Required-Permission", "hudson.model.Computer.Create"}}));
  Error e = ErrorOf(client_->CreateNode(GpuNode()));
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_NE(e.message.find("hudson.model.Computer.Create"), std::string::npos) << e.message;
}

TEST_F(HttpClientTest, CreateNodeServerErrorIsUnavailable) {
  jenkins_.On("POST /computer/doCreateItem", Reply(500));
  EXPECT_EQ(ErrorOf(client_->CreateNode(GpuNode())).code, Code::kUnavailable);
}

TEST_F(HttpClientTest, CreateNodeValidatesBeforeSending) {
  for (const std::string& name : std::vector<std::string>{
           "",    " x",   "x ",  ".",   "..",  "x.",  "a/b",  "a:b",   "a?b",
           "a*b", "a\\b", "a%b", "a!b", "a@b", "a#b", "a$b",  "a^b",   "a&b",
           "a|b", "a<b",  "a>b", "a[b", "a]b", "a;b", "a\nb", "a\x7f", "a\xc2\x85"}) {
    NodeSpec node = GpuNode();
    node.name = name;
    Error e = ErrorOf(client_->CreateNode(node));
    EXPECT_EQ(e.code, Code::kInvalidInput) << name;
    EXPECT_EQ(e.where, "node name") << name;
  }
  NodeSpec node = GpuNode();
  node.remote_fs = "";
  EXPECT_EQ(ErrorOf(client_->CreateNode(node)).code, Code::kInvalidInput);
  node = GpuNode();
  node.num_executors = 0;
  EXPECT_EQ(ErrorOf(client_->CreateNode(node)).code, Code::kInvalidInput);
  EXPECT_TRUE(jenkins_.seen().empty());
  for (const char* name : {"slurm-gpu-12345", "a.b", "x_y", "caf\u00e9", "A1"}) {
    EXPECT_TRUE(HttpClient::CheckNodeName(name)) << name;
  }
}

// --- AgentSecret ---------------------------------------------------------------------------

TEST_F(HttpClientTest, AgentSecretIsTheFirstJnlpArgument) {
  jenkins_.On(
      "GET /computer/slurm-gpu-1/jenkins-agent.jnlp",
      Answer{.body = Testdata("agent.jnlp"), .content_type = "application/x-java-jnlp-file"});
  auto secret = client_->AgentSecret("slurm-gpu-1");
  ASSERT_TRUE(secret) << secret.error().ToString();
  EXPECT_EQ(secret->Reveal(), kSecret);
  EXPECT_EQ(Only().target, "/computer/slurm-gpu-1/jenkins-agent.jnlp");
}

TEST_F(HttpClientTest, AgentSecretRejectsAnUnexpectedBodyWithoutQuotingIt) {
  for (std::string argument :
       {std::string(kSecret).substr(1), std::string(kSecret) + "0",
        // upper case: not what HMAC-SHA256 hex from Jenkins looks like
        std::string("FEEDFACE") + std::string(kSecret).substr(8), std::string("")}) {
    jenkins_.On(
        "GET /computer/slurm-gpu-1/jenkins-agent.jnlp",
        Answer{.body = "<jnlp><application-desc><argument>" + argument + "</argument><argument>" +
                       kSecret + "</argument></application-desc></jnlp>",
               .content_type = "application/x-java-jnlp-file"});
    Error e = ErrorOf(client_->AgentSecret("slurm-gpu-1"));
    EXPECT_EQ(e.code, Code::kInternal);
    EXPECT_NE(e.message.find("unexpected JNLP body"), std::string::npos) << e.message;
    if (!argument.empty()) {
      EXPECT_EQ(e.ToString().find(argument), std::string::npos);
    }
  }
  jenkins_.On("GET /computer/slurm-gpu-1/jenkins-agent.jnlp", Answer{.body = "<html>login</html>"});
  EXPECT_EQ(ErrorOf(client_->AgentSecret("slurm-gpu-1")).code, Code::kInternal);
}

TEST_F(HttpClientTest, AgentSecretOfAMissingNodeOrWithoutConnect) {
  EXPECT_EQ(ErrorOf(client_->AgentSecret("slurm-gpu-9")).code, Code::kNotFound);
  jenkins_.On("GET /computer/slurm-gpu-1/jenkins-agent.jnlp",
              Reply(403, {{"X-Required-Permission", "hudson.model.Computer.Connect"}}));
  Error e = ErrorOf(client_->AgentSecret("slurm-gpu-1"));
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_NE(e.message.find("hudson.model.Computer.Connect"), std::string::npos);
  EXPECT_EQ(ErrorOf(client_->AgentSecret("a/b")).code, Code::kInvalidInput);
}

// --- Drain and DeleteNode ------------------------------------------------------------------

TEST_F(HttpClientTest, DrainPostsChangeOfflineCause) {
  jenkins_.On("POST /computer/slurm-gpu-1/changeOfflineCause",
              Answer{.status = 302, .headers = {{"Location", "."}}});
  auto drained = client_->Drain("slurm-gpu-1", "draining: slurm job 12345 done after this build");
  ASSERT_TRUE(drained) << drained.error().ToString();
  Seen seen = Only();
  EXPECT_EQ(seen.target, "/computer/slurm-gpu-1/changeOfflineCause");
  EXPECT_EQ(DecodeForm(seen.body),
            (std::map<std::string, std::string>{
                {"offlineMessage", "draining: slurm job 12345 done after this build"}}));

  EXPECT_EQ(ErrorOf(client_->Drain("slurm-gpu-9", "x")).code, Code::kNotFound);
}

// A proxy in front of Jenkins that answers a POST with its login page did not create, drain or
// delete anything.
TEST_F(HttpClientTest, ARedirectToALoginPageIsNotSuccess) {
  // The Location's query and user name and password are not quoted: they may hold a token.
  const Answer login{
      .status = 302,
      .headers = {{"Location", "https://u:SECRETMARK@sso.example.org/login?t=SECRETMARK"}}};
  jenkins_.On("POST /computer/doCreateItem", login);
  jenkins_.On("POST /computer/slurm-gpu-1/changeOfflineCause", login);
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete", login);
  for (const Error& e :
       {ErrorOf(client_->CreateNode(GpuNode())), ErrorOf(client_->Drain("slurm-gpu-1", "x")),
        ErrorOf(client_->DeleteNode("slurm-gpu-1"))}) {
    EXPECT_EQ(e.code, Code::kInvalidInput) << e.ToString();
    EXPECT_NE(e.message.find("redirected to 'https://***@sso.example.org/login' (HTTP 302); set "
                             "jenkins.url to"),
              std::string::npos)
        << e.message;
    EXPECT_EQ(e.ToString().find("SECRETMARK"), std::string::npos) << e.ToString();
  }
  // Jenkins itself redirects to its /computer/ pages, written with its configured root URL
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete",
              Answer{.status = 302, .headers = {{"Location", "https://ci.example.org/computer/"}}});
  EXPECT_TRUE(client_->DeleteNode("slurm-gpu-1"));
}

// Jetty 12 writes a redirect's target as a path: judged as a full URL's path is, so a node whose
// name holds "login" is drained, and Jenkins' own login page is still no success.
TEST_F(HttpClientTest, ARedirectToAPathIsJudgedByThePath) {
  jenkins_.On("POST /computer/hpc-login-42-1/changeOfflineCause",
              Answer{.status = 302, .headers = {{"Location", "/computer/hpc-login-42-1/"}}});
  EXPECT_TRUE(client_->Drain("hpc-login-42-1", "x"));
  jenkins_.On("POST /computer/hpc-login-42-1/doDelete",
              Answer{.status = 302, .headers = {{"Location", "/computer/"}}});
  EXPECT_TRUE(client_->DeleteNode("hpc-login-42-1"));
  jenkins_.On("POST /computer/hpc-login-42-1/doDelete",
              Answer{.status = 302, .headers = {{"Location", "/login?from=%2Fcomputer%2F"}}});
  EXPECT_EQ(ErrorOf(client_->DeleteNode("hpc-login-42-1")).code, Code::kInvalidInput);
}

// Jenkins writes X-Error texts in the request's language: "already exists" is only found in
// English, so every request asks for it.
TEST_F(HttpClientTest, EveryRequestAsksForEnglish) {
  jenkins_.On("POST /computer/doCreateItem",
              Answer{.status = 302, .headers = {{"Location", "/computer/slurm-gpu-1/"}}});
  ASSERT_TRUE(client_->CreateNode(GpuNode()));
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete",
              Answer{.status = 302, .headers = {{"Location", "/computer/"}}});
  ASSERT_TRUE(client_->DeleteNode("slurm-gpu-1"));
  for (const Seen& seen : jenkins_.seen()) {
    EXPECT_EQ(seen.Header("Accept-Language"), "en") << seen.target;
  }
}

TEST_F(HttpClientTest, DeleteNodePostsDoDelete) {
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete",
              Answer{.status = 302, .headers = {{"Location", jenkins_.url() + "/computer/"}}});
  auto deleted = client_->DeleteNode("slurm-gpu-1");
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  Seen seen = Only();
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/computer/slurm-gpu-1/doDelete");

  Error e = ErrorOf(client_->DeleteNode("slurm-gpu-9"));
  EXPECT_EQ(e.code, Code::kNotFound);
  EXPECT_EQ(e.where, "POST /computer/slurm-gpu-9/doDelete");
}

// --- SetDescription ------------------------------------------------------------------------

// GET /computer/slurm-gpu-1/config.xml as Jenkins writes it (XStream, CONTRACT.md §3.2), with a
// nested <description> that must stay as it is, and `description` as the top-level one's markup.
std::string NodeXml(const std::string& description) {
  return "<?xml version=\"1.1\" encoding=\"UTF-8\"?>\n"
         "<!-- <description>not this</description> -->\n"
         "<slave>\n"
         "  <name>slurm-gpu-1</name>\n" +
         description +
         "  <remoteFS>/scratch/jenkins/slurm-gpu-1</remoteFS>\n"
         "  <numExecutors>1</numExecutors>\n"
         "  <mode>EXCLUSIVE</mode>\n"
         "  <retentionStrategy class=\"hudson.slaves.RetentionStrategy$Always\"/>\n"
         "  <launcher class=\"hudson.slaves.JNLPLauncher\">\n"
         "    <workDirSettings><disabled>false</disabled><internalDir>remoting</internalDir>"
         "<failIfWorkDirIsMissing>false</failIfWorkDirIsMissing></workDirSettings>\n"
         "    <webSocket>true</webSocket>\n"
         "  </launcher>\n"
         "  <label>gpu slurm</label>\n"
         "  <nodeProperties>\n"
         "    <x.Property attr=\"a > b/\"><description>nested</description></x.Property>\n"
         "  </nodeProperties>\n"
         "</slave>";
}

Answer ConfigXml(const std::string& body) {
  return Answer{.body = body, .content_type = "application/xml"};
}

class SetDescriptionTest : public HttpClientTest {
 protected:
  // Serves `config`, accepts the POST, and returns the body posted.
  std::string Posted(const std::string& config, const std::string& description) {
    jenkins_.On("GET /computer/slurm-gpu-1/config.xml", ConfigXml(config));
    jenkins_.On("POST /computer/slurm-gpu-1/config.xml", Answer{.body = ""});
    auto done = client_->SetDescription("slurm-gpu-1", description);
    EXPECT_TRUE(done) << done.error().ToString();
    auto seen = jenkins_.seen();
    EXPECT_EQ(seen.size(), 2u);
    if (seen.size() != 2) return "";
    EXPECT_EQ(seen[0].method, "GET");
    EXPECT_EQ(seen[0].target, "/computer/slurm-gpu-1/config.xml");
    EXPECT_EQ(seen[1].method, "POST");
    EXPECT_EQ(seen[1].target, "/computer/slurm-gpu-1/config.xml");
    EXPECT_EQ(seen[1].Header("Content-Type"), "application/xml");
    for (const Seen& request : seen) {
      EXPECT_EQ(request.Header("Authorization"), BasicAuth(kToken));
    }
    return seen[1].body;
  }
};

TEST_F(SetDescriptionTest, ReplacesOnlyTheTopLevelDescription) {
  EXPECT_EQ(Posted(NodeXml("  <description>slurm job pending</description>\n"),
                   "slurm-provisioner:12345"),
            NodeXml("  <description>slurm-provisioner:12345</description>\n"));
}

TEST_F(SetDescriptionTest, ReplacesMarkupInsideTheOldDescription) {
  EXPECT_EQ(Posted(NodeXml("  <description>a &amp; <![CDATA[<b>]]> <!-- c --></description>\n"),
                   "slurm job 7"),
            NodeXml("  <description>slurm job 7</description>\n"));
}

TEST_F(SetDescriptionTest, EscapesTheDescription) {
  EXPECT_EQ(Posted(NodeXml("  <description>x</description>\n"),
                   "job 1 <gpu> & \"a\" 'b'\r\n\x7f\xc2\x85 caf\xc3\xa9"),
            NodeXml("  <description>job 1 &lt;gpu&gt; &amp; &quot;a&quot; &apos;b&apos;&#13;\n"
                    "&#127;&#133; caf\xc3\xa9</description>\n"));
}

TEST_F(SetDescriptionTest, ReplacesAnEmptyElement) {
  EXPECT_EQ(Posted(NodeXml("  <description/>\n"), "slurm job 7"),
            NodeXml("  <description>slurm job 7</description>\n"));
}

TEST_F(SetDescriptionTest, InsertsAnAbsentDescriptionAfterTheName) {
  EXPECT_EQ(Posted(NodeXml(""), "slurm job 7"),
            NodeXml("  <description>slurm job 7</description>\n"));
}

TEST_F(SetDescriptionTest, EmptyDescription) {
  EXPECT_EQ(Posted(NodeXml("  <description>slurm job 7</description>\n"), ""),
            NodeXml("  <description></description>\n"));
}

TEST_F(SetDescriptionTest, MissingNodeIsNotFound) {
  Error e = ErrorOf(client_->SetDescription("slurm-gpu-9", "x"));
  EXPECT_EQ(e.code, Code::kNotFound);
  EXPECT_EQ(e.where, "GET /computer/slurm-gpu-9/config.xml");
  EXPECT_EQ(jenkins_.seen().size(), 1u);  // nothing posted

  // Deleted between the GET and the POST.
  jenkins_.On("GET /computer/slurm-gpu-1/config.xml", ConfigXml(NodeXml("")));
  jenkins_.On("POST /computer/slurm-gpu-1/config.xml", Reply(404));
  e = ErrorOf(client_->SetDescription("slurm-gpu-1", "x"));
  EXPECT_EQ(e.code, Code::kNotFound);
  EXPECT_EQ(e.where, "POST /computer/slurm-gpu-1/config.xml");
}

TEST_F(SetDescriptionTest, MissingPermissionsAreRejectedNamingThem) {
  jenkins_.On("GET /computer/slurm-gpu-1/config.xml",
              Reply(403, {{"X-You-Are-Authenticated-As", kUser},
                          {"X-Required-Permission", "hudson.model.Computer.ExtendedRead"}}));
  Error e = ErrorOf(client_->SetDescription("slurm-gpu-1", "x"));
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_NE(e.message.find("hudson.model.Computer.ExtendedRead"), std::string::npos) << e.message;
  EXPECT_EQ(jenkins_.seen().size(), 1u);

  jenkins_.On("GET /computer/slurm-gpu-1/config.xml", ConfigXml(NodeXml("")));
  jenkins_.On("POST /computer/slurm-gpu-1/config.xml",
              Reply(403, {{"X-You-Are-Authenticated-As", kUser},
                          {"X-Required-Permission", "hudson.model.Computer.Configure"}}));
  e = ErrorOf(client_->SetDescription("slurm-gpu-1", "x"));
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_EQ(e.where, "POST /computer/slurm-gpu-1/config.xml");
  EXPECT_NE(e.message.find("hudson.model.Computer.Configure"), std::string::npos) << e.message;
}

TEST_F(SetDescriptionTest, NodeTypeMismatchIsRejected) {
  jenkins_.On("GET /computer/slurm-gpu-1/config.xml", ConfigXml(NodeXml("")));
  jenkins_.On(
      "POST /computer/slurm-gpu-1/config.xml",
      Answer{.status = 400, .body = "Node types do not match", .content_type = "text/plain"});
  EXPECT_EQ(ErrorOf(client_->SetDescription("slurm-gpu-1", "x")).code, Code::kRejected);
}

TEST_F(SetDescriptionTest, UnexpectedXmlIsNeverPosted) {
  for (const std::string& body : std::vector<std::string>{
           "<hudson.slaves.DumbSlave><name>slurm-gpu-1</name></hudson.slaves.DumbSlave>",
           "<slave/>",
           "<?xml version=\"1.1\"?>",
           "",
           "<slave><name>slurm-gpu-1</name>",
           "<slave><name>slurm-gpu-1</nam></slave>",
           "<slave><description>x</slave>",
           "<slave><label a=\"b></slave>",
           "<!DOCTYPE slave [<!ENTITY x \"y\">]><slave><description>&x;</description></slave>",
       }) {
    jenkins_.On("GET /computer/slurm-gpu-1/config.xml", ConfigXml(body));
    Error e = ErrorOf(client_->SetDescription("slurm-gpu-1", "x"));
    EXPECT_EQ(e.code, Code::kInternal) << body;
    EXPECT_NE(e.message.find("unexpected config.xml"), std::string::npos) << e.message;
  }
  // A proxy's page: may pass.
  jenkins_.On("GET /computer/slurm-gpu-1/config.xml",
              Answer{.body = "<html>login</html>", .content_type = "text/html"});
  EXPECT_EQ(ErrorOf(client_->SetDescription("slurm-gpu-1", "x")).code, Code::kUnavailable);
  for (const Seen& request : jenkins_.seen()) EXPECT_EQ(request.method, "GET");
}

TEST_F(SetDescriptionTest, ValidatesBeforeSending) {
  EXPECT_EQ(ErrorOf(client_->SetDescription("a/b", "x")).code, Code::kInvalidInput);
  Error e = ErrorOf(client_->SetDescription("slurm-gpu-1", std::string("a\x01") + "b"));
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_EQ(e.where, "node description");
  EXPECT_TRUE(jenkins_.seen().empty());
}

TEST_F(SetDescriptionTest, LostAnswerToThePostIsUnavailable) {
  auto options = Options();
  options.total_timeout = 200ms;
  auto client = MakeClient(options);
  jenkins_.On("GET /computer/slurm-gpu-1/config.xml", ConfigXml(NodeXml("")));
  jenkins_.On("POST /computer/slurm-gpu-1/config.xml", Answer{.delay = 600ms});
  Error e = ErrorOf(client->SetDescription("slurm-gpu-1", "x"));
  EXPECT_EQ(e.code, Code::kUnavailable);
  EXPECT_EQ(e.where, "POST /computer/slurm-gpu-1/config.xml");
}

TEST_F(HttpClientTest, NodeNamesAreEncodedAsAPathSegment) {
  jenkins_.On("POST /computer/caf\u00e9 1/doDelete", Reply(302));
  ASSERT_TRUE(client_->DeleteNode("caf\u00e9 1"));
  EXPECT_EQ(Only().target, "/computer/caf%C3%A9%201/doDelete");
}

// --- Label -------------------------------------------------------------------------------

TEST_F(HttpClientTest, LabelEncodesTheExpressionAsAPathSegment) {
  jenkins_.On("GET /label/gpu&&linux/api/json", Json("label.json"));
  auto load = client_->Label("gpu&&linux");
  ASSERT_TRUE(load) << load.error().ToString();
  EXPECT_EQ(load->name, "gpu&&linux");
  EXPECT_EQ(load->busy_executors, 1);
  EXPECT_EQ(load->idle_executors, 0);
  EXPECT_EQ(load->total_executors, 1);
  EXPECT_DOUBLE_EQ(load->queue_length, 0.19);
  Seen seen = Only();
  EXPECT_TRUE(seen.target.starts_with("/label/gpu%26%26linux/api/json?tree=")) << seen.target;
  EXPECT_EQ(seen.query["tree"],
            "name,busyExecutors,idleExecutors,totalExecutors,offline,nodes[nodeName],"
            "loadStatistics[queueLength[sec10[latest]],availableExecutors[sec10[latest]]]");
}

TEST_F(HttpClientTest, LabelWithoutLoadStatistics) {
  jenkins_.On("GET /label/nothing/api/json",
              Answer{.body = R"({"name":"nothing","nodes":[],"busyExecutors":0,"idleExecutors":0,
                                 "totalExecutors":0,"offline":true})"});
  auto load = client_->Label("nothing");
  ASSERT_TRUE(load) << load.error().ToString();
  EXPECT_EQ(load->queue_length, 0);
}

// --- Auth ----------------------------------------------------------------------------------

TEST_F(HttpClientTest, WrongTokenIsAuth) {
  jenkins_.On("GET /api/json", Answer{.body = "{}", .accept_token = kNewToken});
  Error e = ErrorOf(client_->Discover());
  EXPECT_EQ(e.code, Code::kAuth);
  EXPECT_NE(e.message.find(token_file_.string()), std::string::npos) << e.message;
  EXPECT_NE(e.message.find(kUser), std::string::npos) << e.message;
  EXPECT_EQ(jenkins_.seen().size(), 1u);  // the file still holds the same token: no retry
}

TEST_F(HttpClientTest, TokenFileIsReadAgainAfter401) {
  jenkins_.On("GET /api/json", Answer{.body = Testdata("discover.json"),
                                      .headers = {{"X-Jenkins", "2.541.1"}},
                                      .accept_token = kNewToken});
  WriteToken(kNewToken);  // rotated after Create
  auto info = client_->Discover();
  ASSERT_TRUE(info) << info.error().ToString();
  auto seen = jenkins_.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].Header("Authorization"), BasicAuth(kToken));
  EXPECT_EQ(seen[1].Header("Authorization"), BasicAuth(kNewToken));
  // The new token is kept.
  ASSERT_TRUE(client_->Discover());
  EXPECT_EQ(jenkins_.seen().size(), 3u);
}

TEST_F(HttpClientTest, PostIsSentAgainAfter401WithTheNewToken) {
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete",
              Answer{.status = 302, .accept_token = kNewToken});
  WriteToken(kNewToken);
  ASSERT_TRUE(client_->DeleteNode("slurm-gpu-1"));
  EXPECT_EQ(jenkins_.seen().size(), 2u);
}

TEST_F(HttpClientTest, TokenFileGoneAfter401) {
  jenkins_.On("GET /api/json", Answer{.body = "{}", .accept_token = kNewToken});
  fs::remove(token_file_);
  Error e = ErrorOf(client_->Discover());
  EXPECT_EQ(e.code, Code::kAuth);
  EXPECT_NE(e.message.find(token_file_.string()), std::string::npos) << e.message;
}

TEST_F(HttpClientTest, ForbiddenWithoutAPermissionHeader) {
  jenkins_.On("GET /queue/api/json", Reply(403));
  Error e = ErrorOf(client_->Queue());
  EXPECT_EQ(e.code, Code::kRejected);
  EXPECT_EQ(e.where, "GET /queue/api/json");
}

// --- Transport and bodies ------------------------------------------------------------------

TEST_F(HttpClientTest, ServerErrorsAreUnavailable) {
  for (int status : {500, 502, 503, 504}) {
    jenkins_.On("GET /queue/api/json", Reply(status));
    EXPECT_EQ(ErrorOf(client_->Queue()).code, Code::kUnavailable) << status;
  }
}

TEST_F(HttpClientTest, RedirectOfAGetIsAConfigurationError) {
  jenkins_.On("GET /queue/api/json", Reply(302, {{"Location", "https://sso.example/login"}}));
  Error e = ErrorOf(client_->Queue());
  EXPECT_EQ(e.code, Code::kInvalidInput);
  EXPECT_NE(e.message.find("https://sso.example/login"), std::string::npos) << e.message;
  EXPECT_EQ(jenkins_.seen().size(), 1u);
}

TEST_F(HttpClientTest, MalformedBodies) {
  jenkins_.On("GET /queue/api/json", Answer{.body = "<html>proxy error</html>"});
  Error e = ErrorOf(client_->Queue());
  EXPECT_EQ(e.code, Code::kUnavailable);
  EXPECT_EQ(e.where, "GET /queue/api/json");

  jenkins_.On("GET /queue/api/json", Answer{.body = R"({"items":[{"id":"three"}]})"});
  e = ErrorOf(client_->Queue());
  EXPECT_EQ(e.code, Code::kInternal);
  EXPECT_EQ(e.where, "GET /queue/api/json");

  jenkins_.On("GET /computer/api/json", Answer{.body = R"({"computer":{}})"});
  e = ErrorOf(client_->Computers());
  EXPECT_EQ(e.code, Code::kInternal);
  EXPECT_EQ(e.where, "GET /computer/api/json");
}

TEST_F(HttpClientTest, ConnectionRefusedIsUnavailableEvenForAPost) {
  auto options = Options();
  {
    // A port that was just free: bound, then closed without listening.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
    ::close(fd);
    options.base_url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/";
  }
  auto client = MakeClient(options);
  Error e = ErrorOf(client->Queue());
  EXPECT_EQ(e.code, Code::kUnavailable);
  EXPECT_EQ(e.where, "GET /queue/api/json");
  EXPECT_EQ(ErrorOf(client->CreateNode(GpuNode())).code, Code::kUnavailable);
}

TEST_F(HttpClientTest, TimeoutIsUnavailableForReadsAndUnknownOutcomeForWrites) {
  auto options = Options();
  options.total_timeout = 200ms;
  auto client = MakeClient(options);
  Answer slow{.status = 302, .delay = 600ms};
  jenkins_.On("GET /queue/api/json", slow);
  jenkins_.On("POST /scriptText", slow);
  jenkins_.On("POST /computer/doCreateItem", slow);
  jenkins_.On("POST /computer/slurm-gpu-1/changeOfflineCause", slow);
  jenkins_.On("POST /computer/slurm-gpu-1/doDelete", slow);

  EXPECT_EQ(ErrorOf(client->Queue()).code, Code::kUnavailable);
  EXPECT_EQ(ErrorOf(client->ExactLabels()).code, Code::kUnavailable);  // the script only reads
  Error e = ErrorOf(client->CreateNode(GpuNode()));
  EXPECT_EQ(e.code, Code::kUnknownOutcome);
  EXPECT_EQ(e.where, "POST /computer/doCreateItem");
  EXPECT_EQ(ErrorOf(client->Drain("slurm-gpu-1", "x")).code, Code::kUnknownOutcome);
  EXPECT_EQ(ErrorOf(client->DeleteNode("slurm-gpu-1")).code, Code::kUnknownOutcome);
}

TEST_F(HttpClientTest, ConcurrentCallsShareTheClient) {
  jenkins_.On("GET /queue/api/json", Json("queue.json"));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) {
        if (client_->Queue()) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 20);
}

}  // namespace
}  // namespace slurmfleet::jenkins
