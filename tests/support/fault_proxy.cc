#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <system_error>
#include <utility>

namespace slurmfleet {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 64 * 1024 * 1024;
constexpr auto kPollSlice = 50ms;  // how often blocked I/O looks at the stop flag
constexpr auto kUpstreamConnectTimeout = 5s;
constexpr auto kUpstreamTimeout = 120s;  // for one whole upstream exchange

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;
  std::string target;  // path with query
  Headers headers;     // without the hop-by-hop ones and without framing headers
  bool has_length = false;
  std::string body;
  bool keep_alive = true;
};

struct Response {
  int status = 0;
  std::string reason;
  Headers headers;  // without the hop-by-hop ones and without framing headers
  bool has_body = true;
  std::string body;
};

bool IEquals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b,
                            [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Connection-level headers this proxy sets itself, never passed through.
bool HopByHop(std::string_view name) {
  for (std::string_view h : {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                             "content-length", "expect", "te", "upgrade"}) {
    if (IEquals(name, h)) return true;
  }
  return false;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Appends what `fd` has to `buf`, waiting in slices so that `stopping` is seen. False on end of
// stream, error, stop or deadline.
bool ReadMore(int fd, std::string& buf, const std::atomic<bool>& stopping,
              Clock::time_point deadline) {
  while (!stopping.load()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= 0ms) return false;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(
        &p, 1, static_cast<int>(std::min<std::chrono::milliseconds>(left, kPollSlice).count()));
    if (rc < 0 && errno != EINTR) return false;
    if (rc <= 0) continue;
    char chunk[16384];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  }
  return false;
}

// Splits a header block (after the start line) into name/value pairs; false when malformed.
bool ParseHeaders(std::string_view block, Headers& out) {
  while (!block.empty()) {
    size_t eol = block.find("\r\n");
    std::string_view line = block.substr(0, eol);
    block = eol == std::string_view::npos ? std::string_view{} : block.substr(eol + 2);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    out.emplace_back(std::string(line.substr(0, colon)), std::string(Trim(line.substr(colon + 1))));
  }
  return true;
}

const std::string* FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (IEquals(k, name)) return &v;
  }
  return nullptr;
}

bool ParseSize(std::string_view s, size_t& out, int base = 10) {
  s = Trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

Headers WithoutHopByHop(const Headers& headers) {
  Headers out;
  for (const auto& h : headers) {
    if (!HopByHop(h.first)) out.push_back(h);
  }
  return out;
}

enum class ReadStatus { kOk, kClosed, kMalformed, kChunked };

// Frames the next request from the client. `buf` carries bytes read past the previous request.
ReadStatus ReadRequest(int fd, std::string& buf, Request& req, const std::atomic<bool>& stopping) {
  const auto forever = Clock::time_point::max();
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > kMaxHeaderBytes) return ReadStatus::kMalformed;
    if (!ReadMore(fd, buf, stopping, forever)) return ReadStatus::kClosed;
  }
  std::string_view head(buf.data(), end + 2);
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp1 == sp2) return ReadStatus::kMalformed;
  req.method = line.substr(0, sp1);
  req.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  Headers headers;
  if (!ParseHeaders(head.substr(eol + 2), headers)) return ReadStatus::kMalformed;

  if (const std::string* te = FindHeader(headers, "transfer-encoding");
      te && !IEquals(*te, "identity")) {
    return ReadStatus::kChunked;
  }
  size_t length = 0;
  if (const std::string* cl = FindHeader(headers, "content-length")) {
    if (!ParseSize(*cl, length) || length > kMaxBodyBytes) return ReadStatus::kMalformed;
    req.has_length = true;
  }
  const std::string* connection = FindHeader(headers, "connection");
  req.keep_alive = version == "HTTP/1.1" ? !(connection && IEquals(*connection, "close"))
                                         : (connection && IEquals(*connection, "keep-alive"));
  const std::string* expect = FindHeader(headers, "expect");
  if (expect && IEquals(*expect, "100-continue") && buf.size() < end + 4 + length) {
    if (!SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return ReadStatus::kClosed;
  }
  req.headers = WithoutHopByHop(headers);
  while (buf.size() < end + 4 + length) {
    if (!ReadMore(fd, buf, stopping, forever)) return ReadStatus::kClosed;
  }
  req.body = buf.substr(end + 4, length);
  buf.erase(0, end + 4 + length);
  return ReadStatus::kOk;
}

