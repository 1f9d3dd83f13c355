#include "server/api_tokens.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace slurmfleet::server {
namespace {

namespace fs = std::filesystem;

constexpr char kAdminToken[] = "admin-token-0123456789abcdef";
constexpr char kReadToken[] = "read-token-0123456789abcdef";

TEST(ConstantTimeEqualsTest, EqualStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals(std::string(1000, 'x'), std::string(1000, 'x')));
}

TEST(ConstantTimeEqualsTest, UnequalStringsOfTheSameLength) {
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "xbc"));
}

TEST(ConstantTimeEqualsTest, DifferentLengths) {
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  // A NUL is a character like any other, not an end.
  EXPECT_FALSE(ConstantTimeEquals(std::string("abc\0", 4), "abc"));
}

class ApiTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "slurmfleet-server-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ / "api-tokens";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& content, mode_t mode = 0600) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << content;
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }

  // The error Load() gives for `content`; fails the test if it loads.
  Error LoadError(const std::string& content) {
    Write(content);
    auto tokens = ApiTokens::Load(path_);
    EXPECT_FALSE(tokens) << "loaded: " << content;
    return tokens ? Error{} : tokens.error();
  }

  std::string Line(int n) const { return path_.string() + ":" + std::to_string(n); }

  fs::path dir_;
  fs::path path_;
};

TEST(ScopeTest, EachScopeGrantsItsOwnAndWhatItImplies) {
  EXPECT_TRUE(Grants(Scope::kRead, Scope::kRead));
  EXPECT_FALSE(Grants(Scope::kRead, Scope::kTemplates));
  EXPECT_FALSE(Grants(Scope::kRead, Scope::kAdmin));
  EXPECT_TRUE(Grants(Scope::kTemplates, Scope::kRead));
  EXPECT_TRUE(Grants(Scope::kTemplates, Scope::kTemplates));
  EXPECT_FALSE(Grants(Scope::kTemplates, Scope::kAdmin));
  EXPECT_TRUE(Grants(Scope::kAdmin, Scope::kRead));
  EXPECT_TRUE(Grants(Scope::kAdmin, Scope::kTemplates));
  EXPECT_TRUE(Grants(Scope::kAdmin, Scope::kAdmin));
}

TEST_F(ApiTokensTest, AuthorizesEachTokenWithItsScope) {
  Write(std::string("# who may call the API\n\n") + "admin jenkins " + kAdminToken + "\n" +
        "  read\tdashboard   " + kReadToken + "  \r\n" + "   # indented comment\n" +
        "templates pipelines pipelines-token-0123456789\n");
  auto tokens = ApiTokens::Load(path_);
  ASSERT_TRUE(tokens) << tokens.error().ToString();
  EXPECT_EQ((*tokens)->size(), 3u);
  EXPECT_EQ((*tokens)->Authorize("pipelines-token-0123456789"),
            (Principal{"pipelines", Scope::kTemplates}));
  EXPECT_EQ((*tokens)->Authorize(kAdminToken), (Principal{"jenkins", Scope::kAdmin}));
  EXPECT_EQ((*tokens)->Authorize(kReadToken), (Principal{"dashboard", Scope::kRead}));
}

TEST_F(ApiTokensTest, RejectsWrongEmptyAndPartialTokens) {
  Write(std::string("admin jenkins ") + kAdminToken + "\n");
  auto tokens = ApiTokens::Load(path_).value();
  EXPECT_EQ(tokens->Authorize(""), std::nullopt);
  EXPECT_EQ(tokens->Authorize("wrong-token-0123456789abcdef"), std::nullopt);
  std::string token = kAdminToken;
  EXPECT_EQ(tokens->Authorize(token.substr(0, token.size() - 1)), std::nullopt);
  EXPECT_EQ(tokens->Authorize(token + "x"), std::nullopt);
  EXPECT_EQ(tokens->Authorize("jenkins"), std::nullopt);
}

TEST_F(ApiTokensTest, AnEmptyFileAuthorizesNobody) {
  Write("# nobody yet\n");
  auto tokens = ApiTokens::Load(path_);
  ASSERT_TRUE(tokens) << tokens.error().ToString();
  EXPECT_EQ((*tokens)->size(), 0u);
  EXPECT_EQ((*tokens)->Authorize(kAdminToken), std::nullopt);
}

