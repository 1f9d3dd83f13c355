#include "slurm/curl_transport.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

#include "base/ca_file.h"
#include "base/curl_transfer_options.h"
#include "base/url.h"

namespace slurmfleet::slurm {
namespace {

// Slack reserved past a body's announced length: the JSON decoder needs this much padding after
// the text (simdjson::SIMDJSON_PADDING), and would otherwise copy the whole body to get it.
constexpr size_t kBodySlack = 64;

// A streamed answer is a job list, up to ~100 MB that slurmrestd sends at once: larger reads,
// fewer system calls (10,000 jobs received and decoded: 80-92 ms of CPU with libcurl's default
// 16 KB, 66-70 ms with this).
constexpr long kStreamBufferSize = 512L * 1024;

// How much of a streamed answer must wait in the socket before libcurl's poll wakes: slurmrestd
// sends faster than a wake-up (a context switch) per loopback segment is worth.
constexpr int kStreamLowWater = 256 * 1024;

struct BodySink {
  CURL* curl = nullptr;
  std::string* body = nullptr;
  BodyStream* stream = nullptr;  // for a 2xx answer, when the request has one
  bool started = false;
  // A streamed answer's TCP socket (it gets a connection of its own), what is left of its
  // announced length (-1: unknown), and the socket's SO_RCVLOWAT as this transfer last set it.
  curl_socket_t socket = CURL_SOCKET_BAD;
  curl_off_t remaining = -1;
  int low_water = 1;
};

// A new TCP socket of a streamed request: noted for its low-water mark.
int NoteStreamSocket(void* out, curl_socket_t socket, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) static_cast<BodySink*>(out)->socket = socket;
  return CURL_SOCKOPT_OK;
}

// Whether the noted socket is the one the answer comes on: libcurl may have tried more than one
// address (IPv6 and IPv4) and closed the last one it noted, whose number may since be another
// connection's. Its local port must be the transfer's.
bool CarriesTheAnswer(CURL* curl, curl_socket_t socket) {
  long port = 0;
  sockaddr_storage local{};
  socklen_t size = sizeof local;
  if (curl_easy_getinfo(curl, CURLINFO_LOCAL_PORT, &port) != CURLE_OK || port <= 0 ||
      getsockname(socket, reinterpret_cast<sockaddr*>(&local), &size) != 0) {
    return false;
  }
  if (local.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(local).sin_port) == port;
  }
  if (local.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(local).sin6_port) == port;
  }
  return false;
}

// Sets the socket's low-water mark to what is left of the answer, capped: never more than will
// come (poll would wait for bytes that never arrive), and back to 1 (Linux's default) at its
// end, so the connection, when reused, wakes on the next answer's first byte.
void SetLowWater(BodySink& sink) {
  const int wanted =
      static_cast<int>(std::clamp<curl_off_t>(sink.remaining, 1, curl_off_t{kStreamLowWater}));
  if (wanted != sink.low_water &&
      setsockopt(sink.socket, SOL_SOCKET, SO_RCVLOWAT, &wanted, sizeof wanted) == 0) {
    sink.low_water = wanted;
  }
}

// A 2xx answer goes to the request's stream when it has one. Otherwise a big body's announced
// length is reserved at once, so it is neither grown by doubling (each step a copy, with old and
// new held together) nor copied again.
size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  auto* sink = static_cast<BodySink*>(out);
  if (!sink->started) {
    sink->started = true;
    long status = 0;
    curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) sink->stream = nullptr;
    curl_off_t length = -1;
    if (sink->stream && sink->socket != CURL_SOCKET_BAD &&
        curl_easy_getinfo(sink->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
        length > 0 && CarriesTheAnswer(sink->curl, sink->socket)) {
      sink->remaining = length;
    }
  }
  if (sink->stream) {
    if (sink->remaining >= 0) {
      sink->remaining -= std::min<curl_off_t>(sink->remaining, static_cast<curl_off_t>(size * n));
      SetLowWater(*sink);
    }
    sink->stream->Write(std::string_view(data, size * n));
    return size * n;
  }
  if (sink->body->empty()) {
    curl_off_t length = -1;
    if (curl_easy_getinfo(sink->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
        length > 0 && length <= (curl_off_t{1} << 30)) {
      sink->body->reserve(static_cast<size_t>(length) + kBodySlack);
    }
  }
  sink->body->append(data, size * n);
  return size * n;
}

// How long a connection opened ahead may wait for a POST. slurmrestd 26.05 kept idle connections
// open for over 9 minutes on the testbed; a proxy in front of it may close them sooner, which
// ConnectionsAhead's check before use catches.
constexpr std::chrono::seconds kAheadMaxIdle{30};

