// The end of a job's output file, bounded: a training log can be gigabytes, and a terminal or a
// JSON answer needs only its end, where the error is. Reads at most `max_bytes` from the end of
// the file (never the whole file), then keeps at most the last `max_lines` lines of that.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace slurmfleet::cli {

inline constexpr size_t kOutputTailBytes = 64 * 1024;
inline constexpr size_t kOutputTailLines = 2000;

struct OutputTail {
  std::string text;            // from a line start, unless one line alone is over max_bytes
  uint64_t skipped_bytes = 0;  // the file's bytes before `text`; 0 when it is whole
};

// kNotFound when the file does not exist, kInvalidInput when it cannot be read (where = path).
Result<OutputTail> ReadOutputTail(const std::string& path, size_t max_bytes = kOutputTailBytes,
                                  size_t max_lines = kOutputTailLines);

}  // namespace slurmfleet::cli
