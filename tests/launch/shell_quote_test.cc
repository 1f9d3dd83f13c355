#include "launch/shell_quote.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace slurmfleet::launch {
namespace {

TEST(ShellQuoteTest, SafeWordsStayBare) {
  EXPECT_EQ(ShellQuote("/opt/jdk-21/bin/java"), "/opt/jdk-21/bin/java");
  EXPECT_EQ(ShellQuote("gres/gpu:a100:1,x@y%z+w"), "gres/gpu:a100:1,x@y%z+w");
  EXPECT_EQ(ShellQuote("-x"), "-x");
}

TEST(ShellQuoteTest, EverythingElseIsSingleQuoted) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote("`id`"), "'`id`'");
  EXPECT_EQ(ShellQuote("a=b"), "'a=b'");
  EXPECT_EQ(ShellQuote("*.jar"), "'*.jar'");
  EXPECT_EQ(ShellQuote("~/x"), "'~/x'");
  EXPECT_EQ(ShellQuote("line1\nline2"), "'line1\nline2'");
  EXPECT_EQ(ShellQuote("a;b|c&d"), "'a;b|c&d'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("''"), "''\\'''\\'''");
}

// What bash makes of the quoted word is exactly the original string.
TEST(ShellQuoteTest, BashReadsBackTheOriginal) {
  const std::string inputs[] = {"plain",   "with space", "it's",        "$(touch /tmp/pwned)",
                                "`id`",    "a\nb",       "\\backslash", "\"dq\"",
                                "*?[]{}!", "",           "'",           "-n"};
  for (const std::string& s : inputs) {
    const std::string command = "bash -c 'printf %s \"$1\"' _ " + ShellQuote(s);
    FILE* p = popen(command.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0);
    EXPECT_EQ(out, s) << "quoted as " << ShellQuote(s);
  }
}

}  // namespace
}  // namespace slurmfleet::launch
