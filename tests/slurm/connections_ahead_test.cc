// ConnectionsAhead against a local TCP server: it opens connections only to a learned address,
// hands out only those still fit for a request (connected, neither closed nor written on by the
// server, younger than max_idle), and opens new ones for those taken or gone stale.
#include "slurm/connections_ahead.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "base/fake_clock.h"
#include "connection_server.h"

namespace slurmfleet::slurm {
namespace {

using namespace std::chrono_literals;

PeerAddress AddressOf(const sockaddr_in& a) {
  PeerAddress peer;
  EXPECT_TRUE(PeerAddress::From(AF_INET, SOCK_STREAM, IPPROTO_TCP,
                                reinterpret_cast<const sockaddr*>(&a), sizeof a, peer));
  return peer;
}

// The port at the other end of `fd`.
int PeerPort(int fd) {
  sockaddr_in a{};
  socklen_t size = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &size) != 0) return -1;
  return ntohs(a.sin_port);
}

class ConnectionsAheadTest : public ::testing::Test {
 protected:
  FakeClock clock_{std::chrono::system_clock::time_point(1'700'000'000s)};
  ConnectionServer server_;
  PeerAddress address_ = AddressOf(server_.address());
};

TEST_F(ConnectionsAheadTest, OpensNothingBeforeAnAddressIsLearned) {
  ConnectionsAhead ahead(3, 30s, clock_);
  ahead.Fill();
  EXPECT_EQ(ahead.held(), 0u);
  EXPECT_EQ(ahead.Take(address_), -1);
  EXPECT_EQ(server_.accepted(), 0u);
}

TEST_F(ConnectionsAheadTest, TargetZeroHoldsNothing) {
  ConnectionsAhead ahead(0, 30s, clock_);
  ahead.Learn(address_);
  ahead.Fill();
  EXPECT_EQ(ahead.held(), 0u);
  EXPECT_EQ(ahead.Take(address_), -1);
}

TEST_F(ConnectionsAheadTest, HandsOutEachConnectedConnectionOnceThenRefills) {
  ConnectionsAhead ahead(3, 30s, clock_);
  ahead.Learn(address_);
  ahead.Fill();
  EXPECT_EQ(ahead.held(), 3u);
  ASSERT_TRUE(server_.WaitAccepted(3));
  std::set<int> fds;
  for (int i = 0; i < 3; ++i) {
    const int fd = ahead.Take(address_);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(PeerPort(fd), ntohs(server_.address().sin_port));
    fds.insert(fd);
  }
  EXPECT_EQ(fds.size(), 3u);
  EXPECT_EQ(ahead.Take(address_), -1);
  ahead.Fill();  // three taken: three new
  EXPECT_EQ(ahead.held(), 3u);
  EXPECT_TRUE(server_.WaitAccepted(6));
  ahead.Fill();  // nothing taken: nothing opened
  EXPECT_EQ(ahead.held(), 3u);
  for (int fd : fds) close(fd);
}

TEST_F(ConnectionsAheadTest, NeverHandsOutAConnectionTheServerClosedOrWroteOn) {
  for (void (ConnectionServer::*act)() :
       {&ConnectionServer::CloseIdle, &ConnectionServer::WriteOnIdle}) {
    const size_t accepted_before = server_.accepted();
    ConnectionsAhead ahead(2, 30s, clock_);
    ahead.Learn(address_);
    ahead.Fill();
    ASSERT_TRUE(server_.WaitAccepted(accepted_before + 2));
    (server_.*act)();
    std::this_thread::sleep_for(50ms);  // what the server did crosses the loopback
    EXPECT_EQ(ahead.Take(address_), -1);
    EXPECT_EQ(ahead.held(), 0u);  // closed on our side too
  }
}

TEST_F(ConnectionsAheadTest, ConnectionsOlderThanMaxIdleAreClosedAndReplaced) {
  ConnectionsAhead ahead(2, 30s, clock_);
  ahead.Learn(address_);
  ahead.Fill();
  ASSERT_TRUE(server_.WaitAccepted(2));
  clock_.Advance(31s);
  EXPECT_EQ(ahead.Take(address_), -1);
  EXPECT_EQ(ahead.held(), 0u);
  ahead.Fill();
  ASSERT_TRUE(server_.WaitAccepted(4));
  clock_.Advance(29s);
  ahead.Fill();  // still young enough: kept
  EXPECT_EQ(ahead.held(), 2u);
  clock_.Advance(2s);
  ahead.Fill();  // stale: replaced by two new ones
  EXPECT_EQ(ahead.held(), 2u);
  EXPECT_TRUE(server_.WaitAccepted(6));
  const int fd = ahead.Take(address_);
  EXPECT_GE(fd, 0);
  close(fd);
}

TEST_F(ConnectionsAheadTest, OnlyTheLearnedAddressGetsThem) {
  ConnectionsAhead ahead(2, 30s, clock_);
  ahead.Learn(address_);
  ahead.Fill();
  ConnectionServer other;
  const PeerAddress other_address = AddressOf(other.address());
  EXPECT_EQ(ahead.Take(other_address), -1);
  EXPECT_EQ(ahead.held(), 2u);
  ahead.Learn(other_address);  // the server moved: the old ones are closed
  EXPECT_EQ(ahead.held(), 0u);
  ahead.Fill();
  ASSERT_TRUE(other.WaitAccepted(2));
  const int fd = ahead.Take(other_address);
  EXPECT_EQ(PeerPort(fd), ntohs(other.address().sin_port));
  close(fd);
}

TEST_F(ConnectionsAheadTest, AServerThatIsDownLeavesNothingHeld) {
  PeerAddress gone;
  {
    ConnectionServer stopped;
    gone = AddressOf(stopped.address());
  }
  ConnectionsAhead ahead(3, 30s, clock_);
  ahead.Learn(gone);
  ahead.Fill();
  EXPECT_EQ(ahead.Take(gone), -1);
  EXPECT_EQ(ahead.held(), 0u);
}

// What libcurl before 8.0 does with a socket handed to it: connect() again. Linux lets that
// finish a TCP connect left in progress.
TEST_F(ConnectionsAheadTest, ATakerThatConnectsAgainCanFinishATcpConnectLeftInProgress) {
  ConnectionsAhead ahead(2, 30s, clock_, ConnectionsAhead::Taker::kConnectsAgain);
  ahead.Learn(address_);
  ahead.Fill();
  EXPECT_EQ(ahead.held(), 2u);
  ASSERT_TRUE(server_.WaitAccepted(2));
  const int fd = ahead.Take(address_);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&address_.bytes), address_.length), 0)
      << std::strerror(errno);
  close(fd);
}

