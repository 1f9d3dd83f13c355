// The stand-in Jenkins controller (test-only); see jenkins_standin.h. Section numbers (§) refer to
// /work/shared/research/jenkins/CONTRACT.md. Where Jenkins' behaviour comes from a named class,
// the comment names it, so a difference can be checked against the source.
#include "jenkins/standin/jenkins_standin.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "base/listen_backlog.h"
#include "jenkins/standin/standin_label.h"
#include "jenkins/standin/tree_pruner.h"

namespace slurmfleet::standin {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using SysClock = std::chrono::system_clock;
using TimePoint = SysClock::time_point;
using Headers = std::vector<std::pair<std::string, std::string>>;
using namespace std::chrono_literals;

constexpr auto kSchedulerPeriod = 50ms;
// How often a held agent connection is written to. A write is the only way to notice that the
// agent hung up (httplib gives handlers no socket): the second write after the peer closed fails.
constexpr auto kAgentPing = 100ms;
constexpr auto kLeftItemTtl = 5min;  // Queue.leftItems: expireAfterWrite(300 s)
constexpr size_t kMaxLoggedRequests = 200000;
constexpr std::string_view kMinimumRemoting = "3176.v207ec082a_8c0";
constexpr std::string_view kLq = "\xE2\x80\x98";   // U+2018
constexpr std::string_view kRq = "\xE2\x80\x99";   // U+2019
constexpr std::string_view kRaquo = " \xC2\xBB ";  // " » " in full display names
constexpr std::string_view kFreestyleBuild = "hudson.model.FreeStyleBuild";
constexpr std::string_view kWorkflowRun = "org.jenkinsci.plugins.workflow.job.WorkflowRun";
constexpr std::string_view kPlaceholderTask =
    "org.jenkinsci.plugins.workflow.support.steps.ExecutorStepExecution$PlaceholderTask";
constexpr std::string_view kJsonType = "application/json;charset=utf-8";
constexpr std::string_view kHtmlType = "text/html;charset=utf-8";
constexpr std::string_view kTextType = "text/plain;charset=utf-8";

// Depth-0 views: what Jenkins shows without tree= (nested objects only with visibility >= 2,
// hence `executors:[{}]`). Expressed as trees over the full objects built below.
constexpr std::string_view kComputerDefault =
    "actions,absoluteRemotePath,assignedLabels[name],description,displayName,executors[],icon,"
    "iconClassName,idle,jnlpAgent,launchSupported,loadStatistics,manualLaunchAllowed,monitorData,"
    "numExecutors,offline,offlineCause,offlineCauseReason,oneOffExecutors,temporarilyOffline";
constexpr std::string_view kItemDefault =
    "actions,blocked,buildable,id,inQueueSince,params,stuck,task[name,url,color],url,why,"
    "timestamp,buildableStartMilliseconds,pending,cancelled,executable[number,url]";
constexpr std::string_view kRootDefault =
    "assignedLabels[name],mode,nodeDescription,nodeName,numExecutors,description,"
    "jobs[name,url,color],overallLoad,primaryView[name,url],quietDownReason,quietingDown,"
    "slaveAgentPort,unlabeledLoad,url,useCrumbs,useSecurity,views[name,url]";
constexpr std::string_view kLabelDefault =
    "actions,busyExecutors,clouds,description,idleExecutors,loadStatistics,name,nodes[nodeName],"
    "offline,tiedJobs,totalExecutors,propertiesList";
constexpr std::string_view kRunDefault =
    "actions,artifacts,building,builtOn,changeSet[items,kind],changeSets,description,displayName,"
    "duration,estimatedDuration,executor,fullDisplayName,id,inProgress,keepLog,number,queueId,"
    "result,timestamp,url";
constexpr std::string_view kJobDefault =
    "actions,description,displayName,fullDisplayName,fullName,name,url,buildable,builds[number,"
    "url],color,inQueue,labelExpression,lastBuild[number,url],nextBuildNumber,queueItem,"
    "concurrentBuild,jobs[name,url,color]";

std::string Quote(std::string_view text) {
  return std::string(kLq) + std::string(text) + std::string(kRq);
}

// The languages whose texts the stand-in has. Jenkins localises `why` texts and X-Error headers
// to the request's locale (CONTRACT.md §2.3), so a client that parses them must ask for English.
enum class Lang { kEn, kDe };

// "en", "en-US", "de_DE", ...: the language of a locale tag, if the stand-in has its texts.
std::optional<Lang> LangOf(std::string_view tag) {
  std::string language;
  for (char c : tag.substr(0, tag.find_first_of("-_"))) {
    language.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (language == "en") return Lang::kEn;
  if (language == "de") return Lang::kDe;
  return std::nullopt;
}

// The request's locale as Jetty's Request.getLocale() picks it: the Accept-Language entry of the
// highest quality (the first of equal ones; q=0 and "*" name none), else the JVM's default
// locale. Simplified: a language other than English or German gets the default locale's texts
// (Jenkins would answer in its own translation where it has one).
Lang RequestLang(const httplib::Request& req, Lang fallback) {
  if (!req.has_header("Accept-Language")) return fallback;
  const std::string value = req.get_header_value("Accept-Language");
  std::string_view header = value;
  std::string_view best;
  double best_q = 0;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view entry = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    size_t semicolon = entry.find(';');
    std::string_view tag = entry.substr(0, semicolon);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
    double q = 1;
    if (semicolon != std::string_view::npos) {
      std::string params(entry.substr(semicolon + 1));
      if (size_t at = params.find("q="); at != std::string::npos) {
        q = std::strtod(params.c_str() + at + 2, nullptr);
      }
    }
    if (tag.empty() || tag == "*" || q <= 0 || q <= best_q) continue;
    best = tag;
    best_q = q;
  }
  if (best.empty()) return fallback;
  return LangOf(best).value_or(fallback);
}

// A message of Jenkins core as a MessageFormat pattern ({0}, {1}): English from Messages.properties
// (as CONTRACT.md quotes it), German from Messages_de.properties of jenkinsci/jenkins
// (core/src/main/resources/hudson/model/ and jenkins/model/). The German files quote with „“
// where the English ones use ‘’, and some German texts do not quote at all.
struct Message {
  std::string_view en;
  std::string_view de;
};

std::string Format(const Message& message, Lang lang,
                   std::initializer_list<std::string_view> args = {}) {
  std::string_view pattern = lang == Lang::kDe ? message.de : message.en;
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{' && i + 2 < pattern.size() && pattern[i + 2] == '}' &&
        pattern[i + 1] >= '0' && static_cast<size_t>(pattern[i + 1] - '0') < args.size()) {
      out += *(args.begin() + (pattern[i + 1] - '0'));
      i += 2;
    } else {
      out.push_back(pattern[i]);
    }
  }
  return out;
}

// hudson.model.Messages
constexpr Message kInQuietPeriod{"In the quiet period. Expires in {0}",
                                 "In Ruhe-Periode. Endet in {0}"};
constexpr Message kAboutToShutDown{"Jenkins is about to shut down",
                                   "Jenkins wird heruntergefahren"};
constexpr Message kLabelMissing{"\u2018{0}\u2019 doesn\u2019t have label \u2018{1}\u2019",
                                "\u201E{0}\u201C hat nicht das Label \u201E{1}\u201C"};
constexpr Message kNodeIsReserved{
    "\u2018{0}\u2019 is reserved for jobs with matching label expression",
    "\u201E{0}\u201C ist f\u00fcr Projekte mit passendem Label-Ausdruck reserviert"};
constexpr Message kNodeOffline{"\u2018{0}\u2019 is offline", "{0} ist offline"};
constexpr Message kAllNodesOffline{"All nodes of label \u2018{0}\u2019 are offline",
                                   "Alle Knoten des Labels \u201E{0}\u201C sind offline"};
constexpr Message kLabelHasNoNodes{"There are no nodes with the label \u2018{0}\u2019",
                                   "Es gibt keine Knoten mit dem Label \u201E{0}\u201C"};
constexpr Message kWaitingForExecutor{"Waiting for next available executor",
                                      "Warte auf den n\u00e4chsten freien Build-Prozessor"};
constexpr Message kWaitingForExecutorOn{
    "Waiting for next available executor on \u2018{0}\u2019",
    "Warte auf den n\u00e4chsten freien Build-Prozessor auf {0}"};
constexpr Message kNoName{"No name is specified", "Kein Name angegeben"};
constexpr Message kNotAllowedName{"\u201C{0}\u201D is not allowed name",
                                  "\u201E{0}\u201C ist kein erlaubter Name"};
constexpr Message kControlCode{"No control code is allowed: {0}",
                               "Kontrollcodes nicht erlaubt: {0}"};
constexpr Message kUnsafeChar{"\u2018{0}\u2019 is an unsafe character",
                              "\u201E{0}\u201C ist kein \u201Esicheres\u201C Zeichen"};
// Hudson.TrailingDot (SECURITY-2424) has no German text in Messages_de.properties, so Jenkins
// falls back to the English one.
constexpr Message kTrailingDot{"A name cannot end with \u2018.\u2019",
                               "A name cannot end with \u2018.\u2019"};
// ComputerSet.SlaveAlreadyExists; Messages_de.properties words it under the key
// ComputerSet.AgentAlreadyExists (with the trailing full stop).
constexpr Message kAgentExists{"Agent called \u2018{0}\u2019 already exists",
                               "Ein Agent mit dem Namen \u201E{0}\u201C existiert bereits."};
// Slave.InvalidConfig.Executors; the German file words it as Agent.InvalidConfig.Executors.
constexpr Message kInvalidExecutors{
    "Invalid agent configuration for \u2018{0}\u2019. Invalid # of executors.",
    "Ung\u00fcltige Agenten-Konfiguration f\u00fcr \u201E{0}\u201C: Ung\u00fcltige Zahl von "
    "Build-Prozessoren"};
// jenkins.model.Messages: BlockedBecauseOfBuildInProgress.shortDescription ({1}: the ETA, none)
constexpr Message kBuildInProgress{"Build #{0} is already in progress{1}",
                                   "Build #{0} ist bereits in Arbeit{1}"};

int64_t Millis(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string Hex(const unsigned char* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(bytes)) != 1) {
    for (auto& b : buffer) b = static_cast<unsigned char>(std::rand());  // test-only fallback
  }
  return Hex(buffer.data(), bytes);
}

std::string Base64Encode(const unsigned char* data, size_t size) {
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    size_t v = kAlphabet.find(c);
    if (v == std::string_view::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// Util.rawEncode: how Jenkins puts a name into a URL segment.
std::string RawEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
  }
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(kSpace);
  return std::string(text.substr(begin, end - begin + 1));
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    out.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// An element of a posted config.xml: what XStream would read from it.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;  // character data directly inside, entities decoded, CDATA included
  std::vector<XmlElement> children;

  const XmlElement* Child(std::string_view child) const {
    for (const XmlElement& e : children) {
      if (e.name == child) return &e;
    }
    return nullptr;
  }
};

