// FaultProxy: an HTTP/1.1 proxy for tests that sits between our client (CurlTransport) and a real
// slurmrestd, and injects faults per request: lost responses, resets, delays, 503s, requests that
// never get an answer, and a server that is down. Test support only; never linked into slurmfleet.
//
// What it speaks: requests framed by Content-Length (a chunked request is answered 501 and its
// connection closed; `Expect: 100-continue` is answered on the upstream's behalf), keep-alive
// client connections, and upstream responses framed by Content-Length, chunked encoding or the
// end of the connection. Each forwarded request goes over a fresh upstream connection that is
// closed after its response, so a stale upstream connection never turns into a silent retry.
// Responses reach the client re-framed with Content-Length, body unchanged.
//
// Beware libcurl's own retry: when a connection it reused ends without a byte of response
// (kDropResponse, kResetBeforeForward, SetUpstreamDown), libcurl resends the request once on a new
// connection, and the proxy sees it twice. Inject such faults on a fresh connection (a new
// CurlTransport) when a test needs exactly one attempt.
//
// Thread safety: every public method may be called from any thread, concurrently with the
// proxy's own threads (one accept thread, one thread per client connection). Owns its sockets
// and threads; Stop() or the destructor closes and joins all of them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"

namespace slurmfleet {

enum class Fault {
  kNone,                // forward the request and return the upstream's response
  kDropResponse,        // forward, read the whole response, then close the client connection
                        // without a byte: the request took effect, the client sees an error
  kResetBeforeForward,  // close the client connection without forwarding
  kDelay,               // wait Rule::delay, then forward normally
  kRespond503,          // answer 503 with a small JSON body; not forwarded
  kBlackhole,           // read the request, never answer, never forward; the connection stays
                        // open until the client gives up (or Stop())
};

// "none", "drop_response", "reset_before_forward", "delay", "respond_503", "blackhole".
std::string_view FaultName(Fault fault);

// Which requests get which fault. Rules are tried in the order they were added; the first one
// that matches, is active, and wins its probability draw decides the fault. A rule that loses
// its draw is skipped and the next one is tried. No rule: kNone.
struct Rule {
  std::string method{};       // "POST"; empty: any method
  std::string path_prefix{};  // matched against the path with its query; empty: any path
  Fault fault = Fault::kNone;
  std::chrono::milliseconds delay{0};  // for kDelay only
  int times = -1;            // -1: forever; N > 0: the next N requests it applies to; 0: inactive
  double probability = 1.0;  // drawn from the proxy's seeded generator when below 1.0
};

// One request the proxy framed completely, in arrival order.
struct RequestRecord {
  std::string method;
  std::string path;            // with its query
  Fault fault = Fault::kNone;  // the fault applied
  int upstream_status = 0;     // what the upstream answered; 0: not forwarded or no answer
  int client_status = 0;       // what the client got; 0: nothing (drop, reset, blackhole)
};

class FaultProxy {
 public:
  // Listens on 127.0.0.1 on an ephemeral port and starts accepting. The upstream is not
  // contacted until the first request (an unreachable upstream is answered 502 per request).
  // kInternal when the listening socket or the accept thread cannot be set up.
  static Result<std::unique_ptr<FaultProxy>> Start(std::string upstream_host, int upstream_port,
                                                   uint64_t seed);
  ~FaultProxy();  // Stop()

  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:PORT"

  void AddRule(Rule rule);
  void ClearRules();

  // While true, every new client connection is closed right after accept, and every open client
  // connection is shut down now: slurmrestd stopped. Nothing is forwarded or counted meanwhile.
  void SetUpstreamDown(bool down);

  // Requests framed completely since the start or the last ResetCounts(). A client that hangs up
  // in the middle of a request is not counted. The 502s for an unreachable upstream are counted.
  int TotalRequests() const;
  // Keyed "METHOD /path" with the query removed: "GET /slurm/v0.0.45/jobs/".
  int Count(const std::string& method, const std::string& path_without_query) const;
  std::map<std::string, int> Counts() const;
  std::vector<RequestRecord> Requests() const;  // a copy
  // Client connections accepted and served (not those refused while the upstream is down).
  int Connections() const;
  void ResetCounts();  // clears the counts, the log and Connections()

  // Closes the listener and every connection, and joins every thread. Idempotent.
  void Stop();

 private:
  struct Connection {
    int fd = -1;        // guarded by mu_; -1 once closed by its own thread
    bool done = false;  // guarded by mu_; its thread has finished and can be joined
    std::thread thread;
  };
  struct Decision {
    Fault fault = Fault::kNone;
    std::chrono::milliseconds delay{0};
    size_t index = 0;  // into log_, valid while log_epoch_ == epoch
    uint64_t epoch = 0;
  };

  FaultProxy(std::string upstream_host, int upstream_port, uint64_t seed, int listen_fd, int port,
             int wake_read_fd, int wake_write_fd);

  void AcceptLoop();
  void Serve(Connection* conn);
  // Picks the fault for one framed request, counts it and appends its record.
  Decision Decide(const std::string& method, const std::string& path);
  // Fills in the record Decide() appended, unless ResetCounts() came in between.
  void Finish(const Decision& d, int upstream_status, int client_status);
  // Waits `d`, or less when Stop() is called.
  void SleepFor(std::chrono::milliseconds d);

  const std::string upstream_host_;
  const int upstream_port_;
  const int listen_fd_;
  const int port_;
  const int wake_read_fd_;  // a pipe: Stop() writes to wake the accept loop
  const int wake_write_fd_;
  std::thread accept_thread_;
  std::once_flag stop_once_;
  std::atomic<bool> stopping_{false};  // also set under mu_, so SleepFor cannot miss it

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;               // notified by Stop(), for SleepFor
  bool upstream_down_ = false;                    // guarded by mu_
  std::list<std::unique_ptr<Connection>> conns_;  // guarded by mu_
  std::vector<Rule> rules_;                       // guarded by mu_
  std::mt19937 rng_;                              // guarded by mu_
  std::vector<RequestRecord> log_;                // guarded by mu_; one entry per counted request
  std::map<std::string, int> counts_;             // guarded by mu_; "METHOD /path" -> requests
  uint64_t log_epoch_ = 0;                        // guarded by mu_; bumped by ResetCounts()
  int connections_ = 0;                           // guarded by mu_
};

}  // namespace slurmfleet
