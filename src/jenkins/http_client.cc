#include "jenkins/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <expected>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ca_file.h"
#include "base/curl_transfer_options.h"
#include "base/url.h"

namespace slurmfleet::jenkins {

using nlohmann::json;

struct HttpClient::Request {
  std::string method = {};        // "GET" or "POST"
  std::string path = {};          // below base_url, query included: "queue/api/json?tree=..."
  std::string form = {};          // the body of a POST: application/x-www-form-urlencoded unless
  std::string content_type = {};  // this names another type
  // Whether a request that may have reached Jenkins can simply be sent again: a lost answer is
  // then kUnavailable rather than kUnknownOutcome.
  bool idempotent = true;
  // Whether libcurl may send it again by itself, as it does when a reused connection turns out
  // dead: otherwise it goes out on a connection of its own, which costs Jenkins and us a TCP
  // handshake (and TLS, if used) each time.
  bool may_repeat = true;

  // "GET /queue/api/json": for error messages, without the query.
  std::string Where() const { return method + " /" + path.substr(0, path.find('?')); }
};

struct HttpClient::Response {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lowercased; the last of repeated ones

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

namespace {

// An API token is 34 characters: a larger file is the wrong file.
constexpr size_t kMaxTokenFileSize = 64 * 1024;

constexpr std::string_view kBlanks = " \t\r\n\v\f";

// CONTRACT.md §2.5, verbatim: the only exact source of every queue item's label.
constexpr std::string_view kExactLabelsScript = R"(
import groovy.json.JsonOutput
def q = jenkins.model.Jenkins.get().queue
println JsonOutput.toJson(q.items.collect { [id: it.id, cls: it.class.simpleName,
  label: it.assignedLabel?.expression, buildable: it.buildable, why: it.why,
  task: it.task.fullDisplayName] }))";

// CONTRACT.md §9, plus what the Computer model holds.
constexpr std::string_view kComputerFields =
    "_class,displayName,description,offline,temporarilyOffline,idle,numExecutors,"
    "offlineCauseReason,absoluteRemotePath,assignedLabels[name],"
    "executors[idle,currentExecutable[url,number]]";

std::string_view Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(kBlanks);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kBlanks) - begin + 1);
}

std::string Form(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += PercentEncode(name) + "=" + PercentEncode(value);
  }
  return out;
}

// A header from Jenkins for a message: Jetty may send X-Error's U+2018/U+2019 in a non-UTF-8
// encoding, so everything but printable ASCII becomes an apostrophe (which they stand for).
std::string AsciiOnly(std::string_view text) {
  std::string out;
  bool in_other = false;
  for (char c : text.substr(0, 400)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
      in_other = false;
    } else if (!in_other) {
      out += '\'';
      in_other = true;
    }
  }
  return out;
}

Result<Secret> ReadToken(const std::filesystem::path& path, const std::string& user) {
  const std::string fix = "write the API token of Jenkins user '" + user +
                          "' into it (Jenkins: the user > Security > API Token > Add new Token)";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Fail(
        Code::kInvalidInput,
        "the API token file " + path.string() + " is a directory; name the file in it, or " + fix,
        "api_token_file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno;
    return Fail(Code::kInvalidInput,
                "cannot read the API token file " + path.string() + ": " + std::strerror(error) +
                    "; " + fix,
                "api_token_file");
  }
  std::string content(kMaxTokenFileSize + 1, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<size_t>(in.gcount()));
  if (content.size() > kMaxTokenFileSize) {
    return Fail(Code::kInvalidInput,
                "the API token file " + path.string() + " is larger than 64 KiB; " + fix,
                "api_token_file");
  }
  std::string_view token = Trim(content);
  if (token.empty()) {
    return Fail(Code::kInvalidInput, "the API token file " + path.string() + " is empty; " + fix,
                "api_token_file");
  }
  if (token.find_first_of(kBlanks) != std::string_view::npos) {
    return Fail(Code::kInvalidInput,
                "the API token file " + path.string() + " holds more than one word; " + fix,
                "api_token_file");
  }
  Secret secret{std::string(token)};
  std::fill(content.begin(), content.end(), '\0');
  return secret;
}

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t CollectHeader(char* data, size_t size, size_t n, void* out) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(out);
  std::string_view line(data, size * n);
  // Headers of an interim answer (100 Continue) must not mix with the final one's.
  if (line.starts_with("HTTP/")) headers->clear();
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(Trim(line.substr(0, colon)));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    (*headers)[name] = std::string(Trim(line.substr(colon + 1)));
  }
  return size * n;
}

