#include "auth/user_checked_token_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/jwt.h"

namespace slurmfleet::auth {
namespace {

using namespace std::chrono_literals;
using std::chrono::sys_seconds;

constexpr sys_seconds kStart{1700000000s};

std::string MintFor(std::string_view user) {
  return MintHs256(Secret(std::string(32, 'k')), user, kStart, kStart + 3600s).value().Reveal();
}

// Hands out whatever token the test set, and counts the calls passed through.
class ScriptedTokenSource final : public TokenSource {
 public:
  Result<Token> Get() override {
    if (!jwt) return Fail(Code::kAuth, "no token in the script", "");
    auto claims = DecodeClaims(*jwt);
    return Token{Secret(*jwt), claims ? claims->user : "", std::nullopt};
  }
  void Invalidate() override { ++invalidations; }
  std::string Describe() const override { return "token file /etc/slurmfleet/jwt"; }

  std::optional<std::string> jwt;
  int invalidations = 0;
};

struct Checked {
  ScriptedTokenSource* inner;
  std::vector<std::string> warnings;
  std::unique_ptr<UserCheckedTokenSource> source;
};

std::unique_ptr<Checked> Wrap(std::string expected_user) {
  auto c = std::make_unique<Checked>();
  auto inner = std::make_unique<ScriptedTokenSource>();
  c->inner = inner.get();
  c->source = std::make_unique<UserCheckedTokenSource>(
      std::move(inner), std::move(expected_user),
      [w = &c->warnings](std::string_view m) { w->emplace_back(m); });
  return c;
}

TEST(UserCheckedTokenSourceTest, ATokenForTheConfiguredUserPassesSilently) {
  auto c = Wrap("ci");
  c->inner->jwt = MintFor("ci");
  auto token = c->source->Get();
  ASSERT_TRUE(token) << token.error().ToString();
  EXPECT_EQ(token->jwt.Reveal(), *c->inner->jwt);
  EXPECT_EQ(token->user, "ci");
  EXPECT_TRUE(c->warnings.empty());
}

TEST(UserCheckedTokenSourceTest, ATokenForAnotherUserIsPassedOnWithOneWarningNamingBoth) {
  auto c = Wrap("alice");
  c->inner->jwt = MintFor("bob");
  for (int i = 0; i < 3; ++i) {
    auto token = c->source->Get();
    ASSERT_TRUE(token);
    EXPECT_EQ(token->user, "bob");
  }
  ASSERT_EQ(c->warnings.size(), 1u);
  const std::string& w = c->warnings[0];
  EXPECT_NE(w.find("token file /etc/slurmfleet/jwt"), std::string::npos) << w;
  EXPECT_NE(w.find("'bob'"), std::string::npos) << w;
  EXPECT_NE(w.find("credentials.user is 'alice'"), std::string::npos) << w;
  EXPECT_EQ(w.find(*c->inner->jwt), std::string::npos) << "the token leaked into: " << w;
  EXPECT_EQ(w.find(c->inner->jwt->substr(c->inner->jwt->rfind('.') + 1)), std::string::npos);
}

TEST(UserCheckedTokenSourceTest, EachNewMismatchedTokenIsWarnedAboutOnce) {
  auto c = Wrap("alice");
  c->inner->jwt = MintFor("bob");
  (void)c->source->Get();
  c->inner->jwt = MintFor("carol");
  (void)c->source->Get();
  (void)c->source->Get();
  ASSERT_EQ(c->warnings.size(), 2u);
  EXPECT_NE(c->warnings[1].find("'carol'"), std::string::npos) << c->warnings[1];
}

TEST(UserCheckedTokenSourceTest, ATokenWithoutAUserIsNotQuestioned) {
  auto c = Wrap("alice");
  const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  c->inner->jwt = header + "." + Base64UrlEncode(R"({"exp":1700003600})") + ".c2ln";
  auto token = c->source->Get();
  ASSERT_TRUE(token);
  EXPECT_EQ(token->user, "");
  EXPECT_TRUE(c->warnings.empty());
}

TEST(UserCheckedTokenSourceTest, ErrorsInvalidationAndDescriptionPassThrough) {
  auto c = Wrap("alice");
  auto token = c->source->Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_EQ(token.error().message, "no token in the script");
  c->source->Invalidate();
  EXPECT_EQ(c->inner->invalidations, 1);
  EXPECT_EQ(c->source->Describe(), "token file /etc/slurmfleet/jwt");
  EXPECT_TRUE(c->warnings.empty());
}

}  // namespace
}  // namespace slurmfleet::auth