// A small XML reader for config.xml: elements, attributes, text, the five predefined entities and
// character references, comments, CDATA and processing instructions. No DOCTYPE, no namespaces.
class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : text_(text) {}

  // The root element; nullopt with error() set when the text is not well-formed.
  std::optional<XmlElement> Document() {
    if (!SkipMisc()) return std::nullopt;
    auto root = Element(0);
    if (!root || !SkipMisc()) return std::nullopt;
    if (pos_ != text_.size()) return Fail("content after the root element");
    return root;
  }
  const std::string& error() const { return error_; }

 private:
  static constexpr std::string_view kBlank = " \t\r\n";

  std::nullopt_t Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why) + " at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  bool Failed(std::string why) {
    Fail(std::move(why));
    return false;
  }
  std::string_view Rest() const { return text_.substr(pos_); }
  bool SkipPast(std::string_view terminator) {
    size_t at = text_.find(terminator, pos_);
    if (at == std::string_view::npos) return false;
    pos_ = at + terminator.size();
    return true;
  }
  void SkipBlanks() {
    while (pos_ < text_.size() && kBlank.find(text_[pos_]) != std::string_view::npos) ++pos_;
  }
  // Blanks, comments and processing instructions around the root element.
  bool SkipMisc() {
    while (true) {
      SkipBlanks();
      if (Rest().starts_with("<!--")) {
        if (!SkipPast("-->")) return Failed("unterminated comment");
      } else if (Rest().starts_with("<?")) {
        if (!SkipPast("?>")) return Failed("unterminated processing instruction");
      } else if (Rest().starts_with("<!")) {
        return Failed("DOCTYPE is not supported");
      } else {
        return true;
      }
    }
  }
  std::string Name() {
    size_t end = text_.find_first_of(" \t\r\n/>=", pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string name(text_.substr(pos_, end - pos_));
    pos_ = end;
    return name;
  }
  // Decodes entities and character references of `raw`.
  std::optional<std::string> Decode(std::string_view raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out.push_back(raw[i]);
        continue;
      }
      size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos) return Fail("'&' without ';'");
      std::string_view entity = raw.substr(i + 1, semi - i - 1);
      i = semi;
      static const std::map<std::string_view, char> kNamed = {
          {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
      if (auto it = kNamed.find(entity); it != kNamed.end()) {
        out.push_back(it->second);
        continue;
      }
      uint32_t code = 0;
      std::from_chars_result parsed{};
      if (entity.starts_with("#x")) {
        parsed = std::from_chars(entity.data() + 2, entity.data() + entity.size(), code, 16);
      } else if (entity.starts_with("#")) {
        parsed = std::from_chars(entity.data() + 1, entity.data() + entity.size(), code, 10);
      } else {
        return Fail("unknown entity &" + std::string(entity) + ";");
      }
      if (parsed.ec != std::errc() || parsed.ptr != entity.data() + entity.size() ||
          entity.size() < 2 || code == 0 || code > 0x10ffff) {
        return Fail("bad character reference &" + std::string(entity) + ";");
      }
      if (code < 0x80) {
        out.push_back(static_cast<char>(code));
      } else if (code < 0x800) {
        out.push_back(static_cast<char>(0xc0 | (code >> 6)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
      } else if (code < 0x10000) {
        out.push_back(static_cast<char>(0xe0 | (code >> 12)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
      } else {
        out.push_back(static_cast<char>(0xf0 | (code >> 18)));
        out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
      }
    }
    return out;
  }
  std::optional<XmlElement> Element(int depth) {
    if (depth > 64) return Fail("elements nested too deeply");
    if (!Rest().starts_with("<")) return Fail("expected an element");
    ++pos_;
    XmlElement element;
    element.name = Name();
    if (element.name.empty()) return Fail("a tag without a name");
    while (true) {
      SkipBlanks();
      if (Rest().starts_with("/>")) {
        pos_ += 2;
        return element;
      }
      if (Rest().starts_with(">")) {
        ++pos_;
        break;
      }
      std::string attribute = Name();
      SkipBlanks();
      if (attribute.empty() || !Rest().starts_with("=")) return Fail("a malformed attribute");
      ++pos_;
      SkipBlanks();
      if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
        return Fail("an unquoted attribute value");
      }
      char quote = text_[pos_++];
      size_t end = text_.find(quote, pos_);
      if (end == std::string_view::npos) return Fail("an unterminated attribute value");
      auto value = Decode(text_.substr(pos_, end - pos_));
      if (!value) return std::nullopt;
      element.attributes[attribute] = std::move(*value);
      pos_ = end + 1;
    }
    while (true) {
      if (pos_ >= text_.size()) return Fail("<" + element.name + "> is not closed");
      if (Rest().starts_with("</")) {
        pos_ += 2;
        std::string name = Name();
        SkipBlanks();
        if (name != element.name || !Rest().starts_with(">")) {
          return Fail("</" + name + "> does not close <" + element.name + ">");
        }
        ++pos_;
        return element;
      }
      if (Rest().starts_with("<!--")) {
        if (!SkipPast("-->")) return Fail("unterminated comment");
      } else if (Rest().starts_with("<![CDATA[")) {
        size_t begin = pos_ + 9;
        if (!SkipPast("]]>")) return Fail("unterminated CDATA");
        element.text += text_.substr(begin, pos_ - 3 - begin);
      } else if (Rest().starts_with("<?")) {
        if (!SkipPast("?>")) return Fail("unterminated processing instruction");
      } else if (Rest().starts_with("<")) {
        auto child = Element(depth + 1);
        if (!child) return std::nullopt;
        element.children.push_back(std::move(*child));
      } else {
        size_t end = std::min(text_.find('<', pos_), text_.size());
        auto text = Decode(text_.substr(pos_, end - pos_));
        if (!text) return std::nullopt;
        element.text += *text;
        pos_ = end;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// Util.getTimeSpanString for the quiet-period text: "4.9 sec", "12 sec", "0.23 sec", "50 ms";
// in German (hudson/Messages_de.properties, Util.second/Util.minute with a choice of singular or
// plural, numbers in the German format) "4,9 Sekunden", "1 Sekunde", "1 Minute".
std::string TimeSpan(std::chrono::milliseconds span, Lang lang) {
  int64_t ms = std::max<int64_t>(span.count(), 0);
  const bool de = lang == Lang::kDe;
  char number[32];
  double value = 0;
  const char* unit = nullptr;
  if (ms >= 60000) {
    value = static_cast<double>(ms / 60000);
    std::snprintf(number, sizeof number, "%lld", static_cast<long long>(ms / 60000));
    unit = de ? (value == 1 ? "Minute" : "Minuten") : "min";
  } else if (ms >= 10000) {
    value = static_cast<double>(ms / 1000);
    std::snprintf(number, sizeof number, "%lld", static_cast<long long>(ms / 1000));
  } else if (ms >= 1000) {
    // MessageFormat drops a zero fraction: "4 sec", not "4.0 sec".
    value = static_cast<double>(ms / 100) / 10.0;
    if (ms % 1000 < 100) {
      std::snprintf(number, sizeof number, "%lld", static_cast<long long>(ms / 1000));
    } else {
      std::snprintf(number, sizeof number, "%lld.%lld", static_cast<long long>(ms / 1000),
                    static_cast<long long>(ms % 1000 / 100));
    }
  } else if (ms >= 100) {
    value = static_cast<double>(ms / 10) / 100.0;
    std::snprintf(number, sizeof number, "%.2g", value);
  } else {
    return std::to_string(ms) + " ms";
  }
  if (unit == nullptr) unit = de ? (value == 1 ? "Sekunde" : "Sekunden") : "sec";
  std::string text = number;
  if (de) std::replace(text.begin(), text.end(), '.', ',');
  return text + " " + unit;
}

// Jenkins.checkGoodName (§3.4); the message as the Failure carries it, or nullopt when good.
std::optional<std::string> BadNameReason(const std::string& name, Lang lang) {
  if (name.empty()) return Format(kNoName, lang);
  std::string trimmed = Trim(name);
  if (trimmed == "." || trimmed == "..") return Format(kNotAllowedName, lang, {trimmed});
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return Format(kControlCode, lang, {name});
    if (std::string_view("?*/\\%!@#$^&|<>[]:;").find(c) != std::string_view::npos) {
      return Format(kUnsafeChar, lang, {std::string(1, c)});
    }
  }
  if (trimmed.ends_with('.')) return Format(kTrailingDot, lang);
  return std::nullopt;
}

// An item's assigned label (Queue.Item.getAssignedLabel), read with the stand-in's own label code
// (standin_label.h), never with slurmfleet's parser, so that tests can catch its mistakes.
struct AssignedLabel {
  std::optional<JenkinsLabel> label;  // none: the item has no label (canRoam)
  std::string name;                   // Label.getName(): `why` texts, /label/ names; "" for none

  // A blank text is no label; any other is Jenkins.getLabel(text): unquoted if wholly quoted,
  // then parsed, else one atom of that text.
  static AssignedLabel From(std::string_view text) {
    AssignedLabel assigned;
    const std::string trimmed = Trim(text);
    if (trimmed.empty()) return assigned;
    assigned.label = GetLabel(trimmed);
    assigned.name = assigned.label->Name();
    return assigned;
  }
  bool empty() const { return !label; }
  // Label.getExpression(), as a script's `assignedLabel.expression` gives it.
  std::string Expression() const { return label ? label->Expression() : std::string(); }
  // Label.contains(node): mode-blind.
  bool Contains(const std::set<std::string>& labels) const {
    return !label || label->Matches(labels);
  }
  // Node.canTake's label part: mode-aware.
  bool Takes(const std::set<std::string>& labels, bool exclusive) const {
    return NodeCanTake(label, labels, exclusive);
  }
};

using RunKey = std::pair<std::string, int>;  // job path, build number

struct Run {
  std::string job;
  int number = 0;
  bool pipeline = false;
  int64_t queue_id = 0;
  std::string built_on;
  bool building = true;
  bool on_executor = false;
  std::string result;
  std::chrono::milliseconds duration{0};
  TimePoint started{};
  TimePoint ends_at{};  // while on an executor
  TimePoint ended{};
};

struct Job {
  std::string path;
  bool pipeline = false;
  bool concurrent = true;
  std::string label;  // for POST .../build
  std::chrono::milliseconds duration{0};
  int next_number = 1;
};

struct QueueItem {
  int64_t id = 0;
  std::string job;
  bool pipeline = false;
  int run_number = 0;  // Pipeline: the run waiting for this node block
  std::string label_text;
  AssignedLabel label;
  std::chrono::milliseconds duration{0};
  TimePoint in_queue_since{};
  TimePoint quiet_until{};
  std::optional<TimePoint> buildable_since;  // nullopt: still a WaitingItem
};

struct LeftItem {
  QueueItem item;
  bool cancelled = false;
  std::optional<RunKey> executable;
  TimePoint left_at{};
};

struct Node {
  std::string name;
  std::string description;
  std::string remote_fs;
  std::string label_string;
  std::set<std::string> labels;  // atoms plus the self-label
  int num_executors = 1;
  bool exclusive = false;
  bool inbound = true;
  bool websocket = false;
  bool workdir_disabled = false;
  std::string workdir_path;
  std::string internal_dir = "remoting";
  bool temp_offline = false;
  std::string offline_message;
  TimePoint offline_since{};
  uint64_t connection = 0;  // 0: no agent connected
  std::string cookie;
  bool channel_lost = false;
  TimePoint lost_at{};
  int64_t connections = 0;
  std::vector<std::optional<RunKey>> executors;

  bool connected() const { return connection != 0; }
  bool online() const { return connected() && !temp_offline; }
  bool building() const {
    return std::any_of(executors.begin(), executors.end(), [](const auto& e) { return e; });
  }
};

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = std::string(kHtmlType);
  Headers headers;
  // A successful /wsagents/ handshake: the node and connection to hold open.
  std::optional<std::pair<std::string, uint64_t>> agent;
};

Reply Text(int status, std::string body, std::string_view type = kTextType) {
  Reply reply;
  reply.status = status;
  reply.body = std::move(body);
  reply.content_type = std::string(type);
  return reply;
}

Reply Html(int status, std::string_view message) {
  return Text(status,
              "<html><head><title>Jenkins</title></head><body><h1>Error</h1><p>" +
                  XmlEscape(message) + "</p></body></html>\n",
              kHtmlType);
}

// hudson.model.Failure rendered by error.jelly: 400 with the message in X-Error (§7.4).
Reply Failure(std::string_view message) {
  Reply reply = Html(400, message);
  reply.headers.emplace_back("X-Error", std::string(message));
  return reply;
}

Reply NotFound() { return Html(404, "Not Found"); }

// @RequirePOST on GET: 405 with Allow: POST (§1).
Reply RequiresPost() {
  Reply reply = Html(405, "This URL requires POST");
  reply.headers.emplace_back("Allow", "POST");
  return reply;
}

// A 302 to a URL relative to the request (§3.1, §7): Stapler's sendRedirect resolves "." or ".."
// against the directory of the raw request path, and Jetty 12 (relativeRedirectAllowed, its
// default) removes the dot segments and sends the path alone, without scheme and host. So the
// node name in it is encoded as the client encoded it, and a context path is kept.
Reply Redirect(const httplib::Request& req, std::string_view relative) {
  std::string location = req.target.substr(0, req.target.find('?'));
  location.erase(location.rfind('/') + 1);
  if (relative == "..") {
    location.pop_back();
    location.erase(location.rfind('/') + 1);
  }
  // httplib may hand the target over decoded: what a path cannot hold raw is encoded again
  std::string encoded;
  for (char c : location) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f ||
        std::string_view("\"<>\\^`{|}#?").find(c) != std::string_view::npos) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      encoded += {'%', kHex[u >> 4], kHex[u & 0xf]};
    } else {
      encoded += c;
    }
  }
  Reply reply = Text(302, "");
  reply.headers.emplace_back("Location", std::move(encoded));
  return reply;
}

// An empty zip archive (end-of-central-directory record only): begins with "PK" like any jar.
std::string EmptyJar() {
  std::string jar = "PK\x05\x06";
  jar.append(18, '\0');
  return jar;
}

}  // namespace