// Errors that prove the request never left this host.
bool NeverSent(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
         rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SSL_CONNECT_ERROR ||
         rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
         rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL;
}

// Readers for Jenkins' JSON, where an absent property and null mean the same. A present value of
// the wrong type throws nlohmann's type_error, which GetJson turns into an Error.
std::string Str(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? std::string() : it->get<std::string>();
}

bool Bool(const json& object, const char* key, bool absent = false) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? absent : it->get<bool>();
}

int64_t Int(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? 0 : it->get<int64_t>();
}

const json& Array(const json& object, const char* key) {
  static const json kEmpty = json::array();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return kEmpty;
  static_cast<void>(it->get_ref<const json::array_t&>());  // throws type_error unless an array
  return *it;
}

Computer DecodeComputer(const json& j) {
  Computer computer;
  computer.name = Str(j, "displayName");
  computer.computer_class = Str(j, "_class");
  computer.description = Str(j, "description");
  computer.offline = Bool(j, "offline", true);
  computer.temporarily_offline = Bool(j, "temporarilyOffline");
  computer.idle = Bool(j, "idle", true);
  computer.num_executors = static_cast<int>(Int(j, "numExecutors"));
  if (auto it = j.find("absoluteRemotePath"); it != j.end() && !it->is_null()) {
    computer.absolute_remote_path = it->get<std::string>();
  }
  computer.offline_cause_reason = Str(j, "offlineCauseReason");
  for (const json& label : Array(j, "assignedLabels")) {
    computer.labels.push_back(Str(label, "name"));
  }
  for (const json& e : Array(j, "executors")) {
    Executor executor;
    executor.idle = Bool(e, "idle", true);
    if (auto it = e.find("currentExecutable"); it != e.end() && it->is_object()) {
      executor.current_url = Str(*it, "url");
      executor.current_number = Int(*it, "number");
    }
    computer.executors.push_back(std::move(executor));
  }
  return computer;
}

QueueItem DecodeQueueItem(const json& j) {
  QueueItem item;
  item.id = Int(j, "id");
  item.item_class = Str(j, "_class");
  item.buildable = Bool(j, "buildable");
  item.blocked = Bool(j, "blocked");
  item.pending = Bool(j, "pending");
  item.stuck = Bool(j, "stuck");
  item.why = Str(j, "why");
  item.in_queue_since_ms = Int(j, "inQueueSince");
  if (auto task = j.find("task"); task != j.end() && task->is_object()) {
    item.task_name = Str(*task, "name");
    item.task_url = Str(*task, "url");
    item.task_class = Str(*task, "_class");
    // Only projects export labelExpression, and as null when they may roam; a Pipeline
    // placeholder task lacks the property altogether.
    if (task->contains("labelExpression")) {
      item.label = Str(*task, "labelExpression");
      item.label_source = LabelSource::kLabelExpression;
    }
  }
  return item;
}

