#include "cli/config_clients.h"

#include "auth/env_token_source.h"
#include "auth/file_token_source.h"
#include "auth/minting_token_source.h"
#include "auth/user_checked_token_source.h"

namespace slurmfleet::cli {

jenkins::HttpClientOptions JenkinsClientOptions(const config::JenkinsConfig& j) {
  jenkins::HttpClientOptions o;
  o.base_url = j.url;
  o.user = j.credentials.user;
  o.api_token_file = j.credentials.api_token_file;
  o.verify_tls = j.tls_verify;
  o.ca_file = j.ca_file;
  return o;
}

std::unique_ptr<auth::TokenSource> MakeTokenSource(const config::SlurmCredentials& c,
                                                   const Clock& clock,
                                                   std::function<void(std::string_view)> warn) {
  std::unique_ptr<auth::TokenSource> tokens;
  switch (c.source) {
    case config::SlurmCredentials::Source::kMintFromKey:
      return std::make_unique<auth::MintingTokenSource>(
          c.jwt_key_file, c.user, clock, std::chrono::seconds(c.token_lifetime_seconds));
    case config::SlurmCredentials::Source::kEnvironment:
      tokens = std::make_unique<auth::EnvTokenSource>(
          c.token_env, auth::EnvTokenSource::ProcessEnvironment(), clock, c.token_env_key);
      break;
    case config::SlurmCredentials::Source::kTokenFile:
      tokens = std::make_unique<auth::FileTokenSource>(c.token_file, clock, warn);
      break;
  }
  if (c.user.empty()) return tokens;
  return std::make_unique<auth::UserCheckedTokenSource>(std::move(tokens), c.user, std::move(warn));
}

}  // namespace slurmfleet::cli
