#include "auth/env_token_source.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "auth/jwt.h"
#include "base/fake_clock.h"

namespace slurmfleet::auth {
namespace {

using namespace std::chrono_literals;
using std::chrono::sys_seconds;

constexpr sys_seconds kStart{1700000000s};

std::string TestKey() { return std::string(32, '\x42'); }

std::string MintFor(std::string_view user, sys_seconds iat, std::chrono::seconds lifespan) {
  return MintHs256(Secret(TestKey()), user, iat, iat + lifespan).value().Reveal();
}

// A fake environment: only what the test put in it.
EnvTokenSource::Lookup FakeEnv(std::map<std::string, std::string, std::less<>> vars,
                               int* calls = nullptr) {
  return [vars = std::move(vars), calls](std::string_view name) -> std::optional<std::string> {
    if (calls) ++*calls;
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

void ExpectNoSecret(const Error& error, const std::string& jwt) {
  EXPECT_EQ(error.ToString().find(jwt), std::string::npos);
  // Not even the signature part on its own.
  EXPECT_EQ(error.ToString().find(jwt.substr(jwt.rfind('.') + 1)), std::string::npos);
}

TEST(EnvTokenSourceTest, ReadsTheVariableOnceAtConstruction) {
  FakeClock clock(kStart);
  const std::string jwt = MintFor("ci", kStart, 3600s);
  int calls = 0;
  EnvTokenSource source("SLURM_JWT", FakeEnv({{"SLURM_JWT", jwt}}, &calls), clock);
  EXPECT_EQ(calls, 1);

  for (int i = 0; i < 3; ++i) {
    auto token = source.Get();
    ASSERT_TRUE(token) << token.error().message;
    EXPECT_EQ(token->jwt.Reveal(), jwt);
    EXPECT_EQ(token->user, "ci");
    EXPECT_EQ(token->expires_at, kStart + 3600s);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(source.Describe(), "environment SLURM_JWT");
}

TEST(EnvTokenSourceTest, ReadsAnotherVariableWhenTold) {
  FakeClock clock(kStart);
  const std::string jwt = MintFor("ci", kStart, 3600s);
  EnvTokenSource source("CI_SLURM_TOKEN", FakeEnv({{"CI_SLURM_TOKEN", jwt}}), clock);
  ASSERT_TRUE(source.Get());
  EXPECT_EQ(source.Get()->jwt.Reveal(), jwt);
  EXPECT_EQ(source.Describe(), "environment CI_SLURM_TOKEN");
}

TEST(EnvTokenSourceTest, TrimsWhitespaceAndScontrolsPrefix) {
  FakeClock clock(kStart);
  const std::string jwt = MintFor("ci", kStart, 3600s);
  EnvTokenSource source("SLURM_JWT", FakeEnv({{"SLURM_JWT", " SLURM_JWT=" + jwt + "\n"}}), clock);
  auto token = source.Get();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(token->jwt.Reveal(), jwt);
}

TEST(EnvTokenSourceTest, UnsetOrEmptyIsAnAuthErrorNamingTheVariable) {
  FakeClock clock(kStart);
  EnvTokenSource unset("SLURM_JWT", FakeEnv({}), clock);
  auto token = unset.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find("SLURM_JWT is not set"), std::string::npos)
      << token.error().message;
  EXPECT_NE(token.error().message.find("scontrol token"), std::string::npos);

  EnvTokenSource empty("SLURM_JWT", FakeEnv({{"SLURM_JWT", "  \n"}}), clock);
  token = empty.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find("SLURM_JWT is empty"), std::string::npos);
}

// The configuration's jwtEnv may hold a token pasted where the variable's name belongs.
TEST(EnvTokenSourceTest, AnUnsetVariableFromTheConfigurationIsNamedByItsKey) {
  FakeClock clock(kStart);
  const std::string jwt = MintFor("ci", kStart, 3600s);
  EnvTokenSource pasted(jwt, FakeEnv({}), clock, "batch.credentials.jwtEnv");
  auto token = pasted.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_EQ(token.error().message,
            "the variable named by batch.credentials.jwtEnv is not set; export a token (export "
            "$(scontrol token)) or configure a token file or jwt key");
  ExpectNoSecret(token.error(), jwt);
  // set, it is a variable's name
  EnvTokenSource empty("CI_JWT", FakeEnv({{"CI_JWT", ""}}), clock, "batch.credentials.jwtEnv");
  token = empty.Get();
  ASSERT_FALSE(token);
  EXPECT_NE(token.error().message.find("CI_JWT is empty"), std::string::npos);
}

TEST(EnvTokenSourceTest, NotAJwtIsAnAuthErrorThatDoesNotQuoteTheValue) {
  FakeClock clock(kStart);
  EnvTokenSource source("SLURM_JWT", FakeEnv({{"SLURM_JWT", "hunter2-secret"}}), clock);
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find("SLURM_JWT"), std::string::npos);
  EXPECT_EQ(token.error().message.find("hunter2"), std::string::npos) << token.error().message;
}

TEST(EnvTokenSourceTest, ExpiredTokenSaysWhenAndHowToFixIt) {
  FakeClock clock(kStart);
  const std::string jwt = MintFor("ci", kStart, 3600s);
  EnvTokenSource source("SLURM_JWT", FakeEnv({{"SLURM_JWT", jwt}}), clock);
  clock.Advance(3599s);
  ASSERT_TRUE(source.Get());
  clock.Advance(1s);
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_EQ(token.error().message,
            "token in SLURM_JWT expired at 2023-11-14T23:13:20Z; export a fresh one (scontrol "
            "token)");
  ExpectNoSecret(token.error(), jwt);
}

TEST(EnvTokenSourceTest, CannotRenewSoAfterARejectionSaysHowToFixIt) {
  FakeClock clock(kStart);
  const std::string jwt = MintFor("ci", kStart, 3600s);
  EnvTokenSource source("SLURM_JWT", FakeEnv({{"SLURM_JWT", jwt}}), clock);
  ASSERT_TRUE(source.Get());

  source.Invalidate();
  for (int i = 0; i < 2; ++i) {
    auto token = source.Get();
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().code, Code::kAuth);
    EXPECT_EQ(token.error().message,
              "the token in SLURM_JWT was rejected; export a fresh one (scontrol token)");
    ExpectNoSecret(token.error(), jwt);
  }
  EXPECT_EQ(source.Describe().find(jwt), std::string::npos);

  // An expired token that was rejected is reported as expired: that is why it was rejected.
  clock.Advance(1h);
  EXPECT_NE(source.Get().error().message.find("expired at"), std::string::npos);
}

TEST(EnvTokenSourceTest, ProcessEnvironmentReadsGetenv) {
  // Reads, never sets: PATH is set in any environment ctest runs in.
  auto lookup = EnvTokenSource::ProcessEnvironment();
  EXPECT_TRUE(lookup("PATH").has_value());
  EXPECT_FALSE(lookup("SLURMFLEET_TEST_SURELY_UNSET_VARIABLE").has_value());
}

}  // namespace
}  // namespace slurmfleet::auth
