#include "base/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace slurmfleet {

Result<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return Fail(Code::kInvalidInput, "cannot read " + path + ": " + ErrnoText(errno), path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Fail(Code::kInvalidInput, path + " is a directory, not a file", path);
  }
  std::string out;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(Code::kInvalidInput, "cannot read " + path + ": " + ErrnoText(errno), path);
    }
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return Fail(Code::kInvalidInput,
                  path + " holds more than " + std::to_string(max_bytes / (1024 * 1024)) +
                      " MiB; is it the right file?",
                  path);
    }
    out.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace slurmfleet
