#include "base/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace slurmfleet {
namespace {

TEST(Utf8Test, WellFormedTextPasses) {
  for (std::string_view ok : {"", "plain ascii", "caf\xC3\xA9", "\xE2\x80\x98gpu\xE2\x80\x99",
                              "\xF0\x9F\x9A\x80", "\xEF\xBF\xBF", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_EQ(FirstInvalidUtf8(ok), std::nullopt) << ok;
    EXPECT_EQ(RepairUtf8(ok), ok);
  }
}

TEST(Utf8Test, TheFirstBadByteIsFound) {
  EXPECT_EQ(FirstInvalidUtf8("caf\xE9"), 3u);             // Latin-1
  EXPECT_EQ(FirstInvalidUtf8("ab\xC3"), 2u);              // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xC0\xAF"), 0u);            // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("x\xE0\x80\xAF"), 1u);       // overlong, three bytes
  EXPECT_EQ(FirstInvalidUtf8("\xED\xA0\x80"), 0u);        // a surrogate
  EXPECT_EQ(FirstInvalidUtf8("ok\xF4\x90\x80\x80"), 2u);  // past U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("\xE2\x80\x98\xFF"), 3u);    // after a good sequence
  EXPECT_EQ(FirstInvalidUtf8("\xC3\xA9\x80"), 2u);        // a stray continuation byte
}

TEST(Utf8Test, RepairedTextIsValidAndJsonCanWriteIt) {
  const std::string repaired = RepairUtf8("forbidden \xFF\xFE caf\xE9!");
  EXPECT_EQ(repaired, "forbidden \xEF\xBF\xBD\xEF\xBF\xBD caf\xEF\xBF\xBD!");
  EXPECT_EQ(FirstInvalidUtf8(repaired), std::nullopt);
  EXPECT_NO_THROW((void)nlohmann::json(repaired).dump());
}

}  // namespace
}  // namespace slurmfleet