class JenkinsStandin::Impl {
 public:
  explicit Impl(Options options)
      : options_(std::move(options)),
        default_lang_(LangOf(options_.default_locale).value_or(Lang::kEn)),
        administer_(options_.administer) {
    if (options_.api_token.empty()) options_.api_token = "11" + RandomHex(16);
    unsigned char key[32];
    if (RAND_bytes(key, sizeof key) != 1) {
      for (auto& b : key) b = static_cast<unsigned char>(std::rand());
    }
    mac_key_.assign(reinterpret_cast<char*>(key), sizeof key);
    session_ = RandomHex(4);
  }

  bool Listen() {
    if (!LangOf(options_.default_locale)) {
      std::cerr << "jenkins stand-in: default locale '" << options_.default_locale
                << "': only en and de are modelled\n";
      return false;
    }
    // An agent that hangs up turns our next write into EPIPE; without this it would be SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    const int threads = std::max(options_.worker_threads, 8);
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http_.set_socket_options([this](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_ = sock;
    });
    // Jenkins' Jetty keeps a connection for any number of requests; httplib's default closes it
    // after 5, which would make clients open connections a real controller never asks for.
    http_.set_keep_alive_max_count(1'000'000);
    http_.set_tcp_nodelay(true);
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Dispatch(req, res);
    };
    http_.Get(".*", handler);
    http_.Post(".*", handler);
    http_.Put(".*", handler);
    http_.Delete(".*", handler);
    http_.Patch(".*", handler);
    http_.Options(".*", handler);

