#include "base/error.h"

#include <gtest/gtest.h>

#include <sstream>

#include "base/secret.h"

namespace slurmfleet {
namespace {

TEST(ErrorTest, ToStringNamesWhereWhenKnown) {
  EXPECT_EQ(
      (Error{Code::kInvalidInput, "not a size; use e.g. 16G", "templates.gpu.mem"}).ToString(),
      "templates.gpu.mem: not a size; use e.g. 16G");
  EXPECT_EQ((Error{Code::kInternal, "boom", ""}).ToString(), "boom");
}

TEST(ErrorTest, FailBuildsAnUnexpectedResult) {
  Result<int> r = Fail(Code::kNotFound, "no such job", "GET /job/7");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kNotFound);
  EXPECT_EQ(CodeName(r.error().code), "not found");
}

TEST(SecretTest, PrintsRedacted) {
  Secret s("eyJhbGciOi.secret.sig");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "***");
  EXPECT_EQ(s.Reveal(), "eyJhbGciOi.secret.sig");
}

}  // namespace
}  // namespace slurmfleet
