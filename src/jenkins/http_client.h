// HttpClient: Client on libcurl, for one Jenkins controller, authenticated with HTTP Basic as a
// user and an API token (so no CSRF crumb is needed; research/jenkins/CONTRACT.md §1).
//
// Requests follow the contract to the letter: every api/json call carries a percent-encoded
// `tree=`, the queue is asked for with Accept-Language: en (its `why` texts are localised), and
// redirects are never followed: doCreateItem, changeOfflineCause and doDelete answer 302 on
// success, and a redirected GET (an SSO login page, http -> https) is kInvalidInput naming the
// Location. Errors are mapped as client.h says; a 400's X-Error text is kept to its ASCII (Jetty
// may mangle its quotes), and a body that is not JSON is kUnavailable (a proxy's page) while JSON
// of an unexpected shape is kInternal. Nothing is retried except after a 401, see below.
//
// The token is read from `api_token_file` by Create() and read again when Jenkins answers 401: if
// the file now holds a different token, the request is sent once more with it. The token and
// every agent secret are kept in a Secret and never appear in an error.
//
// Thread safety: safe to call from any thread. A pool of curl handles lets concurrent calls run in
// parallel, each keeping its connections alive; a POST that must not be sent twice (creating,
// draining or deleting a node) opens a connection of its own, so libcurl never silently sends it
// again.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/curl_handle_pool.h"
#include "base/error.h"
#include "base/secret.h"
#include "jenkins/client.h"

namespace slurmfleet::jenkins {

struct HttpClientOptions {
  // Jenkins' URL as this daemon reaches it: "http://jenkins:8080/" or
  // "https://ci.example/jenkins/". A missing trailing '/' is added. No user or password in it: use
  // `user` and `api_token_file`.
  std::string base_url;
  // The Jenkins user the API token belongs to.
  std::string user;
  // A file holding the user's API token (surrounding whitespace is ignored).
  std::filesystem::path api_token_file;
  std::chrono::milliseconds connect_timeout{5000};
  // The whole request, answer included.
  std::chrono::milliseconds total_timeout{30000};
  // TLS peer and host verification; off only for a test controller.
  bool verify_tls = true;
  // PEM bundle of a site CA; empty: the system's.
  std::string ca_file;
};

class HttpClient final : public Client {
 public:
  // kInvalidInput naming the option when base_url is not http(s)://host[:port][/prefix/] or holds
  // credentials, when user is empty, when a timeout is not positive, or when the token file is
  // missing, unreadable or empty (the message names the file and the fix). Sends no request.
  static Result<std::unique_ptr<HttpClient>> Create(HttpClientOptions options);
  ~HttpClient() override;

  Result<ControllerInfo> Discover() override;
  Result<std::vector<QueueItem>> Queue() override;
  // The script only reads, so a lost answer is kUnavailable, never kUnknownOutcome. kInternal
  // when what it printed is not a JSON list (a failing script still answers 200).
  Result<std::map<int64_t, std::string>> ExactLabels() override;
  Result<std::vector<Computer>> Computers() override;
  Result<Computer> GetComputer(const std::string& name) override;
  // kInvalidInput, before sending anything, when the name breaks Jenkins' rules (CONTRACT.md
  // §3.4), remote_fs is empty or num_executors < 1.
  Status CreateNode(const NodeSpec& node) override;
  // kInternal "unexpected JNLP body" when the first <argument> is not 64 lowercase hex digits
  // (the body itself is never quoted: it holds the secret).
  Result<Secret> AgentSecret(const std::string& name) override;
  Status Drain(const std::string& name, const std::string& message) override;
  // kInvalidInput, before sending anything, when the description holds a control character other
  // than tab, newline and carriage return (XML cannot carry it). kUnavailable when the GET answers
  // with a body that is not XML (a proxy's page); kInternal when the XML is malformed or its root
  // is not <slave> (then nothing is posted). A lost answer to the POST is kUnavailable: posting
  // the same document again does no harm.
  Status SetDescription(const std::string& name, const std::string& description) override;
  Status DeleteNode(const std::string& name) override;
  Result<LabelLoad> Label(const std::string& expression) override;
  Result<ItemFate> Fate(int64_t queue_id) override;
  Result<RunInfo> Run(const std::string& run_url) override;

  // Jenkins' node name rules (Jenkins.checkGoodName; CONTRACT.md §3.4). kInvalidInput naming the
  // offending character. Node-name arguments of every call are checked with it.
  static Status CheckNodeName(const std::string& name);

 private:
  struct Request;
  struct Response;

  // A POST of doCreateItem, changeOfflineCause or doDelete is done when Jenkins answers 200, or
  // redirects to one of its /computer/ pages (CONTRACT.md 3.1, 7.1, 7.2; compared by path, as
  // Jenkins writes its configured root URL). A redirect elsewhere (a proxy's login page) is not.
  bool Done(const Response& response) const;

  HttpClient(HttpClientOptions options, Secret token);

  // Sends the request with the current token; after a 401, re-reads the token file and, when it
  // changed, sends once more. kUnavailable / kUnknownOutcome on transport errors only: any HTTP
  // status is a Response.
  Result<Response> Send(const Request& request);
  Result<Response> SendOnce(const Request& request, const Secret& token);
  // Maps a non-success status to the Error client.h documents.
  Error StatusError(const Request& request, const Response& response) const;
  // Sends a changeOfflineCause or doDelete POST: done (see Done), or the status's Error.
  Status SendAction(const Request& request);
  // Sends a GET and decodes its JSON body with `decode`, mapping errors.
  template <typename T, typename Decode>
  Result<T> GetJson(const std::string& path, const std::string& tree, Decode decode);

  const HttpClientOptions options_;
  std::mutex mu_;
  Secret token_;  // guarded by mu_
  CurlHandlePool handles_;
};

}  // namespace slurmfleet::jenkins
