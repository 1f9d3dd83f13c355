#include "base/ca_file.h"

#include <gtest/gtest.h>

#include <fstream>

namespace slurmfleet {
namespace {

TEST(CaFileTest, AReadablePemBundlePasses) {
  const std::string path = ::testing::TempDir() + "/ca_ok.pem";
  std::ofstream(path) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  EXPECT_TRUE(CheckCaFile(path, "caFile"));
}

TEST(CaFileTest, AMissingFileOrOneWithoutACertificateIsNamed) {
  Status missing = CheckCaFile("/nonexistent/ca.pem", "jenkins.caFile");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Code::kInvalidInput);
  EXPECT_EQ(missing.error().where, "jenkins.caFile");
  EXPECT_NE(missing.error().message.find("the CA bundle: cannot read /nonexistent/ca.pem"),
            std::string::npos)
      << missing.error().message;

  const std::string path = ::testing::TempDir() + "/ca_key.pem";
  std::ofstream(path) << "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
  Status key = CheckCaFile(path, "caFile");
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().message.find("holds no PEM certificate"), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet
