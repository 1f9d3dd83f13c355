// Against the real testbed: slurmrestd accepts the tokens MintingTokenSource mints, and rejects a
// token signed with another key or already expired. Needs SLURMRESTD_URL and SLURM_JWT_KEY (and
// SLURM_USER, default "ci", testbed.sh's user), as scripts/test.sh exports them; FAILS without
// them, so a misconfigured run cannot pass by skipping.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "auth/jwt.h"
#include "auth/minting_token_source.h"
#include "base/clock.h"

namespace slurmfleet::auth {
namespace {

using namespace std::chrono_literals;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// jobs/state needs a valid token; /ping answers 200 even for a rejected one. In the newest API
// version the testbed serves (SLURM_API_VERSION, as testbed/testbed.sh env prints it).
std::string Probe() {
  const std::string version = Env("SLURM_API_VERSION");
  return "/slurm/" + (version.empty() ? std::string("v0.0.45") : version) + "/jobs/state";
}

// The HTTP status of GET `url` with `jwt` as X-SLURM-USER-TOKEN, or -1 on a transport error.
long HttpStatus(const std::string& url, const std::string& jwt) {
  CURL* curl = curl_easy_init();
  if (!curl) return -1;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, ("X-SLURM-USER-TOKEN: " + jwt).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION,
      +[](char*, size_t size, size_t n, void*) -> size_t { return size * n; });
  long status = -1;
  if (curl_easy_perform(curl) == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return status;
}

class AuthIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(url_.empty()) << "SLURMRESTD_URL is not set: start the testbed (testbed.sh start)";
    ASSERT_FALSE(key_path_.empty()) << "SLURM_JWT_KEY is not set: start the testbed";
    if (user_.empty()) user_ = "ci";
  }

  std::string url_ = Env("SLURMRESTD_URL");
  std::string key_path_ = Env("SLURM_JWT_KEY");
  std::string user_ = Env("SLURM_USER");
  SystemClock clock_;
};

TEST_F(AuthIntegrationTest, SlurmrestdAcceptsAMintedToken) {
  MintingTokenSource source(key_path_, user_, clock_, 300s);
  auto token = source.Get();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(HttpStatus(url_ + Probe(), token->jwt.Reveal()), 200);
}

TEST_F(AuthIntegrationTest, SlurmrestdRejectsAWrongKeyAndAnExpiredToken) {
  auto now = std::chrono::floor<std::chrono::seconds>(clock_.Now());
  auto wrong_key = MintHs256(Secret(std::string(32, 'x')), user_, now, now + 300s);
  ASSERT_TRUE(wrong_key);
  EXPECT_EQ(HttpStatus(url_ + Probe(), wrong_key->Reveal()), 511);

  // The right key, but expired a minute ago.
  std::string key_bytes;
  {
    std::FILE* f = std::fopen(key_path_.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) key_bytes.append(buffer, n);
    std::fclose(f);
  }
  auto expired = MintHs256(Secret(key_bytes), user_, now - 600s, now - 60s);
  ASSERT_TRUE(expired);
  EXPECT_EQ(HttpStatus(url_ + Probe(), expired->Reveal()), 511);
}

}  // namespace
}  // namespace slurmfleet::auth
