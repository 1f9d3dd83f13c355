#include "auth/file_token_source.h"

#include <gtest/gtest.h>

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

std::string MintFor(std::string_view user, sys_seconds iat, std::chrono::seconds lifespan) {
  return MintHs256(Secret(std::string(32, '\x42')), user, iat, iat + lifespan).value().Reveal();
}

class FileTokenSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "slurmfleet-auth-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ / "jwt";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Rewrites the file in place (same inode) and sets its mtime, so a test decides whether the
  // source can see a change: the filesystem's own mtime is too coarse to tell quick writes apart.
  void Write(const std::string& content, fs::file_time_type mtime) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << content;
    fs::last_write_time(path_, mtime);
  }
  void Write(const std::string& content) { Write(content, NextMtime()); }
  fs::file_time_type NextMtime() { return mtime_ += 1s; }

  FileTokenSource MakeSource() {
    return FileTokenSource(path_, clock_,
                           [this](std::string_view m) { warnings_.emplace_back(m); });
  }

  FakeClock clock_{kStart};
  fs::path dir_;
  fs::path path_;
  fs::file_time_type mtime_ = fs::file_time_type::clock::now() - 1h;
  std::vector<std::string> warnings_;
};

TEST_F(FileTokenSourceTest, ReadsABareToken) {
  const std::string jwt = MintFor("ci", kStart, 3600s);
  Write(jwt);
  auto source = MakeSource();
  auto token = source.Get();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(token->jwt.Reveal(), jwt);
  EXPECT_EQ(token->user, "ci");
  EXPECT_EQ(token->expires_at, kStart + 3600s);
  EXPECT_EQ(source.Describe(), "token file " + path_.string());
}

TEST_F(FileTokenSourceTest, ReadsScontrolsOutputLine) {
  const std::string jwt = MintFor("ci", kStart, 3600s);
  Write("\n  SLURM_JWT=" + jwt + "\n\n");
  auto token = MakeSource().Get();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(token->jwt.Reveal(), jwt);
}

TEST_F(FileTokenSourceTest, RereadsWhenTheFileChanges) {
  const std::string first = MintFor("ci", kStart, 3600s);
  const std::string second = MintFor("cj", kStart, 3600s);  // same size: only mtime tells
  ASSERT_EQ(first.size(), second.size());
  Write(first);
  auto source = MakeSource();
  EXPECT_EQ(source.Get().value().jwt.Reveal(), first);

  Write(second);
  auto token = source.Get();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(token->jwt.Reveal(), second);
  EXPECT_EQ(token->user, "cj");

  // A different size is a change even with the same mtime.
  const std::string third = MintFor("ci-longer", kStart, 3600s);
  Write(third, mtime_);
  EXPECT_EQ(source.Get().value().jwt.Reveal(), third);

  // Replaced by rename, as careful writers do: a new inode.
  const std::string fourth = MintFor("dk-longer", kStart, 3600s);
  ASSERT_EQ(third.size(), fourth.size());
  std::ofstream(dir_ / "jwt.new") << fourth;
  fs::last_write_time(dir_ / "jwt.new", mtime_);
  fs::rename(dir_ / "jwt.new", path_);
  EXPECT_EQ(source.Get().value().jwt.Reveal(), fourth);
}

TEST_F(FileTokenSourceTest, KeepsTheTokenWhileTheFileLooksUnchangedAndRereadsAfterInvalidate) {
  const std::string first = MintFor("ci", kStart, 3600s);
  const std::string second = MintFor("cj", kStart, 3600s);
  Write(first);
  const fs::file_time_type mtime = mtime_;
  auto source = MakeSource();
  EXPECT_EQ(source.Get().value().jwt.Reveal(), first);

  // Same inode, size and mtime: the source does not read the file again.
  Write(second, mtime);
  EXPECT_EQ(source.Get().value().jwt.Reveal(), first);

  source.Invalidate();
  EXPECT_EQ(source.Get().value().jwt.Reveal(), second);
}

TEST_F(FileTokenSourceTest, MissingFileIsAnAuthErrorNamingThePath) {
  auto source = MakeSource();
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find(path_.string()), std::string::npos);
  EXPECT_NE(token.error().message.find("does not exist"), std::string::npos);

  // A token that was read once is not used after its file disappears.
  Write(MintFor("ci", kStart, 3600s));
  ASSERT_TRUE(source.Get());
  fs::remove(path_);
  token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find(path_.string()), std::string::npos);
}

