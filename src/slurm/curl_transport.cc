#include "slurm/curl_transport.h"

#include <curl/curl.h>

#include "base/ca_file.h"

namespace slurmfleet::slurm {
namespace {

// Slack reserved past a body's announced length: the JSON decoder needs this much padding after
// the text (simdjson::SIMDJSON_PADDING), and would otherwise copy the whole body to get it.
constexpr size_t kBodySlack = 64;

struct BodySink {
  CURL* curl;
  std::string* body;
  BodyStream* stream;  // for a 2xx answer, when the request has one
  bool started = false;
};

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
  }
  if (sink->stream) {
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

// Errors that prove the request never left this host.
bool NeverSent(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
         rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SSL_CONNECT_ERROR ||
         rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE;
}

}  // namespace

Result<std::unique_ptr<CurlTransport>> CurlTransport::Create(TransportOptions options) {
  const std::string& url = options.base_url;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return Fail(Code::kInvalidInput,
                "'" + url + "' is not an http:// or https:// URL; use e.g. http://slurmrestd:6820",
                "slurm url");
  }
  while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
  if (!options.ca_file.empty()) {
    if (Status ca = CheckCaFile(options.ca_file, "ca_file"); !ca) {
      return std::unexpected(ca.error());
    }
  }
  return std::unique_ptr<CurlTransport>(new CurlTransport(std::move(options)));
}

CurlTransport::CurlTransport(TransportOptions options) : options_(std::move(options)) {}

CurlTransport::~CurlTransport() = default;

Result<HttpResponse> CurlTransport::Send(const HttpRequest& request) {
  const std::string where = request.method + " " + request.path;
  CURL* curl = static_cast<CURL*>(handles_.Acquire());
  if (!curl) return Fail(Code::kInternal, "libcurl could not create a handle", where);
  curl_easy_reset(curl);  // keeps the handle's live connections and caches

  const std::string url = options_.base_url + request.path;
  HttpResponse response;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.total_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  BodySink sink{curl, &response.body, request.stream};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  // libcurl silently sends a request again when a reused connection turns out dead; for a POST
  // that could make a second job, so a POST always gets a connection of its own.
  curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, request.method == "POST" ? 1L : 0L);
  if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (!request.body.empty()) headers = curl_slist_append(headers, "Content-Type: application/json");
  std::string auth;
  if (!request.token.empty()) {
    auth = "X-SLURM-USER-TOKEN: " + request.token.Reveal();
    headers = curl_slist_append(headers, auth.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  // the header string held the token: clear it before the memory is reused
  std::fill(auth.begin(), auth.end(), '\0');

  if (rc != CURLE_OK) {
    handles_.Release(curl);
    std::string what = curl_easy_strerror(rc);
    if (NeverSent(rc)) {
      return Fail(Code::kUnavailable,
                  "cannot reach slurmrestd at " + options_.base_url + ": " + what +
                      "; check the URL and that slurmrestd runs",
                  where);
    }
    return Fail(Code::kUnknownOutcome,
                "no complete answer from slurmrestd at " + options_.base_url + ": " + what, where);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* ct = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
  if (ct) response.content_type = ct;
  handles_.Release(curl);
  return response;
}

}  // namespace slurmfleet::slurm
