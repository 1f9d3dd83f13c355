#include "store/checkpointer.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "store/sqlite.h"

namespace slurmfleet::store {
namespace {

using namespace std::chrono_literals;

// 300 rows of 2000 bytes: about 600 KB, all of it in the WAL until a checkpoint
constexpr const char* kFill =
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
    "INSERT INTO t SELECT randomblob(2000) FROM n";

class CheckpointerTest : public ::testing::Test {
 protected:
  CheckpointerTest() {
    std::string pattern = ::testing::TempDir() + "slurmfleet-checkpointer-XXXXXX";
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "state.db").string();
  }
  ~CheckpointerTest() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // A WAL database whose writes stay in the WAL: SQLite's own checkpoints are off.
  std::unique_ptr<sqlite::Connection> Writer() {
    auto conn = sqlite::Connection::Open(path_);
    EXPECT_TRUE(conn) << conn.error().ToString();
    if (!conn) return nullptr;
    EXPECT_TRUE(
        (*conn)->Exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; "
                      "CREATE TABLE t (v BLOB)",
                      "set up"));
    return std::move(*conn);
  }

  int64_t FileSize() const {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path_, ec);
    return ec ? 0 : static_cast<int64_t>(size);
  }

  // Waits (bounded) until `done` checkpoints have run.
  static bool WaitFor(const Checkpointer& c, uint64_t done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (c.completed() < done && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(2ms);
    }
    return c.completed() >= done;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(CheckpointerTest, ARequestCopiesTheWalIntoTheFile) {
  auto writer = Writer();
  ASSERT_TRUE(writer);
  ASSERT_TRUE(writer->Exec(kFill, "fill"));
  const int64_t before = FileSize();
  ASSERT_LT(before, 100 * 1024) << "the rows went into the file before any checkpoint";

  auto checkpointer = Checkpointer::Start(path_);
  ASSERT_TRUE(checkpointer) << checkpointer.error().ToString();
  EXPECT_EQ((*checkpointer)->completed(), 0u);
  EXPECT_EQ(FileSize(), before) << "a checkpoint ran without a request";
  (*checkpointer)->Request();
  ASSERT_TRUE(WaitFor(**checkpointer, 1));
  EXPECT_GE(FileSize(), before + 300 * 2000);

  // and again, for what was written since
  const int64_t after_first = FileSize();
  ASSERT_TRUE(writer->Exec(kFill, "fill again"));
  (*checkpointer)->Request();
  ASSERT_TRUE(WaitFor(**checkpointer, 2));
  EXPECT_GE(FileSize(), after_first + 300 * 2000);
}

TEST_F(CheckpointerTest, StopsAtOnceWithoutARequestAndWithOneJustMade) {
  auto writer = Writer();
  ASSERT_TRUE(writer);
  {
    auto idle = Checkpointer::Start(path_);
    ASSERT_TRUE(idle);
    EXPECT_EQ((*idle)->completed(), 0u);
  }
  auto asked = Checkpointer::Start(path_);
  ASSERT_TRUE(asked);
  (*asked)->Request();
  asked->reset();  // joins whether or not the checkpoint ran
}

TEST_F(CheckpointerTest, AFileThatCannotBeOpenedIsNamed) {
  auto checkpointer = Checkpointer::Start((dir_ / "missing" / "state.db").string());
  ASSERT_FALSE(checkpointer);
  EXPECT_NE(checkpointer.error().ToString().find("missing/state.db"), std::string::npos)
      << checkpointer.error().ToString();
}

}  // namespace
}  // namespace slurmfleet::store
