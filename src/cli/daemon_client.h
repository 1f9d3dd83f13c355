// DaemonClient: the CLI's way to a running `slurmfleet serve`, through its REST API (docs/api.md).
// Flags win over the environment: --daemon (SLURMFLEET_DAEMON_URL, default
// http://127.0.0.1:8470), --api-token-file (SLURMFLEET_API_TOKEN_FILE). The token never appears
// in an error.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace slurmfleet::cli {

struct DaemonOptions {
  std::string url = "http://127.0.0.1:8470";
  std::string token_file;
  bool json = false;
};

void AddDaemonFlags(CLI::App& command, DaemonOptions& options);

// GET `path` (e.g. "/api/v1/agents?all=true") and parse the JSON answer. kUnavailable when the
// daemon does not answer; kAuth for 401/403; the API's own error (code, message, where) otherwise.
Result<nlohmann::json> DaemonGet(const DaemonOptions& options, const std::string& path);

}  // namespace slurmfleet::cli
