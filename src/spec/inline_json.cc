#include "spec/inline_json.h"

#include <vector>

#include "base/json_depth.h"
#include "base/json_strict.h"
#include "spec/suggest.h"

namespace slurmfleet::spec {
namespace {

using nlohmann::json;

class BlockDecoder {
 public:
  BlockDecoder(const json& block, std::string path, std::vector<Error>& problems)
      : block_(block), path_(std::move(path)), problems_(problems) {}

  bool IsObject() {
    if (block_.is_object()) return true;
    Fail(path_, "expected an object");
    return false;
  }

  void String(std::string_view key, std::optional<std::string>& out) {
    known_.push_back(key);
    const json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_string()) {
      out = v->get<std::string>();
    } else {
      Fail(path_ + "." + std::string(key), "expected a string");
    }
  }

  void Bool(std::string_view key, std::optional<bool>& out) {
    known_.push_back(key);
    const json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_boolean()) {
      out = v->get<bool>();
    } else {
      Fail(path_ + "." + std::string(key), "expected true or false");
    }
  }

  // Call after every known key was read: reports the rest as unknown.
  void RejectUnknown() {
    for (const auto& [key, value] : block_.items()) {
      bool known = false;
      for (std::string_view k : known_) known = known || k == key;
      if (!known) Fail(path_ + "." + key, "unknown key '" + key + "'" + DidYouMean(key, known_));
    }
  }

 private:
  const json* Find(std::string_view key) const {
    auto it = block_.find(std::string(key));
    return it == block_.end() ? nullptr : &*it;
  }
  void Fail(std::string where, std::string message) {
    problems_.push_back(Error{Code::kInvalidInput, std::move(message), std::move(where)});
  }

  const json& block_;
  std::string path_;
  std::vector<Error>& problems_;
  std::vector<std::string_view> known_;
};

}  // namespace

Result<JobTemplate> ParseInlineJson(std::string_view text, SchemaSet schemas) {
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    return Fail(Code::kInvalidInput,
                "the JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
                    " levels; no template field needs that",
                "json");
  }
  std::expected<json, JsonRefusal> parsed = ParseJsonStrictly(text);
  if (!parsed) {
    const bool syntax = parsed.error().kind == JsonRefusal::Kind::kSyntax;
    return Fail(Code::kInvalidInput,
                "the template JSON " + parsed.error().Describe() +
                    (syntax ? "; check quotes and commas" : ""),
                "json");
  }
  json doc = std::move(*parsed);
  std::vector<Error> problems;
  JobTemplate layer;
  if (!doc.is_object()) {
    return Fail(Code::kInvalidInput, "expected an object with \"job\", \"pyxis\" or \"agent\"",
                "json");
  }
  static constexpr std::string_view kTop[] = {"job", "pyxis", "agent"};
  for (const auto& [key, value] : doc.items()) {
    if (key == "job") {
      DecodeJobObject(value, "job", schemas, layer, problems);
    } else if (key == "pyxis") {
      BlockDecoder b(value, "pyxis", problems);
      if (!b.IsObject()) continue;
      PyxisLaunch p;
      b.String("containerImage", p.container_image);
      b.Bool("containerMountHome", p.container_mount_home);
      b.String("containerMounts", p.container_mounts);
      b.String("containerWorkdir", p.container_workdir);
      b.Bool("containerWritable", p.container_writable);
      b.Bool("containerRemap", p.container_remap);
      b.String("containerName", p.container_name);
      b.RejectUnknown();
      layer.pyxis = p;
    } else if (key == "agent") {
      BlockDecoder b(value, "agent", problems);
      if (!b.IsObject()) continue;
      b.String("java_path", layer.agent.java_path);
      b.String("jar_path", layer.agent.jar_path);
      b.Bool("download_jar", layer.agent.download_jar);
      b.String("setup_script", layer.agent.setup_script);
      b.RejectUnknown();
    } else {
      problems.push_back(Error{Code::kInvalidInput,
                               "unknown key '" + key + "'" + DidYouMean(key, kTop) +
                                   "; the pipeline JSON has only \"job\", \"pyxis\" and \"agent\"",
                               key});
    }
  }
  if (problems.empty()) return layer;
  if (problems.size() == 1) return std::unexpected(problems.front());
  std::string message = std::to_string(problems.size()) + " problems:";
  for (const Error& e : problems) {
    message += "\n  " + e.where + ": " + e.message;
  }
  return Fail(Code::kInvalidInput, std::move(message), "json");
}

}  // namespace slurmfleet::spec