// Decodes a chunked body that starts at buf[pos]: 1 complete, 0 needs more bytes, -1 malformed.
int DecodeChunked(std::string_view buf, size_t pos, std::string& body) {
  body.clear();
  while (true) {
    size_t eol = buf.find("\r\n", pos);
    if (eol == std::string_view::npos) return 0;
    std::string_view size_line = buf.substr(pos, eol - pos);
    size_line = size_line.substr(0, size_line.find(';'));  // chunk extensions are ignored
    size_t size = 0;
    if (!ParseSize(size_line, size, 16) || size > kMaxBodyBytes) return -1;
    pos = eol + 2;
    if (size == 0) {  // trailers, then an empty line
      while (true) {
        eol = buf.find("\r\n", pos);
        if (eol == std::string_view::npos) return 0;
        if (eol == pos) return 1;
        pos = eol + 2;
      }
    }
    if (buf.size() < pos + size + 2) return 0;
    body.append(buf.substr(pos, size));
    pos += size + 2;
  }
}

// Reads one response to `method` from the upstream, whichever way it is framed.
Result<Response> ReadResponse(int fd, const std::string& method, const std::atomic<bool>& stopping,
                              Clock::time_point deadline) {
  std::string buf;
  while (true) {  // loops past interim 1xx responses
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (buf.size() > kMaxHeaderBytes || !ReadMore(fd, buf, stopping, deadline)) {
        return Fail(Code::kUnavailable, "no complete response header from the upstream");
      }
    }
    std::string_view head(buf.data(), end + 2);
    size_t eol = head.find("\r\n");
    std::string_view line = head.substr(0, eol);
    Response resp;
    size_t sp1 = line.find(' ');
    if (!line.starts_with("HTTP/1.") || sp1 == std::string_view::npos || line.size() < sp1 + 4) {
      return Fail(Code::kUnavailable, "malformed status line from the upstream");
    }
    size_t code = 0;
    if (!ParseSize(line.substr(sp1 + 1, 3), code)) {
      return Fail(Code::kUnavailable, "malformed status code from the upstream");
    }
    resp.status = static_cast<int>(code);
    resp.reason = Trim(line.size() > sp1 + 5 ? line.substr(sp1 + 5) : std::string_view{});
    Headers headers;
    if (!ParseHeaders(head.substr(eol + 2), headers)) {
      return Fail(Code::kUnavailable, "malformed response header from the upstream");
    }
    buf.erase(0, end + 4);
    if (resp.status >= 100 && resp.status < 200) continue;
    resp.headers = WithoutHopByHop(headers);
    resp.has_body = method != "HEAD" && resp.status != 204 && resp.status != 304;
    if (!resp.has_body) {
      if (const std::string* cl = FindHeader(headers, "content-length")) {
        resp.headers.emplace_back("Content-Length", *cl);
      }
      return resp;
    }
    if (const std::string* te = FindHeader(headers, "transfer-encoding");
        te && !IEquals(*te, "identity")) {
      int rc;
      while ((rc = DecodeChunked(buf, 0, resp.body)) == 0) {
        if (!ReadMore(fd, buf, stopping, deadline)) {
          return Fail(Code::kUnavailable, "the upstream ended a chunked body early");
        }
      }
      if (rc < 0) return Fail(Code::kUnavailable, "malformed chunked body from the upstream");
      return resp;
    }
    if (const std::string* cl = FindHeader(headers, "content-length")) {
      size_t length = 0;
      if (!ParseSize(*cl, length) || length > kMaxBodyBytes) {
        return Fail(Code::kUnavailable, "bad Content-Length from the upstream");
      }
      while (buf.size() < length) {
        if (!ReadMore(fd, buf, stopping, deadline)) {
          return Fail(Code::kUnavailable, "the upstream ended a body early");
        }
      }
      resp.body = buf.substr(0, length);
      return resp;
    }
    while (ReadMore(fd, buf, stopping, deadline)) {  // framed by the end of the connection
    }
    if (stopping.load() || Clock::now() >= deadline) {
      return Fail(Code::kUnavailable, "no end to the upstream's body");
    }
    resp.body = std::move(buf);
    return resp;
  }
}

// A connected socket to host:port, or an Error. Waits at most kUpstreamConnectTimeout.
Result<int> Connect(const std::string& host, int port, const std::atomic<bool>& stopping) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Fail(Code::kUnavailable, std::string("cannot resolve upstream: ") + gai_strerror(rc));
  }
  std::string last = "no address";
  int fd = -1;
  for (addrinfo* ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      auto deadline = Clock::now() + kUpstreamConnectTimeout;
      pollfd p{fd, POLLOUT, 0};
      while (!stopping.load() && Clock::now() < deadline &&
             (rc = ::poll(&p, 1, static_cast<int>(kPollSlice.count()))) == 0) {
      }
      int err = rc > 0 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof err;
      if (rc > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc == 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      break;
    }
    last = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0) return Fail(Code::kUnavailable, "cannot connect to upstream: " + last);
  return fd;
}