TEST_F(FileTokenSourceTest, UnreadableFileIsAnAuthErrorNamingThePath) {
  fs::create_directory(path_);  // unreadable even for root, unlike chmod 000
  auto token = MakeSource().Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find("cannot read token file " + path_.string()),
            std::string::npos)
      << token.error().message;
}

TEST_F(FileTokenSourceTest, EmptyOrGarbageFileIsAnAuthErrorThatDoesNotQuoteIt) {
  Write(" \n");
  auto source = MakeSource();
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find(path_.string() + " is empty"), std::string::npos);

  Write("SLURM_JWT=hunter2-secret\n");
  token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_NE(token.error().message.find(path_.string()), std::string::npos);
  EXPECT_EQ(token.error().message.find("hunter2"), std::string::npos) << token.error().message;
}

TEST_F(FileTokenSourceTest, ExpiredTokenIsAnAuthErrorNamingThePathAndTheFix) {
  const std::string jwt = MintFor("ci", kStart, 3600s);
  Write(jwt);
  auto source = MakeSource();
  ASSERT_TRUE(source.Get());
  clock_.Advance(3600s);
  auto token = source.Get();
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().code, Code::kAuth);
  EXPECT_EQ(token.error().message, "token in " + path_.string() +
                                       " expired at 2023-11-14T23:13:20Z; write a fresh one "
                                       "(scontrol token) or fix what refreshes it");
  EXPECT_EQ(token.error().message.find(jwt), std::string::npos);

  // Refreshing the file is the fix.
  Write(MintFor("ci", kStart + 3600s, 3600s));
  EXPECT_TRUE(source.Get());
}

TEST_F(FileTokenSourceTest, WarnsExactlyOncePerTokenUnderTenMinutesLeft) {
  Write(MintFor("ci", kStart, 3600s));
  auto source = MakeSource();
  ASSERT_TRUE(source.Get());
  clock_.Advance(50min);  // exactly 10 min left: not yet
  ASSERT_TRUE(source.Get());
  EXPECT_TRUE(warnings_.empty());

  clock_.Advance(61s);  // 8 min 59 s left
  for (int i = 0; i < 3; ++i) {
    auto token = source.Get();
    ASSERT_TRUE(token) << token.error().message;  // still returned
  }
  source.Invalidate();  // re-reads the same token: no second warning
  ASSERT_TRUE(source.Get());
  clock_.Advance(5min);
  ASSERT_TRUE(source.Get());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0],
            "token in " + path_.string() + " expires in 9 min at 2023-11-14T23:13:20Z; refresh it");

  // A new token that is itself close to expiry gets its own warning.
  const std::string jwt = MintFor("ci", kStart + 2min, 60min);  // 5 min 59 s left
  Write(jwt);
  ASSERT_TRUE(source.Get());
  ASSERT_TRUE(source.Get());
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_EQ(warnings_[1],
            "token in " + path_.string() + " expires in 6 min at 2023-11-14T23:15:20Z; refresh it");
  EXPECT_EQ(warnings_[1].find(jwt), std::string::npos);
}

TEST_F(FileTokenSourceTest, WarnCallbackMayCallBackIntoTheSource) {
  Write(MintFor("ci", kStart, 5min));
  int calls = 0;
  FileTokenSource* self = nullptr;
  FileTokenSource source(path_, clock_, [&](std::string_view) {
    ++calls;
    EXPECT_TRUE(self->Get());  // would deadlock if called under the mutex
  });
  self = &source;
  ASSERT_TRUE(source.Get());
  EXPECT_EQ(calls, 1);
}

TEST_F(FileTokenSourceTest, EmptyWarnCallbackIsAllowed) {
  Write(MintFor("ci", kStart, 5min));
  FileTokenSource source(path_, clock_, nullptr);
  EXPECT_TRUE(source.Get());
}

TEST_F(FileTokenSourceTest, SafeFromManyThreads) {
  const std::string first = MintFor("ci", kStart, 3600s);
  const std::string second = MintFor("cj", kStart, 3600s);
  Write(first);
  auto source = MakeSource();
  std::atomic<int> failures = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (t == 0 && i % 10 == 0) source.Invalidate();
        auto token = source.Get();
        if (!token || (token->jwt.Reveal() != first && token->jwt.Reveal() != second)) ++failures;
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    // Rename into place, so readers never see a half-written file.
    std::ofstream(dir_ / "jwt.new") << (i % 2 ? first : second);
    fs::rename(dir_ / "jwt.new", path_);
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace slurmfleet::auth