bool IsLowerHex64(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// One piece of markup in an XML document, '<' to '>'.
struct XmlMarkup {
  enum Kind { kStart, kEnd, kEmpty, kOther } kind = kOther;  // kOther: comment, PI, CDATA
  std::string_view name;                                     // of an element's tag
  size_t begin = 0;                                          // at '<'
  size_t end = 0;                                            // just past '>'
};

// The markup at or after `pos`: nullopt when there is none; an error (what is wrong) when it is
// malformed. A DOCTYPE is refused: its entities could change what the rest means.
std::expected<std::optional<XmlMarkup>, std::string> NextMarkup(std::string_view xml, size_t pos) {
  size_t open = xml.find('<', pos);
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view rest = xml.substr(open);
  auto until = [&](std::string_view terminator) -> std::expected<size_t, std::string> {
    size_t at = xml.find(terminator, open + 1);
    if (at == std::string_view::npos) return std::unexpected("unterminated markup");
    return at + terminator.size();
  };
  XmlMarkup markup;
  markup.begin = open;
  std::expected<size_t, std::string> end;
  if (rest.starts_with("<!--")) {
    end = until("-->");
  } else if (rest.starts_with("<![CDATA[")) {
    end = until("]]>");
  } else if (rest.starts_with("<?")) {
    end = until("?>");
  } else if (rest.starts_with("<!")) {
    return std::unexpected("a DOCTYPE or other declaration");
  } else {
    bool closing = rest.starts_with("</");
    size_t name_begin = open + (closing ? 2 : 1);
    size_t name_end = xml.find_first_of(" \t\r\n/>", name_begin);
    if (name_end == std::string_view::npos || name_end == name_begin) {
      return std::unexpected("a tag without a name");
    }
    markup.name = xml.substr(name_begin, name_end - name_begin);
    // Attribute values may hold '>' and '/'.
    char quote = 0;
    size_t i = name_end;
    for (; i < xml.size(); ++i) {
      char c = xml[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '<') {
        return std::unexpected("'<' inside a tag");
      } else if (c == '>') {
        break;
      }
    }
    if (i == xml.size()) return std::unexpected("unterminated tag");
    end = i + 1;
    markup.kind =
        closing ? XmlMarkup::kEnd : (xml[i - 1] == '/' ? XmlMarkup::kEmpty : XmlMarkup::kStart);
  }
  if (!end) return std::unexpected(end.error());
  markup.end = *end;
  return markup;
}

// Text for an XML element: & < > " ' escaped, and the characters a parser would not keep as they
// are (CR, DEL, C1 controls) as character references, which XML 1.0 and 1.1 both accept.
std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&apos;";
        continue;
      case '\r':
        out += "&#13;";
        continue;
      case 0x7f:
        out += "&#127;";
        continue;
      default:
        break;
    }
    unsigned char next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == 0xc2 && (next & 0xe0) == 0x80) {  // U+0080..U+009F
      out += "&#" + std::to_string(next) + ";";
      ++i;
      continue;
    }
    out += static_cast<char>(c);
  }
  return out;
}

// `config` (a node's config.xml) with the text of the top-level <description> of its <slave>
// replaced by `description`, or with one inserted after <name> (as XStream would write it) when
// there is none; nothing else changes. An error (what is wrong) when `config` is malformed or its
// root is not <slave>.
std::expected<std::string, std::string> WithDescription(std::string_view config,
                                                        std::string_view description) {
  const std::string escaped = XmlEscape(description);
  std::vector<std::string_view> open;  // element names from the root down
  size_t pos = 0;
  size_t previous_end = 0;                         // where the markup before the current one ended
  size_t root_content = 0;                         // just past <slave>
  size_t name_end = std::string::npos;             // just past the top-level </name> or <name/>
  std::string_view name_indent;                    // the blanks before the top-level <name>
  size_t description_content = std::string::npos;  // just past the top-level <description>
  while (true) {
    auto next = NextMarkup(config, pos);
    if (!next) return std::unexpected(next.error());
    if (!*next) {
      return std::unexpected(open.empty() ? "no root element" : "the root element is not closed");
    }
    const XmlMarkup& markup = **next;
    const std::string_view before = config.substr(previous_end, markup.begin - previous_end);
    previous_end = pos = markup.end;
    if (markup.kind == XmlMarkup::kOther) continue;
    if (open.empty()) {
      if (markup.kind != XmlMarkup::kStart || markup.name != "slave") {
        return std::unexpected("the root element is <" + std::string(markup.name) +
                               (markup.kind == XmlMarkup::kEmpty ? "/" : "") + ">, not <slave>");
      }
      open.push_back(markup.name);
      root_content = markup.end;
      continue;
    }
    const bool top_level = open.size() == 1;
    if (markup.kind == XmlMarkup::kEnd) {
      if (markup.name != open.back()) {
        return std::unexpected("</" + std::string(markup.name) + "> closes <" +
                               std::string(open.back()) + ">");
      }
      open.pop_back();
      if (open.empty()) break;  // </slave>: whatever follows is not ours
      if (open.size() == 1 && markup.name == "description" &&
          description_content != std::string::npos) {
        std::string out(config.substr(0, description_content));
        out += escaped;
        out += config.substr(markup.begin);
        return out;
      }
      if (open.size() == 1 && markup.name == "name" && name_end == std::string::npos) {
        name_end = markup.end;
      }
      continue;
    }
    if (top_level && markup.name == "name" && name_end == std::string::npos) {
      name_indent = Trim(before).empty() ? before : std::string_view();
      if (markup.kind == XmlMarkup::kEmpty) name_end = markup.end;
    }
    if (top_level && markup.name == "description") {
      if (markup.kind == XmlMarkup::kEmpty) {
        std::string out(config.substr(0, markup.begin));
        out += "<description>" + escaped + "</description>";
        out += config.substr(markup.end);
        return out;
      }
      description_content = markup.end;
    }
    if (markup.kind == XmlMarkup::kStart) open.push_back(markup.name);
  }
  const size_t at = name_end != std::string::npos ? name_end : root_content;
  std::string out(config.substr(0, at));
  out += name_indent;
  out += "<description>" + escaped + "</description>";
  out += config.substr(at);
  return out;
}

}  // namespace