// Sends `req` over a fresh upstream connection and reads the whole response.
Result<Response> Exchange(const std::string& host, int port, const Request& req,
                          const std::atomic<bool>& stopping) {
  Result<int> fd = Connect(host, port, stopping);
  if (!fd) return std::unexpected(fd.error());
  std::string wire = req.method + " " + req.target + " HTTP/1.1\r\n";
  for (const auto& [k, v] : req.headers) wire += k + ": " + v + "\r\n";
  if (req.has_length || !req.body.empty()) {
    wire += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
  }
  wire += "Connection: close\r\n\r\n";
  wire += req.body;
  Result<Response> resp = Fail(Code::kUnavailable, "cannot send the request upstream");
  if (SendAll(*fd, wire))
    resp = ReadResponse(*fd, req.method, stopping, Clock::now() + kUpstreamTimeout);
  ::close(*fd);
  return resp;
}

std::string Serialize(const Response& resp, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " " + resp.reason + "\r\n";
  for (const auto& [k, v] : resp.headers) out += k + ": " + v + "\r\n";
  if (resp.has_body) out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\n";
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  out += resp.body;
  return out;
}

Response ErrorResponse(int status, std::string reason, std::string_view description) {
  Response r;
  r.status = status;
  r.reason = std::move(reason);
  r.headers = {{"Content-Type", "application/json"}};
  r.body = R"({"errors":[{"error":")" + r.reason + R"(","description":")" +
           std::string(description) + R"(","source":"fault_proxy"}],"warnings":[]})";
  return r;
}

// Closes with a TCP reset rather than an orderly FIN.
void Reset(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

}  // namespace

std::string_view FaultName(Fault fault) {
  switch (fault) {
    case Fault::kNone:
      return "none";
    case Fault::kDropResponse:
      return "drop_response";
    case Fault::kResetBeforeForward:
      return "reset_before_forward";
    case Fault::kDelay:
      return "delay";
    case Fault::kRespond503:
      return "respond_503";
    case Fault::kBlackhole:
      return "blackhole";
  }
  return "unknown";
}

Result<std::unique_ptr<FaultProxy>> FaultProxy::Start(std::string upstream_host, int upstream_port,
                                                      uint64_t seed) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return Fail(Code::kInternal, std::string("socket: ") + std::strerror(errno), "FaultProxy");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int pipe_fds[2];
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::string what = std::strerror(errno);
    ::close(fd);
    return Fail(Code::kInternal, "cannot listen on 127.0.0.1: " + what, "FaultProxy");
  }
  std::unique_ptr<FaultProxy> proxy(new FaultProxy(std::move(upstream_host), upstream_port, seed,
                                                   fd, ntohs(addr.sin_port), pipe_fds[0],
                                                   pipe_fds[1]));
  try {
    proxy->accept_thread_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  } catch (const std::system_error& e) {
    return Fail(Code::kInternal, std::string("cannot start the accept thread: ") + e.what(),
                "FaultProxy");
  }
  return proxy;
}

FaultProxy::FaultProxy(std::string upstream_host, int upstream_port, uint64_t seed, int listen_fd,
                       int port, int wake_read_fd, int wake_write_fd)
    : upstream_host_(std::move(upstream_host)),
      upstream_port_(upstream_port),
      listen_fd_(listen_fd),
      port_(port),
      wake_read_fd_(wake_read_fd),
      wake_write_fd_(wake_write_fd) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  rng_.seed(seq);
}

FaultProxy::~FaultProxy() { Stop(); }

std::string FaultProxy::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void FaultProxy::Stop() {
  std::call_once(stop_once_, [this] {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      for (auto& c : conns_) {
        if (c->fd >= 0) ::shutdown(c->fd, SHUT_RDWR);
      }
    }
    stop_cv_.notify_all();
    (void)!::write(wake_write_fd_, "x", 1);
    if (accept_thread_.joinable()) accept_thread_.join();
    ::close(listen_fd_);  // new connections are refused from here on
    // The accept loop is gone, so conns_ only shrinks now.
    std::list<std::unique_ptr<Connection>> conns;
    {
      std::lock_guard lock(mu_);
      conns.swap(conns_);
    }
    for (auto& c : conns) c->thread.join();
    ::close(wake_read_fd_);
    ::close(wake_write_fd_);
  });
}

void FaultProxy::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_read_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
    if (stopping_.load()) break;

    // Join the threads of connections that have ended.
    std::list<std::unique_ptr<Connection>> ended;
    {
      std::lock_guard lock(mu_);
      for (auto it = conns_.begin(); it != conns_.end();) {
        auto next = std::next(it);
        if ((*it)->done) ended.splice(ended.end(), conns_, it);
        it = next;
      }
    }
    for (auto& c : ended) c->thread.join();

    if (!(p[0].revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mu_);
    if (upstream_down_ || stopping_.load()) {
      ::close(fd);
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->fd = fd;
    try {
      conn->thread = std::thread([this, c = conn.get()] { Serve(c); });
    } catch (const std::system_error&) {
      ::close(fd);
      continue;
    }
    conns_.push_back(std::move(conn));
    ++connections_;
  }
}

