#include "jenkins/standin/tree_pruner.h"

namespace slurmfleet::standin {
namespace {

using nlohmann::json;

// Parses a comma-separated list up to a ']' (nested) or the end (top level).
bool ParseList(std::string_view text, size_t& pos, TreeSpec& out, bool nested) {
  while (true) {
    size_t start = pos;
    while (pos < text.size() && text[pos] != ',' && text[pos] != '[' && text[pos] != ']') ++pos;
    std::string name(text.substr(start, pos - start));
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    if (name.empty()) return false;
    TreeSpec child;
    if (pos < text.size() && text[pos] == '[') {
      ++pos;
      if (pos < text.size() && text[pos] == ']') {
        ++pos;  // `a[]`: nothing below a, same as `a`
      } else {
        if (!ParseList(text, pos, child, true)) return false;
        if (pos >= text.size() || text[pos] != ']') return false;
        ++pos;
      }
    }
    out.children.emplace_back(std::move(name), std::move(child));
    if (pos >= text.size()) return !nested;
    if (text[pos] == ']') return nested;
    if (text[pos] != ',') return false;
    ++pos;
  }
}

json PruneObject(const json& object, const TreeSpec& spec) {
  json out = json::object();
  if (auto it = object.find("_class"); it != object.end()) out["_class"] = *it;
  for (const auto& [name, child] : spec.children) {
    auto it = object.find(name);
    if (it == object.end()) continue;
    out[name] = Prune(*it, child);
  }
  return out;
}

}  // namespace

const TreeSpec* TreeSpec::Find(std::string_view name) const {
  for (const auto& [key, child] : children) {
    if (key == name) return &child;
  }
  return nullptr;
}

Result<TreeSpec> ParseTree(std::string_view text) {
  TreeSpec spec;
  size_t pos = 0;
  if (!ParseList(text, pos, spec, false) || pos != text.size()) {
    return Fail(Code::kInvalidInput, "malformed tree expression: " + std::string(text), "tree");
  }
  return spec;
}

json Prune(const json& value, const TreeSpec& spec) {
  if (value.is_object()) return PruneObject(value, spec);
  if (value.is_array()) {
    json out = json::array();
    for (const auto& element : value) out.push_back(Prune(element, spec));
    return out;
  }
  return value;
}

}  // namespace slurmfleet::standin
