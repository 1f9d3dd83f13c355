// Transport sends one HTTP request to slurmrestd and returns its response. It never retries:
// retry policy belongs to the caller, which knows whether the request is idempotent.
// Implementations are safe to call from any thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::slurm {

struct HttpRequest {
  std::string method;  // "GET", "POST", "DELETE"
  std::string path;    // "/slurm/v0.0.45/jobs/?update_time=1"; appended to the base URL
  std::string body;    // JSON, for POST and DELETE with a body
  Secret token;        // sent as X-SLURM-USER-TOKEN; empty: no auth header
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string content_type;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // kUnavailable: the request certainly did not reach the server (connection refused, name not
  // resolved). kUnknownOutcome: it may have reached it (timeout, reset, empty reply after
  // sending). Any HTTP status, 5xx included, is a response, not an error.
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
};

}  // namespace slurmfleet::slurm
