// The Slurm token source a configuration's credentials name: minted from Slurm's key, read from
// an environment variable, or read from a file (re-read when it changes). Shared by `serve` and
// `validate --connect`, so both use the credentials the same way.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "auth/token_source.h"
#include "base/clock.h"
#include "config/config.h"

namespace slurmfleet::cli {

// `warn` receives the file source's warnings (e.g. a token that expires soon).
std::unique_ptr<auth::TokenSource> MakeTokenSource(const config::SlurmCredentials& credentials,
                                                   const Clock& clock,
                                                   std::function<void(std::string_view)> warn);

}  // namespace slurmfleet::cli
