#include "base/json_strict.h"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "base/utf8.h"

namespace slurmfleet {
namespace {

std::string Escaped(std::string_view key) {
  std::string out;
  // Cut at 200 bytes, maybe inside a character: RepairUtf8 makes the rest of it U+FFFD.
  for (char c : key.substr(0, 200)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return RepairUtf8(out);
}

// Thrown from the parser's callback to stop at the first key given twice.
struct DuplicateKey {
  std::string key;
};

}  // namespace

std::string JsonRefusal::Describe() const {
  switch (kind) {
    case Kind::kSyntax:
      return "is not valid JSON (syntax error at byte " + std::to_string(byte) + ")";
    case Kind::kNumberOutOfRange:
      return "holds a number too large to read";
    case Kind::kDuplicateKey:
      return "gives the key '" + key + "' twice in one object; give each key once";
  }
  return {};
}

std::expected<nlohmann::json, JsonRefusal> ParseJsonStrictly(std::string_view text) {
  using nlohmann::json;
  std::vector<std::set<std::string, std::less<>>> keys;  // one set per object being read
  json::parser_callback_t check = [&keys](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty()) {
      std::string key = parsed.get<std::string>();
      if (!keys.back().insert(key).second) throw DuplicateKey{Escaped(key)};
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const DuplicateKey& d) {
    return std::unexpected(JsonRefusal{JsonRefusal::Kind::kDuplicateKey, 0, d.key});
  } catch (const json::parse_error& e) {
    // Not e.what(): it quotes what the parser last read, which may be a secret.
    return std::unexpected(JsonRefusal{JsonRefusal::Kind::kSyntax, e.byte, {}});
  } catch (const json::out_of_range&) {
    return std::unexpected(JsonRefusal{JsonRefusal::Kind::kNumberOutOfRange, 0, {}});
  }
}

}  // namespace slurmfleet