TEST(ApiTokensNoneTest, AuthorizesNobodyAndReloadsToNothing) {
  auto tokens = ApiTokens::None();
  EXPECT_EQ(tokens->size(), 0u);
  EXPECT_EQ(tokens->Authorize(kAdminToken), std::nullopt);
  EXPECT_TRUE(tokens->Reload());
  EXPECT_TRUE(tokens->path().empty());
}

TEST_F(ApiTokensTest, RefusesAFileOthersCanRead) {
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602}) {
    Write(std::string("admin jenkins ") + kAdminToken + "\n", mode);
    auto tokens = ApiTokens::Load(path_);
    ASSERT_FALSE(tokens) << std::oct << mode;
    EXPECT_EQ(tokens.error().code, Code::kInvalidInput);
    EXPECT_NE(tokens.error().message.find(path_.string()), std::string::npos)
        << tokens.error().message;
    EXPECT_NE(tokens.error().message.find("chmod 600"), std::string::npos)
        << tokens.error().message;
  }
  Write(std::string("admin jenkins ") + kAdminToken + "\n", 0400);
  EXPECT_TRUE(ApiTokens::Load(path_));
}

TEST_F(ApiTokensTest, AMissingFileIsNamed) {
  auto tokens = ApiTokens::Load(dir_ / "absent");
  ASSERT_FALSE(tokens);
  EXPECT_EQ(tokens.error().code, Code::kInvalidInput);
  EXPECT_NE(tokens.error().message.find((dir_ / "absent").string()), std::string::npos);
}

TEST_F(ApiTokensTest, ParseErrorsNameFileAndLine) {
  const std::string good = std::string("admin jenkins ") + kAdminToken + "\n";
  struct Case {
    std::string bad_line;
    std::string says;
  };
  const Case cases[] = {
      {std::string("admin ") + kReadToken, "got 2 fields"},
      {std::string(kReadToken), "got 1 field"},
      {std::string("admin ci ") + kReadToken + " extra", "got 4 fields"},
      {std::string("write ci ") + kReadToken, "must be `read`, `templates` or `admin`"},
      {std::string("read c/i ") + kReadToken, "letters, digits"},
      {"read ci short", "shorter than 16"},
      {std::string("read jenkins ") + kReadToken, "already used on line 2"},
      {std::string("read ci ") + kAdminToken, "same as on line 2"},
  };
  for (const auto& c : cases) {
    Error error = LoadError("# tokens\n" + good + "\n" + c.bad_line + "\n");
    EXPECT_EQ(error.code, Code::kInvalidInput);
    EXPECT_EQ(error.where, Line(4)) << c.bad_line;
    EXPECT_NE(error.message.find(c.says), std::string::npos)
        << c.bad_line << " -> " << error.message;
    // Never a token in a message, even a misplaced one.
    for (const std::string& token : {std::string(kAdminToken), std::string(kReadToken)}) {
      EXPECT_EQ(error.ToString().find(token), std::string::npos) << error.ToString();
    }
  }
}

TEST_F(ApiTokensTest, ReloadSwapsTokensAndKeepsThemOnError) {
  Write(std::string("admin jenkins ") + kAdminToken + "\n");
  auto tokens = ApiTokens::Load(path_).value();

  Write(std::string("read dashboard ") + kReadToken + "\n");
  ASSERT_TRUE(tokens->Reload());
  EXPECT_EQ(tokens->Authorize(kAdminToken), std::nullopt);
  EXPECT_EQ(tokens->Authorize(kReadToken), (Principal{"dashboard", Scope::kRead}));

  Write("admin broken\n");
  auto reloaded = tokens->Reload();
  ASSERT_FALSE(reloaded);
  EXPECT_EQ(reloaded.error().where, Line(1));
  EXPECT_EQ(tokens->Authorize(kReadToken), (Principal{"dashboard", Scope::kRead}));

  Write(std::string("read dashboard ") + kReadToken + "\n", 0644);
  EXPECT_FALSE(tokens->Reload());
  EXPECT_EQ(tokens->size(), 1u);
}

}  // namespace
}  // namespace slurmfleet::server
