#include "config/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <charconv>
#include <set>
#include <sstream>

#include "base/utf8.h"
#include "spec/suggest.h"

namespace slurmfleet::config {
namespace {

std::string Shown(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

// Where a mapping or a list belongs, a lone value is not quoted: it is most often a credential
// written where its block goes (`credentials: eyJ...`), and messages reach logs.
std::string ShapeOf(const YAML::Node& n) {
  return n.IsScalar() ? "a single value (not shown)" : Shown(n);
}

std::optional<int64_t> ParseInt(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool IsPlain(const YAML::Node& n) { return n.Tag() != "!"; }

}  // namespace

void DiagnosticSink::AddOverrideSource(const YAML::Node& node, std::string source) {
  override_sources_.emplace_back(node, std::move(source));
}

void DiagnosticSink::Report(const YAML::Node& at, std::string path, std::string message,
                            std::string fix) {
  for (const auto& [node, source] : override_sources_) {
    if (node.is(at)) {
      diagnostics_.push_back(
          Diagnostic{source, 0, 0, std::move(path), std::move(message), std::move(fix)});
      return;
    }
  }
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  ReportAt(mark.line < 0 ? 0 : mark.line + 1, mark.column < 0 ? 0 : mark.column + 1,
           std::move(path), std::move(message), std::move(fix));
}

void DiagnosticSink::ReportAt(int line, int column, std::string path, std::string message,
                              std::string fix) {
  diagnostics_.push_back(
      Diagnostic{file_, line, column, std::move(path), std::move(message), std::move(fix)});
}

void DiagnosticSink::ReportFrom(std::string source, std::string path, std::string message,
                                std::string fix) {
  diagnostics_.push_back(
      Diagnostic{std::move(source), 0, 0, std::move(path), std::move(message), std::move(fix)});
}

MapReader::MapReader(YAML::Node node, std::string path, DiagnosticSink& sink)
    : node_(std::move(node)), path_(std::move(path)), sink_(sink) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    sink_.Report(node_, path_, "expected a mapping of keys to values, got " + ShapeOf(node_),
                 "indent the keys under '" + path_.substr(path_.rfind('.') + 1) + ":'");
    node_.reset(YAML::Node(YAML::NodeType::Map));  // reset: operator= would rewrite the tree
  }
}

std::string MapReader::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void MapReader::Known(std::string_view key) { known_.push_back(key); }

void MapReader::HintForUnknown(std::string_view key, std::string fix) {
  hints_[std::string(key)] = std::move(fix);
}

YAML::Node MapReader::Lookup(std::string_view key) {
  Known(key);
  if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node MapReader::Child(std::string_view key) { return Lookup(key); }

std::optional<std::string> MapReader::String(std::string_view key) {
  YAML::Node n = Lookup(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!n.IsScalar()) {
    sink_.Report(n, PathOf(key), "expected a text value, got " + Shown(n),
                 n.IsNull() ? "give it a value or remove the key" : "write a single value");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int64_t> MapReader::Int(std::string_view key, int64_t min, int64_t max) {
  YAML::Node n = Lookup(key);
  if (!n.IsDefined()) return std::nullopt;
  std::optional<int64_t> v = n.IsScalar() ? ParseInt(n.Scalar()) : std::nullopt;
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  if (!v) {
    sink_.Report(n, PathOf(key), "expected a whole number, got " + Shown(n),
                 "write a number from " + range);
    return std::nullopt;
  }
  if (*v < min || *v > max) {
    sink_.Report(n, PathOf(key), std::to_string(*v) + " is out of range",
                 "use a number from " + range);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> MapReader::Bool(std::string_view key) {
  YAML::Node n = Lookup(key);
  if (!n.IsDefined()) return std::nullopt;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    // 1 and 0 too: the batch backend spec sets TUNEPLANE_SLURM_TLS_VERIFY=1, and environment
    // variables are often written so.
    if (s == "true" || s == "True" || s == "TRUE" || s == "1") return true;
    if (s == "false" || s == "False" || s == "FALSE" || s == "0") return false;
  }
  sink_.Report(n, PathOf(key), "expected true or false, got " + Shown(n), "write true or false");
  return std::nullopt;
}

std::optional<std::vector<std::string>> MapReader::StringList(std::string_view key,
                                                              bool allow_single) {
  YAML::Node n = Lookup(key);
  if (!n.IsDefined()) return std::nullopt;
  if (allow_single && n.IsScalar()) return std::vector<std::string>{n.Scalar()};
  if (!n.IsSequence()) {
    sink_.Report(n, PathOf(key), "expected a list, got " + ShapeOf(n),
                 "write one item per line, each starting with '- '");
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      sink_.Report(n[i], PathOf(key) + "[" + std::to_string(i) + "]",
                   "expected a text value, got " + Shown(n[i]));
      ok = false;
      continue;
    }
    out.push_back(n[i].Scalar());
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::map<std::string, std::string>> MapReader::StringMap(std::string_view key) {
  YAML::Node n = Lookup(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (!n.IsMap()) {
    sink_.Report(n, PathOf(key), "expected a mapping of names to values, got " + ShapeOf(n),
                 "write one 'NAME: value' per line");
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.Scalar();
    if (!it->second.IsScalar()) {
      sink_.Report(it->second, PathOf(key) + "." + name,
                   "expected a text value, got " + Shown(it->second));
      continue;
    }
    if (out.contains(name)) {
      sink_.Report(it->first, PathOf(key) + "." + name, "'" + name + "' is given twice",
                   "keep one of them");
    }
    out[name] = it->second.Scalar();
  }
  return out;
}

void MapReader::Finish() {
  if (!node_.IsMap()) return;
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      sink_.Report(it->first, path_, "a key must be a plain name");
      continue;
    }
    const std::string key = it->first.Scalar();
    if (!seen.insert(key).second) continue;  // CheckDocument reported it
    bool known = false;
    for (std::string_view k : known_) known = known || k == key;
    if (known) continue;
    if (auto hint = hints_.find(key); hint != hints_.end()) {
      sink_.Report(it->first, PathOf(key), "unknown key '" + key + "'", hint->second);
      continue;
    }
    const std::string suggestion = spec::Suggest(key, known_);
    if (!suggestion.empty()) {
      sink_.Report(it->first, PathOf(key),
                   "unknown key '" + key + "'; did you mean '" + suggestion + "'?",
                   "rename it to '" + suggestion + "'");
    } else {
      std::string list;
      for (std::string_view k : known_) list += (list.empty() ? "" : ", ") + std::string(k);
      sink_.Report(it->first, PathOf(key), "unknown key '" + key + "'",
                   "remove it; the keys allowed here are: " + list);
    }
  }
}

namespace {

struct DocumentCheck {
  DiagnosticSink& sink;
  size_t values = 0;
  bool ok = true;

  void Utf8(const YAML::Node& n, const std::string& path, std::string_view what) {
    if (!n.IsScalar()) return;
    if (std::optional<size_t> at = FirstInvalidUtf8(n.Scalar())) {
      sink.Report(n, path,
                  std::string(what) + " is not UTF-8 (byte " + std::to_string(*at + 1) +
                      " is not part of a UTF-8 character)",
                  "write it in UTF-8; it looks like Latin-1 or another 8-bit encoding");
      ok = false;
    }
  }

  // false once the document is too large to go on
  bool Walk(const YAML::Node& n, const std::string& path, int depth) {
    if (++values > kMaxYamlValues) {
      sink.Report(n, path,
                  "the document stands for more than " + std::to_string(kMaxYamlValues) +
                      " values (counting each use of an alias)",
                  "write the values out instead of nesting aliases (*name) of aliases");
      ok = false;
      return false;
    }
    if (depth > kMaxYamlDepth) {
      sink.Report(n, path, "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels",
                  "no part of a configuration nests this deep; check the indentation");
      ok = false;
      return true;
    }
    if (n.IsSequence()) {
      for (size_t i = 0; i < n.size(); ++i) {
        if (!Walk(n[i], path + "[" + std::to_string(i) + "]", depth + 1)) return false;
      }
    } else if (n.IsMap()) {
      std::set<std::string> seen;
      for (auto it = n.begin(); it != n.end(); ++it) {
        const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
        const std::string child = FirstInvalidUtf8(key) ? path + ".?"
                                  : path.empty()        ? key
                                                        : path + "." + key;
        Utf8(it->first, child, "this key");
        // in every mapping, inside a job's fields too; decoding goes on
        if (it->first.IsScalar() && !seen.insert(key).second) {
          sink.Report(it->first, child, "'" + key + "' is given twice",
                      "keep one of them; YAML would silently use only one");
        }
        if (!Walk(it->second, child, depth + 1)) return false;
      }
    } else {
      Utf8(n, path, "this value");
    }
    return true;
  }
};

// Where the quoted scalar whose opening quote is at `open` ends, by YAML's quoting rules: in
// double quotes a backslash escapes the next character, in single quotes '' is a quote. nullopt
// when the text ends first.
std::optional<size_t> ClosingQuote(std::string_view text, size_t open) {
  const char quote = text[open];
  for (size_t i = open + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] != quote) continue;
    if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
      ++i;
      continue;
    }
    return i;
  }
  return std::nullopt;
}

// Follows yaml-cpp's events over every document: the tree yaml-cpp builds keeps no trace of
// either problem CheckText looks for.
class TextCheck final : public YAML::EventHandler {
 public:
  TextCheck(std::string_view text, DiagnosticSink& sink) : text_(text), sink_(sink) {
    // yaml-cpp's marks count bytes after a UTF-8 byte order mark. It also reads UTF-16 and
    // UTF-32, and its marks then count the text converted to UTF-8: such a text holds NUL bytes,
    // which YAML in UTF-8 never does, and its quotes are not looked for.
    if (text_.starts_with("\xEF\xBB\xBF")) offset_ = 3;
    quotes_ = text_.find('\0') == std::string_view::npos;
  }

  bool ok() const { return ok_; }
  // Once a second document is reported, the rest of the text is not read.
  bool done() const { return done_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    start_ = mark;
    holds_ = false;
  }
  void OnDocumentEnd() override {
    if (documents_ < 2 || !holds_) return;
    sink_.ReportAt(start_.line + 1, start_.column + 1, "",
                   "a second YAML document starts here; a configuration file holds one, and "
                   "slurmfleet would ignore this one",
                   "keep one document: remove the '---' or '...' that ends the first and merge "
                   "the keys into it, or remove what follows it");
    ok_ = false;
    done_ = true;
  }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { holds_ = true; }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    holds_ = true;
    if (quotes_) CheckQuote(mark);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    holds_ = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    holds_ = true;
  }
  void OnMapEnd() override {}

 private:
  // A scalar's mark is where its node starts: at its anchor (&a) or tag (!t), when it has one,
  // else at its first character, which is a quote only for a quoted scalar.
  void CheckQuote(const YAML::Mark& mark) {
    int line = mark.line;
    int column = mark.column;
    size_t at = offset_ + static_cast<size_t>(mark.pos);
    while (at < text_.size()) {
      const char c = text_[at];
      size_t next = at + 1;
      if (c == '&' || c == '!') {
        next = text_.find_first_of(" \t\r\n", at);
      } else if (c == '#') {  // a comment between the properties and the value
        next = text_.find('\n', at);
      } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
        break;
      }
      if (next == std::string_view::npos) return;
      for (; at < next; ++at) {
        ++column;
        if (text_[at] == '\n') {
          ++line;
          column = 0;
        }
      }
    }
    if (at >= text_.size() || (text_[at] != '"' && text_[at] != '\'')) return;
    if (ClosingQuote(text_, at)) return;
    sink_.ReportAt(line + 1, column + 1, "",
                   "the quote opened here is never closed, so the rest of the file would be read "
                   "as this one value",
                   "close it on the same line");
    ok_ = false;
  }

  std::string_view text_;
  DiagnosticSink& sink_;
  size_t offset_ = 0;   // of the text yaml-cpp's marks count from
  bool quotes_ = true;  // whether the marks count bytes of `text_`
  int documents_ = 0;
  YAML::Mark start_;    // of the current document
  bool holds_ = false;  // whether the current document holds a value
  bool ok_ = true;
  bool done_ = false;
};

}  // namespace

