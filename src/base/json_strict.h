// JSON from outside, read without nlohmann::json's silent choices: an object that gives a key
// twice keeps only the last value there (`{"kind": "job", "kind": "run"}` is a run), and a number
// beyond a double's range throws an exception that is not a parse error.
#pragma once

#include <cstddef>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace slurmfleet {

// Why a text was refused, for a message about it: never any of the text but a key (keys are
// field names, not values).
struct JsonRefusal {
  enum class Kind { kSyntax, kNumberOutOfRange, kDuplicateKey };
  Kind kind;
  size_t byte = 0;  // kSyntax: where the parser stopped, counted from 1
  std::string key;  // kDuplicateKey: the key given twice, control characters as \xNN

  // "is not valid JSON (syntax error at byte 12)", "holds a number too large to read",
  // "gives the key 'kind' twice in one object; give each key once": to follow "the body ".
  std::string Describe() const;
};

// `text` parsed, or why not. Nesting depth is the caller's to check first (json_depth.h).
std::expected<nlohmann::json, JsonRefusal> ParseJsonStrictly(std::string_view text);

}  // namespace slurmfleet
