#include "auth/minting_token_source.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "auth/jwt.h"
#include "base/fake_clock.h"

namespace slurmfleet::auth {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using std::chrono::sys_seconds;

constexpr sys_seconds kStart{1700000000s};

// The fixed vector of jwt_test.cc (see there for the python one-liner that computed it).
constexpr std::string_view kVectorToken =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJleHAiOjE3MDAwMDM2MDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoiY2kifQ"
    ".t1mSo9_MguPsG99rtRhka2TrVhU4Yv6uTGYJ9i-n1O4";

std::string VectorKey() {
  std::string key;
  for (int i = 0; i < 32; ++i) key += static_cast<char>(i);
  return key;
}

// Recomputes the signature with OpenSSL's one-shot HMAC(), independently of the code under test.
bool SignatureVerifies(std::string_view jwt, std::string_view key) {
  size_t last_dot = jwt.rfind('.');
  std::string_view signing_input = jwt.substr(0, last_dot);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size(), mac,
       &mac_size);
  auto signature = Base64UrlDecode(jwt.substr(last_dot + 1));
  return signature && *signature == std::string_view(reinterpret_cast<const char*>(mac), mac_size);
}

class MintingTokenSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "slurmfleet-auth-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    key_path_ = dir_ / "jwt_hs256.key";
    WriteKey(VectorKey());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteKey(const std::string& bytes) {
    std::ofstream(key_path_, std::ios::binary | std::ios::trunc) << bytes;
  }

  // No Error message or Describe() may contain the token or the key.
  void ExpectNoSecrets(const std::string& text, const std::string& key = VectorKey()) {
    EXPECT_EQ(text.find(key), std::string::npos);
    EXPECT_EQ(text.find(Base64UrlEncode(key)), std::string::npos);
    for (const std::string& jwt : minted_) {
      EXPECT_EQ(text.find(jwt), std::string::npos);
      EXPECT_EQ(text.find(jwt.substr(jwt.rfind('.') + 1)), std::string::npos);
    }
  }

  std::string GetJwt(MintingTokenSource& source) {
    auto token = source.Get();
    EXPECT_TRUE(token) << token.error().message;
    if (!token) return "";
    minted_.push_back(token->jwt.Reveal());
    return token->jwt.Reveal();
  }

  FakeClock clock_{kStart};
  fs::path dir_;
  fs::path key_path_;
  std::vector<std::string> minted_;
};

TEST_F(MintingTokenSourceTest, MintsTheSameTokenAsTheIndependentVector) {
  MintingTokenSource source(key_path_, "ci", clock_);
  auto token = source.Get();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(token->jwt.Reveal(), kVectorToken);
  EXPECT_EQ(token->user, "ci");
  EXPECT_EQ(token->expires_at, kStart + 3600s);
}

TEST_F(MintingTokenSourceTest, MintedTokenCarriesTheClaimsAndVerifies) {
  clock_.Advance(1234567ms);  // not a whole second: iat is rounded down
  MintingTokenSource source(key_path_, "jenkins", clock_, 600s);
  std::string jwt = GetJwt(source);
  auto claims = DecodeClaims(jwt);
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->issued_at, kStart + 1234s);
  EXPECT_EQ(claims->expires_at, kStart + 1234s + 600s);
  EXPECT_EQ(claims->user, "jenkins");
  EXPECT_TRUE(SignatureVerifies(jwt, VectorKey()));
}

TEST_F(MintingTokenSourceTest, UsesTheKeyFilesExactBytes) {
  WriteKey("key-with-a-newline\n");  // Slurm does not trim the key: neither do we
  MintingTokenSource source(key_path_, "ci", clock_);
  std::string jwt = GetJwt(source);
  EXPECT_TRUE(SignatureVerifies(jwt, "key-with-a-newline\n"));
  EXPECT_FALSE(SignatureVerifies(jwt, "key-with-a-newline"));
}

TEST_F(MintingTokenSourceTest, RenewBeforeIsAFifthOfTheLifespanButAtLeast30s) {
  EXPECT_EQ(MintingTokenSource(key_path_, "ci", clock_).RenewBefore(), 720s);
  EXPECT_EQ(MintingTokenSource(key_path_, "ci", clock_, 600s).RenewBefore(), 120s);
  EXPECT_EQ(MintingTokenSource(key_path_, "ci", clock_, 100s).RenewBefore(), 30s);
}

