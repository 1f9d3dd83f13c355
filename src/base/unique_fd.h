// UniqueFd: a file descriptor closed when it goes out of scope; and the text for an errno value.
// For the few places that need what std::ifstream cannot give (O_CLOEXEC, fstat of the same file).
#pragma once

#include <unistd.h>

#include <string>
#include <system_error>

namespace slurmfleet {

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

inline std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

}  // namespace slurmfleet
