// The libcurl options every transfer of ours sets alike, to Jenkins or to slurmrestd: timeouts,
// no signals (transfers run on many threads), and TLS verification, which stays on unless the
// configuration turns it off.
#pragma once

#include <chrono>
#include <string>

namespace slurmfleet {

struct CurlTransferOptions {
  std::chrono::milliseconds connect_timeout;
  std::chrono::milliseconds total_timeout;
  bool verify_tls = true;
  const std::string& ca_file;  // a PEM bundle for a site CA; empty: the system's CAs
};

// `curl` is a CURL* (void*, as CurlHandlePool hands them out); libcurl copies the CA file's path.
void SetTransferOptions(void* curl, const CurlTransferOptions& options);

}  // namespace slurmfleet
