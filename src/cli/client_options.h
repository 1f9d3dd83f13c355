// The options every command that talks to slurmrestd shares (URL, token source, API version, TLS,
// timeouts), and the composition of transport + token source + client from them. Flags win over
// the environment: SLURMFLEET_SLURM_URL (or SLURMRESTD_URL), SLURMFLEET_API_VERSION,
// SLURMFLEET_TOKEN_FILE, SLURMFLEET_JWT_KEY + SLURMFLEET_USER, SLURM_JWT.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "auth/token_source.h"
#include "base/clock.h"
#include "slurm/curl_transport.h"
#include "slurm/rest_client.h"

namespace slurmfleet::cli {

struct ClientOptions {
  std::string url;
  std::string api_version;
  std::string token_file;
  std::string jwt_key;
  std::string user;
  int token_lifespan_s = 3600;
  std::string ca_file;
  bool insecure = false;
  double connect_timeout_s = 5;
  double timeout_s = 30;
  bool json = false;
};

// Adds the shared flags to `command`.
void AddClientFlags(CLI::App& command, ClientOptions& options);

// A number of seconds from 0.001 to `max`: CLI::Range lets NaN through, and a negative, zero or
// huge timeout means waiting for ever or converting out of range.
CLI::Validator Seconds(double max);

// What a command needs to talk to Slurm; owns everything the client refers to.
struct Connection {
  SystemClock clock;
  std::unique_ptr<slurm::Transport> transport;
  std::unique_ptr<auth::TokenSource> tokens;
  std::unique_ptr<slurm::RestClient> client;
};

// kInvalidInput for missing or contradictory options (naming the flag and the fix); the errors of
// RestClient::Connect otherwise.
Result<std::unique_ptr<Connection>> Connect(const ClientOptions& options);

// Prints an error for a human (stderr) or as {"error": {...}} (stdout with --json) and returns the
// exit code for it.
int ReportError(const Error& error, bool json);

}  // namespace slurmfleet::cli
