// ConnectionsAhead: connections to slurmrestd opened before the submit POSTs that will carry them,
// so that a POST does not wait for its connect (nor, on a small machine, for the CPU that
// slurmrestd takes to accept it) between being handed over and its first byte leaving.
// A POST never reuses a connection that carried a request (libcurl resends a request silently
// when such a connection turns out dead, which for a POST could make a second job); a connection
// opened ahead carried none, so a POST may take it as it would take a fresh one.
// A connection is handed out only if it is connected, the server has neither closed it nor
// written on it, and it is younger than `max_idle` (servers and proxies close idle connections).
// That check and the POST's first write are microseconds apart; a server that closes the
// connection in between makes the POST fail as one whose connection broke (an unknown outcome,
// looked for by its tag before it is ever sent again), never makes it go twice.
// Thread-safe.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <vector>

#include "base/clock.h"

namespace slurmfleet::slurm {

// Where a socket connects: what libcurl resolved a URL to (struct curl_sockaddr's fields).
struct PeerAddress {
  int family = AF_UNSPEC;
  int socktype = 0;
  int protocol = 0;
  socklen_t length = 0;  // of the bytes used in `bytes`
  sockaddr_storage bytes{};

  // `length` bytes from `address`; false when they do not fit.
  static bool From(int family, int socktype, int protocol, const sockaddr* address,
                   socklen_t length, PeerAddress& out);
  bool operator==(const PeerAddress& other) const;
  // Whether this is the IP address (numeric, as libcurl's CURLINFO_PRIMARY_IP) and port.
  bool Is(const char* ip, long port) const;
};

class ConnectionsAhead {
 public:
  // What the taker does with a socket handed out. libcurl before 8.0 ignores
  // CURL_SOCKOPT_ALREADY_CONNECTED (curl issue 10626) and calls connect() on it again. Linux lets
  // that second call finish a TCP connect that was left in progress (it returns 0), but refuses
  // (EISCONN) one whose connect completed at once, as a local socket's always does: for such a
  // taker only connections left in progress are held.
  enum class Taker { kUsesAsIs, kConnectsAgain };

  // Holds up to `target` connections (0: none, and every call does nothing).
  ConnectionsAhead(size_t target, std::chrono::milliseconds max_idle, const Clock& clock,
                   Taker taker = Taker::kUsesAsIs);
  ~ConnectionsAhead();  // closes what it holds
  ConnectionsAhead(const ConnectionsAhead&) = delete;
  ConnectionsAhead& operator=(const ConnectionsAhead&) = delete;

  // The address a request connected to and was answered on. Connections are opened to the last
  // one learned; those held to another are closed.
  void Learn(const PeerAddress& address);
  // Closes the held connections older than max_idle, then starts connecting new ones (without
  // waiting for them) until `target` are held. Nothing before an address was learned; stops at
  // the first connect that fails at once (the server is down: the next Fill tries again), and,
  // for a taker that connects again, at the first that completes at once.
  void Fill();
  // A held connection to `address` fit to carry a request now (see above), the newest first;
  // -1 when none is. Those found unfit are closed. The caller owns the descriptor.
  int Take(const PeerAddress& address);
  size_t held() const;
  size_t target() const { return target_; }

 private:
  struct Held {
    int fd;
    std::chrono::steady_clock::time_point opened;
  };
  void CloseHeld();  // mu_ held

  const size_t target_;
  const std::chrono::milliseconds max_idle_;
  const Clock& clock_;
  const Taker taker_;
  mutable std::mutex mu_;
  bool learned_ = false;    // guarded by mu_
  PeerAddress address_;     // guarded by mu_
  std::vector<Held> held_;  // guarded by mu_; oldest first
};

}  // namespace slurmfleet::slurm
