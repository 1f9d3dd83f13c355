#include "cli/output_tail.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace slurmfleet::cli {
namespace {

class OutputTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("tail-" + std::to_string(std::random_device{}() % 1000000));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& content) {
    std::string path = (dir_ / "out").string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(OutputTailTest, ASmallFileIsWhole) {
  Result<OutputTail> t = ReadOutputTail(Write("one\ntwo\r\nthree"));
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(t->text, "one\ntwo\r\nthree");
  EXPECT_EQ(t->skipped_bytes, 0u);
  t = ReadOutputTail(Write(""));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "");
}

TEST_F(OutputTailTest, ABigFileGivesItsLastBytesFromALineStart) {
  std::string content;
  for (int i = 0; i < 100000; ++i) content += "line " + std::to_string(i) + "\n";
  Result<OutputTail> t = ReadOutputTail(Write(content), 1000, 5000);
  ASSERT_TRUE(t);
  EXPECT_LE(t->text.size(), 1000u);
  EXPECT_TRUE(t->text.starts_with("line ")) << t->text.substr(0, 20);
  EXPECT_TRUE(t->text.ends_with("line 99999\n"));
  EXPECT_EQ(t->skipped_bytes + t->text.size(), content.size());
  EXPECT_EQ(content.substr(t->skipped_bytes), t->text);
}

TEST_F(OutputTailTest, ManyShortLinesAreCutToTheLastOnes) {
  std::string content;
  for (int i = 0; i < 5000; ++i) content += std::to_string(i) + "\n";
  Result<OutputTail> t = ReadOutputTail(Write(content), 1 << 20, 3);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "4997\n4998\n4999\n");
  EXPECT_EQ(t->skipped_bytes, content.size() - t->text.size());
  t = ReadOutputTail(Write("a\nb\nc"), 1 << 20, 2);  // no newline at the end
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "b\nc");
  EXPECT_EQ(t->skipped_bytes, 2u);
}

TEST_F(OutputTailTest, OneLineLongerThanTheLimitIsCutMidLine) {
  Result<OutputTail> t = ReadOutputTail(Write(std::string(5000, 'x')), 100, 10);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, std::string(100, 'x'));
  EXPECT_EQ(t->skipped_bytes, 4900u);
}

TEST_F(OutputTailTest, AMissingFileIsNotFoundAndNamesThePath) {
  std::string path = (dir_ / "nope.out").string();
  Result<OutputTail> t = ReadOutputTail(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, Code::kNotFound);
  EXPECT_EQ(t.error().where, path);
  EXPECT_EQ(t.error().message, "cannot read it: No such file or directory");
}

}  // namespace
}  // namespace slurmfleet::cli
