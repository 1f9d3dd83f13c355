// Position-keeping YAML decoding for the config loader: every value read through a MapReader that
// is missing, mistyped or unknown becomes a Diagnostic with its file:line:column and key path, and
// decoding carries on so that one run reports every problem. yaml-cpp exceptions stop here.
// Not thread-safe; one reader per load.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostic.h"

namespace slurmfleet::config {

// Collects the diagnostics of one load and knows where each node came from: a position in the
// file, or the environment variable / flag that set it.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(std::move(file)) {}

  void AddOverrideSource(const YAML::Node& node, std::string source);
  void Report(const YAML::Node& at, std::string path, std::string message, std::string fix = {});
  void ReportAt(int line, int column, std::string path, std::string message, std::string fix = {});
  // A problem with no position in the file (e.g. an override that cannot be applied).
  void ReportFrom(std::string source, std::string path, std::string message, std::string fix = {});

  const std::string& file() const { return file_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::string file_;
  std::vector<std::pair<YAML::Node, std::string>> override_sources_;
  std::vector<Diagnostic> diagnostics_;
};

// Checks what the parsed tree cannot show, on the text itself, where YAML::Load would silently
// drop part of the file: a second document (Load reads the first one only; an empty one, such as
// a trailing `---`, holds nothing to lose and passes), and a quote that is never closed (yaml-cpp
// 0.7 takes the rest of the text for the quoted value, and every later key with it). Reports the
// second document at the line where it starts, and each unclosed quote where it opens; false when
// there was a problem. Throws YAML::Exception where YAML::Load would, for text that is not YAML.
bool CheckText(std::string_view text, DiagnosticSink& sink);

// Checks the whole document before it is decoded: every key and value must be UTF-8 (values end
// up in JSON, which holds nothing else), nesting stays within kMaxYamlDepth, and the document
// holds at most kMaxYamlValues values, each use of an alias counted (a few lines of aliases can
// stand for billions of values). Reports each problem without quoting the value (it may be a
// secret); false when there was one. Also reports every key given twice in a mapping, which does
// not stop decoding.
inline constexpr int kMaxYamlDepth = 64;
inline constexpr size_t kMaxYamlValues = 1'000'000;
bool CheckDocument(const YAML::Node& root, DiagnosticSink& sink);

// Reads one mapping. Each accessor marks its key as known and reports a present-but-invalid
// value (returning nullopt); an absent key is not a problem here. Finish() reports every key
// that no accessor asked for, with a "did you mean", and keys given twice.
class MapReader {
 public:
  // A null node (an empty `key:`) reads as an empty mapping; anything else that is not a mapping
  // is reported and reads as empty.
  MapReader(YAML::Node node, std::string path, DiagnosticSink& sink);

  std::optional<std::string> String(std::string_view key);
  std::optional<int64_t> Int(std::string_view key, int64_t min, int64_t max);
  std::optional<bool> Bool(std::string_view key);
  // A sequence of strings; with `allow_single`, a single string counts as a list of one.
  std::optional<std::vector<std::string>> StringList(std::string_view key, bool allow_single);
  // A mapping of string to string (e.g. environment variables).
  std::optional<std::map<std::string, std::string>> StringMap(std::string_view key);
  // A mapping or sequence child, for nested readers; an undefined node when absent.
  YAML::Node Child(std::string_view key);
  // Marks `key` as known without reading it.
  void Known(std::string_view key);
  // A custom "fix" for an unknown key that users are likely to write (e.g. JCasC's
  // credentialsId); used by Finish() instead of "did you mean".
  void HintForUnknown(std::string_view key, std::string fix);

  void Finish();

  std::string PathOf(std::string_view key) const;
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  DiagnosticSink& sink() { return sink_; }

 private:
  YAML::Node Lookup(std::string_view key);

  YAML::Node node_;
  std::string path_;
  DiagnosticSink& sink_;
  std::vector<std::string_view> known_;
  std::map<std::string, std::string, std::less<>> hints_;
};

// A YAML subtree as JSON, for the job_desc fields of a template's `job:` block. Quoted scalars
// stay strings; plain scalars become null, booleans (true/false), integers or numbers when they
// read as one, else strings.
nlohmann::json YamlToJson(const YAML::Node& node);

// The node a JSON path like "job.rlimits.nofile" or "job.required_nodes[1]" (relative to
// `root`, whose own path is the first segment) points at, or `root` when it cannot be followed.
YAML::Node NodeAtJsonPath(const YAML::Node& root, std::string_view json_path);

}  // namespace slurmfleet::config
