#include "base/url.h"

#include <gtest/gtest.h>

namespace slurmfleet {
namespace {

TEST(PercentEncodeTest, OnlyUnreservedCharactersStay) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("x#y"), "x%23y");
  EXPECT_EQ(PercentEncode("a&limit=5"), "a%26limit%3D5");
  EXPECT_EQ(PercentEncode("a b/c?d+e%"), "a%20b%2Fc%3Fd%2Be%25");
  EXPECT_EQ(PercentEncode("\xC3\xBC"), "%C3%BC");
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(WithoutUserinfoTest, UserAndPasswordAreHiddenWithOrWithoutAScheme) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"http://u:pw@host:8080/", "http://***@host:8080/"},
      {"https://admin@host/jenkins/", "https://***@host/jenkins/"},
      {"ftp://u:pw@host", "ftp://***@host"},
      {"admin:SECRETMARK123@jenkins.example.org:8080/", "***@jenkins.example.org:8080/"},
      // a scheme only counts before the userinfo: the '://' of a later query is not one
      {"u:pw@host/go?to=http://x", "***@host/go?to=http://x"},
      // an unencoded '/' or '#' in the password must not let its rest show
      {"http://u:p/w@host", "http://***@host"},
      {"http://u:p#w@host", "http://***@host"},
  };
  for (const auto& [url, shown] : cases) {
    EXPECT_EQ(WithoutUserinfo(url), shown) << url;
  }
}

TEST(WithoutUserinfoTest, UrlsWithoutUserinfoStayAsTheyAre) {
  for (std::string_view url : {"http://host:8080/", "127.0.0.1:6820", "unix:/run/slurmrestd.sock",
                               "", "ftp://j", "http://"}) {
    EXPECT_EQ(WithoutUserinfo(url), url);
  }
}

TEST(CheckBaseUrlTest, HttpAndHttpsUrlsWithAHostPass) {
  for (std::string_view url :
       {"http://host", "https://host/", "http://host:8080/jenkins/", "http://10.0.0.1:6820",
        "http://[::1]:8080/", "https://[2001:db8::1]/", "http://h:65535"}) {
    EXPECT_EQ(CheckBaseUrl(url, "http://example:1"), std::nullopt) << url;
  }
}

TEST(CheckBaseUrlTest, EachProblemIsNamedWithItsFix) {
  struct Case {
    std::string_view url;
    std::string message;
    std::string fix;
  };
  const Case cases[] = {
      {"http:///", "'http:///' has no host", "write the host after '//', e.g. http://s:6820"},
      {"http://", "'http://' has no host", "write the host after '//', e.g. http://s:6820"},
      {"http://:8080/", "'http://:8080/' has no host",
       "write the host after '//', e.g. http://s:6820"},
      {"http://u:pw@/", "'http://***@/' has no host",
       "write the host after '//', e.g. http://s:6820"},
      {"http://[]:80/", "'http://[]:80/' has no host",
       "write the host after '//', e.g. http://s:6820"},
      {"http://ho st/", "'http://ho st/' contains a space",
       "remove it (a space inside a path is written %20)"},
      {"http://host/ ", "'http://host/ ' contains a space",
       "remove it (a space inside a path is written %20)"},
      {"http://host\t/", "'http://host\\x09/' contains a tab", "remove it"},
      {"http://host/\n", "'http://host/\\x0A' contains a line break", "remove it"},
      {"http://ho\x7Fst/", "'http://ho\\x7Fst/' contains the control character \\x7F", "remove it"},
      {"http://host/#frag",
       "'http://host/#frag' has a fragment ('#'), which is never sent to the server",
       "remove the '#' and all that follows it"},
      {"http://host#", "'http://host#' has a fragment ('#'), which is never sent to the server",
       "remove the '#' and all that follows it"},
      {"http://host/?a=b", "'http://host/?a=b' has a query ('?'), which a base URL cannot take",
       "remove the '?' and all that follows it: paths are appended to this URL"},
      {"http://host:/", "'http://host:/' has no port after ':'",
       "write a port from 1 to 65535, or remove the ':' for the scheme's default"},
      {"http://[::1]:/", "'http://[::1]:/' has no port after ':'",
       "write a port from 1 to 65535, or remove the ':' for the scheme's default"},
      {"ftp://host/", "'ftp://host/' is not an http:// or https:// URL",
       "write an http:// or https:// URL, e.g. http://s:6820"},
      {"HTTP://host/", "'HTTP://host/' is not an http:// or https:// URL",
       "write an http:// or https:// URL, e.g. http://s:6820"},
      {"host:6820", "'host:6820' is not an http:// or https:// URL",
       "write it with its scheme: http://host:6820 or https://host:6820"},
      {"", "'' is not an http:// or https:// URL",
       "write an http:// or https:// URL, e.g. http://s:6820"},
      {"http://[::1:8080/", "'http://[::1:8080/' has no ']' closing its IPv6 address",
       "write the address in brackets, e.g. http://[::1]:8080/"},
      {"http://[::1]8080/", "'http://[::1]8080/' has more than a port after its IPv6 address",
       "write only ':' and a port after the ']', e.g. http://[::1]:8080/"},
      {"http://::1:8080/", "'http://::1:8080/' has an IPv6 address without brackets",
       "write it in brackets, e.g. http://[::1]:8080/"},
      {"http://slurmrestd:6820:6820/",
       "'http://slurmrestd:6820:6820/' has more than one ':' after its host",
       "write one port after the host, e.g. http://s:6820"},
  };
  for (const Case& c : cases) {
    std::optional<UrlProblem> p = CheckBaseUrl(c.url, "http://s:6820");
    ASSERT_TRUE(p) << c.url;
    EXPECT_EQ(p->message, c.message) << c.url;
    EXPECT_EQ(p->fix, c.fix) << c.url;
  }
}