void FaultProxy::Serve(Connection* conn) {
  const int fd = conn->fd;  // only this thread closes it
  std::string buf;
  bool open = true;
  while (open && !stopping_.load()) {
    Request req;
    ReadStatus rs = ReadRequest(fd, buf, req, stopping_);
    if (rs == ReadStatus::kClosed) break;
    if (rs != ReadStatus::kOk) {  // not framed, so not counted
      Response r = rs == ReadStatus::kChunked
                       ? ErrorResponse(501, "Not Implemented", "chunked requests are not supported")
                       : ErrorResponse(400, "Bad Request", "malformed request");
      SendAll(fd, Serialize(r, false));
      break;
    }
    Decision d = Decide(req.method, req.target);
    open = req.keep_alive;
    switch (d.fault) {
      case Fault::kResetBeforeForward:
        Finish(d, 0, 0);
        Reset(fd);
        open = false;
        break;
      case Fault::kBlackhole: {
        Finish(d, 0, 0);
        std::string ignored;  // whatever else the client sends is read and ignored
        while (ReadMore(fd, ignored, stopping_, Clock::time_point::max())) ignored.clear();
        open = false;
        break;
      }
      case Fault::kRespond503: {
        Finish(d, 0, 503);
        Response r = ErrorResponse(503, "Service Unavailable", "injected by fault_proxy");
        open = SendAll(fd, Serialize(r, open)) && open;
        break;
      }
      case Fault::kDelay:
      case Fault::kNone:
      case Fault::kDropResponse: {
        if (d.fault == Fault::kDelay) SleepFor(d.delay);
        Result<Response> resp = Exchange(upstream_host_, upstream_port_, req, stopping_);
        if (d.fault == Fault::kDropResponse) {
          Finish(d, resp ? resp->status : 0, 0);
          open = false;
          break;
        }
        if (!resp) {
          Finish(d, 0, 502);
          Response r = ErrorResponse(502, "Bad Gateway", resp.error().message);
          open = SendAll(fd, Serialize(r, open)) && open;
          break;
        }
        Finish(d, resp->status, resp->status);
        open = SendAll(fd, Serialize(*resp, open)) && open;
        break;
      }
    }
  }
  std::lock_guard lock(mu_);
  ::close(fd);
  conn->fd = -1;
  conn->done = true;
}

FaultProxy::Decision FaultProxy::Decide(const std::string& method, const std::string& path) {
  std::lock_guard lock(mu_);
  Decision d;
  for (Rule& r : rules_) {
    if (r.times == 0) continue;
    if (!r.method.empty() && r.method != method) continue;
    if (!path.starts_with(r.path_prefix)) continue;
    if (r.probability < 1.0 &&
        !(std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < r.probability)) {
      continue;
    }
    if (r.times > 0) --r.times;
    d.fault = r.fault;
    d.delay = r.delay;
    break;
  }
  d.index = log_.size();
  d.epoch = log_epoch_;
  log_.push_back({method, path, d.fault, 0, 0});
  ++counts_[method + " " + path.substr(0, path.find('?'))];
  return d;
}

void FaultProxy::Finish(const Decision& d, int upstream_status, int client_status) {
  std::lock_guard lock(mu_);
  if (d.epoch != log_epoch_ || d.index >= log_.size()) return;
  log_[d.index].upstream_status = upstream_status;
  log_[d.index].client_status = client_status;
}

void FaultProxy::SleepFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  stop_cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void FaultProxy::AddRule(Rule rule) {
  std::lock_guard lock(mu_);
  rules_.push_back(std::move(rule));
}

void FaultProxy::ClearRules() {
  std::lock_guard lock(mu_);
  rules_.clear();
}

void FaultProxy::SetUpstreamDown(bool down) {
  std::lock_guard lock(mu_);
  upstream_down_ = down;
  if (!down) return;
  for (auto& c : conns_) {
    if (c->fd >= 0) ::shutdown(c->fd, SHUT_RDWR);
  }
}

int FaultProxy::TotalRequests() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(log_.size());
}

int FaultProxy::Count(const std::string& method, const std::string& path_without_query) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(method + " " + path_without_query);
  return it == counts_.end() ? 0 : it->second;
}

std::map<std::string, int> FaultProxy::Counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<RequestRecord> FaultProxy::Requests() const {
  std::lock_guard lock(mu_);
  return log_;
}

int FaultProxy::Connections() const {
  std::lock_guard lock(mu_);
  return connections_;
}

void FaultProxy::ResetCounts() {
  std::lock_guard lock(mu_);
  connections_ = 0;
  log_.clear();
  counts_.clear();
  ++log_epoch_;
}

}  // namespace slurmfleet
