// The running testbed, as scripts/test.sh exports it: SLURMRESTD_URL, SLURM_USER, SLURM_JWT_KEY,
// TESTBED_ROOT and SLURM_API_VERSION (the newest version its slurmrestd serves; v0.0.45 when
// unset). Integration tests FAIL (never skip) when it is missing, so a misconfigured run
// cannot pass by testing nothing.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "auth/minting_token_source.h"
#include "base/clock.h"
#include "slurm/curl_transport.h"
#include "slurm/rest_client.h"

namespace slurmfleet::slurm {

inline std::string TestbedEnv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Testbed {
  std::string url = TestbedEnv("SLURMRESTD_URL");
  std::string socket = TestbedEnv("SLURMRESTD_SOCKET");  // the same slurmrestd on a local socket
  std::string user = TestbedEnv("SLURM_USER").empty() ? "ci" : TestbedEnv("SLURM_USER");
  std::string jwt_key = TestbedEnv("SLURM_JWT_KEY");
  std::string root = TestbedEnv("TESTBED_ROOT");
  std::string api_version =
      TestbedEnv("SLURM_API_VERSION").empty() ? "v0.0.45" : TestbedEnv("SLURM_API_VERSION");

  // "/slurm/<api_version>/<rest>": a path as a proxy in front of the testbed sees it.
  std::string Path(const std::string& rest) const { return "/slurm/" + api_version + "/" + rest; }

  // Empty when usable; otherwise what is missing.
  std::string Missing() const {
    if (url.empty() || jwt_key.empty() || root.empty()) {
      return "SLURMRESTD_URL, SLURM_JWT_KEY and TESTBED_ROOT must be set: run the tests through "
             "scripts/test.sh, which starts the testbed (testbed/testbed.sh) and exports them";
    }
    return {};
  }
};

// Counts what went over the wire, by method, on top of a real transport.
class CountingTransport final : public Transport {
 public:
  explicit CountingTransport(Transport& inner) : inner_(inner) {}
  Result<HttpResponse> Send(const HttpRequest& r) override {
    ++count_[r.method];
    return inner_.Send(r);
  }
  std::vector<Result<HttpResponse>> SendAll(const std::vector<HttpRequest>& rs,
                                            size_t at_once) override {
    for (const HttpRequest& r : rs) ++count_[r.method];
    return inner_.SendAll(rs, at_once);
  }
  void SendReleased(size_t count, size_t at_once,
                    const std::function<Release(size_t, HttpRequest&)>& next,
                    const std::function<void(size_t, Result<HttpResponse>)>& done) override {
    auto counted = [&](size_t i, HttpRequest& r) {
      const Release release = next(i, r);
      if (release == Release::kNow) ++count_[r.method];
      return release;
    };
    inner_.SendReleased(count, at_once, counted, done);
  }
  int Count(const std::string& method) { return count_[method]; }

 private:
  Transport& inner_;
  std::map<std::string, int> count_;
};

}  // namespace slurmfleet::slurm