// libcurl before 8.0 connects a socket handed to it again (see ConnectionsAhead::Taker).
ConnectionsAhead::Taker CurlTaker() {
  return curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000
             ? ConnectionsAhead::Taker::kUsesAsIs
             : ConnectionsAhead::Taker::kConnectsAgain;
}

// How many connections to hold ahead: none on a local socket for a libcurl that would connect it
// again, since a local socket's connect always completes at once.
size_t AheadTarget(const TransportOptions& options) {
  const bool local = options.base_url.starts_with("unix:");
  return local && CurlTaker() == ConnectionsAhead::Taker::kConnectsAgain
             ? 0
             : options.connections_ahead;
}

// What the socket callbacks of a transfer need.
struct SocketHooks {
  ConnectionsAhead* ahead = nullptr;
  bool may_take = false;  // a POST: it may go on a connection opened ahead
  bool took = false;      // the socket libcurl just opened is one opened ahead
  // Where the transfer's sockets were to connect. Only the one it was answered on is learned: a
  // name such as localhost gives ::1 and 127.0.0.1, and a server listening on one of them refuses
  // the other.
  std::vector<PeerAddress> tried;
};

// A POST takes a connection opened ahead when one is fit.
curl_socket_t OpenSocket(void* data, curlsocktype purpose, curl_sockaddr* address) {
  auto* hooks = static_cast<SocketHooks*>(data);
  hooks->took = false;
  PeerAddress peer;
  if (purpose == CURLSOCKTYPE_IPCXN &&
      PeerAddress::From(address->family, address->socktype, address->protocol, &address->addr,
                        address->addrlen, peer)) {
    if (hooks->may_take) {
      if (const int fd = hooks->ahead->Take(peer); fd >= 0) {
        hooks->took = true;
        return fd;
      }
    }
    hooks->tried.push_back(peer);
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// Teaches `ahead` the address an answered transfer connected to, if it opened a connection.
void LearnAnsweredPeer(CURL* curl, const SocketHooks& hooks) {
  if (hooks.tried.empty()) return;
  if (hooks.tried.size() == 1) {
    hooks.ahead->Learn(hooks.tried.front());
    return;
  }
  char* ip = nullptr;
  long port = 0;
  if (curl_easy_getinfo(curl, CURLINFO_PRIMARY_IP, &ip) != CURLE_OK ||
      curl_easy_getinfo(curl, CURLINFO_PRIMARY_PORT, &port) != CURLE_OK) {
    return;
  }
  for (const PeerAddress& peer : hooks.tried) {
    if (peer.Is(ip, port)) {
      hooks.ahead->Learn(peer);
      return;
    }
  }
}

int SkipConnectIfTaken(void* data, curl_socket_t, curlsocktype) {
  return static_cast<SocketHooks*>(data)->took ? CURL_SOCKOPT_ALREADY_CONNECTED : CURL_SOCKOPT_OK;
}

// Errors that prove the request never left this host.
bool NeverSent(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
         rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SSL_CONNECT_ERROR ||
         rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE;
}

}  // namespace

Result<std::unique_ptr<CurlTransport>> CurlTransport::Create(TransportOptions options) {
  const std::string& url = options.base_url;
  if (url.starts_with("unix:")) {
    if (!url.starts_with("unix:/")) {
      return Fail(Code::kInvalidInput,
                  "'" + WithoutUserinfo(url) +
                      "' does not name the socket by its absolute path; use e.g. "
                      "unix:/run/slurmrestd/slurmrestd.socket",
                  "slurm url");
    }
  } else if (std::optional<UrlProblem> problem = CheckBaseUrl(url, "http://slurmrestd:6820")) {
    const bool http = url.starts_with("http://") || url.starts_with("https://");
    return Fail(Code::kInvalidInput,
                problem->message + "; " + problem->fix +
                    (http ? "" : ", or unix:/path/to/slurmrestd.socket for a local socket"),
                "slurm url");
  } else {
    while (options.base_url.back() == '/') options.base_url.pop_back();
  }
  if (!options.ca_file.empty()) {
    if (Status ca = CheckCaFile(options.ca_file, "ca_file"); !ca) {
      return std::unexpected(ca.error());
    }
  }
  return std::unique_ptr<CurlTransport>(new CurlTransport(std::move(options)));
}

CurlTransport::CurlTransport(TransportOptions options)
    : options_(std::move(options)),
      ahead_(AheadTarget(options_), kAheadMaxIdle, clock_, CurlTaker()) {
  if (options_.base_url.starts_with("unix:")) {
    socket_path_ = options_.base_url.substr(5);
    url_base_ = "http://localhost";  // slurmrestd ignores the host; libcurl needs one
  } else {
    url_base_ = options_.base_url;
  }
}

CurlTransport::~CurlTransport() = default;

// One request on its way: what libcurl points into while the transfer runs, so it must stay put.
struct CurlTransport::Transfer {
  CURL* curl = nullptr;
  std::string where;  // "POST /slurm/v0.0.45/job/submit", for errors
  std::string url;
  std::string auth;  // the token header; cleared as soon as the transfer ends
  curl_slist* headers = nullptr;
  HttpResponse response;
  BodySink sink;
  Steady::time_point started;
  HttpRequest request;  // SendReleased: what libcurl sends from
  SocketHooks hooks;
  bool in_multi = false;  // SendReleased: added to its multi handle and not finished yet
};

bool CurlTransport::Prepare(const HttpRequest& request, Transfer& t) {
  t.where = request.method + " " + request.path;
  t.curl = static_cast<CURL*>(handles_.Acquire());
  if (!t.curl) return false;
  CURL* curl = t.curl;
  curl_easy_reset(curl);  // keeps the handle's live connections and caches
  // One idle connection per handle. A request that must have a fresh connection (below) leaves
  // it in the handle's cache beside the older one, up to libcurl's default of five: with the
  // engine's detail GETs and cancels side by side, the idle ones filled slurmrestd's 124
  // connection slots, and it stopped accepting any (30-90 s stalls on the testbed).
  curl_easy_setopt(curl, CURLOPT_MAXCONNECTS, 1L);

  t.url = url_base_ + request.path;
  curl_easy_setopt(curl, CURLOPT_URL, t.url.c_str());
  if (!socket_path_.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path_.c_str());
  SetTransferOptions(curl, {options_.connect_timeout, options_.total_timeout, options_.verify_tls,
                            options_.ca_file});
  t.sink = BodySink{curl, &t.response.body, request.stream};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t.sink);
  if (ahead_.target() > 0) {
    t.hooks = {&ahead_, request.method == "POST", false, {}};
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, OpenSocket);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &t.hooks);
    curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, SkipConnectIfTaken);
    curl_easy_setopt(curl, CURLOPT_SOCKOPTDATA, &t.hooks);
  }
  if (request.stream) {
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, kStreamBufferSize);
    // a GET: it never takes a connection opened ahead, so it needs no SkipConnectIfTaken
    if (socket_path_.empty()) {
      curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, NoteStreamSocket);
      curl_easy_setopt(curl, CURLOPT_SOCKOPTDATA, &t.sink);
    }
  }
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  // libcurl silently sends a request again when a reused connection turns out dead; for a POST
  // that could make a second job, so a POST always gets a connection of its own. So does a
  // streamed answer over TCP, so that its socket is known (NoteStreamSocket).
  const bool fresh = request.method == "POST" || (request.stream && socket_path_.empty());
  curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, fresh ? 1L : 0L);
  if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }

  t.headers = curl_slist_append(t.headers, "Accept: application/json");
  if (!request.body.empty()) {
    t.headers = curl_slist_append(t.headers, "Content-Type: application/json");
  }
  if (!request.token.empty()) {
    t.auth = "X-SLURM-USER-TOKEN: " + request.token.Reveal();
    t.headers = curl_slist_append(t.headers, t.auth.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, t.headers);
  t.started = Steady::now();
  return true;
}