Status HttpClient::CheckNodeName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Fail(Code::kInvalidInput,
                "node name '" + AsciiOnly(name) + "' " + why +
                    "; use letters, digits, '-', '_' and '.' (e.g. slurm-gpu-12345)",
                "node name");
  };
  if (name.empty()) return bad("is empty");
  if (Trim(name).size() != name.size()) return bad("starts or ends with a blank");
  if (name == "." || name == "..") return bad("is reserved");
  if (name.back() == '.') return bad("ends with '.'");
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    // ISO control characters: C0, DEL, and C1 (U+0080..U+009F, 0xC2 0x80..0x9F in UTF-8).
    bool c1 = c == 0xc2 && i + 1 < name.size() &&
              (static_cast<unsigned char>(name[i + 1]) & 0xe0) == 0x80;
    if (c < 0x20 || c == 0x7f || c1) return bad("holds a control character");
    if (std::string_view("?*/\\%!@#$^&|<>[]:;").find(name[i]) != std::string_view::npos) {
      return bad("holds the unsafe character '" + std::string(1, name[i]) + "'");
    }
  }
  return {};
}

namespace {

// The path of an absolute URL ("/jenkins/job/a/1/"), or "" when it has none.
std::string_view UrlPath(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const size_t path = url.find('/', scheme + 3);
  return path == std::string_view::npos ? std::string_view() : url.substr(path);
}

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::Create(HttpClientOptions options) {
  std::string& url = options.base_url;
  if (std::optional<UrlProblem> problem = CheckBaseUrl(url, "http://jenkins:8080/")) {
    return Fail(Code::kInvalidInput, problem->message + "; " + problem->fix, "base_url");
  }
  if (url.back() != '/') url += '/';
  if (options.user.empty()) {
    return Fail(Code::kInvalidInput, "is empty; name the Jenkins user the API token belongs to",
                "user");
  }
  if (options.connect_timeout.count() <= 0) {
    return Fail(Code::kInvalidInput, "must be positive", "connect_timeout");
  }
  if (options.total_timeout.count() <= 0) {
    return Fail(Code::kInvalidInput, "must be positive", "total_timeout");
  }
  if (!options.ca_file.empty()) {
    if (Status ca = CheckCaFile(options.ca_file, "ca_file"); !ca)
      return std::unexpected(ca.error());
  }
  auto token = ReadToken(options.api_token_file, options.user);
  if (!token) return std::unexpected(token.error());
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(options), std::move(*token)));
}

HttpClient::HttpClient(HttpClientOptions options, Secret token)
    : options_(std::move(options)), token_(std::move(token)) {}

HttpClient::~HttpClient() = default;

Result<HttpClient::Response> HttpClient::SendOnce(const Request& request, const Secret& token) {
  CURL* curl = static_cast<CURL*>(handles_.Acquire());
  if (!curl) return Fail(Code::kInternal, "libcurl could not create a handle", request.Where());
  curl_easy_reset(curl);  // keeps the handle's live connections and caches

  const std::string url = options_.base_url + request.path;
  Response response;
  char curl_error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  SetTransferOptions(curl, {options_.connect_timeout, options_.total_timeout, options_.verify_tls,
                            options_.ca_file});
  // A 302 is how doCreateItem, changeOfflineCause and doDelete say "done"; following it would
  // fetch a page we do not want.
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
  curl_easy_setopt(curl, CURLOPT_USERNAME, options_.user.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD, token.Reveal().c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, CollectHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);

  curl_slist* headers = nullptr;
  if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.form.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.form.size()));
    if (!request.may_repeat) curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
    const std::string type =
        request.content_type.empty() ? "application/x-www-form-urlencoded" : request.content_type;
    headers = curl_slist_append(headers, ("Content-Type: " + type).c_str());
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  }
  // Jenkins writes `why` texts and X-Error headers in the request's language, else in the
  // controller's: on a German controller "already exists" would read "existiert bereits".
  headers = curl_slist_append(headers, "Accept-Language: en");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  // The handle holds a copy of the token until it is reset: drop it before pooling the handle.
  curl_easy_setopt(curl, CURLOPT_PASSWORD, "");
  handles_.Release(curl);
  if (rc == CURLE_OK) return response;

  std::string what = curl_error[0] != '\0' ? curl_error : curl_easy_strerror(rc);
  if (NeverSent(rc)) {
    return Fail(Code::kUnavailable,
                "cannot reach Jenkins at " + WithoutUserinfo(options_.base_url) + ": " + what +
                    "; check the URL and that Jenkins runs",
                request.Where());
  }
  if (request.idempotent) {
    return Fail(
        Code::kUnavailable,
        "no complete answer from Jenkins at " + WithoutUserinfo(options_.base_url) + ": " + what,
        request.Where());
  }
  return Fail(Code::kUnknownOutcome,
              "no complete answer from Jenkins at " + WithoutUserinfo(options_.base_url) + ": " +
                  what + "; the request may have taken effect, so look before sending it again",
              request.Where());
}

