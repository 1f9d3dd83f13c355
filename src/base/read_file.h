// Reading a whole file named by a user (a configuration, a CA bundle), with a bound: a path to
// /dev/zero or to a huge file by mistake is an error naming it, not an exhausted memory.
#pragma once

#include <cstddef>
#include <string>

#include "base/error.h"

namespace slurmfleet {

// The file's bytes. kInvalidInput naming the path when it cannot be opened or read (with the
// system's reason), is a directory, or holds more than max_bytes. Pipes and devices are read
// like files, up to the bound.
Result<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes);

}  // namespace slurmfleet
