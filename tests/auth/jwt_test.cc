#include "auth/jwt.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace slurmfleet::auth {
namespace {

using std::chrono::seconds;
using std::chrono::sys_seconds;

// The fixed test vector: key = the 32 bytes 0x00..0x1f, user "ci", iat 1700000000, exp 1700003600.
// Computed independently of this code with:
//   python3 -c 'import hmac,hashlib,base64,json;b=lambda
//   x:base64.urlsafe_b64encode(x).rstrip(b"=").decode();k=bytes(range(32));s=b(b"{\"alg\":\"HS256\",\"typ\":\"JWT\"}")+"."+b(json.dumps({"exp":1700003600,"iat":1700000000,"sun":"ci"},separators=(",",":")).encode());print(s+"."+b(hmac.new(k,s.encode(),hashlib.sha256).digest()))'
constexpr std::string_view kVectorToken =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJleHAiOjE3MDAwMDM2MDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoiY2kifQ"
    ".t1mSo9_MguPsG99rtRhka2TrVhU4Yv6uTGYJ9i-n1O4";
constexpr sys_seconds kVectorIat{seconds(1700000000)};
constexpr sys_seconds kVectorExp{seconds(1700003600)};

std::string VectorKey() {
  std::string key;
  for (int i = 0; i < 32; ++i) key += static_cast<char>(i);
  return key;
}

// Recomputes the signature with OpenSSL's one-shot HMAC(), independently of MintHs256's EVP_Q_mac.
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

TEST(Base64UrlTest, KnownVectors) {
  // RFC 4648 §10, without padding.
  EXPECT_EQ(Base64UrlEncode(""), "");
  EXPECT_EQ(Base64UrlEncode("f"), "Zg");
  EXPECT_EQ(Base64UrlEncode("fo"), "Zm8");
  EXPECT_EQ(Base64UrlEncode("foo"), "Zm9v");
  EXPECT_EQ(Base64UrlEncode("foob"), "Zm9vYg");
  EXPECT_EQ(Base64UrlEncode("fooba"), "Zm9vYmE");
  EXPECT_EQ(Base64UrlEncode("foobar"), "Zm9vYmFy");
  // The two characters where base64url differs from base64 ('+/' become '-_').
  EXPECT_EQ(Base64UrlEncode("\xfb\xff\xbf"), "-_-_");
  EXPECT_EQ(Base64UrlDecode("-_-_").value(), "\xfb\xff\xbf");
}

TEST(Base64UrlTest, RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int length = 0; length <= 300; ++length) {
    ASSERT_EQ(Base64UrlDecode(Base64UrlEncode(bytes)).value(), bytes) << "length " << length;
    bytes += static_cast<char>((length * 37 + 11) & 0xff);
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(all)).value(), all);
}

TEST(Base64UrlTest, RejectsPaddingForeignCharactersAndImpossibleLengths) {
  using namespace std::string_view_literals;
  for (std::string_view bad : std::initializer_list<std::string_view>{
           "Zg==", "Zm8=", "Zm9v+A", "Zm9v/A", "Zm 9v", "Zm9v\n", "Zm9v.", "Z\xc3\xa9", "Zm\0v"sv,
           "Z", "Zm9vY"}) {
    auto decoded = Base64UrlDecode(bad);
    ASSERT_FALSE(decoded) << "accepted '" << bad << "'";
    EXPECT_EQ(decoded.error().code, Code::kInvalidInput);
  }
  EXPECT_NE(Base64UrlDecode("Zg==").error().message.find("padding"), std::string::npos);
  EXPECT_NE(Base64UrlDecode("Zm9v+A").error().message.find("offset 4"), std::string::npos);
}

TEST(DecodeClaimsTest, ReadsExpIatAndSun) {
  auto claims = DecodeClaims(kVectorToken);
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->expires_at, kVectorExp);
  EXPECT_EQ(claims->issued_at, kVectorIat);
  EXPECT_EQ(claims->user, "ci");
}

std::string Unsigned(std::string_view payload_json) {
  return Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})") + "." + Base64UrlEncode(payload_json) +
         ".c2ln";
}

TEST(DecodeClaimsTest, AbsentClaimsStayEmpty) {
  auto claims = DecodeClaims(Unsigned(R"({"other":1})"));
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_FALSE(claims->expires_at);
  EXPECT_FALSE(claims->issued_at);
  EXPECT_EQ(claims->user, "");
}

TEST(DecodeClaimsTest, AcceptsFractionalAndUnsignedTimes) {
  auto claims = DecodeClaims(Unsigned(R"({"exp":1700003600.75,"iat":18446744073,"sun":"x"})"));
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->expires_at, kVectorExp);
  EXPECT_EQ(claims->issued_at, sys_seconds(seconds(18446744073)));
}

