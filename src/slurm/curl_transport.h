// CurlTransport: Transport on libcurl. Keeps a pool of easy handles so that concurrent callers
// each get their own handle and every handle keeps its connections alive (connection reuse).
// Thread-safe. TLS peer and host verification are on unless `verify_tls` is false.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "base/clock.h"
#include "base/curl_handle_pool.h"
#include "slurm/connections_ahead.h"
#include "slurm/transport.h"

namespace slurmfleet::slurm {

struct TransportOptions {
  // "http://127.0.0.1:6820" (no trailing slash needed), or slurmrestd's own form for a local
  // socket, "unix:/run/slurmrestd/slurmrestd.socket"
  std::string base_url;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{30000};
  bool verify_tls = true;
  std::string ca_file;  // PEM bundle for a site CA; empty: the system's
  // How many connections to hold open ahead for POSTs (slurm/connections_ahead.h), so that a
  // submit does not wait for its connect; 0: none. They are opened after requests end, once the
  // server's address is known. None on a local socket with libcurl before 8.0 (Debian 12's),
  // which would connect it again (ConnectionsAhead::Taker).
  size_t connections_ahead = 0;
};

class CurlTransport final : public Transport {
 public:
  // kInvalidInput when the base URL is neither http(s)://host[:port][/prefix] nor unix:/path.
  static Result<std::unique_ptr<CurlTransport>> Create(TransportOptions options);
  ~CurlTransport() override;

  Result<HttpResponse> Send(const HttpRequest& request) override;
  // One thread drives them all through libcurl's multi interface.
  std::vector<Result<HttpResponse>> SendAll(const std::vector<HttpRequest>& requests,
                                            size_t at_once) override;
  void SendReleased(size_t count, size_t at_once,
                    const std::function<Release(size_t, HttpRequest&)>& next,
                    const std::function<void(size_t, Result<HttpResponse>)>& done) override;

 private:
  using Steady = std::chrono::steady_clock;
  struct Transfer;

  explicit CurlTransport(TransportOptions options);
  // Takes a handle and sets it up for `request`; false when libcurl has no handle to give.
  bool Prepare(const HttpRequest& request, Transfer& t);
  // The result of a finished transfer (`code` is its CURLcode); gives the handle back.
  Result<HttpResponse> Finish(Transfer& t, int code);

  TransportOptions options_;
  std::string url_base_;     // what request paths are appended to
  std::string socket_path_;  // the local socket, for a unix: base URL; else empty
  CurlHandlePool handles_;
  SystemClock clock_;
  ConnectionsAhead ahead_;
};

}  // namespace slurmfleet::slurm