TEST_F(MintingTokenSourceTest, CachesTheTokenAndRenewsAheadOfExpiry) {
  MintingTokenSource source(key_path_, "ci", clock_);
  const std::string first = GetJwt(source);

  // 12 min (a fifth of 1 h) before expiry is the last moment the cached token is kept.
  clock_.Advance(48min - 1s);
  EXPECT_EQ(GetJwt(source), first);
  clock_.Advance(1s);
  EXPECT_EQ(GetJwt(source), first);
  clock_.Advance(1s);
  auto renewed = source.Get();
  ASSERT_TRUE(renewed) << renewed.error().message;
  EXPECT_NE(renewed->jwt.Reveal(), first);
  EXPECT_EQ(renewed->expires_at, kStart + 48min + 1s + 1h);
  EXPECT_EQ(DecodeClaims(renewed->jwt.Reveal()).value().issued_at, kStart + 48min + 1s);
  EXPECT_TRUE(SignatureVerifies(renewed->jwt.Reveal(), VectorKey()));

  // The renewed token is cached in its turn.
  clock_.Advance(10min);
  EXPECT_EQ(source.Get().value().jwt.Reveal(), renewed->jwt.Reveal());
}

TEST_F(MintingTokenSourceTest, ShortLifespanRenewsUnder30sLeft) {
  MintingTokenSource source(key_path_, "ci", clock_, 60s);
  const std::string first = GetJwt(source);
  clock_.Advance(30s);
  EXPECT_EQ(GetJwt(source), first);
  clock_.Advance(1s);
  EXPECT_NE(GetJwt(source), first);
}

TEST_F(MintingTokenSourceTest, MintsANewTokenWithAReReadKeyAfterInvalidate) {
  MintingTokenSource source(key_path_, "ci", clock_);
  const std::string first = GetJwt(source);
  clock_.Advance(1s);
  EXPECT_EQ(GetJwt(source), first);

  // The key was rotated and Slurm rejected our token.
  const std::string rotated(48, '\x7f');
  WriteKey(rotated);
  source.Invalidate();
  const std::string second = GetJwt(source);
  EXPECT_NE(second, first);
  EXPECT_EQ(DecodeClaims(second).value().issued_at, kStart + 1s);
  EXPECT_TRUE(SignatureVerifies(second, rotated));
  EXPECT_FALSE(SignatureVerifies(second, VectorKey()));
}

TEST_F(MintingTokenSourceTest, MissingKeyIsAnAuthErrorNamingThePathAndSlurmConf) {
  fs::remove(key_path_);
  MintingTokenSource source(key_path_, "ci", clock_);
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_EQ(token.error().message,
            "jwt key " + key_path_.string() +
                " does not exist; it must be the jwt_key file named by AuthAltParameters in "
                "slurm.conf, readable by this user");
}

TEST_F(MintingTokenSourceTest, EmptyOrUnreadableKeyIsAnAuthErrorNamingThePath) {
  WriteKey("");
  MintingTokenSource empty(key_path_, "ci", clock_);
  auto token = empty.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find(key_path_.string() + " is empty"), std::string::npos);
  EXPECT_NE(token.error().message.find("AuthAltParameters"), std::string::npos);

  const fs::path directory = dir_ / "keydir";  // unreadable even for root, unlike chmod 000
  fs::create_directory(directory);
  MintingTokenSource unreadable(directory, "ci", clock_);
  token = unreadable.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find("cannot read jwt key " + directory.string()),
            std::string::npos)
      << token.error().message;
}

TEST_F(MintingTokenSourceTest, KeyRemovedAfterInvalidateIsAnAuthError) {
  MintingTokenSource source(key_path_, "ci", clock_);
  GetJwt(source);
  fs::remove(key_path_);
  source.Invalidate();
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  ExpectNoSecrets(token.error().ToString());
}

TEST_F(MintingTokenSourceTest, EmptyUserOrNonPositiveLifespanIsInvalidInput) {
  auto token = MintingTokenSource(key_path_, "", clock_).Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kInvalidInput);
  token = MintingTokenSource(key_path_, "ci", clock_, 0s).Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kInvalidInput);
}

TEST_F(MintingTokenSourceTest, DescribeAndErrorsNeverCarryTheKeyOrToken) {
  MintingTokenSource source(key_path_, "ci", clock_);
  GetJwt(source);
  EXPECT_EQ(source.Describe(), "minted for ci from " + key_path_.string() + " (lifespan 3600 s)");
  ExpectNoSecrets(source.Describe());

  // Every error a bad key file can produce.
  WriteKey("");
  source.Invalidate();
  ExpectNoSecrets(source.Get().error().ToString());
  fs::remove(key_path_);
  ExpectNoSecrets(source.Get().error().ToString());
}

TEST_F(MintingTokenSourceTest, SafeFromManyThreads) {
  MintingTokenSource source(key_path_, "ci", clock_, 60s);
  std::vector<std::thread> threads;
  std::atomic<int> failures = 0;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (t == 0) clock_.Advance(1s);
        if (t == 1 && i % 10 == 0) source.Invalidate();
        auto token = source.Get();
        if (!token || !SignatureVerifies(token->jwt.Reveal(), VectorKey())) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace slurmfleet::auth
