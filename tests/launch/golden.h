// Golden-file comparison: ExpectGolden("launch/golden/x.sh", actual) diffs `actual` against the
// file under tests/; SLURMFLEET_UPDATE_GOLDEN=1 rewrites the file instead, for review in the diff.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace slurmfleet::testing {

inline std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void ExpectGolden(const std::string& relative, const std::string& actual) {
  const std::string path = std::string(SLURMFLEET_TESTDATA_DIR) + "/" + relative;
  const char* update = std::getenv("SLURMFLEET_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing; run with SLURMFLEET_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(ReadFileOrEmpty(path), actual)
      << "differs from " << path << "; if the change is intended, rerun with "
      << "SLURMFLEET_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace slurmfleet::testing
