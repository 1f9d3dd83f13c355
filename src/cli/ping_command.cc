// `slurmfleet ping`: can we reach slurmrestd, which API version do we speak, does our token work.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "base/url.h"
#include "cli/client_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace slurmfleet::cli {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string Iso(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(t));
}

int RunPing(const ClientOptions& options) {
  auto conn = Connect(options);
  if (!conn) return ReportError(conn.error(), options.json);
  Connection& c = **conn;
  Result<slurm::PingReport> report = c.client->Ping();
  if (!report) return ReportError(report.error(), options.json);
  Result<auth::Token> token = c.tokens->Get();
  if (!token) return ReportError(token.error(), options.json);

  const std::string pinned = options.api_version.empty() ? "auto" : options.api_version;
  std::optional<int64_t> expires_in;
  if (token->expires_at) {
    expires_in =
        std::chrono::duration_cast<std::chrono::seconds>(*token->expires_at - c.clock.Now())
            .count();
  }
  if (options.json) {
    nlohmann::json j = {
        {"reachable", true},
        {"url", WithoutUserinfo(options.url)},
        {"api_version", report->api_version},
        {"api_version_mode", pinned == "auto" ? "auto" : "pinned"},
        {"offered_versions", report->offered_versions},
        {"slurm_release", report->slurm_release},
        {"cluster", report->cluster},
        {"controller", report->controller},
        {"responding", report->responding},
        {"latency_us", report->latency_us},
        {"token", {{"source", c.tokens->Describe()}, {"user", token->user}}},
    };
    if (token->expires_at) {
      j["token"]["expires_at"] = Iso(*token->expires_at);
      j["token"]["expires_in_s"] = *expires_in;
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("slurmrestd   reachable\n");
  std::cout << fmt::format(
      "API version  {} ({}{})\n", report->api_version, pinned,
      report->offered_versions.empty() ? "" : "; offered " + Join(report->offered_versions));
  std::cout << fmt::format("Slurm        {}, cluster {}, controller {} responding ({} us)\n",
                           report->slurm_release, report->cluster, report->controller,
                           report->latency_us);
  std::cout << fmt::format("Token        {}, user {}", c.tokens->Describe(),
                           token->user.empty() ? "(unknown)" : token->user);
  if (token->expires_at) {
    std::cout << fmt::format(", expires {} (in {}m)", Iso(*token->expires_at), *expires_in / 60);
  }
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

void AddPingCommand(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<ClientOptions>();
  CLI::App* cmd = app.add_subcommand("ping", "check slurmrestd, the API version and the token");
  AddClientFlags(*cmd, *options);
  cmd->callback([options, &result] { result.exit_code = RunPing(*options); });
}

}  // namespace slurmfleet::cli