Result<HttpClient::Response> HttpClient::Send(const Request& request) {
  Secret token;
  {
    std::lock_guard lock(mu_);
    token = token_;
  }
  auto response = SendOnce(request, token);
  if (!response || response->status != 401) return response;

  // The token may have been replaced in its file since it was read.
  Secret fresh;
  {
    std::lock_guard lock(mu_);
    if (token_ == token) {
      auto reread = ReadToken(options_.api_token_file, options_.user);
      if (!reread) {
        return Fail(Code::kAuth,
                    "Jenkins rejected user '" + options_.user +
                        "' and its API token (HTTP 401), and re-reading it failed: " +
                        reread.error().message,
                    request.Where());
      }
      token_ = std::move(*reread);
    }
    fresh = token_;
  }
  if (fresh == token) return response;  // StatusError reports the 401
  return SendOnce(request, fresh);
}

Status HttpClient::SendAction(const Request& request) {
  auto response = Send(request);
  if (!response) return std::unexpected(response.error());
  if (Done(*response)) return {};
  return std::unexpected(StatusError(request, *response));
}

bool HttpClient::Done(const Response& response) const {
  if (response.status == 200) return true;
  if (response.status != 302) return false;
  const std::string location = response.Header("location");
  // Jetty 12 sends a path ("/computer/x/"), judged as a full URL's path is; any other relative
  // target stays below the page that was asked, unless it is a login page.
  const bool relative = location.find("://") == std::string::npos;
  if (relative && !location.starts_with('/')) return location.find("login") == std::string::npos;
  std::string_view path = relative ? std::string_view(location) : UrlPath(location);
  const std::string_view base = UrlPath(options_.base_url);
  if (!path.starts_with(base)) return false;
  path.remove_prefix(base.size());
  return path == "computer" || path.starts_with("computer/");
}

Error HttpClient::StatusError(const Request& request, const Response& response) const {
  const std::string status = "HTTP " + std::to_string(response.status);
  const std::string x_error = AsciiOnly(response.Header("x-error"));
  const std::string said = x_error.empty() ? status : status + ": " + x_error;
  auto error = [&](Code code, std::string message) {
    return Error{code, std::move(message), request.Where()};
  };
  switch (response.status) {
    case 401:
      return error(Code::kAuth, "Jenkins rejected user '" + options_.user +
                                    "' with the API token in " + options_.api_token_file.string() +
                                    " (" + status +
                                    "); put a current API token of that user into the file");
    case 403: {
      std::string permission = AsciiOnly(response.Header("x-required-permission"));
      if (permission.empty()) {
        return error(Code::kRejected,
                     "Jenkins refused access to user '" + options_.user + "' (" + status + ")");
      }
      return error(Code::kRejected, "Jenkins user '" + options_.user + "' lacks the permission " +
                                        permission + " (" + status + "); grant it");
    }
    case 404:
      return error(Code::kNotFound, "not found in Jenkins (" + status + ")");
    case 400:
      return error(Code::kRejected, "Jenkins rejected the request (" + said + ")");
    default:
      break;
  }
  if (response.status >= 500) {
    return error(Code::kUnavailable, "Jenkins failed (" + said + "); retry later");
  }
  if (response.status >= 300 && response.status < 400) {
    // A login proxy's Location may carry credentials or a token in its query.
    std::string location = response.Header("location");
    location = WithoutUserinfo(location.substr(0, location.find_first_of("?#")));
    return error(Code::kInvalidInput,
                 "Jenkins redirected to '" + AsciiOnly(location) + "' (" + status +
                     "); set jenkins.url to the URL Jenkins answers on itself, not one behind a "
                     "login proxy");
  }
  if (response.status >= 400 && response.status < 500) {
    return error(Code::kRejected, "Jenkins rejected the request (" + said + ")");
  }
  return error(Code::kInternal, "unexpected answer from Jenkins (" + said + ")");
}