TEST(CheckBaseUrlTest, APortIsANumberFrom1To65535) {
  for (std::string_view url : {"http://host:abc/", "http://host:0/", "http://host:99999/",
                               "http://host:65536", "http://host:-1/", "http://host:8080x/",
                               "http://host:123456/", "https://[::1]:0/", "http://u:pw@h:x/"}) {
    std::optional<UrlProblem> p = CheckBaseUrl(url, "http://s:6820");
    ASSERT_TRUE(p) << url;
    EXPECT_NE(p->message.find("has a port that is not a number from 1 to 65535"), std::string::npos)
        << p->message;
    EXPECT_EQ(p->fix,
              "write the port as a number from 1 to 65535, or leave it out for the scheme's "
              "default, e.g. http://s:6820");
  }
  EXPECT_EQ(CheckBaseUrl("http://host:1/", "x"), std::nullopt);
}

// The message quotes the URL, never a part of it: a password holding an unencoded '/', '?', '#'
// or a space may make that part look like a port, a query or a fragment.
TEST(CheckBaseUrlTest, APasswordIsNeverShown) {
  for (std::string_view url :
       {"http://u:SECRETMARK@host:abc/", "http://u:SECRET MARK@host/", "http://u:SECRET#MARK@host/",
        "http://u:SECRET?MARK@host/", "http://u:SECRET/MARK@host/", "http://u:SECRETMARK@/",
        "ftp://u:SECRETMARK@host/", "u:SECRETMARK@host:6820", "http://u:SECRET\nMARK@host"}) {
    std::optional<UrlProblem> p = CheckBaseUrl(url, "http://s:6820");
    ASSERT_TRUE(p) << url;
    EXPECT_EQ(p->message.find("SECRET"), std::string::npos) << p->message;
    EXPECT_EQ(p->fix.find("SECRET"), std::string::npos) << p->fix;
    EXPECT_EQ(p->message.find("MARK"), std::string::npos) << p->message;
  }
}

// An unencoded '/', '?' or '#' in a password ends the authority early: the URL then seems to
// have a bad port or host, which is not what the user must fix.
TEST(CheckBaseUrlTest, AnUnencodedCharacterInAPasswordIsNamedAsSuch) {
  for (std::string_view url :
       {"http://u:pa#ss@host/", "http://u:pa?ss@host:6820/", "http://u:p#a:ss@host/"}) {
    std::optional<UrlProblem> p = CheckBaseUrl(url, "http://s:6820");
    ASSERT_TRUE(p) << url;
    EXPECT_EQ(p->message, "'http" + std::string(url.starts_with("https") ? "s" : "") + "://***@" +
                              std::string(url.substr(url.rfind('@') + 1)) +
                              "' has a user name or password holding '/', '?' or '#'")
        << url;
    EXPECT_EQ(p->fix, "percent-encode them there: '/' as %2F, '?' as %3F, '#' as %23") << url;
  }
  // after a '/', the '@' may be a path's: both readings are named
  for (std::string_view url : {"https://u:pa/ss@host/", "http://s:68x0/api@v1"}) {
    std::optional<UrlProblem> p = CheckBaseUrl(url, "http://s:6820");
    ASSERT_TRUE(p) << url;
    EXPECT_NE(p->message.find("has a port that is not a number from 1 to 65535, or a user name "
                              "or password in it holds '/', '?' or '#'"),
              std::string::npos)
        << p->message;
    EXPECT_NE(p->fix.find("; in a user name or password, percent-encode '/' as %2F"),
              std::string::npos)
        << p->fix;
    EXPECT_EQ(p->message.find("pa/ss"), std::string::npos) << p->message;
  }
}

TEST(CheckBaseUrlTest, CredentialsAreRefusedWithoutBeingShown) {
  for (std::string_view url : {"http://u:SECRETMARK@host:1/", "https://SECRETMARK@host/"}) {
    std::optional<UrlProblem> p = CheckBaseUrl(url, "x");
    ASSERT_TRUE(p) << url;
    EXPECT_EQ(p->message, "'" + std::string(url.substr(0, url.find(':') + 3)) + "***@" +
                              std::string(url.substr(url.rfind('@') + 1)) +
                              "' holds a user name or password (not shown here)");
    EXPECT_EQ(p->fix, "remove it and its '@': credentials are given apart from the URL");
  }
  // A password holding '/' whose start reads as a host and port: the rest looks like a path.
  for (std::string_view url : {"http://admin:2024/SECRETMARK@jenkins:8080/", "http://s:6820/a@b"}) {
    std::optional<UrlProblem> p = CheckBaseUrl(url, "x");
    ASSERT_TRUE(p) << url;
    EXPECT_EQ(p->message, "'http://***@" + std::string(url.substr(url.rfind('@') + 1)) +
                              "' has an '@' after its host");
    EXPECT_NE(p->fix.find("an '@' in the path is written %40"), std::string::npos) << p->fix;
  }
}

TEST(CheckBaseUrlTest, TheQuotedUrlIsValidUtf8) {
  std::optional<UrlProblem> p = CheckBaseUrl("http://h\xC3/ x", "http://s:6820");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->message, "'http://h\uFFFD/ x' contains a space");
}

}  // namespace
}  // namespace slurmfleet
