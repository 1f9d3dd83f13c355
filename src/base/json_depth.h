// How deep a JSON text nests, measured without parsing it. nlohmann::json parses any depth, but
// writes, copies and compares values recursively: a body of a hundred thousand '[' parses fine and
// then overflows the stack. Every JSON text from outside is checked against kMaxJsonDepth first.
#pragma once

#include <string_view>

namespace slurmfleet {

// Deeper than any job description, template or API body slurmfleet reads.
inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count).
int JsonNestingDepth(std::string_view text);

}  // namespace slurmfleet
