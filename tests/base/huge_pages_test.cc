#include "base/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace slurmfleet {
namespace {

constexpr size_t kMiB = 1024 * 1024;

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps; empty if none does.
std::string VmFlagsAt(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {  // a mapping's first line
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// Whether the kernel was built with transparent huge pages (whatever its mode): then an advice
// marks the mapping "hg" in its VmFlags.
bool KernelHasHugePages() {
  return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
}

bool Advised(const void* address) { return VmFlagsAt(address).find(" hg") != std::string::npos; }

class Mapping {
 public:
  explicit Mapping(size_t bytes) : bytes_(bytes) {
    data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() {
    if (data_ != MAP_FAILED) munmap(data_, bytes_);
  }
  char* data() const { return static_cast<char*>(data_); }
  bool ok() const { return data_ != MAP_FAILED; }

 private:
  size_t bytes_;
  void* data_;
};

TEST(HugePagesTest, AdvisesOnlyTheWholeHugePagesOfALargeBuffer) {
  Mapping buffer(16 * kMiB);
  ASSERT_TRUE(buffer.ok());
  // not aligned to 2 MiB: only the huge pages wholly inside are advised
  char* start = buffer.data() + 4096;
  AdviseHugePages(start, 12 * kMiB);
  char* first_whole = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(start) + 2 * kMiB - 1) &
                                              ~(2 * kMiB - 1));
  EXPECT_EQ(Advised(first_whole + 4 * kMiB), KernelHasHugePages());
  EXPECT_FALSE(Advised(first_whole - 4096)) << "a page before the first whole huge page";
  EXPECT_FALSE(Advised(start + 12 * kMiB)) << "a page after the buffer";
}

TEST(HugePagesTest, LeavesSmallBuffersAndNullAlone) {
  Mapping buffer(8 * kMiB);
  ASSERT_TRUE(buffer.ok());
  AdviseHugePages(buffer.data(), 4 * kMiB - 1);
  EXPECT_FALSE(Advised(buffer.data() + 2 * kMiB));
  AdviseHugePages(nullptr, 64 * kMiB);  // nothing to advise, and no crash
  EXPECT_FALSE(Advised(buffer.data() + 2 * kMiB));
}

}  // namespace
}  // namespace slurmfleet