TEST(DecodeClaimsTest, RejectsWhatIsNotAJwtWithoutQuotingIt) {
  const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  const std::string not_json = Base64UrlEncode("secretpayload");
  for (const std::string& bad : {
           std::string("secretsecret"), std::string("secret.secret"),
           header + ".e30.c2ln.c2ln",                          // four parts
           header + ".secret*secret.c2ln",                     // payload not base64url
           header + "." + not_json + ".c2ln",                  // payload not JSON
           header + "." + Base64UrlEncode("[1,2]") + ".c2ln",  // payload not an object
           Base64UrlEncode("secretheader") + ".e30.c2ln",      // header not JSON
           header + ".e30.secret+sig",                         // signature not base64url
           Unsigned(R"({"exp":"tomorrow"})"),                  // exp not a number
           Unsigned(R"({"iat":true})"),                        // iat not a number
           Unsigned(R"({"exp":1e300})"),                       // exp out of range
           Unsigned(R"({"sun":7})"),                           // sun not a string
       }) {
    auto claims = DecodeClaims(bad);
    ASSERT_FALSE(claims) << "accepted " << bad;
    EXPECT_EQ(claims.error().code, Code::kInvalidInput);
    EXPECT_EQ(claims.error().message.find("secret"), std::string::npos) << claims.error().message;
  }
}

TEST(TokenTextTest, TakesTheTokenOutOfWhatScontrolPrinted) {
  EXPECT_EQ(TokenText("a.b.c"), "a.b.c");
  EXPECT_EQ(TokenText(" \t a.b.c\r\n"), "a.b.c");
  EXPECT_EQ(TokenText("SLURM_JWT=a.b.c\n"), "a.b.c");
  EXPECT_EQ(TokenText("  SLURM_JWT= a.b.c \n"), "a.b.c");
  EXPECT_EQ(TokenText("SLURM_JWT="), "");
  EXPECT_EQ(TokenText(" \n\v\f"), "");
  EXPECT_EQ(TokenText(""), "");
  // only scontrol's own prefix, once, and only at the start
  EXPECT_EQ(TokenText("slurm_jwt=a.b.c"), "slurm_jwt=a.b.c");
  EXPECT_EQ(TokenText("SLURM_JWT=SLURM_JWT=a"), "SLURM_JWT=a");
  EXPECT_EQ(TokenText("a SLURM_JWT=b"), "a SLURM_JWT=b");
}

TEST(MintHs256Test, MatchesTheIndependentlyComputedVector) {
  auto jwt = MintHs256(Secret(VectorKey()), "ci", kVectorIat, kVectorExp);
  ASSERT_TRUE(jwt) << jwt.error().message;
  EXPECT_EQ(jwt->Reveal(), kVectorToken);
}

TEST(MintHs256Test, MintedTokenDecodesAndItsSignatureVerifies) {
  const std::string key = "a key with a trailing newline\n";
  const sys_seconds iat(seconds(1796016208));
  auto jwt = MintHs256(Secret(key), "jenkins-agent", iat, iat + seconds(600));
  ASSERT_TRUE(jwt) << jwt.error().message;

  auto claims = DecodeClaims(jwt->Reveal());
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->issued_at, iat);
  EXPECT_EQ(claims->expires_at, iat + seconds(600));
  EXPECT_EQ(claims->user, "jenkins-agent");

  EXPECT_TRUE(SignatureVerifies(jwt->Reveal(), key));
  EXPECT_FALSE(SignatureVerifies(jwt->Reveal(), "a key with a trailing newline"));

  // Slurm's exact header, so slurmrestd sees what `scontrol token` would have produced.
  std::string_view token = jwt->Reveal();
  EXPECT_EQ(Base64UrlDecode(token.substr(0, token.find('.'))).value(),
            R"({"alg":"HS256","typ":"JWT"})");
}

TEST(MintHs256Test, RejectsEmptyKeyEmptyUserAndInvalidUtf8) {
  const sys_seconds iat(seconds(1700000000));
  auto no_key = MintHs256(Secret(), "ci", iat, iat + seconds(60));
  ASSERT_FALSE(no_key);
  EXPECT_EQ(no_key.error().code, Code::kInvalidInput);

  auto no_user = MintHs256(Secret(VectorKey()), "", iat, iat + seconds(60));
  ASSERT_FALSE(no_user);
  EXPECT_EQ(no_user.error().code, Code::kInvalidInput);

  auto bad_user = MintHs256(Secret(VectorKey()), "c\xffi", iat, iat + seconds(60));
  ASSERT_FALSE(bad_user);
  EXPECT_EQ(bad_user.error().code, Code::kInvalidInput);
}

TEST(MintHs256Test, EscapesTheUserNameAsJson) {
  const sys_seconds iat(seconds(1700000000));
  auto jwt = MintHs256(Secret(VectorKey()), "o\"dd\\user", iat, iat + seconds(60));
  ASSERT_TRUE(jwt) << jwt.error().message;
  EXPECT_EQ(DecodeClaims(jwt->Reveal()).value().user, "o\"dd\\user");
}

TEST(FormatUtcTest, IsoUtc) {
  EXPECT_EQ(FormatUtc(sys_seconds(seconds(0))), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(kVectorIat), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatUtc(kVectorExp), "2023-11-14T23:13:20Z");
}

}  // namespace
}  // namespace slurmfleet::auth
