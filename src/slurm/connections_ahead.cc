#include "slurm/connections_ahead.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace slurmfleet::slurm {
namespace {

enum class Readiness { kFit, kConnecting, kUnfit };

Readiness Check(int fd) {
  pollfd p{fd, POLLIN | POLLOUT | POLLRDHUP, 0};
  const int ready = ::poll(&p, 1, 0);
  if (ready == 0) return Readiness::kConnecting;  // not writable yet: the handshake is under way
  if (ready < 0) return Readiness::kUnfit;
  // readable means the server closed it or wrote on it: either way it is not a fresh connection
  if ((p.revents & (POLLIN | POLLERR | POLLHUP | POLLRDHUP | POLLNVAL)) != 0) {
    return Readiness::kUnfit;
  }
  if ((p.revents & POLLOUT) == 0) return Readiness::kConnecting;
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    return Readiness::kUnfit;
  }
  return Readiness::kFit;
}

// A socket connecting to `address` without waiting; -1 when the connect failed at once, or
// completed at once and `in_progress_only`.
int StartConnect(const PeerAddress& address, bool in_progress_only) {
  const int fd =
      ::socket(address.family, address.socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address.protocol);
  if (fd < 0) return -1;
  const bool at_once =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address.bytes), address.length) == 0;
  if ((at_once && !in_progress_only) || (!at_once && errno == EINPROGRESS)) return fd;
  ::close(fd);
  return -1;
}

}  // namespace

bool PeerAddress::From(int family, int socktype, int protocol, const sockaddr* address,
                       socklen_t length, PeerAddress& out) {
  if (address == nullptr || length > sizeof out.bytes) return false;
  out = PeerAddress{};
  out.family = family;
  out.socktype = socktype;
  out.protocol = protocol;
  out.length = length;
  std::memcpy(&out.bytes, address, length);
  return true;
}

bool PeerAddress::operator==(const PeerAddress& other) const {
  return family == other.family && socktype == other.socktype && protocol == other.protocol &&
         length == other.length && std::memcmp(&bytes, &other.bytes, length) == 0;
}

bool PeerAddress::Is(const char* ip, long port) const {
  if (ip == nullptr) return false;
  char text[INET6_ADDRSTRLEN] = {};
  long own_port = -1;
  if (family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&bytes);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    own_port = ntohs(a->sin_port);
  } else if (family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&bytes);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    own_port = ntohs(a->sin6_port);
  } else {
    return false;
  }
  return own_port == port && std::strcmp(text, ip) == 0;
}

ConnectionsAhead::ConnectionsAhead(size_t target, std::chrono::milliseconds max_idle,
                                   const Clock& clock, Taker taker)
    : target_(target), max_idle_(max_idle), clock_(clock), taker_(taker) {}

ConnectionsAhead::~ConnectionsAhead() {
  std::lock_guard lock(mu_);
  CloseHeld();
}

void ConnectionsAhead::CloseHeld() {
  for (const Held& h : held_) ::close(h.fd);
  held_.clear();
}

void ConnectionsAhead::Learn(const PeerAddress& address) {
  if (target_ == 0) return;
  std::lock_guard lock(mu_);
  if (learned_ && address_ == address) return;
  CloseHeld();
  address_ = address;
  learned_ = true;
}

void ConnectionsAhead::Fill() {
  if (target_ == 0) return;
  PeerAddress address;
  size_t wanted = 0;
  {
    std::lock_guard lock(mu_);
    if (!learned_) return;
    const auto now = clock_.Monotonic();
    std::erase_if(held_, [&](const Held& h) {
      if (now - h.opened <= max_idle_) return false;
      ::close(h.fd);
      return true;
    });
    if (held_.size() >= target_) return;
    wanted = target_ - held_.size();
    address = address_;
  }
  // connected outside the lock: a POST taking a connection meanwhile does not wait for these
  std::vector<Held> opened;
  for (size_t i = 0; i < wanted; ++i) {
    const int fd = StartConnect(address, taker_ == Taker::kConnectsAgain);
    if (fd < 0) break;
    opened.push_back({fd, clock_.Monotonic()});
  }
  std::lock_guard lock(mu_);
  for (const Held& h : opened) {
    if (address_ == address && held_.size() < target_) {
      held_.push_back(h);
    } else {
      ::close(h.fd);
    }
  }
}

int ConnectionsAhead::Take(const PeerAddress& address) {
  if (target_ == 0) return -1;
  std::lock_guard lock(mu_);
  if (!learned_ || !(address_ == address)) return -1;
  const auto now = clock_.Monotonic();
  for (size_t i = held_.size(); i-- > 0;) {
    const Held h = held_[i];
    const Readiness readiness = now - h.opened > max_idle_ ? Readiness::kUnfit : Check(h.fd);
    if (readiness == Readiness::kConnecting) continue;
    held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    if (readiness == Readiness::kFit) return h.fd;
    ::close(h.fd);
  }
  return -1;
}

size_t ConnectionsAhead::held() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

}  // namespace slurmfleet::slurm
