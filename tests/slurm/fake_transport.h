// FakeTransport: answers requests from a script of canned responses (usually recorded from the
// real testbed, see record_testdata.sh) and logs every request it got. Not thread-safe.
#pragma once

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "auth/token_source.h"
#include "slurm/transport.h"

namespace slurmfleet::slurm {

inline std::string ReadTestdata(const std::string& relative) {
  std::ifstream in(std::string(SLURMFLEET_TESTDATA_DIR) + "/slurm/testdata/" + relative,
                   std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A recorded response: testdata/<version>/<name>.json with the status in <name>.status.
inline HttpResponse Recorded(const std::string& version, const std::string& name) {
  HttpResponse r;
  r.body = ReadTestdata(version + "/" + name + ".json");
  r.status = std::stol(ReadTestdata(version + "/" + name + ".status"));
  r.content_type = "application/json";
  return r;
}

class FakeTransport final : public Transport {
 public:
  // Requests whose "METHOD path" starts with `prefix` get the next queued outcome for it; when the
  // queue holds one outcome it is kept and repeated.
  void On(const std::string& prefix, Result<HttpResponse> outcome) {
    script_[prefix].push_back(std::move(outcome));
  }

  Result<HttpResponse> Send(const HttpRequest& request) override {
    std::string key = request.method + " " + request.path;
    log_.push_back(request);
    // longest matching prefix wins
    std::string best;
    for (const auto& [prefix, outcomes] : script_) {
      if (key.rfind(prefix, 0) == 0 && prefix.size() > best.size() && !outcomes.empty())
        best = prefix;
    }
    if (best.empty())
      return HttpResponse{404, R"({"errors":[{"error":"Unable to find requested URL endpoint"}]})",
                          ""};
    auto& outcomes = script_[best];
    Result<HttpResponse> r = outcomes.front();
    if (outcomes.size() > 1) outcomes.pop_front();
    return r;
  }

  std::vector<Result<HttpResponse>> SendAll(const std::vector<HttpRequest>& requests,
                                            size_t at_once) override {
    ++send_all_calls;
    widest = std::max(widest, at_once);
    std::vector<Result<HttpResponse>> results;
    for (const HttpRequest& r : requests) results.push_back(Send(r));
    return results;
  }

  const std::vector<HttpRequest>& log() const { return log_; }
  int send_all_calls = 0;
  size_t widest = 0;  // the largest at_once SendAll was given
  int Count(const std::string& prefix) const {
    int n = 0;
    for (const HttpRequest& r : log_) n += (r.method + " " + r.path).rfind(prefix, 0) == 0;
    return n;
  }

 private:
  std::map<std::string, std::deque<Result<HttpResponse>>> script_;
  std::vector<HttpRequest> log_;
};

// A TokenSource that hands out fixed tokens and counts invalidations.
class FakeTokenSource final : public auth::TokenSource {
 public:
  explicit FakeTokenSource(std::string user = "ci") : user_(std::move(user)) {}
  Result<auth::Token> Get() override {
    return auth::Token{Secret("token-" + std::to_string(invalidations_)), user_, std::nullopt};
  }
  void Invalidate() override { ++invalidations_; }
  std::string Describe() const override { return "fake"; }
  int invalidations() const { return invalidations_; }

 private:
  std::string user_;
  int invalidations_ = 0;
};

}  // namespace slurmfleet::slurm