    if (options_.port == 0) {
      port_ = http_.bind_to_any_port(options_.host);
    } else {
      port_ = http_.bind_to_port(options_.host, options_.port) ? options_.port : -1;
    }
    if (port_ <= 0) {
      std::cerr << "jenkins stand-in: cannot listen on " << options_.host << ":" << options_.port
                << "\n";
      return false;
    }
    base_ = "http://127.0.0.1:" + std::to_string(port_) + "/";
    WidenListenBacklog(listen_fd_);  // Jetty's accept queue is the system's, not 5 deep
    listener_ = std::thread([this] { http_.listen_after_bind(); });
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!http_.is_running()) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::cerr << "jenkins stand-in: the listener did not start within 10 s\n";
        return false;
      }
      std::this_thread::sleep_for(1ms);
    }
    scheduler_ = std::thread([this] { SchedulerLoop(); });
    return true;
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    connections_cv_.notify_all();
    http_.stop();
    if (listener_.joinable()) listener_.join();
    if (scheduler_.joinable()) scheduler_.join();
  }

  const std::string& base() const { return base_; }
  int port() const { return port_; }
  const Options& options() const { return options_; }

  std::string SecretFor(std::string_view name) const {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), mac_key_.data(), static_cast<int>(mac_key_.size()),
         reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &size);
    return Hex(mac, size);
  }

  // ---- test control ----

  int64_t Enqueue(std::string job_path, std::string label, std::chrono::milliseconds duration,
                  bool pipeline) {
    std::lock_guard lock(mu_);
    Job& job = JobFor(job_path, pipeline);
    job.label = label;
    job.duration = duration;
    int64_t id = EnqueueLocked(job, label, duration);
    cv_.notify_all();
    return id;
  }

  void SetConcurrentBuild(const std::string& job_path, bool concurrent) {
    std::lock_guard lock(mu_);
    JobFor(job_path, false).concurrent = concurrent;
  }

  bool CancelItem(int64_t id) {
    std::lock_guard lock(mu_);
    return CancelLocked(id);
  }

  void Restart() {
    std::lock_guard lock(mu_);
    session_ = RandomHex(4);
    for (auto& [name, node] : nodes_) {
      node.connection = 0;
      node.cookie.clear();
      node.channel_lost = false;  // a fresh controller has no offline cause yet
      for (auto& slot : node.executors) {
        if (!slot) continue;
        Run& run = runs_.at(*slot);
        if (run.pipeline) {
          // The Pipeline resumes: its node block needs an executor again.
          run.on_executor = false;
          run.built_on.clear();
          QueueItem item;
          item.id = next_queue_id_++;
          item.job = run.job;
          item.pipeline = true;
          item.run_number = run.number;
          item.label_text = pipeline_labels_[*slot];
          item.label = AssignedLabel::From(item.label_text);
          item.duration = run.duration;
          item.in_queue_since = SysClock::now();
          item.quiet_until = item.in_queue_since;
          item.buildable_since = item.in_queue_since;
          run.queue_id = item.id;
          queue_.emplace(item.id, std::move(item));
        } else {
          EndRun(run, "ABORTED");
        }
        slot.reset();
      }
    }
    left_.clear();  // the leftItems cache lives in memory only
    cv_.notify_all();
    connections_cv_.notify_all();
  }

  void SetQuietingDown(bool value) {
    std::lock_guard lock(mu_);
    quieting_down_ = value;
  }

  void SetAdminister(bool value) {
    std::lock_guard lock(mu_);
    administer_ = value;
  }

  bool DisconnectAgent(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second.connected()) return false;
    DropConnection(it->second);
    cv_.notify_all();
    return true;
  }

  Snapshot Stats() const {
    std::lock_guard lock(mu_);
    return StatsLocked();
  }

  bool WaitFor(const std::function<bool(const Snapshot&)>& predicate,
               std::chrono::milliseconds timeout) const {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(mu_);
    while (true) {
      Snapshot snapshot = StatsLocked();
      lock.unlock();
      if (predicate(snapshot)) return true;
      lock.lock();
      if (std::chrono::steady_clock::now() >= deadline) return false;
      cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + 20ms));
    }
  }

  std::string StatsJson() const {
    Snapshot s = Stats();
    json nodes = json::array();
    for (const auto& n : s.nodes) {
      nodes.push_back({{"name", n.name},
                       {"labels", n.labels},
                       {"description", n.description},
                       {"connected", n.connected},
                       {"building", n.building},
                       {"temporarilyOffline", n.temporarily_offline},
                       {"connections", n.connections}});
    }
    auto builds = [](const std::vector<BuildInfo>& list) {
      json out = json::array();
      for (const auto& b : list) {
        out.push_back({{"job", b.job},
                       {"number", b.number},
                       {"pipeline", b.pipeline},
                       {"result", b.result},
                       {"builtOn", b.built_on},
                       {"queueId", b.queue_id},
                       {"started", Millis(b.started)},
                       {"ended", Millis(b.ended)}});
      }
      return out;
    };
    json requests = json::object();
    for (const auto& r : s.requests) {
      auto& count = requests[r.method + " " + r.path];
      count = count.is_null() ? 1 : count.get<int64_t>() + 1;
    }
    json out = {{"session", s.session},
                {"nodes", nodes},
                {"maxNodesSeen", s.max_nodes_seen},
                {"maxConnectedSeen", s.max_connected_seen},
                {"nodesCreated", s.nodes_created},
                {"nodesDeleted", s.nodes_deleted},
                {"agentConnections", s.agent_connections},
                {"queueLength", s.queue_length},
                {"runningBuilds", builds(s.running_builds)},
                {"completedBuilds", builds(s.completed_builds)},
                {"requests", requests}};
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  }

 private:
  // ---- model (all under mu_) ----

  Job& JobFor(const std::string& path, bool pipeline) {
    auto [it, inserted] = jobs_.try_emplace(path);
    if (inserted) {
      it->second.path = path;
      it->second.pipeline = pipeline;
    }
    return it->second;
  }

  int64_t EnqueueLocked(Job& job, const std::string& label, std::chrono::milliseconds duration) {
    QueueItem item;
    item.id = next_queue_id_++;
    item.job = job.path;
    item.pipeline = job.pipeline;
    item.label_text = label;
    item.label = AssignedLabel::From(label);
    item.duration = duration;
    item.in_queue_since = SysClock::now();
    item.quiet_until = item.in_queue_since + options_.quiet_period;
    if (options_.quiet_period.count() <= 0) item.buildable_since = item.in_queue_since;
    if (job.pipeline) {
      // A Pipeline run starts at once; its node() block is what waits in the queue.
      Run run;
      run.job = job.path;
      run.number = job.next_number++;
      run.pipeline = true;
      run.queue_id = item.id;
      run.duration = duration;
      run.started = item.in_queue_since;
      item.run_number = run.number;
      RunKey key{job.path, run.number};
      pipeline_labels_[key] = label;
      runs_.emplace(key, std::move(run));
    }
    int64_t id = item.id;
    queue_.emplace(id, std::move(item));
    return id;
  }

  bool CancelLocked(int64_t id) {
    auto it = queue_.find(id);
    if (it == queue_.end()) return false;
    QueueItem item = std::move(it->second);
    queue_.erase(it);
    if (item.pipeline) {
      // The node() step fails and so does the run.
      if (auto run = runs_.find({item.job, item.run_number}); run != runs_.end()) {
        EndRun(run->second, "ABORTED");
      }
    }
    left_[id] = LeftItem{std::move(item), true, std::nullopt, SysClock::now()};
    cv_.notify_all();
    return true;
  }

  void EndRun(Run& run, std::string result) {
    run.building = false;
    run.on_executor = false;
    run.result = std::move(result);
    run.ended = SysClock::now();
    completed_.emplace_back(run.job, run.number);
  }

  // The agent's channel is gone: freestyle builds there end, the node shows the channel
  // termination. A Pipeline node block keeps its executor (currentExecutable stays set) and waits
  // for the agent to come back; it ends only when the node is removed (EndBlocksOf).
  void DropConnection(Node& node) {
    node.connection = 0;
    node.cookie.clear();
    node.channel_lost = true;
    connections_cv_.notify_all();
    node.lost_at = SysClock::now();
    for (auto& slot : node.executors) {
      if (!slot || runs_.at(*slot).pipeline) continue;
      EndRun(runs_.at(*slot), "ABORTED");
      slot.reset();
    }
  }

  // The node is being removed: the Pipeline node blocks still on it are aborted.
  void EndBlocksOf(Node& node) {
    for (auto& slot : node.executors) {
      if (!slot) continue;
      EndRun(runs_.at(*slot), "ABORTED");
      slot.reset();
    }
  }

  void UpdateHighWaterMarks() {
    max_nodes_seen_ = std::max(max_nodes_seen_, nodes_.size());
    size_t connected = static_cast<size_t>(std::count_if(
        nodes_.begin(), nodes_.end(), [](const auto& n) { return n.second.connected(); }));
    max_connected_seen_ = std::max(max_connected_seen_, connected);
  }

  const Run* RunningBuildOf(const std::string& job) const {
    for (auto it = runs_.lower_bound({job, 0}); it != runs_.end() && it->first.first == job; ++it) {
      if (it->second.building && it->second.on_executor) return &it->second;
    }
    return nullptr;
  }

  // A non-concurrent freestyle job with a build running: the item is a Queue$BlockedItem.
  const Run* BlockingRun(const QueueItem& item) const {
    if (item.pipeline) return nullptr;
    auto job = jobs_.find(item.job);
    if (job == jobs_.end() || job->second.concurrent) return nullptr;
    return RunningBuildOf(item.job);
  }

  void SchedulerLoop() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      Maintain(SysClock::now());
      cv_.notify_all();
      cv_.wait_for(lock, kSchedulerPeriod);
    }
  }

  // LoadStatistics.updateCounts: each label's queue length is an exponentially weighted moving
  // average of the buildable items assigned exactly that label, sampled every
  // load_sample_interval (CONTRACT.md 2.4): one item shows as 0.1, then 0.19, ...
  void SampleQueueLengths(TimePoint now) {
    if (now < next_load_sample_) return;
    next_load_sample_ = now + options_.load_sample_interval;
    std::map<std::string, int> counts;
    for (const auto& [id, item] : queue_) {
      if (item.buildable_since && !item.label.empty()) ++counts[item.label.name];
    }
    for (auto& [label, average] : queue_length_) average *= 0.9;
    for (const auto& [label, count] : counts) queue_length_[label] += 0.1 * count;
  }

  // Queue.maintain(), reduced: finish due builds, end quiet periods, hand buildable items to
  // idle executors of online matching nodes (oldest item first, nodes by name).
  void Maintain(TimePoint now) {
    SampleQueueLengths(now);
    for (auto& [name, node] : nodes_) {
      for (auto& slot : node.executors) {
        if (!slot) continue;
        Run& run = runs_.at(*slot);
        // a Pipeline block whose agent is gone waits for it to come back
        if (run.ends_at <= now && node.connected()) {
          EndRun(run, "SUCCESS");
          slot.reset();
        }
      }
    }
    for (auto& [id, item] : queue_) {
      if (!item.buildable_since && item.quiet_until <= now) item.buildable_since = now;
    }
    if (!quieting_down_) {
      std::vector<int64_t> assigned;
      for (auto& [id, item] : queue_) {
        if (!item.buildable_since || BlockingRun(item)) continue;
        for (auto& [name, node] : nodes_) {
          if (!node.online() || !item.label.Takes(node.labels, node.exclusive)) continue;
          auto slot = std::find_if(node.executors.begin(), node.executors.end(),
                                   [](const auto& e) { return !e; });
          if (slot == node.executors.end()) continue;
          *slot = StartRun(item, node, now);
          left_[id] = LeftItem{item, false, *slot, now};
          assigned.push_back(id);
          break;
        }
      }
      for (int64_t id : assigned) queue_.erase(id);
    }
    std::erase_if(left_,
                  [&](const auto& entry) { return now - entry.second.left_at > kLeftItemTtl; });
  }

  RunKey StartRun(const QueueItem& item, const Node& node, TimePoint now) {
    Run* run = nullptr;
    RunKey key;
    if (item.pipeline) {
      key = {item.job, item.run_number};
      run = &runs_.at(key);
    } else {
      Job& job = jobs_.at(item.job);
      key = {item.job, job.next_number++};
      run = &runs_[key];
      run->job = item.job;
      run->number = key.second;
      run->queue_id = item.id;
      run->started = now;
    }
    run->built_on = node.name;
    run->on_executor = true;
    run->duration = item.duration;
    run->ends_at = now + item.duration;
    return key;
  }

  Snapshot StatsLocked() const {
    Snapshot s;
    s.session = session_;
    for (const auto& [name, node] : nodes_) {
      NodeInfo info;
      info.name = name;
      for (const auto& label : node.labels) {
        if (label != name) info.labels.push_back(label);
      }
      info.description = node.description;
      info.remote_fs = node.remote_fs;
      info.num_executors = node.num_executors;
      info.exclusive = node.exclusive;
      info.connected = node.connected();
      info.building = node.building();
      info.temporarily_offline = node.temp_offline;
      info.offline_message = node.offline_message;
      info.connections = node.connections;
      s.nodes.push_back(std::move(info));
    }
    s.max_nodes_seen = max_nodes_seen_;
    s.max_connected_seen = max_connected_seen_;
    s.nodes_created = nodes_created_;
    s.nodes_deleted = nodes_deleted_;
    s.agent_connections = agent_connections_;
    auto info = [](const Run& run) {
      return BuildInfo{run.job,      run.number,   run.pipeline, run.result,
                       run.built_on, run.queue_id, run.started,  run.ended};
    };
    for (const auto& [key, run] : runs_) {
      if (run.building) s.running_builds.push_back(info(run));
    }
    for (const auto& key : completed_) s.completed_builds.push_back(info(runs_.at(key)));
    s.queue_length = queue_.size();
    s.requests = requests_;
    return s;
  }

  // ---- URLs and names ----

  std::string JobUrl(const std::string& path) const {
    std::string url = base_;
    for (const auto& segment : Split(path, '/')) url += "job/" + RawEncode(segment) + "/";
    return url;
  }
  std::string RunUrl(const Run& run) const {
    return JobUrl(run.job) + std::to_string(run.number) + "/";
  }
  static std::string JobDisplayName(const std::string& path) {
    return Join(Split(path, '/'), kRaquo);
  }
  static std::string JobName(const std::string& path) { return Split(path, '/').back(); }
  std::string PlaceholderName(const Run& run) const {
    return "part of " + JobDisplayName(run.job) + " #" + std::to_string(run.number);
  }
  std::string ComputerUrl(const std::string& name) const {
    return base_ + "computer/" + RawEncode(name) + "/";
  }

  // ---- JSON of the model objects (full; tree= or the depth-0 view prunes them) ----

  json RunJson(const Run& run) const {
    json j = {{"_class", run.pipeline ? kWorkflowRun : kFreestyleBuild},
              {"actions", json::array()},
              {"artifacts", json::array()},
              {"building", run.building},
              {"description", nullptr},
              {"displayName", "#" + std::to_string(run.number)},
              {"duration", run.building ? 0 : Millis(run.ended) - Millis(run.started)},
              {"estimatedDuration", run.duration.count()},
              {"executor", nullptr},
              {"fullDisplayName", JobDisplayName(run.job) + " #" + std::to_string(run.number)},
              {"id", std::to_string(run.number)},
              {"keepLog", false},
              {"number", run.number},
              {"queueId", run.queue_id},
              {"result", run.building ? json(nullptr) : json(run.result)},
              {"timestamp", Millis(run.started)},
              {"url", RunUrl(run)}};
    if (run.pipeline) {
      j["changeSets"] = json::array();
      j["inProgress"] = run.building;
    } else {
      j["builtOn"] = run.built_on;
      j["changeSet"] = {
          {"_class", "hudson.scm.EmptyChangeLogSet"}, {"items", json::array()}, {"kind", nullptr}};
    }
    return j;
  }

  // What an executor runs, as currentExecutable and a LeftItem's executable show it (§6).
  json ExecutableJson(const Run& run) const {
    if (!run.pipeline) return RunJson(run);
    return {{"_class", std::string(kPlaceholderTask) + "$PlaceholderExecutable"},
            {"displayName", PlaceholderName(run)},
            {"number", run.number},
            {"timestamp", Millis(run.started)},
            {"url", RunUrl(run)}};
  }

  json TaskJson(const QueueItem& item) const {
    if (item.pipeline) {
      const Run& run = runs_.at({item.job, item.run_number});
      return {{"_class", kPlaceholderTask},
              {"fullDisplayName", PlaceholderName(run)},
              {"name", PlaceholderName(run)},
              {"url", RunUrl(run)}};
    }
    return {{"_class", "hudson.model.FreeStyleProject"},
            {"color", RunningBuildOf(item.job) ? "notbuilt_anime" : "notbuilt"},
            {"fullDisplayName", JobDisplayName(item.job)},
            {"fullName", item.job},
            {"labelExpression",
             item.label.empty() ? json(nullptr) : json(AssignedLabelString(Trim(item.label_text)))},
            {"name", JobName(item.job)},
            {"url", JobUrl(item.job)}};
  }

  // The nodes of a label (Label.getNodes): every node it contains, the built-in one included.
  std::vector<const Node*> LabelNodes(const AssignedLabel& label) const {
    std::vector<const Node*> out;
    for (const auto& [name, node] : nodes_) {
      if (label.Contains(node.labels)) out.push_back(&node);
    }
    return out;
  }
  bool BuiltInHas(const AssignedLabel& label) const { return label.Contains({"built-in"}); }

  // JobOffer.getCauseOfBlockage for one idle executor of `node`: Node.canTake, then offline.
  std::optional<std::string> OfferCause(const Node& node, const QueueItem& item, Lang lang) const {
    if (!item.label.empty() && !item.label.Contains(node.labels)) {
      return Format(kLabelMissing, lang, {node.name, item.label.name});
    }
    if (item.label.empty() && node.exclusive) return Format(kNodeIsReserved, lang, {node.name});
    if (!node.online()) return Format(kNodeOffline, lang, {node.name});
    if (!item.label.Takes(node.labels, node.exclusive)) {
      return Format(kNodeIsReserved, lang, {node.name});
    }
    return std::nullopt;
  }

  // Queue.Item.getWhy() (§2.3), in the request's language: every cause, the composite's parts
  // included, is worded when the item is exported.
  std::string Why(const QueueItem& item, TimePoint now, Lang lang) const {
    if (!item.buildable_since) {
      return Format(
          kInQuietPeriod, lang,
          {TimeSpan(std::chrono::duration_cast<std::chrono::milliseconds>(item.quiet_until - now),
                    lang)});
    }
    if (const Run* run = BlockingRun(item)) {
      return Format(kBuildInProgress, lang, {std::to_string(run->number), ""});
    }
    if (quieting_down_) return Format(kAboutToShutDown, lang);
    // Causes from idle executors that refused the item, deduplicated and sorted as
    // CompositeCauseOfBlockage's TreeMap does.
    std::set<std::string> reasons;
    bool candidate = false;
    for (const auto& [name, node] : nodes_) {
      for (const auto& slot : node.executors) {
        if (slot) continue;
        if (auto cause = OfferCause(node, item, lang)) {
          reasons.insert(*cause);
        } else {
          candidate = true;
        }
      }
    }
    // BuildableItem.getCauseOfBlockage: the label decides the text; the idle executors' causes
    // show only while the label (or, without one, the controller) has an idle online executor.
    const bool refused = !candidate && !reasons.empty();
    const auto composite = [&] {
      return Join(std::vector<std::string>(reasons.begin(), reasons.end()), "; ");
    };
    const auto idle_online = [](const Node& n) {
      return n.online() && std::any_of(n.executors.begin(), n.executors.end(),
                                       [](const auto& slot) { return !slot; });
    };
    if (nodes_.empty() || item.label.empty()) {  // without agent nodes the label is dropped
      const bool idle = std::any_of(nodes_.begin(), nodes_.end(),
                                    [&](const auto& named) { return idle_online(named.second); });
      return refused && idle ? composite() : Format(kWaitingForExecutor, lang);
    }
    std::vector<const Node*> nodes = LabelNodes(item.label);
    size_t count = nodes.size() + (BuiltInHas(item.label) ? 1 : 0);
    bool offline =
        !BuiltInHas(item.label) &&
        std::none_of(nodes.begin(), nodes.end(), [](const Node* n) { return n->online(); });
    if (offline) {
      if (count == 0) return Format(kLabelHasNoNodes, lang, {item.label.name});
      if (count > 1) return Format(kAllNodesOffline, lang, {item.label.name});
      return Format(kNodeOffline, lang, {nodes.front()->name});
    }
    if (refused &&
        std::any_of(nodes.begin(), nodes.end(), [&](const Node* n) { return idle_online(*n); })) {
      return composite();
    }
    if (count == 1 && !nodes.empty()) {
      return Format(kWaitingForExecutorOn, lang, {nodes.front()->name});
    }
    return Format(kWaitingForExecutorOn, lang, {item.label.name});
  }

  bool Stuck(const QueueItem& item) const {
    if (!item.buildable_since || BlockingRun(item) || item.label.empty()) return false;
    if (BuiltInHas(item.label)) return false;
    auto nodes = LabelNodes(item.label);
    return std::none_of(nodes.begin(), nodes.end(), [](const Node* n) { return n->online(); });
  }

  std::string ItemClass(const QueueItem& item) const {
    if (!item.buildable_since) return "WaitingItem";
    if (BlockingRun(item)) return "BlockedItem";
    return "BuildableItem";
  }

  json ItemJson(const QueueItem& item, TimePoint now, Lang lang) const {
    std::string kind = ItemClass(item);
    json j = {{"_class", "hudson.model.Queue$" + kind},
              {"actions", json::array()},
              {"blocked", kind == "BlockedItem"},
              {"buildable", kind == "BuildableItem"},
              {"id", item.id},
              {"inQueueSince", Millis(item.in_queue_since)},
              {"params", ""},
              {"stuck", Stuck(item)},
              {"task", TaskJson(item)},
              {"url", "queue/item/" + std::to_string(item.id) + "/"},
              {"why", Why(item, now, lang)}};
    if (kind == "WaitingItem") {
      j["timestamp"] = Millis(item.quiet_until);
    } else {
      j["buildableStartMilliseconds"] = Millis(*item.buildable_since);
    }
    if (kind == "BuildableItem") j["pending"] = false;
    return j;
  }

  json LeftItemJson(const LeftItem& left) const {
    json executable = nullptr;
    if (left.executable) {
      if (auto run = runs_.find(*left.executable); run != runs_.end()) {
        executable = ExecutableJson(run->second);
      }
    }
    return {{"_class", "hudson.model.Queue$LeftItem"},
            {"actions", json::array()},
            {"blocked", false},
            {"buildable", false},
            {"cancelled", left.cancelled},
            {"executable", executable},
            {"id", left.item.id},
            {"inQueueSince", Millis(left.item.in_queue_since)},
            {"params", ""},
            {"stuck", false},
            {"task", TaskJson(left.item)},
            {"url", "queue/item/" + std::to_string(left.item.id) + "/"},
            {"why", nullptr}};
  }

  // Queue.getItems(): waiting items, blocked ones, then buildable ones newest first.
  std::vector<const QueueItem*> QueueOrder() const {
    std::vector<const QueueItem*> waiting, blocked, buildable;
    for (const auto& [id, item] : queue_) {
      std::string kind = ItemClass(item);
      (kind == "WaitingItem"   ? waiting
       : kind == "BlockedItem" ? blocked
                               : buildable)
          .push_back(&item);
    }
    std::stable_sort(waiting.begin(), waiting.end(), [](const QueueItem* a, const QueueItem* b) {
      return a->quiet_until < b->quiet_until;
    });
    std::reverse(buildable.begin(), buildable.end());
    std::vector<const QueueItem*> out = waiting;
    out.insert(out.end(), blocked.begin(), blocked.end());
    out.insert(out.end(), buildable.begin(), buildable.end());
    return out;
  }

  json ComputerJson(const Node& node, TimePoint now) const {
    bool offline = !node.online();
    bool idle = true;
    json executors = json::array();
    for (size_t i = 0; i < node.executors.size(); ++i) {
      const auto& slot = node.executors[i];
      json executor = {{"currentExecutable", nullptr},
                       {"idle", true},
                       {"likelyStuck", false},
                       {"number", i},
                       {"progress", -1}};
      if (slot) {
        const Run& run = runs_.at(*slot);
        idle = false;
        int64_t total = std::max<int64_t>(run.duration.count(), 1);
        int64_t done = Millis(now) - Millis(run.ends_at - run.duration);
        executor["currentExecutable"] = ExecutableJson(run);
        executor["idle"] = false;
        executor["progress"] = std::clamp<int64_t>(done * 100 / total, 0, 99);
      }
      executors.push_back(std::move(executor));
    }
    json cause = nullptr;
    std::string reason;
    if (node.temp_offline) {
      cause = {
          {"_class", "hudson.slaves.OfflineCause$UserCause"},
          {"description", "Disconnected by " + options_.user +
                              (node.offline_message.empty() ? "" : " : " + node.offline_message)},
          {"timestamp", Millis(node.offline_since)}};
      reason = node.offline_message;
    } else if (!node.connected() && node.channel_lost) {
      cause = {{"_class", "hudson.slaves.OfflineCause$ChannelTermination"},
               {"description", "Connection was broken"},
               {"timestamp", Millis(node.lost_at)}};
      reason = "Connection was broken";
    }
    json labels = json::array();
    for (const auto& label : node.labels) labels.push_back({{"name", label}});
    json monitors = json::object();
    if (node.connected()) {
      monitors = {{"hudson.node_monitors.ArchitectureMonitor", "Linux (amd64)"},
                  {"hudson.node_monitors.ClockMonitor",
                   {{"_class", "hudson.util.ClockDifference"}, {"diff", 0}}},
                  {"hudson.node_monitors.ResponseTimeMonitor",
                   {{"_class", "hudson.node_monitors.ResponseTimeMonitor$Data"},
                    {"timestamp", Millis(now)},
                    {"average", 1}}}};
    }
    return {
        {"_class", "hudson.slaves.SlaveComputer"},
        {"actions", json::array()},
        {"absoluteRemotePath",
         node.connected() ? json(node.remote_fs.empty() ? "/" : node.remote_fs) : json(nullptr)},
        {"assignedLabels", labels},
        {"description", node.description},
        {"displayName", node.name},
        {"executors", executors},
        {"icon", offline ? "symbol-computer-offline" : "symbol-computer"},
        {"iconClassName", offline ? "icon-computer-x" : "icon-computer"},
        {"idle", idle},
        {"jnlpAgent", node.inbound},
        {"launchSupported", !node.inbound},
        {"loadStatistics", {{"_class", "hudson.model.Label$1"}}},
        {"manualLaunchAllowed", true},
        {"monitorData", monitors},
        {"numExecutors", node.num_executors},
        {"offline", offline},
        {"offlineCause", cause},
        {"offlineCauseReason", reason},
        {"oneOffExecutors", json::array()},
        {"temporarilyOffline", node.temp_offline}};
  }

  json BuiltInJson() const {
    return {{"_class", "hudson.model.Hudson$MasterComputer"},
            {"actions", json::array()},
            {"assignedLabels", json::array({{{"name", "built-in"}}})},
            {"description", "the Jenkins controller's built-in node"},
            {"displayName", "Built-In Node"},
            {"executors", json::array()},
            {"icon", "symbol-computer"},
            {"iconClassName", "icon-computer"},
            {"idle", true},
            {"jnlpAgent", false},
            {"launchSupported", true},
            {"loadStatistics", {{"_class", "hudson.model.Label$1"}}},
            {"manualLaunchAllowed", true},
            {"monitorData", json::object()},
            {"numExecutors", 0},
            {"offline", false},
            {"offlineCause", nullptr},
            {"offlineCauseReason", ""},
            {"oneOffExecutors", json::array()},
            {"temporarilyOffline", false}};
  }

  // ---- HTTP ----

  enum class Caller { kAnonymous, kUser, kBadCredentials };

  Caller Authenticate(const httplib::Request& req) const {
    if (!req.has_header("Authorization")) return Caller::kAnonymous;
    std::string header = req.get_header_value("Authorization");
    if (header.size() < 6 ||
        !std::equal(header.begin(), header.begin() + 6, "Basic ", [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return Caller::kAnonymous;  // other schemes are not Jenkins' business
    }
    auto decoded = Base64Decode(Trim(std::string_view(header).substr(6)));
    if (!decoded) return Caller::kBadCredentials;
    size_t colon = decoded->find(':');
    if (colon == std::string::npos) return Caller::kBadCredentials;
    if (decoded->substr(0, colon) != options_.user ||
        decoded->substr(colon + 1) != options_.api_token) {
      return Caller::kBadCredentials;
    }
    return Caller::kUser;
  }

  static bool Anonymous(const std::string& path) {
    return path.starts_with("/jnlpJars/") || path == "/login" || path == "/wsagents/" ||
           path == "/wsagents" || path == "/health" || path.starts_with("/standin/");
  }

  void Dispatch(const httplib::Request& req, httplib::Response& res) {
    Reply reply;
    try {
      reply = Route(req);
    } catch (const std::exception& e) {
      reply = Html(500, std::string("stand-in Jenkins: ") + e.what());
    }
    res.status = reply.status;
    res.set_header("X-Jenkins", options_.version);
    {
      std::lock_guard lock(mu_);
      res.set_header("X-Jenkins-Session", session_);
      if (requests_.size() < kMaxLoggedRequests) {
        requests_.push_back({req.method, req.path, reply.status});
      }
    }
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    if (reply.agent) {
      HoldAgentConnection(res, reply.agent->first, reply.agent->second);
      return;
    }
    res.set_content(reply.body, reply.content_type);
  }

  Reply Route(const httplib::Request& req) {
    const std::string& path = req.path;
    Caller caller = Authenticate(req);
    if (caller == Caller::kBadCredentials) {
      // BasicAuthenticationEntryPoint: a wrong token never falls back to anonymous.
      Reply reply = Html(401, "Invalid password/token for user: " + options_.user);
      reply.headers.emplace_back("WWW-Authenticate", R"(Basic realm="Jenkins")");
      return reply;
    }
    if (Anonymous(path)) return RouteAnonymous(req);
    if (caller == Caller::kAnonymous) {
      Reply reply = Text(
          403,
          "<html><head><meta http-equiv='refresh' content='1;url=/login?from=" + RawEncode(path) +
              "'/></head><body style='background-color:white; color:white;'>\n"
              "Authentication required\n</body></html>\n",
          kHtmlType);
      reply.headers.emplace_back("X-You-Are-Authenticated-As", "anonymous");
      reply.headers.emplace_back("X-Required-Permission", "hudson.model.Hudson.Read");
      return reply;
    }
    const bool get = req.method == "GET" || req.method == "HEAD";
    const bool post = req.method == "POST";
    if (path == "/api/json") return get ? RootApi(req) : RequiresPost();
    if (path == "/queue/api/json") return get ? QueueApi(req) : NotFound();
    if (path.starts_with("/queue/item/")) return QueueItemApi(req);
    if (path == "/queue/cancelItem") {
      if (!post) return RequiresPost();
      return CancelItemRequest(req);
    }
    if (path == "/scriptText") {
      if (!post) return RequiresPost();
      return ScriptText(req);
    }
    if (path.starts_with("/label/")) return get ? LabelApi(req) : NotFound();
    if (path == "/computer/api/json") return get ? ComputerSetApi(req) : NotFound();
    if (path == "/computer/doCreateItem") return post ? CreateNode(req) : NotFound();
    if (path.starts_with("/computer/")) return ComputerAction(req, get, post);
    if (path.starts_with("/job/")) return JobAction(req, get, post);
    return NotFound();
  }

  Reply RouteAnonymous(const httplib::Request& req) {
    const std::string& path = req.path;
    if (path == "/login") return Html(200, "Sign in [Jenkins]");
    if (path == "/health") return Text(200, R"({"status":true})", kJsonType);
    if (path == "/standin/stats") return Text(200, StatsJson() + "\n", kJsonType);
    if (path == "/jnlpJars/agent.jar" || path == "/jnlpJars/slave.jar" ||
        path == "/jnlpJars/jenkins-cli.jar") {
      return Text(200, EmptyJar(), "application/java-archive");
    }
    if (path == "/wsagents/" || path == "/wsagents") return AgentHandshake(req);
    return NotFound();
  }

  // Answers a model object through tree= (or depth>=1: everything; neither: the depth-0 view).
  Reply JsonReply(const httplib::Request& req, const json& full, std::string_view default_tree) {
    json body;
    if (req.has_param("tree")) {
      auto spec = ParseTree(req.get_param_value("tree"));
      if (!spec) return Html(400, spec.error().message);
      body = Prune(full, *spec);
    } else if (req.has_param("depth") && req.get_param_value("depth") != "0") {
      body = full;
    } else {
      body = Prune(full, ParseTree(default_tree).value());
    }
    return Text(200, body.dump(-1, ' ', false, json::error_handler_t::replace), kJsonType);
  }

  Reply RootApi(const httplib::Request& req) {
    std::lock_guard lock(mu_);
    std::set<std::string> top;
    for (const auto& [path, job] : jobs_) top.insert(Split(path, '/').front());
    json jobs = json::array();
    for (const auto& name : top) {
      bool folder = !jobs_.contains(name);
      jobs.push_back({{"_class", folder ? "com.cloudbees.hudson.plugins.folder.Folder"
                                        : (jobs_.at(name).pipeline
                                               ? "org.jenkinsci.plugins.workflow.job.WorkflowJob"
                                               : "hudson.model.FreeStyleProject")},
                      {"name", name},
                      {"url", JobUrl(name)},
                      {"color", "notbuilt"}});
    }
    json view = {{"_class", "hudson.model.AllView"}, {"name", "all"}, {"url", base_}};
    json full = {{"_class", "hudson.model.Hudson"},
                 {"assignedLabels", json::array({{{"name", "built-in"}}})},
                 {"mode", "NORMAL"},
                 {"nodeDescription", "the Jenkins controller's built-in node"},
                 {"nodeName", ""},
                 {"numExecutors", 0},
                 {"description", nullptr},
                 {"jobs", jobs},
                 {"overallLoad", json::object()},
                 {"primaryView", view},
                 {"quietDownReason", nullptr},
                 {"quietingDown", quieting_down_},
                 {"slaveAgentPort", -1},
                 {"unlabeledLoad", {{"_class", "jenkins.model.UnlabeledLoadStatistics"}}},
                 {"url", base_},
                 {"useCrumbs", true},
                 {"useSecurity", true},
                 {"views", json::array({view})}};
    return JsonReply(req, full, kRootDefault);
  }

  // The lists are read under the lock and pruned and written out after it, so that calls asked
  // side by side are answered side by side, as Jenkins' request threads answer them.
  Reply QueueApi(const httplib::Request& req) {
    json items = json::array();
    {
      std::lock_guard lock(mu_);
      TimePoint now = SysClock::now();
      const Lang lang = RequestLang(req, default_lang_);
      for (const QueueItem* item : QueueOrder()) items.push_back(ItemJson(*item, now, lang));
    }
    json full = {{"_class", "hudson.model.Queue"},
                 {"discoverableItems", json::array()},
                 {"items", std::move(items)}};
    return JsonReply(req, full, "discoverableItems,items[" + std::string(kItemDefault) + "]");
  }

  Reply QueueItemApi(const httplib::Request& req) {
    // /queue/item/<id>/api/json
    auto parts = Split(req.path, '/');  // "", queue, item, id, api, json
    if (parts.size() != 6 || parts[4] != "api" || parts[5] != "json") return NotFound();
    int64_t id = 0;
    auto [ptr, ec] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), id);
    if (ec != std::errc() || ptr != parts[3].data() + parts[3].size()) return NotFound();
    std::lock_guard lock(mu_);
    if (auto it = queue_.find(id); it != queue_.end()) {
      return JsonReply(req, ItemJson(it->second, SysClock::now(), RequestLang(req, default_lang_)),
                       kItemDefault);
    }
    if (auto it = left_.find(id); it != left_.end()) {
      return JsonReply(req, LeftItemJson(it->second), kItemDefault);
    }
    return NotFound();
  }

  Reply CancelItemRequest(const httplib::Request& req) {
    int64_t id = 0;
    std::string text = req.get_param_value("id");
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || ptr != text.data() + text.size()) return Html(400, "id is required");
    std::lock_guard lock(mu_);
    CancelLocked(id);  // Jenkins answers the same whether or not the item was still queued
    return Text(204, "");
  }

  // §2.5: runs nothing. The queue script is recognised by what it reads, and answered with the
  // JSON it would print; any other script prints nothing.
  Reply ScriptText(const httplib::Request& req) {
    std::unique_lock lock(mu_);
    if (!administer_) {
      Reply reply = Html(403, options_.user + " is missing the Overall/Administer permission");
      reply.headers.emplace_back("X-You-Are-Authenticated-As", options_.user);
      reply.headers.emplace_back("X-Required-Permission", "hudson.model.Hudson.Administer");
      return reply;
    }
    std::string script = req.get_param_value("script");
    if (script.find("queue") == std::string::npos ||
        script.find("assignedLabel") == std::string::npos ||
        script.find("JsonOutput") == std::string::npos) {
      return Text(200, "");
    }
    TimePoint now = SysClock::now();
    const Lang lang = RequestLang(req, default_lang_);  // the script runs in the request's thread
    ordered_json out = ordered_json::array();
    for (const QueueItem* item : QueueOrder()) {
      std::string task = item->pipeline ? PlaceholderName(runs_.at({item->job, item->run_number}))
                                        : JobDisplayName(item->job);
      out.push_back({{"id", item->id},
                     {"cls", ItemClass(*item)},
                     {"label", item->label.empty() ? ordered_json(nullptr)
                                                   : ordered_json(item->label.Expression())},
                     {"buildable", ItemClass(*item) == "BuildableItem"},
                     {"why", Why(*item, now, lang)},
                     {"task", task}});
    }
    lock.unlock();
    // Groovy's JsonOutput escapes non-ASCII characters as \uXXXX.
    return Text(200, out.dump(-1, ' ', true, ordered_json::error_handler_t::replace) + "\n");
  }

  Reply LabelApi(const httplib::Request& req) {
    // /label/<expr>/api/json, <expr> already percent-decoded by httplib
    std::string_view rest = std::string_view(req.path).substr(7);
    if (!rest.ends_with("/api/json")) return NotFound();
    std::string text(rest.substr(0, rest.size() - 9));
    AssignedLabel label = AssignedLabel::From(text);
    std::lock_guard lock(mu_);
    json nodes = json::array();
    int total = 0, busy = 0, idle = 0, defined = 0;
    bool any_online = false;
    if (BuiltInHas(label)) {
      nodes.push_back({{"_class", "hudson.model.Hudson"}, {"nodeName", ""}});
      any_online = true;
    }
    for (const Node* node : LabelNodes(label)) {
      nodes.push_back({{"_class", "hudson.slaves.DumbSlave"}, {"nodeName", node->name}});
      defined += node->num_executors;
      if (!node->online()) continue;
      any_online = true;
      total += node->num_executors;
      for (const auto& slot : node->executors) (slot ? busy : idle) += 1;
    }
    auto average = queue_length_.find(label.name);
    const double queued = average == queue_length_.end() ? 0.0 : average->second;
    auto series = [](double value) {
      json one = {{"history", json::array({value})}, {"latest", value}};
      return json{{"hour", one}, {"min", one}, {"sec10", one}};
    };
    json load = {{"_class", "hudson.model.Label$1"},    {"availableExecutors", series(idle)},
                 {"busyExecutors", series(busy)},       {"connectingExecutors", series(0)},
                 {"definedExecutors", series(defined)}, {"idleExecutors", series(idle)},
                 {"onlineExecutors", series(total)},    {"queueLength", series(queued)},
                 {"totalExecutors", series(total)},     {"totalQueueLength", series(queued)}};
    // Jenkins.getLabel("") is the atom "": the blank path has no other reading.
    const std::string_view label_class =
        label.empty() ? "hudson.model.labels.LabelAtom" : label.label->ClassName();
    json full = {{"_class", label_class},
                 {"actions", json::array()},
                 {"busyExecutors", busy},
                 {"clouds", json::array()},
                 {"description", nullptr},
                 {"idleExecutors", idle},
                 {"loadStatistics", load},
                 {"name", label.name},
                 {"nodes", nodes},
                 {"offline", !any_online},
                 {"propertiesList", json::array()},
                 {"tiedJobs", json::array()},
                 {"totalExecutors", total}};
    return JsonReply(req, full, kLabelDefault);
  }

  Reply ComputerSetApi(const httplib::Request& req) {
    json computers = json::array({BuiltInJson()});
    int busy = 0, total = 0;
    {
      std::lock_guard lock(mu_);
      TimePoint now = SysClock::now();
      for (const auto& [name, node] : nodes_) {
        computers.push_back(ComputerJson(node, now));
        if (!node.online()) continue;
        total += node.num_executors;
        for (const auto& slot : node.executors) busy += slot ? 1 : 0;
      }
    }
    json full = {{"_class", "hudson.model.ComputerSet"},
                 {"busyExecutors", busy},
                 {"computer", computers},
                 {"displayName", "Nodes"},
                 {"totalExecutors", total}};
    return JsonReply(
        req, full,
        "busyExecutors,computer[" + std::string(kComputerDefault) + "],displayName,totalExecutors");
  }

  // ComputerSet.doDoCreateItem (§3.1): name checks first, then the form, then the type.
  Reply CreateNode(const httplib::Request& req) {
    if (!req.has_param("name") || Trim(req.get_param_value("name")).empty()) {
      return Failure("Query parameter 'name' is required");
    }
    // Stapler's own texts (the missing name, the missing form) are English in every locale.
    const Lang lang = RequestLang(req, default_lang_);
    std::string name = Trim(req.get_param_value("name"));
    if (auto bad = BadNameReason(name, lang)) return Failure(*bad);
    std::lock_guard lock(mu_);
    if (nodes_.contains(name)) return Failure(Format(kAgentExists, lang, {name}));
    if (!req.has_param("json")) return Failure("This page expects a form submission");
    std::string text = req.get_param_value("json");
    if (Trim(text).empty()) return Failure("Nothing is submitted");
    json form = json::parse(text, nullptr, false);
    if (form.is_discarded() || !form.is_object()) return Html(500, "Failed to parse JSON");
    std::string type = req.get_param_value("type");
    if (type != "hudson.slaves.DumbSlave" && type != "hudson.slaves.DumbSlave$DescriptorImpl") {
      return Html(500, "java.lang.NullPointerException: no node descriptor " + type);
    }
    Node node;
    node.name = name;
    auto string_field = [&](const char* key, std::string& out) -> bool {
      auto it = form.find(key);
      if (it == form.end() || it->is_null()) return true;
      if (!it->is_string()) return false;
      out = it->get<std::string>();
      return true;
    };
    if (!string_field("nodeDescription", node.description) ||
        !string_field("remoteFS", node.remote_fs) ||
        !string_field("labelString", node.label_string)) {
      return Html(500, "java.lang.IllegalArgumentException: a string field is not a string");
    }
    node.remote_fs = Trim(node.remote_fs);
    if (auto it = form.find("numExecutors"); it != form.end()) {
      int value = 0;
      if (it->is_number_integer()) {
        value = it->get<int>();
      } else if (it->is_string()) {
        std::string s = Trim(it->get<std::string>());
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        if (ec != std::errc() || ptr != s.data() + s.size()) {
          return Html(500, "java.lang.NumberFormatException: For input string: \"" + s + "\"");
        }
      } else {
        return Html(500, "java.lang.IllegalArgumentException: numExecutors");
      }
      if (value <= 0) {
        return Failure(Format(kInvalidExecutors, lang, {name}));
      }
      node.num_executors = value;
    }
    if (auto it = form.find("mode"); it != form.end()) {
      if (*it == "EXCLUSIVE") {
        node.exclusive = true;
      } else if (*it != "NORMAL") {
        return Html(500,
                    "java.lang.IllegalArgumentException: No enum constant "
                    "hudson.model.Node.Mode." +
                        (it->is_string() ? it->get<std::string>() : it->dump()));
      }
    }
    if (auto it = form.find("launcher"); it != form.end() && it->is_object()) {
      std::string cls = it->value("$class", it->value("stapler-class", std::string()));
      node.inbound = cls.empty() || cls == "hudson.slaves.JNLPLauncher";
      node.websocket = it->value("webSocket", false);
      if (auto wd = it->find("workDirSettings"); wd != it->end() && wd->is_object()) {
        node.workdir_disabled = wd->value("disabled", false);
        node.workdir_path = wd->value("workDirPath", std::string());
        node.internal_dir = wd->value("internalDir", std::string("remoting"));
        if (node.internal_dir.empty()) node.internal_dir = "remoting";
      }
    }
    std::istringstream atoms(node.label_string);
    for (std::string atom; atoms >> atom;) node.labels.insert(atom);
    node.labels.insert(name);
    node.executors.resize(static_cast<size_t>(node.num_executors));
    nodes_.emplace(name, std::move(node));
    ++nodes_created_;
    UpdateHighWaterMarks();
    cv_.notify_all();
    return Redirect(req, ".");  // rsp.sendRedirect2(".") from /computer/doCreateItem: /computer/
  }

  Reply ComputerAction(const httplib::Request& req, bool get, bool post) {
    // /computer/<name>/<action...>
    std::string_view rest = std::string_view(req.path).substr(10);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return NotFound();
    std::string name(rest.substr(0, slash));
    std::string action(rest.substr(slash + 1));
    std::lock_guard lock(mu_);
    if (name == "(built-in)" || name == "(master)") {
      if (action == "api/json" && get) return JsonReply(req, BuiltInJson(), kComputerDefault);
      return NotFound();
    }
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return NotFound();
    Node& node = it->second;
    if (action == "api/json") {
      return get ? JsonReply(req, ComputerJson(node, SysClock::now()), kComputerDefault)
                 : NotFound();
    }
    if (action == "jenkins-agent.jnlp" || action == "slave-agent.jnlp") {
      return get ? Jnlp(node) : NotFound();
    }
    if (action == "changeOfflineCause" || action == "toggleOffline") {
      if (!post) return RequiresPost();
      std::string message = Trim(req.get_param_value("offlineMessage"));
      if (action == "toggleOffline" && node.temp_offline) {
        node.temp_offline = false;
        node.offline_message.clear();
      } else {
        node.temp_offline = true;
        node.offline_message = message;
        node.offline_since = SysClock::now();
      }
      cv_.notify_all();
      return Redirect(req, ".");  // HttpResponses.redirectToDot(): /computer/<name>/
    }
    if (action == "config.xml") {
      // Computer.doConfigDotXml dispatches on the method itself: GET reads, POST replaces, and
      // anything else (HEAD included) gets sendError(SC_BAD_REQUEST), not a 405.
      if (req.method == "GET") return NodeXml(node);
      if (req.method == "POST") return UpdateNodeByXml(node, req.body);
      return Html(400, "Bad Request");
    }
    if (action == "doDelete") {
      if (!post) return RequiresPost();
      // Nodes.removeNode: disconnect first (the channel closes at once), then forget the node.
      if (node.connected()) DropConnection(node);
      EndBlocksOf(node);
      nodes_.erase(it);
      connections_cv_.notify_all();
      ++nodes_deleted_;
      cv_.notify_all();
      return Redirect(req, "..");  // HttpRedirect(".."): /computer/
    }
    return NotFound();
  }

  // GET /computer/<name>/config.xml (§3.2): the node as XStream writes a DumbSlave. A description
  // never set is left out, as XStream leaves out a null field.
  Reply NodeXml(const Node& node) const {
    std::string xml = "<?xml version=\"1.1\" encoding=\"UTF-8\"?>\n<slave>\n  <name>" +
                      XmlEscape(node.name) + "</name>\n";
    if (!node.description.empty()) {
      xml += "  <description>" + XmlEscape(node.description) + "</description>\n";
    }
    xml += "  <remoteFS>" + XmlEscape(node.remote_fs) + "</remoteFS>\n  <numExecutors>" +
           std::to_string(node.num_executors) + "</numExecutors>\n  <mode>" +
           (node.exclusive ? "EXCLUSIVE" : "NORMAL") +
           "</mode>\n"
           "  <retentionStrategy class=\"hudson.slaves.RetentionStrategy$Always\"/>\n";
    if (node.inbound) {  // the stand-in keeps no other launcher's settings
      xml +=
          "  <launcher class=\"hudson.slaves.JNLPLauncher\">\n    <workDirSettings>\n"
          "      <disabled>" +
          std::string(node.workdir_disabled ? "true" : "false") + "</disabled>\n";
      if (!node.workdir_path.empty()) {
        xml += "      <workDirPath>" + XmlEscape(node.workdir_path) + "</workDirPath>\n";
      }
      xml += "      <internalDir>" + XmlEscape(node.internal_dir) +
             "</internalDir>\n      <failIfWorkDirIsMissing>false</failIfWorkDirIsMissing>\n"
             "    </workDirSettings>\n    <webSocket>" +
             (node.websocket ? "true" : "false") + "</webSocket>\n  </launcher>\n";
    }
    xml += "  <label>" + XmlEscape(node.label_string) + "</label>\n  <nodeProperties/>\n</slave>";
    return Text(200, xml, "application/xml");
  }

  // POST /computer/<name>/config.xml (§3.2; Computer.updateByXml): the posted node replaces this
  // one. Simplified: a <launcher> left out keeps the current one, a <name> other than the node's
  // (a rename) is refused with 400, and a smaller numExecutors keeps busy executors until the
  // node is deleted.
  Reply UpdateNodeByXml(Node& node, std::string_view body) {
    XmlReader reader(body);
    auto root = reader.Document();
    if (!root) {
      return Html(500, "com.thoughtworks.xstream.io.StreamException: " + reader.error());
    }
    // <slave> is DumbSlave's XStream alias; any other root is another class (or none).
    if (root->name != "slave" && root->name != "hudson.slaves.DumbSlave") {
      return Text(400, "Node types do not match");
    }
    auto text = [&](std::string_view child) -> std::optional<std::string> {
      const XmlElement* e = root->Child(child);
      if (e == nullptr) return std::nullopt;
      return e->text;
    };
    if (Trim(text("name").value_or("")) != node.name) {
      return Text(400, "stand-in Jenkins: <name> must be the node's own name " + Quote(node.name) +
                           "; renaming through config.xml is not modelled");
    }
    int executors = 1;  // Slave's default
    if (auto value = text("numExecutors")) {
      std::string s = Trim(*value);
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), executors);
      if (ec != std::errc() || ptr != s.data() + s.size()) {
        return Html(500,
                    "com.thoughtworks.xstream.converters.ConversionException: For input "
                    "string: \"" +
                        s + "\"");
      }
      if (executors <= 0) {
        return Text(400, "stand-in Jenkins: numExecutors must be positive, not " + s);
      }
    }
    bool exclusive = false;  // Node.Mode.NORMAL
    if (auto value = text("mode")) {
      std::string mode = Trim(*value);
      if (mode != "NORMAL" && mode != "EXCLUSIVE") {
        return Html(500,
                    "java.lang.IllegalArgumentException: No enum constant "
                    "hudson.model.Node.Mode." +
                        mode);
      }
      exclusive = mode == "EXCLUSIVE";
    }
    node.description = text("description").value_or("");
    node.remote_fs = Trim(text("remoteFS").value_or(""));
    node.exclusive = exclusive;
    node.label_string = text("label").value_or("");
    node.labels.clear();
    std::istringstream atoms(node.label_string);
    for (std::string atom; atoms >> atom;) node.labels.insert(atom);
    node.labels.insert(node.name);
    if (const XmlElement* launcher = root->Child("launcher")) {
      auto cls = launcher->attributes.find("class");
      node.inbound =
          cls == launcher->attributes.end() || cls->second == "hudson.slaves.JNLPLauncher";
      const XmlElement* websocket = launcher->Child("webSocket");
      node.websocket = websocket != nullptr && Trim(websocket->text) == "true";
      node.workdir_disabled = false;
      node.workdir_path.clear();
      node.internal_dir = "remoting";
      if (const XmlElement* wd = launcher->Child("workDirSettings")) {
        if (const XmlElement* e = wd->Child("disabled")) {
          node.workdir_disabled = Trim(e->text) == "true";
        }
        if (const XmlElement* e = wd->Child("workDirPath")) node.workdir_path = e->text;
        if (const XmlElement* e = wd->Child("internalDir"); e && !Trim(e->text).empty()) {
          node.internal_dir = Trim(e->text);
        }
      }
    }
    node.num_executors = executors;
    while (node.executors.size() > static_cast<size_t>(executors) && !node.executors.back()) {
      node.executors.pop_back();
    }
    if (node.executors.size() < static_cast<size_t>(executors)) {
      node.executors.resize(static_cast<size_t>(executors));
    }
    cv_.notify_all();
    return Text(200, "");
  }

  // §4.1: the secret is always the first <argument>.
  Reply Jnlp(const Node& node) const {
    std::string args = "    <argument>" + SecretFor(node.name) + "</argument>\n" +
                       "    <argument>" + XmlEscape(node.name) + "</argument>\n";
    if (node.websocket) args += "    <argument>-webSocket</argument>\n";
    if (!node.workdir_disabled) {
      std::string dir = node.workdir_path.empty() ? node.remote_fs : node.workdir_path;
      args += "    <argument>-workDir</argument>\n    <argument>" + XmlEscape(dir) +
              "</argument>\n    <argument>-internalDir</argument>\n    <argument>" +
              XmlEscape(node.internal_dir) + "</argument>\n";
    }
    args += "    <argument>-url</argument>\n    <argument>" + XmlEscape(base_) + "</argument>\n";
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<jnlp codebase=\"" +
                       XmlEscape(ComputerUrl(node.name)) +
                       "\" spec=\"1.0+\">\n"
                       "  <information>\n    <title>Agent for " +
                       XmlEscape(node.name) +
                       "</title>\n    <vendor>Jenkins project</vendor>\n"
                       "    <homepage href=\"https://jenkins.io/\"/>\n  </information>\n"
                       "  <security>\n    <all-permissions/>\n  </security>\n"
                       "  <resources>\n    <j2se version=\"1.8+\"/>\n    <jar href=\"" +
                       XmlEscape(base_) +
                       "jnlpJars/remoting.jar\"/>\n  </resources>\n"
                       "  <application-desc main-class=\"hudson.remoting.jnlp.Main\">\n" +
                       args + "  </application-desc>\n</jnlp>\n";
    return Text(200, body, "application/x-java-jnlp-file");
  }

  // WebSocketAgents.doIndex (§5). Errors are plain text (HttpResponses.errorWithoutStack's
  // message; Jetty would wrap it in an error page). On success the reply holds the connection.
  Reply AgentHandshake(const httplib::Request& req) {
    if (req.method != "GET") return NotFound();
    if (!req.has_header("Node-Name") || !req.has_header("Secret-Key") ||
        !req.has_header("X-Remoting-Capability")) {
      return Text(400, "This endpoint is only for use from agent.jar in WebSocket mode");
    }
    std::string name = req.get_header_value("Node-Name");
    std::string secret = req.get_header_value("Secret-Key");
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return Text(400, "no such agent");
    Node& node = it->second;
    std::string expected = SecretFor(name);
    if (CRYPTO_memcmp(secret.data(), expected.data(), std::min(secret.size(), expected.size())) !=
            0 ||
        secret.size() != expected.size()) {
      return Text(403, "Forbidden");
    }
    if (!node.inbound) return Text(400, name + " is not an inbound agent");
    if (node.connected()) {
      // DefaultJnlpSlaveReceiver: the same agent (same cookie) may take over its own dead
      // channel; anyone else is refused.
      std::string cookie = req.get_header_value("Connection-Cookie");
      if (cookie.empty() || cookie != node.cookie) {
        return Text(400, name +
                             " is already connected to this controller. Rejecting this "
                             "connection.");
      }
      DropConnection(node);
    }
    node.connection = next_connection_++;
    node.cookie = RandomHex(16);
    node.channel_lost = false;
    ++node.connections;
    ++agent_connections_;
    UpdateHighWaterMarks();
    cv_.notify_all();

    Reply reply = Text(101, "");
    reply.headers.emplace_back("Upgrade", "websocket");
    reply.headers.emplace_back("Connection", "Upgrade");
    if (req.has_header("Sec-WebSocket-Key")) {
      std::string accept =
          req.get_header_value("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
      unsigned char digest[SHA_DIGEST_LENGTH];
      SHA1(reinterpret_cast<const unsigned char*>(accept.data()), accept.size(), digest);
      reply.headers.emplace_back("Sec-WebSocket-Accept", Base64Encode(digest, sizeof digest));
    }
    reply.headers.emplace_back("X-Remoting-Capability",
                               req.get_header_value("X-Remoting-Capability"));
    reply.headers.emplace_back("X-Remoting-Minimum-Version", std::string(kMinimumRemoting));
    reply.headers.emplace_back("Connection-Cookie", node.cookie);
    reply.agent.emplace(name, node.connection);
    return reply;
  }

  bool StillConnected(const std::string& name, uint64_t connection) const {
    if (stopping_) return false;
    auto it = nodes_.find(name);
    return it != nodes_.end() && it->second.connection == connection;
  }

  void ReleaseConnection(const std::string& name, uint64_t connection) {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it != nodes_.end() && it->second.connection == connection) {
      DropConnection(it->second);
      cv_.notify_all();
    }
  }

  // The node is connected exactly as long as this response is being written: httplib keeps the
  // worker thread in the content provider, which pings (a WebSocket ping frame as a chunk) until
  // the node is deleted or disconnected, the controller restarts or stops, or a write fails
  // because the agent hung up. Returning false makes httplib close the socket.
  void HoldAgentConnection(httplib::Response& res, const std::string& name, uint64_t connection) {
    res.set_chunked_content_provider(
        "application/octet-stream",
        [this, name, connection](size_t, httplib::DataSink& sink) {
          static constexpr char kPing[] = {'\x89', '\x00'};
          std::unique_lock lock(mu_);
          while (StillConnected(name, connection)) {
            lock.unlock();
            bool written = sink.write(kPing, sizeof kPing);
            lock.lock();
            if (!written) break;
            connections_cv_.wait_for(lock, kAgentPing,
                                     [&] { return !StillConnected(name, connection); });
          }
          return false;
        },
        [this, name, connection](bool) { ReleaseConnection(name, connection); });
  }

  Reply JobAction(const httplib::Request& req, bool get, bool post) {
    // /job/a/job/b/<rest>: the job path, then api/json, <n>/api/json, lastBuild/api/json, build
    auto parts = Split(std::string_view(req.path).substr(1), '/');
    std::vector<std::string> segments;
    size_t i = 0;
    while (i + 1 < parts.size() && parts[i] == "job") {
      segments.push_back(parts[i + 1]);
      i += 2;
    }
    std::vector<std::string> rest(parts.begin() + static_cast<long>(i), parts.end());
    if (!rest.empty() && rest.back().empty()) rest.pop_back();
    std::string path = Join(segments, "/");
    std::lock_guard lock(mu_);
    bool is_job = jobs_.contains(path);
    bool is_folder = !is_job && std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) {
      return j.first.starts_with(path + "/");
    });
    if (!is_job && !is_folder) return NotFound();
    if (rest.size() == 2 && rest[0] == "api" && rest[1] == "json") {
      return get ? JsonReply(req, JobJson(path, is_folder), kJobDefault) : NotFound();
    }
    if (is_job && rest.size() == 1 && rest[0] == "build") {
      if (!post) return RequiresPost();
      Job& job = jobs_.at(path);
      int64_t id = EnqueueLocked(job, job.label, job.duration);
      cv_.notify_all();
      Reply reply = Text(201, "");
      reply.headers.emplace_back("Location", base_ + "queue/item/" + std::to_string(id) + "/");
      return reply;
    }
    if (is_job && rest.size() == 3 && rest[1] == "api" && rest[2] == "json") {
      const Run* run = nullptr;
      if (rest[0] == "lastBuild") {
        for (auto it = runs_.lower_bound({path, 0}); it != runs_.end() && it->first.first == path;
             ++it) {
          run = &it->second;
        }
      } else {
        int number = 0;
        auto [ptr, ec] = std::from_chars(rest[0].data(), rest[0].data() + rest[0].size(), number);
        if (ec == std::errc() && ptr == rest[0].data() + rest[0].size()) {
          if (auto it = runs_.find({path, number}); it != runs_.end()) run = &it->second;
        }
      }
      if (run == nullptr) return NotFound();
      return get ? JsonReply(req, RunJson(*run), kRunDefault) : NotFound();
    }
    return NotFound();
  }

  json JobJson(const std::string& path, bool folder) const {
    if (folder) {
      std::set<std::string> children;
      for (const auto& [p, job] : jobs_) {
        if (p.starts_with(path + "/")) children.insert(Split(p.substr(path.size() + 1), '/')[0]);
      }
      json jobs = json::array();
      for (const auto& child : children) {
        jobs.push_back({{"name", child}, {"url", JobUrl(path + "/" + child)}});
      }
      return {{"_class", "com.cloudbees.hudson.plugins.folder.Folder"},
              {"name", JobName(path)},
              {"fullName", path},
              {"url", JobUrl(path)},
              {"jobs", jobs}};
    }
    const Job& job = jobs_.at(path);
    json builds = json::array();
    json last = nullptr;
    for (auto it = runs_.lower_bound({path, 0}); it != runs_.end() && it->first.first == path;
         ++it) {
      json ref = {{"_class", job.pipeline ? kWorkflowRun : kFreestyleBuild},
                  {"number", it->second.number},
                  {"url", RunUrl(it->second)}};
      builds.insert(builds.begin(), ref);
      last = ref;
    }
    bool in_queue = std::any_of(queue_.begin(), queue_.end(),
                                [&](const auto& q) { return q.second.job == path; });
    json j = {{"_class", job.pipeline ? "org.jenkinsci.plugins.workflow.job.WorkflowJob"
                                      : "hudson.model.FreeStyleProject"},
              {"actions", json::array()},
              {"buildable", true},
              {"builds", builds},
              {"color", "notbuilt"},
              {"concurrentBuild", job.concurrent},
              {"description", ""},
              {"displayName", JobName(path)},
              {"fullDisplayName", JobDisplayName(path)},
              {"fullName", path},
              {"inQueue", in_queue},
              {"lastBuild", last},
              {"name", JobName(path)},
              {"nextBuildNumber", job.next_number},
              {"queueItem", nullptr},
              {"url", JobUrl(path)}};
    if (!job.pipeline) {
      j["labelExpression"] =
          Trim(job.label).empty() ? json(nullptr) : json(AssignedLabelString(Trim(job.label)));
    }
    return j;
  }

  Options options_;
  std::string mac_key_;  // JnlpAgentReceiver.SLAVE_SECRET's key; survives Restart()
  httplib::Server http_;
  std::thread listener_;
  int listen_fd_ = -1;  // httplib's listening socket, once bound
  std::thread scheduler_;
  int port_ = 0;
  std::string base_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // any state change; stop
  // A connection ended, or may have: wakes only the threads that hold agent connections. They
  // ping once per kAgentPing; on cv_ every one of them would take the lock and ping on each of
  // the scheduler's 50 ms ticks and every other change.
  std::condition_variable connections_cv_;
  bool stopping_ = false;
  std::string session_;
  bool quieting_down_ = false;
  const Lang default_lang_;  // the controller JVM's default locale: requests without a preference
  bool administer_;
  std::map<std::string, Node> nodes_;
  std::map<std::string, Job> jobs_;
  std::map<RunKey, Run> runs_;
  std::map<RunKey, std::string> pipeline_labels_;  // a Pipeline run's node() label
  std::vector<RunKey> completed_;
  std::map<int64_t, QueueItem> queue_;
  std::map<std::string, double> queue_length_;  // each label's loadStatistics queueLength
  TimePoint next_load_sample_{};
  std::map<int64_t, LeftItem> left_;
  int64_t next_queue_id_ = 1;
  uint64_t next_connection_ = 1;
  size_t max_nodes_seen_ = 0;
  size_t max_connected_seen_ = 0;
  size_t nodes_created_ = 0;
  size_t nodes_deleted_ = 0;
  size_t agent_connections_ = 0;
  std::vector<RequestInfo> requests_;
};

