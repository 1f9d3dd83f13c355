// UTF-8 checks for text that ends up in JSON (records, events, API answers, request bodies):
// nlohmann::json throws on invalid UTF-8 when it writes a string, so bytes from files, flags and
// foreign servers are checked or repaired before they get there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace slurmfleet {

// The offset of the first byte that does not begin a well-formed UTF-8 sequence (overlong
// forms, surrogates and code points past U+10FFFF included), or nullopt when all of it is UTF-8.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

// `text` with each invalid sequence replaced by U+FFFD: for showing foreign text in messages.
std::string RepairUtf8(std::string_view text);

}  // namespace slurmfleet
