// Transport sends one HTTP request to slurmrestd and returns its response. It never retries:
// retry policy belongs to the caller, which knows whether the request is idempotent.
// Implementations are safe to call from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/run_concurrently.h"
#include "base/secret.h"

namespace slurmfleet::slurm {

// Takes a successful (2xx) answer's body piece by piece as it arrives, for answers too big to
// hold whole (a full job list is about 8 KB per job in slurmctld).
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  virtual void Write(std::string_view bytes) = 0;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", "DELETE"
  std::string path;    // "/slurm/v0.0.45/jobs/?update_time=1"; appended to the base URL
  std::string body;    // JSON, for POST and DELETE with a body
  Secret token;        // sent as X-SLURM-USER-TOKEN; empty: no auth header
  // Optional: a 2xx body goes here instead of HttpResponse::body. A transport may ignore it and
  // return the body as usual; the caller handles both.
  BodyStream* stream = nullptr;
};

struct HttpResponse {
  long status = 0;
  std::string body;  // empty when it went to the request's stream
  std::string content_type;
  // When the request began to leave: connected, its first byte about to be written. Unset (the
  // epoch) where a transport cannot tell.
  std::chrono::steady_clock::time_point sent_at{};
};

class Transport {
 public:
  virtual ~Transport() = default;
  // kUnavailable: the request certainly did not reach the server (connection refused, name not
  // resolved). kUnknownOutcome: it may have reached it (timeout, reset, empty reply after
  // sending). Any HTTP status, 5xx included, is a response, not an error.
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
  // Sends every request, up to `at_once` in flight together, and returns their results in the
  // same order, each meaning what Send's would. A burst of requests needs no thread per request.
  virtual std::vector<Result<HttpResponse>> SendAll(const std::vector<HttpRequest>& requests,
                                                    size_t at_once) = 0;
  // SendAll for a caller that releases requests while they are being sent and wants each answer
  // as soon as it comes: next(i, request) fills in the i-th request once it may leave (kNow;
  // kLater: asked again a millisecond later; kNever: neither it nor any after it is sent), up to
  // `at_once` in flight, and done(i, result) is called, one call at a time, as each ends, with
  // what Send would return. Returns when every request that left has ended. This default sends
  // from `at_once` threads.
  virtual void SendReleased(size_t count, size_t at_once,
                            const std::function<Release(size_t, HttpRequest&)>& next,
                            const std::function<void(size_t, Result<HttpResponse>)>& done) {
    std::mutex mu;
    std::vector<HttpRequest> requests(count);
    RunReleased(
        count, at_once, [&](size_t i) { return next(i, requests[i]); },
        [&](size_t i) {
          Result<HttpResponse> answer = Send(requests[i]);
          std::lock_guard lock(mu);
          done(i, std::move(answer));
        });
  }
};

}  // namespace slurmfleet::slurm
