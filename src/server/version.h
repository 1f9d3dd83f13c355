// The version the daemon reports on GET /api/v1/version. Keep in step with project(VERSION) in the
// top-level CMakeLists.txt.
#pragma once

#include <string_view>

namespace slurmfleet::server {

inline constexpr std::string_view kSlurmfleetVersion = "0.1.0";

// The REST API's own version: the path prefix every endpoint lives under.
inline constexpr std::string_view kApiPrefix = "/api/v1";

}  // namespace slurmfleet::server
