// UserCheckedTokenSource: a token file or variable beside a configured `credentials.user`. Only
// the token reaches slurmrestd, and its `sun` claim decides whom the jobs run as; a `user` that
// names someone else is a configuration mistake that would otherwise show only as jobs (and their
// files) owned by the wrong account. This source passes every call through and warns, once per
// distinct token, when the token names another user.
//
// Thread safety: as safe as the wrapped source (one mutex of its own). The warn callback is called
// without that mutex held.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "auth/token_source.h"
#include "base/secret.h"

namespace slurmfleet::auth {

class UserCheckedTokenSource final : public TokenSource {
 public:
  using WarnFn = std::function<void(std::string_view message)>;

  // `expected_user` is the configured user; `warn` may be empty.
  UserCheckedTokenSource(std::unique_ptr<TokenSource> tokens, std::string expected_user,
                         WarnFn warn);

  // The wrapped source's token, unchanged. Warns when it carries a user other than the expected
  // one (a token without `sun` is not questioned).
  Result<Token> Get() override;
  void Invalidate() override;
  std::string Describe() const override;
  std::string FixWhenRejected() const override;

 private:
  const std::unique_ptr<TokenSource> tokens_;
  const std::string expected_user_;
  const WarnFn warn_;

  std::mutex mu_;
  Secret last_warned_;  // guarded by mu_; the token last warned about
};

}  // namespace slurmfleet::auth