// A local socket's connect completes at once, and connecting it again fails (EISCONN): a taker
// that connects again is handed none of those.
TEST(ConnectionsAheadLocalSocketTest, ATakerThatConnectsAgainGetsNoConnectionCompletedAtOnce) {
  const std::string path = ::testing::TempDir() + "/ahead-" + std::to_string(getpid()) + ".sock";
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof a.sun_path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(bind(listener, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  PeerAddress peer;
  ASSERT_TRUE(PeerAddress::From(AF_UNIX, SOCK_STREAM, 0, reinterpret_cast<const sockaddr*>(&a),
                                sizeof a, peer));
  FakeClock clock{std::chrono::system_clock::time_point(1'700'000'000s)};

  ConnectionsAhead again(2, 30s, clock, ConnectionsAhead::Taker::kConnectsAgain);
  again.Learn(peer);
  again.Fill();
  EXPECT_EQ(again.held(), 0u);
  EXPECT_EQ(again.Take(peer), -1);

  ConnectionsAhead as_is(2, 30s, clock);
  as_is.Learn(peer);
  as_is.Fill();
  EXPECT_EQ(as_is.held(), 2u);
  const int fd = as_is.Take(peer);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), -1);
  EXPECT_EQ(errno, EISCONN);
  close(fd);
  close(listener);
  unlink(path.c_str());
}

TEST(PeerAddressTest, IsMatchesTheNumericAddressAndPortLibcurlReports) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(6820);
  inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr);
  const PeerAddress a = AddressOf(v4);
  EXPECT_TRUE(a.Is("127.0.0.1", 6820));
  EXPECT_FALSE(a.Is("127.0.0.1", 6821));
  EXPECT_FALSE(a.Is("127.0.0.2", 6820));
  EXPECT_FALSE(a.Is("::1", 6820));
  EXPECT_FALSE(a.Is(nullptr, 6820));

  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(6820);
  inet_pton(AF_INET6, "::1", &v6.sin6_addr);
  PeerAddress b;
  ASSERT_TRUE(PeerAddress::From(AF_INET6, SOCK_STREAM, IPPROTO_TCP,
                                reinterpret_cast<const sockaddr*>(&v6), sizeof v6, b));
  EXPECT_TRUE(b.Is("::1", 6820));
  EXPECT_FALSE(b.Is("127.0.0.1", 6820));
  EXPECT_FALSE(a == b);
}

TEST(PeerAddressTest, AnAddressLongerThanItsStorageIsRefused) {
  sockaddr_storage big{};
  PeerAddress out;
  EXPECT_FALSE(PeerAddress::From(AF_INET, SOCK_STREAM, IPPROTO_TCP,
                                 reinterpret_cast<const sockaddr*>(&big), sizeof big + 1, out));
  EXPECT_FALSE(PeerAddress::From(AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 16, out));
}

}  // namespace
}  // namespace slurmfleet::slurm
