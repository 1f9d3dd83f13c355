// What the configuration's credentials and addresses become: the Slurm token source and the
// Jenkins client's options. Shared by `serve` and `validate --connect`, so both reach Slurm and
// Jenkins the same way.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "auth/token_source.h"
#include "base/clock.h"
#include "config/config.h"
#include "jenkins/http_client.h"

namespace slurmfleet::cli {

// Jenkins' URL, user, API token file and TLS settings.
jenkins::HttpClientOptions JenkinsClientOptions(const config::JenkinsConfig& jenkins);

// The token source the credentials name: minted from Slurm's key, read from an environment
// variable, or read from a file (re-read when it changes). `warn` receives the file source's
// warnings (e.g. a token that expires soon) and, with a `user` beside a token file or variable, a
// warning when the token is for another user.
std::unique_ptr<auth::TokenSource> MakeTokenSource(const config::SlurmCredentials& credentials,
                                                   const Clock& clock,
                                                   std::function<void(std::string_view)> warn);

}  // namespace slurmfleet::cli
