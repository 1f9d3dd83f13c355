// ConnectionServer: a TCP server on 127.0.0.1 for the tests of connections opened ahead. It
// serves each connection on its own thread and notes when it was accepted; a request on it (HTTP,
// framed by Content-Length) is answered 200 with "{}" and the connection closed. It can close, or
// write a byte on, every connection that has not sent a byte yet, as a server or proxy that ends
// idle connections would. Test support only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace slurmfleet::slurm {

class ConnectionServer {
 public:
  using Steady = std::chrono::steady_clock;

  ConnectionServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), size) != 0 ||
        ::listen(listen_fd_, 64) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &size) != 0) {
      throw std::runtime_error("ConnectionServer: cannot listen");
    }
    address_ = a;
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~ConnectionServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_fd_);
    std::list<Connection> connections;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      for (Connection& c : connections_) ::shutdown(c.fd, SHUT_RDWR);
      connections.splice(connections.end(), connections_);
    }
    for (Connection& c : connections) c.thread.join();
  }

  sockaddr_in address() const { return address_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(ntohs(address_.sin_port)); }

  // Waits up to 5 s until at least `n` connections were accepted in all.
  bool WaitAccepted(size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(5), [&] { return accepted_ >= n; });
  }
  size_t accepted() {
    std::lock_guard lock(mu_);
    return accepted_;
  }
  // When each connection that carried a request was accepted, in the order of the requests.
  std::vector<Steady::time_point> RequestsAcceptedAt() {
    std::lock_guard lock(mu_);
    return requests_accepted_at_;
  }
  // Closes (or writes a byte on) every connection that has not sent a byte yet.
  void CloseIdle() {
    ForIdle([](int fd) { ::shutdown(fd, SHUT_RDWR); });
  }
  void WriteOnIdle() {
    ForIdle([](int fd) { (void)!::write(fd, "x", 1); });
  }

 private:
  struct Connection {
    int fd = -1;
    Steady::time_point accepted;
    bool spoke = false;  // sent a byte
    std::thread thread;
  };

  void ForIdle(void (*act)(int)) {
    std::lock_guard lock(mu_);
    for (Connection& c : connections_) {
      if (!c.spoke) act(c.fd);
    }
  }

  void Accept() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      std::lock_guard lock(mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      Connection& c = connections_.emplace_back();
      c.fd = fd;
      c.accepted = Steady::now();
      c.thread = std::thread([this, &c] { Serve(c); });
      ++accepted_;
      changed_.notify_all();
    }
  }

  void Serve(Connection& c) {
    std::string in;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
      if (n <= 0) break;
      {
        std::lock_guard lock(mu_);
        c.spoke = true;
      }
      in.append(buffer, static_cast<size_t>(n));
      const size_t head_end = in.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      size_t length = 0;
      std::string head = in.substr(0, head_end);
      for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (size_t at = head.find("content-length:"); at != std::string::npos) {
        length = std::stoul(head.substr(at + 15));
      }
      if (in.size() < head_end + 4 + length) continue;
      {
        std::lock_guard lock(mu_);
        requests_accepted_at_.push_back(c.accepted);
      }
      const std::string answer =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
          "Connection: close\r\n\r\n{}";
      (void)!::write(c.fd, answer.data(), answer.size());
      break;
    }
    ::shutdown(c.fd, SHUT_RDWR);
    std::lock_guard lock(mu_);
    ::close(c.fd);
    c.fd = -1;
  }

  int listen_fd_ = -1;
  sockaddr_in address_{};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::list<Connection> connections_;                     // guarded by mu_
  size_t accepted_ = 0;                                   // guarded by mu_
  std::vector<Steady::time_point> requests_accepted_at_;  // guarded by mu_
  bool stopping_ = false;                                 // guarded by mu_
};

}  // namespace slurmfleet::slurm