// ---- JenkinsStandin ----

const JenkinsStandin::NodeInfo* JenkinsStandin::Snapshot::FindNode(std::string_view name) const {
  for (const auto& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

size_t JenkinsStandin::Snapshot::ConnectedNodes() const {
  return static_cast<size_t>(
      std::count_if(nodes.begin(), nodes.end(), [](const NodeInfo& n) { return n.connected; }));
}

size_t JenkinsStandin::Snapshot::CountRequests(std::string_view method,
                                               std::string_view path) const {
  bool prefix = path.ends_with('*');
  if (prefix) path.remove_suffix(1);
  return static_cast<size_t>(std::count_if(requests.begin(), requests.end(), [&](const auto& r) {
    return r.method == method &&
           (prefix ? std::string_view(r.path).starts_with(path) : std::string_view(r.path) == path);
  }));
}

std::unique_ptr<JenkinsStandin> JenkinsStandin::Start(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (!impl->Listen()) {
    impl->Stop();
    return nullptr;
  }
  return std::unique_ptr<JenkinsStandin>(new JenkinsStandin(std::move(impl)));
}

JenkinsStandin::JenkinsStandin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JenkinsStandin::~JenkinsStandin() { impl_->Stop(); }

std::string JenkinsStandin::url() const { return impl_->base(); }
int JenkinsStandin::port() const { return impl_->port(); }
const std::string& JenkinsStandin::user() const { return impl_->options().user; }
const std::string& JenkinsStandin::api_token() const { return impl_->options().api_token; }
std::string JenkinsStandin::SecretFor(std::string_view node_name) const {
  return impl_->SecretFor(node_name);
}

int64_t JenkinsStandin::EnqueueFreestyle(std::string job_path, std::string label_expression,
                                         std::chrono::milliseconds duration) {
  return impl_->Enqueue(std::move(job_path), std::move(label_expression), duration, false);
}
int64_t JenkinsStandin::EnqueuePipeline(std::string job_path, std::string label_expression,
                                        std::chrono::milliseconds duration) {
  return impl_->Enqueue(std::move(job_path), std::move(label_expression), duration, true);
}
void JenkinsStandin::SetConcurrentBuild(const std::string& job_path, bool concurrent) {
  impl_->SetConcurrentBuild(job_path, concurrent);
}
bool JenkinsStandin::CancelItem(int64_t queue_id) { return impl_->CancelItem(queue_id); }
void JenkinsStandin::Restart() { impl_->Restart(); }
void JenkinsStandin::SetQuietingDown(bool quieting_down) { impl_->SetQuietingDown(quieting_down); }
void JenkinsStandin::SetAdminister(bool administer) { impl_->SetAdminister(administer); }
bool JenkinsStandin::DisconnectAgent(const std::string& name) {
  return impl_->DisconnectAgent(name);
}
JenkinsStandin::Snapshot JenkinsStandin::Stats() const { return impl_->Stats(); }
std::string JenkinsStandin::StatsJson() const { return impl_->StatsJson(); }
bool JenkinsStandin::WaitFor(const std::function<bool(const Snapshot&)>& predicate,
                             std::chrono::milliseconds timeout) const {
  return impl_->WaitFor(predicate, timeout);
}

}  // namespace slurmfleet::standin
