// Ports for a daemon under test to listen on. Drawn below Linux's ephemeral range (32768-60999),
// where outgoing connections take their local ports: a port picked by binding to port 0 and
// closing, or drawn from that range, can be taken by a connection before the daemon binds it, and
// again while a killed daemon is restarted on it.
#pragma once

#include <random>

namespace slurmfleet::test_support {

inline constexpr int kFirstListenPort = 20000;
inline constexpr int kListenPorts = 12000;

inline int DrawListenPort(std::mt19937_64& rng) {
  return kFirstListenPort + static_cast<int>(rng() % kListenPorts);
}

// Another port than `port`, for when it turned out to be taken.
inline int NextListenPort(int port) {
  return kFirstListenPort + (port - kFirstListenPort + 997) % kListenPorts;
}

}  // namespace slurmfleet::test_support
