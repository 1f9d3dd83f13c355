#include "cli/daemon_client.h"

#include <httplib.h>

#include <fstream>
#include <sstream>

#include "base/secret.h"

namespace slurmfleet::cli {
namespace {

Result<Secret> ReadToken(const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    return Fail(Code::kInvalidInput,
                "cannot read the API token file; check the path and its permissions",
                "--api-token-file " + file);
  }
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) {
    return Fail(Code::kInvalidInput, "the API token file is empty", "--api-token-file " + file);
  }
  return Secret(token);
}

}  // namespace

void AddDaemonFlags(CLI::App& command, DaemonOptions& options) {
  command.add_option("--daemon", options.url, "the daemon's REST API")
      ->envname("SLURMFLEET_DAEMON_URL")
      ->capture_default_str();
  command
      .add_option("--api-token-file", options.token_file,
                  "a file holding a daemon API token (read scope suffices)")
      ->envname("SLURMFLEET_API_TOKEN_FILE");
  command.add_flag("--json", options.json, "print JSON");
}

Result<nlohmann::json> DaemonGet(const DaemonOptions& options, const std::string& path) {
  const std::string where = "GET " + options.url + path;
  if (options.token_file.empty()) {
    return Fail(Code::kInvalidInput,
                "no API token: pass --api-token-file or set SLURMFLEET_API_TOKEN_FILE", where);
  }
  Result<Secret> token = ReadToken(options.token_file);
  if (!token) return std::unexpected(token.error());
  httplib::Client client(options.url);
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  httplib::Headers headers = {{"Authorization", "Bearer " + token->Reveal()}};
  httplib::Result res = client.Get(path, headers);
  if (!res) {
    return Fail(Code::kUnavailable,
                "the daemon does not answer (" + httplib::to_string(res.error()) +
                    "); is `slurmfleet serve` running, and is --daemon right?",
                where);
  }
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status / 100 == 2 && !body.is_discarded()) return body;
  std::string message = "HTTP " + std::to_string(res->status);
  std::string at = where;
  if (!body.is_discarded() && body.contains("error")) {
    message = body["error"].value("message", message);
    if (std::string w = body["error"].value("where", ""); !w.empty()) at += " (" + w + ")";
  }
  Code code = Code::kRejected;
  if (res->status == 401 || res->status == 403) code = Code::kAuth;
  if (res->status == 404) code = Code::kNotFound;
  if (res->status == 503) code = Code::kUnavailable;
  return Fail(code, message, at);
}

}  // namespace slurmfleet::cli