template <typename T, typename Decode>
Result<T> HttpClient::GetJson(const std::string& path, const std::string& tree, Decode decode) {
  Request request{.method = "GET", .path = path + "?tree=" + PercentEncode(tree)};
  auto response = Send(request);
  if (!response) return std::unexpected(response.error());
  if (response->status < 200 || response->status >= 300) {
    return std::unexpected(StatusError(request, *response));
  }
  json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    // A truncated answer or a proxy's HTML page: likely to pass.
    return Fail(Code::kUnavailable,
                "Jenkins answered HTTP " + std::to_string(response->status) +
                    " with a body that is not JSON",
                request.Where());
  }
  try {
    return decode(body, *response);
  } catch (const json::exception& e) {
    return Fail(Code::kInternal, std::string("unexpected JSON from Jenkins: ") + e.what(),
                request.Where());
  }
}

Result<ControllerInfo> HttpClient::Discover() {
  return GetJson<ControllerInfo>(
      "api/json", "quietingDown,url",
      [&](const json& body, const Response& response) -> Result<ControllerInfo> {
        ControllerInfo info;
        info.version = AsciiOnly(response.Header("x-jenkins"));
        info.session = AsciiOnly(response.Header("x-jenkins-session"));
        if (info.version.empty()) {
          return Fail(Code::kInvalidInput,
                      WithoutUserinfo(options_.base_url) +
                          " answered without an X-Jenkins header, so it is not Jenkins; check "
                          "base_url",
                      "GET /api/json");
        }
        info.quieting_down = Bool(body, "quietingDown");
        info.root_url = Str(body, "url");
        return info;
      });
}

Result<std::vector<QueueItem>> HttpClient::Queue() {
  return GetJson<std::vector<QueueItem>>(
      "queue/api/json",
      "items[id,buildable,blocked,pending,stuck,why,inQueueSince,task[name,url,labelExpression]]",
      [](const json& body, const Response&) -> Result<std::vector<QueueItem>> {
        std::vector<QueueItem> items;
        for (const json& item : Array(body, "items")) items.push_back(DecodeQueueItem(item));
        return items;
      });
}

Result<std::map<int64_t, std::string>> HttpClient::ExactLabels() {
  // The script only reads, so a lost answer can be asked for again.
  Request request{.method = "POST",
                  .path = "scriptText",
                  .form = Form({{"script", kExactLabelsScript}}),
                  .idempotent = true};
  auto response = Send(request);
  if (!response) return std::unexpected(response.error());
  if (response->status != 200) return std::unexpected(StatusError(request, *response));
  // A failing script still answers 200, with its stack trace as the text.
  json body = json::parse(Trim(response->body), nullptr, /*allow_exceptions=*/false);
  if (!body.is_array()) {
    return Fail(Code::kInternal,
                "the queue script printed something that is not a JSON list (did it fail?)",
                request.Where());
  }
  try {
    std::map<int64_t, std::string> labels;
    for (const json& item : body) labels[Int(item, "id")] = Str(item, "label");
    return labels;
  } catch (const json::exception& e) {
    return Fail(Code::kInternal, std::string("unexpected JSON from the queue script: ") + e.what(),
                request.Where());
  }
}

Result<std::vector<Computer>> HttpClient::Computers() {
  return GetJson<std::vector<Computer>>(
      "computer/api/json", "computer[" + std::string(kComputerFields) + "]",
      [](const json& body, const Response&) -> Result<std::vector<Computer>> {
        std::vector<Computer> computers;
        for (const json& c : Array(body, "computer")) computers.push_back(DecodeComputer(c));
        return computers;
      });
}

Result<Computer> HttpClient::GetComputer(const std::string& name) {
  if (auto ok = CheckNodeName(name); !ok) return std::unexpected(ok.error());
  return GetJson<Computer>(
      "computer/" + PercentEncode(name) + "/api/json", std::string(kComputerFields),
      [](const json& body, const Response&) -> Result<Computer> { return DecodeComputer(body); });
}

