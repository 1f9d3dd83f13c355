#include "cli/client_options.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "auth/env_token_source.h"
#include "auth/file_token_source.h"
#include "auth/minting_token_source.h"
#include "cli/exit_codes.h"

namespace slurmfleet::cli {
namespace {

std::string FromEnv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string FirstSet(std::initializer_list<std::string> values) {
  for (const std::string& v : values) {
    if (!v.empty()) return v;
  }
  return {};
}

}  // namespace

void AddClientFlags(CLI::App& command, ClientOptions& o) {
  command.add_option("--url", o.url,
                     "slurmrestd base URL (env SLURMFLEET_SLURM_URL or SLURMRESTD_URL)");
  command.add_option("--api-version", o.api_version,
                     "auto (newest the server answers) or one of " + slurm::SupportedVersions() +
                         " (env SLURMFLEET_API_VERSION; default auto)");
  command.add_option("--token-file", o.token_file,
                     "file holding a JWT, re-read when it changes (env SLURMFLEET_TOKEN_FILE)");
  command.add_option("--jwt-key", o.jwt_key,
                     "Slurm's HS256 jwt_key file: mint tokens for --user (env SLURMFLEET_JWT_KEY)");
  command.add_option("--user", o.user,
                     "user to mint tokens for, with --jwt-key (env SLURMFLEET_USER)");
  command
      .add_option("--token-lifespan", o.token_lifespan_s, "lifespan of minted tokens in seconds")
      ->default_val(3600)
      ->check(CLI::Range(60, 86400 * 30));
  command.add_option("--ca-file", o.ca_file, "PEM bundle to verify slurmrestd's TLS certificate");
  command.add_flag("--insecure", o.insecure, "do not verify slurmrestd's TLS certificate");
  command.add_option("--connect-timeout", o.connect_timeout_s, "connect timeout in seconds")
      ->default_val(5)
      ->check(Seconds(3600));
  command.add_option("--timeout", o.timeout_s, "timeout of one request in seconds")
      ->default_val(30)
      ->check(Seconds(86400));
  command.add_flag("--json", o.json, "machine-readable output");
}

CLI::Validator Seconds(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        double value = 0;
        const std::string range = fmt::format("a number of seconds from 0.001 to {}", max);
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not " + range;
        if (!std::isfinite(value) || value < 0.001 || value > max) {
          return "'" + text + "' is out of range: give " + range;
        }
        return {};
      },
      "SECONDS");
}

Result<std::unique_ptr<Connection>> Connect(const ClientOptions& o) {
  auto c = std::make_unique<Connection>();
  slurm::TransportOptions t;
  t.base_url = FirstSet({o.url, FromEnv("SLURMFLEET_SLURM_URL"), FromEnv("SLURMRESTD_URL")});
  if (t.base_url.empty()) {
    return Fail(Code::kInvalidInput,
                "no slurmrestd URL; pass --url http://HOST:6820 or set SLURMFLEET_SLURM_URL",
                "--url");
  }
  t.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.connect_timeout_s * 1000));
  t.total_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  t.verify_tls = !o.insecure;
  t.ca_file = o.ca_file;
  auto transport = slurm::CurlTransport::Create(t);
  if (!transport) return std::unexpected(transport.error());
  c->transport = std::move(*transport);

  std::string key = FirstSet({o.jwt_key, FromEnv("SLURMFLEET_JWT_KEY")});
  std::string token_file = FirstSet({o.token_file, FromEnv("SLURMFLEET_TOKEN_FILE")});
  if (!key.empty() && !token_file.empty()) {
    return Fail(Code::kInvalidInput, "give either --jwt-key or --token-file, not both",
                "--jwt-key");
  }
  if (!key.empty()) {
    std::string user = FirstSet({o.user, FromEnv("SLURMFLEET_USER")});
    if (user.empty()) {
      return Fail(Code::kInvalidInput, "--jwt-key needs --user: the user to mint tokens for",
                  "--user");
    }
    c->tokens = std::make_unique<auth::MintingTokenSource>(
        key, user, c->clock, std::chrono::seconds(o.token_lifespan_s));
  } else if (!token_file.empty()) {
    c->tokens = std::make_unique<auth::FileTokenSource>(
        token_file, c->clock, [](std::string_view m) { std::cerr << "warning: " << m << "\n"; });
  } else if (!FromEnv("SLURM_JWT").empty()) {
    c->tokens = std::make_unique<auth::EnvTokenSource>(
        "SLURM_JWT", auth::EnvTokenSource::ProcessEnvironment(), c->clock);
  } else {
    return Fail(Code::kInvalidInput,
                "no token: pass --token-file FILE, or --jwt-key KEYFILE with --user NAME, or "
                "export SLURM_JWT",
                "--token-file");
  }

  slurm::RestClientOptions ro;
  ro.api_version = FirstSet({o.api_version, FromEnv("SLURMFLEET_API_VERSION"), "auto"});
  auto client = slurm::RestClient::Connect(*c->transport, *c->tokens, ro);
  if (!client) return std::unexpected(client.error());
  c->client = std::move(*client);
  return c;
}

int ReportError(const Error& error, bool json) {
  if (json) {
    nlohmann::json j = {{"error",
                         {{"code", std::string(CodeName(error.code))},
                          {"message", error.message},
                          {"where", error.where}}}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cerr << "error: " << error.ToString() << "\n";
  }
  return ExitCodeFor(error);
}

}  // namespace slurmfleet::cli
