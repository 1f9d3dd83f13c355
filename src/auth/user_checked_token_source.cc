#include "auth/user_checked_token_source.h"

#include <utility>

namespace slurmfleet::auth {

UserCheckedTokenSource::UserCheckedTokenSource(std::unique_ptr<TokenSource> tokens,
                                               std::string expected_user, WarnFn warn)
    : tokens_(std::move(tokens)),
      expected_user_(std::move(expected_user)),
      warn_(std::move(warn)) {}

Result<Token> UserCheckedTokenSource::Get() {
  Result<Token> token = tokens_->Get();
  if (!token || token->user.empty() || token->user == expected_user_) return token;
  {
    std::lock_guard lock(mu_);
    if (last_warned_ == token->jwt) return token;
    last_warned_ = token->jwt;
  }
  if (warn_) {
    warn_("the token from " + tokens_->Describe() + " is for Slurm user '" + token->user +
          "', but credentials.user is '" + expected_user_ + "': jobs run as '" + token->user +
          "' (the token decides); set credentials.user to '" + token->user +
          "' or use a token for '" + expected_user_ + "'");
  }
  return token;
}

void UserCheckedTokenSource::Invalidate() { tokens_->Invalidate(); }

std::string UserCheckedTokenSource::Describe() const { return tokens_->Describe(); }

std::string UserCheckedTokenSource::FixWhenRejected() const { return tokens_->FixWhenRejected(); }

}  // namespace slurmfleet::auth