Status HttpClient::CreateNode(const NodeSpec& node) {
  if (auto ok = CheckNodeName(node.name); !ok) return ok;
  if (node.remote_fs.empty()) {
    return Fail(Code::kInvalidInput,
                "node '" + node.name + "': remote_fs is empty; give the agent's work directory",
                "node spec");
  }
  if (node.num_executors < 1) {
    return Fail(Code::kInvalidInput,
                "node '" + node.name + "': num_executors is " + std::to_string(node.num_executors) +
                    "; it must be at least 1",
                "node spec");
  }
  // CONTRACT.md §3.1, field for field. nlohmann escapes the strings.
  nlohmann::ordered_json spec = {
      {"name", node.name},
      {"nodeDescription", node.description},
      {"numExecutors", std::to_string(node.num_executors)},
      {"remoteFS", node.remote_fs},
      {"labelString", node.labels},
      {"mode", node.mode == NodeMode::kExclusive ? "EXCLUSIVE" : "NORMAL"},
      {"launcher",
       {{"$class", "hudson.slaves.JNLPLauncher"},
        {"webSocket", true},
        {"workDirSettings",
         {{"disabled", false},
          {"workDirPath", ""},
          {"internalDir", "remoting"},
          {"failIfWorkDirIsMissing", false}}}}},
      {"retentionStrategy", {{"$class", "hudson.slaves.RetentionStrategy$Always"}}},
      {"nodeProperties", {{"stapler-class-bag", "true"}}},
  };
  std::string spec_text;
  try {
    spec_text = spec.dump();
  } catch (const json::exception&) {
    return Fail(Code::kInvalidInput, "node '" + AsciiOnly(node.name) + "': a field is not UTF-8",
                "node spec");
  }
  // A repeat is refused as "already exists", which the caller takes as its own node (CONTRACT.md
  // §7, idempotent create), so it may share a connection.
  Request request{
      .method = "POST",
      .path = "computer/doCreateItem",
      .form = Form({{"name", node.name}, {"type", "hudson.slaves.DumbSlave"}, {"json", spec_text}}),
      .idempotent = false,
      .may_repeat = true};
  auto response = Send(request);
  if (!response) return std::unexpected(response.error());
  if (Done(*response)) return {};
  // Jetty may mangle the quotes of "Agent called ‘x’ already exists": match the ASCII part.
  if (response->status == 400 &&
      response->Header("x-error").find("already exists") != std::string::npos) {
    return Fail(Code::kConflict, "a node named '" + node.name + "' already exists in Jenkins",
                request.Where());
  }
  return std::unexpected(StatusError(request, *response));
}

Result<Secret> HttpClient::AgentSecret(const std::string& name) {
  if (auto ok = CheckNodeName(name); !ok) return std::unexpected(ok.error());
  Request request{.method = "GET",
                  .path = "computer/" + PercentEncode(name) + "/jenkins-agent.jnlp"};
  auto response = Send(request);
  if (!response) return std::unexpected(response.error());
  if (response->status != 200) return std::unexpected(StatusError(request, *response));
  std::string& body = response->body;
  constexpr std::string_view kOpen = "<argument>";
  size_t open = body.find(kOpen);
  size_t close = open == std::string::npos ? open : body.find("</argument>", open);
  std::string_view first;
  if (close != std::string::npos) {
    first = Trim(std::string_view(body).substr(open + kOpen.size(), close - open - kOpen.size()));
  }
  Result<Secret> secret;
  if (IsLowerHex64(first)) {
    secret = Secret(std::string(first));
  } else {
    secret = Fail(Code::kInternal,
                  "unexpected JNLP body: its first <argument> is not a 64-hex-digit agent secret",
                  request.Where());
  }
  std::fill(body.begin(), body.end(), '\0');  // it held the secret
  return secret;
}

Status HttpClient::Drain(const std::string& name, const std::string& message) {
  if (auto ok = CheckNodeName(name); !ok) return ok;
  Request request{.method = "POST",
                  .path = "computer/" + PercentEncode(name) + "/changeOfflineCause",
                  .form = Form({{"offlineMessage", message}}),
                  .idempotent = false,
                  .may_repeat = false};
  return SendAction(request);
}

