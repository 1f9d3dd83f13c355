#include "cli/output_tail.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace slurmfleet::cli {

Result<OutputTail> ReadOutputTail(const std::string& path, size_t max_bytes, size_t max_lines) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    const int error = errno;
    return Fail(error == ENOENT ? Code::kNotFound : Code::kInvalidInput,
                std::string("cannot read it: ") + std::strerror(error), path);
  }
  const auto size = static_cast<uint64_t>(in.tellg());
  OutputTail tail;
  tail.skipped_bytes = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(tail.skipped_bytes));
  tail.text.resize(static_cast<size_t>(size - tail.skipped_bytes));
  in.read(tail.text.data(), static_cast<std::streamsize>(tail.text.size()));
  tail.text.resize(static_cast<size_t>(in.gcount()));

  // Cut a partial first line, then surplus lines, so the text starts where a line does.
  size_t start = 0;
  if (tail.skipped_bytes > 0) {
    size_t newline = tail.text.find('\n');
    if (newline != std::string::npos && newline + 1 < tail.text.size()) start = newline + 1;
  }
  size_t lines = 0;
  for (size_t i = tail.text.size(); i > start; --i) {
    // a newline ends the line before it; the last line may lack one
    if (tail.text[i - 1] == '\n' && i != tail.text.size() && ++lines == max_lines) {
      start = i;
      break;
    }
  }
  tail.text.erase(0, start);
  tail.skipped_bytes += start;
  return tail;
}

}  // namespace slurmfleet::cli