bool CheckText(std::string_view text, DiagnosticSink& sink) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  TextCheck check(text, sink);
  while (!check.done() && parser.HandleNextDocument(check)) {
  }
  return check.ok();
}

bool CheckDocument(const YAML::Node& root, DiagnosticSink& sink) {
  DocumentCheck check{sink};
  check.Walk(root, "", 0);
  return check.ok;
}

nlohmann::json YamlToJson(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const YAML::Node& item : n) a.push_back(YamlToJson(item));
    return a;
  }
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (auto it = n.begin(); it != n.end(); ++it) o[it->first.Scalar()] = YamlToJson(it->second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (!IsPlain(n)) return s;
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (std::optional<int64_t> i = ParseInt(s)) return *i;
  double d = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec == std::errc() && end == s.data() + s.size()) return d;
  return s;
}

YAML::Node NodeAtJsonPath(const YAML::Node& root, std::string_view json_path) {
  // Skip the first segment: it names `root` itself.
  size_t pos = json_path.find_first_of(".[");
  YAML::Node current = root;
  while (pos != std::string_view::npos && pos < json_path.size()) {
    YAML::Node next(YAML::NodeType::Undefined);
    if (json_path[pos] == '.') {
      size_t end = json_path.find_first_of(".[", pos + 1);
      std::string key(json_path.substr(
          pos + 1, end == std::string_view::npos ? std::string_view::npos : end - pos - 1));
      if (!current.IsMap()) return current;
      for (auto it = current.begin(); it != current.end(); ++it) {
        if (it->first.Scalar() == key) {
          // The last segment points at its key: where an unknown field is best shown.
          next.reset(end == std::string_view::npos ? it->first : it->second);
        }
      }
      pos = end;
    } else {
      size_t close = json_path.find(']', pos);
      if (close == std::string_view::npos) return current;
      std::optional<int64_t> index =
          ParseInt(std::string(json_path.substr(pos + 1, close - pos - 1)));
      if (!index || !current.IsSequence() || *index >= static_cast<int64_t>(current.size())) {
        return current;
      }
      next.reset(current[static_cast<size_t>(*index)]);
      pos = close + 1;
      if (pos >= json_path.size()) pos = std::string_view::npos;
    }
    if (!next.IsDefined()) return current;
    current.reset(next);  // rebinds the handle; operator= would overwrite the node in the tree
  }
  return current;
}

}  // namespace slurmfleet::config