Status HttpClient::SetDescription(const std::string& name, const std::string& description) {
  if (auto ok = CheckNodeName(name); !ok) return ok;
  for (unsigned char c : description) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      return Fail(Code::kInvalidInput,
                  "the description for node '" + name +
                      "' holds a control character, which XML cannot carry; leave it out",
                  "node description");
    }
  }
  const std::string path = "computer/" + PercentEncode(name) + "/config.xml";
  Request get{.method = "GET", .path = path};
  auto current = Send(get);
  if (!current) return std::unexpected(current.error());
  if (current->status != 200) return std::unexpected(StatusError(get, *current));
  if (current->Header("content-type").find("xml") == std::string::npos) {
    // A proxy's page, most likely: may pass.
    return Fail(Code::kUnavailable,
                "Jenkins answered HTTP 200 with a body that is not XML (Content-Type '" +
                    AsciiOnly(current->Header("content-type")) + "')",
                get.Where());
  }
  auto updated = WithDescription(current->body, description);
  if (!updated) {
    return Fail(
        Code::kInternal,
        "unexpected config.xml of node '" + name + "': " + updated.error() + "; left it unchanged",
        get.Where());
  }
  // Posting the same document twice does what posting it once does.
  Request post{.method = "POST",
               .path = path,
               .form = std::move(*updated),
               .content_type = "application/xml",
               .idempotent = true};
  auto response = Send(post);
  if (!response) return std::unexpected(response.error());
  if (response->status >= 200 && response->status < 300) return {};
  return std::unexpected(StatusError(post, *response));
}

Status HttpClient::DeleteNode(const std::string& name) {
  if (auto ok = CheckNodeName(name); !ok) return ok;
  Request request{.method = "POST",
                  .path = "computer/" + PercentEncode(name) + "/doDelete",
                  .idempotent = false,
                  .may_repeat = false};
  return SendAction(request);
}

Result<LabelLoad> HttpClient::Label(const std::string& expression) {
  return GetJson<LabelLoad>(
      "label/" + PercentEncode(expression) + "/api/json",
      "name,busyExecutors,idleExecutors,totalExecutors,offline,nodes[nodeName],"
      "loadStatistics[queueLength[sec10[latest]],availableExecutors[sec10[latest]]]",
      [](const json& body, const Response&) -> Result<LabelLoad> {
        LabelLoad load;
        load.name = Str(body, "name");
        load.busy_executors = static_cast<int>(Int(body, "busyExecutors"));
        load.idle_executors = static_cast<int>(Int(body, "idleExecutors"));
        load.total_executors = static_cast<int>(Int(body, "totalExecutors"));
        const json* latest = &body;
        for (const char* key : {"loadStatistics", "queueLength", "sec10", "latest"}) {
          if (!latest->is_object() || !latest->contains(key)) {
            latest = nullptr;
            break;
          }
          latest = &(*latest)[key];
        }
        if (latest != nullptr && !latest->is_null()) load.queue_length = latest->get<double>();
        return load;
      });
}

Result<ItemFate> HttpClient::Fate(int64_t queue_id) {
  return GetJson<ItemFate>(
      "queue/item/" + std::to_string(queue_id) + "/api/json", "cancelled,executable[url]",
      [](const json& body, const Response&) -> Result<ItemFate> {
        ItemFate fate;
        fate.left = Str(body, "_class") == "hudson.model.Queue$LeftItem";
        fate.cancelled = Bool(body, "cancelled");
        if (auto e = body.find("executable"); e != body.end() && e->is_object()) {
          fate.executable_url = Str(*e, "url");
        }
        return fate;
      });
}

Result<RunInfo> HttpClient::Run(const std::string& run_url) {
  // Jenkins writes URLs with its configured root URL, which may name another host than the one
  // we reach it on (CONTRACT.md 6): the run is asked for by its path below ours.
  std::string_view path = UrlPath(run_url);
  const std::string_view base = UrlPath(options_.base_url);
  if (path.starts_with(base)) path.remove_prefix(base.size());
  if (!path.starts_with("job/") || !path.ends_with("/") ||
      path.find_first_of("?#") != std::string_view::npos) {
    return Fail(Code::kInvalidInput, "'" + AsciiOnly(run_url) + "' is not the URL of a job's run",
                "run url");
  }
  return GetJson<RunInfo>(std::string(path) + "api/json", "building,result,builtOn",
                          [](const json& body, const Response&) -> Result<RunInfo> {
                            RunInfo run;
                            run.building = Bool(body, "building");
                            run.result = Str(body, "result");
                            run.built_on = Str(body, "builtOn");
                            return run;
                          });
}

}  // namespace slurmfleet::jenkins
