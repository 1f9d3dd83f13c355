// ApiServer: the daemon's REST API (docs/api.md), plain HTTP on cpp-httplib. TLS is not spoken
// here: put a reverse proxy that terminates TLS in front, or listen on localhost only.
//
// Handlers only read the store and call the Backend (which hands commands to the engine thread);
// they never touch engine state. Every response body is JSON; an error is
// {"error": {"code": "...", "message": "...", "where": "..."}}. No body ever holds a token or a
// submission's request_json.
//
// Threading: Start() returns with the listener running on its own thread, serving requests on a
// pool of `worker_threads` threads, so the Backend, Store, ApiTokens, Clock and access logger are
// called concurrently from those threads. They must all outlive the server (until Stop() returns
// or the ApiServer is destroyed). Stop() and the destructor may be called from any thread other
// than a worker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/error.h"
#include "server/api_tokens.h"
#include "server/backend.h"
#include "store/store.h"

namespace slurmfleet::server {

// One line of the access log: never the Authorization header, never the query string.
struct AccessLogEntry {
  std::string method;       // "GET"
  std::string path;         // "/api/v1/submissions/run-7": no query; control characters as '?'
  int status = 0;           // the HTTP status sent
  int64_t duration_ms = 0;  // from routing to response, measured with Clock::Monotonic()
  std::string principal;    // the token's name; empty when no valid token was presented
  std::string detail;       // for 5xx: what went wrong inside, for the operator; else empty
};

// "GET /api/v1/clouds 200 3ms principal=jenkins" ("principal=-" when there is none), then
// ` detail="..."` when there is a detail.
std::string FormatAccessLog(const AccessLogEntry& entry);

struct ServerOptions {
  std::string listen_host = "127.0.0.1";  // "0.0.0.0" for every interface
  int listen_port = 8470;                 // 0: an ephemeral port, see ApiServer::port()
  size_t max_body_bytes = 1 << 20;        // larger request bodies get 413
  size_t worker_threads = 8;
  // Called once per request from a worker thread, after the response is written. May be empty.
  std::function<void(const AccessLogEntry&)> access_log;
};

class ApiServer {
 public:
  // Binds, starts listening and returns once the listener accepts connections. kInvalidInput
  // naming host:port when it cannot bind (in use, bad address, no permission) or an option is out
  // of range.
  static Result<std::unique_ptr<ApiServer>> Start(ServerOptions options, Backend& backend,
                                                  store::Store& store, ApiTokens& tokens,
                                                  const Clock& clock);

  // Stops accepting, finishes requests in flight and joins the threads. Idempotent.
  ~ApiServer();
  void Stop();

  // The port actually bound (the ephemeral one when listen_port was 0).
  int port() const;

  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

 private:
  class Impl;
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slurmfleet::server