Result<HttpResponse> CurlTransport::Finish(Transfer& t, int code) {
  const auto rc = static_cast<CURLcode>(code);
  CURL* curl = t.curl;
  curl_slist_free_all(t.headers);
  t.headers = nullptr;
  // the header string held the token: clear it before the memory is reused
  std::fill(t.auth.begin(), t.auth.end(), '\0');

  if (rc != CURLE_OK) {
    handles_.Release(curl);
    std::string what = curl_easy_strerror(rc);
    if (NeverSent(rc)) {
      return Fail(
          Code::kUnavailable,
          "cannot reach slurmrestd at " + WithoutUserinfo(options_.base_url) + ": " + what +
              (socket_path_.empty() ? "; check the URL and that slurmrestd runs"
                                    : "; check that slurmrestd runs, listens on that socket (its "
                                      "unix:PATH argument) and that this user may write to it"),
          t.where);
    }
    return Fail(
        Code::kUnknownOutcome,
        "no complete answer from slurmrestd at " + WithoutUserinfo(options_.base_url) + ": " + what,
        t.where);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t.response.status);
  char* ct = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
  if (ct) t.response.content_type = ct;
  curl_off_t pretransfer_us = 0;
  curl_easy_getinfo(curl, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
  t.response.sent_at = t.started + std::chrono::microseconds(pretransfer_us);
  LearnAnsweredPeer(curl, t.hooks);
  handles_.Release(curl);
  return std::move(t.response);
}

Result<HttpResponse> CurlTransport::Send(const HttpRequest& request) {
  Transfer t;
  if (!Prepare(request, t)) {
    return Fail(Code::kInternal, "libcurl could not create a handle",
                request.method + " " + request.path);
  }
  Result<HttpResponse> answer = Finish(t, curl_easy_perform(t.curl));
  ahead_.Fill();
  return answer;
}

std::vector<Result<HttpResponse>> CurlTransport::SendAll(const std::vector<HttpRequest>& requests,
                                                         size_t at_once) {
  std::vector<Result<HttpResponse>> results;
  if (requests.size() <= 1 || at_once <= 1) {
    for (const HttpRequest& r : requests) results.push_back(Send(r));
    return results;
  }
  // what stays so was never started: libcurl failed before it
  results.assign(requests.size(), Fail(Code::kUnavailable, "not sent: libcurl failed"));
  SendReleased(
      requests.size(), at_once,
      [&](size_t i, HttpRequest& request) {
        request = requests[i];
        return Release::kNow;
      },
      [&](size_t i, Result<HttpResponse> answer) { results[i] = std::move(answer); });
  return results;
}

void CurlTransport::SendReleased(size_t count, size_t at_once,
                                 const std::function<Release(size_t, HttpRequest&)>& next_request,
                                 const std::function<void(size_t, Result<HttpResponse>)>& done) {
  if (count == 0) return;
  CURLM* multi = curl_multi_init();
  if (!multi) {  // one at a time, then
    HttpRequest request;
    RunReleased(
        count, 1, [&](size_t i) { return next_request(i, request); },
        [&](size_t i) { done(i, Send(request)); });
    return;
  }
  at_once = std::max<size_t>(1, at_once);
  std::vector<Transfer> transfers(count);  // never resized: libcurl points into them
  size_t next = 0, in_flight = 0;
  bool held = false;   // the next request is not released yet
  bool ended = false;  // no more will be released
  auto start_more = [&] {
    held = false;
    for (; !ended && next < count && in_flight < at_once; ++next) {
      Transfer& t = transfers[next];
      const Release release = next_request(next, t.request);
      if (release == Release::kLater) {
        held = true;
        return;
      }
      if (release == Release::kNever) {
        ended = true;
        return;
      }
      if (!Prepare(t.request, t)) {
        done(next, Fail(Code::kInternal, "libcurl could not create a handle",
                        t.request.method + " " + t.request.path));
        continue;
      }
      curl_easy_setopt(t.curl, CURLOPT_PRIVATE, static_cast<void*>(&t));
      // The multi handle's connections die with it at the end of this call; kept open until then
      // they would only hold the server's connection slots (and an httplib thread each).
      curl_easy_setopt(t.curl, CURLOPT_FORBID_REUSE, 1L);
      if (CURLMcode added = curl_multi_add_handle(multi, t.curl); added != CURLM_OK) {
        curl_slist_free_all(t.headers);
        std::fill(t.auth.begin(), t.auth.end(), '\0');
        handles_.Release(t.curl);
        done(next,
             Fail(Code::kInternal,
                  std::string("libcurl could not start the request: ") + curl_multi_strerror(added),
                  t.where));
        continue;
      }
      t.in_multi = true;
      ++in_flight;
    }
  };
  start_more();
  while (in_flight > 0 || held) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* curl = msg->easy_handle;
      const CURLcode rc = msg->data.result;
      void* owner = nullptr;
      curl_easy_getinfo(curl, CURLINFO_PRIVATE, &owner);
      curl_multi_remove_handle(multi, curl);
      auto* t = static_cast<Transfer*>(owner);
      t->in_multi = false;
      --in_flight;
      done(static_cast<size_t>(t - transfers.data()), Finish(*t, rc));
    }
    if (mc != CURLM_OK) {
      // libcurl itself failed; what is still in flight may or may not have been sent, and
      // nothing more is
      for (Transfer& t : transfers) {
        if (!t.in_multi) continue;
        curl_multi_remove_handle(multi, t.curl);
        t.in_multi = false;
        done(static_cast<size_t>(&t - transfers.data()), Finish(t, CURLE_SEND_ERROR));
      }
      break;
    }
    start_more();
    // a held request is asked for again within a millisecond
    if (in_flight > 0 || held) curl_multi_poll(multi, nullptr, 0, held ? 1 : 100, nullptr);
  }
  curl_multi_cleanup(multi);
  ahead_.Fill();  // after the batch: its own POSTs never wait for these connects
}

}  // namespace slurmfleet::slurm
