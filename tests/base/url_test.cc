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

}  // namespace
}  // namespace slurmfleet
