#include "cli/daemon_client.h"

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/secret.h"
#include "base/url.h"

namespace slurmfleet::cli {
namespace {

Result<Secret> ReadToken(const std::string& file) {
  // an ifstream opens a directory and then reads nothing from it, which would say "empty"
  if (std::error_code ec; std::filesystem::is_directory(file, ec)) {
    return Fail(Code::kInvalidInput,
                "is a directory; give the path of the file that holds the API token",
                "--api-token-file " + file);
  }
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
  if (std::optional<UrlProblem> problem = CheckBaseUrl(options.url, "http://127.0.0.1:8470")) {
    return Fail(Code::kInvalidInput, problem->message + "; " + problem->fix, "--daemon");
  }
  const std::string where = "GET " + WithoutUserinfo(options.url) + path;
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
  if (res->status / 100 == 2) {
    if (body.is_object()) return body;
    return Fail(Code::kInternal,
                "the answer is not a JSON object; is --daemon a slurmfleet daemon of this version?",
                where);
  }
  std::string message = "HTTP " + std::to_string(res->status);
  std::string at = where;
  const auto text = [](const nlohmann::json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    if (std::string m = text(body["error"], "message"); !m.empty()) message = m;
    if (std::string w = text(body["error"], "where"); !w.empty()) at += " (" + w + ")";
  }
  Code code = Code::kRejected;
  if (res->status == 401 || res->status == 403) code = Code::kAuth;
  if (res->status == 404) code = Code::kNotFound;
  if (res->status == 503) code = Code::kUnavailable;
  return Fail(code, message, at);
}

}  // namespace slurmfleet::cli
