// ForwardingClient (test and bench support): a jenkins::Client that hands each call to `inner`
// through Around(kind, call), so that a decorator overrides that one function to time, hold back
// or log the calls by their kind ("Queue", "CreateNode", ...) instead of forwarding each of them.
// Thread-safe when `inner` and Around are.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "jenkins/client.h"

namespace slurmfleet::jenkins {

class ForwardingClient : public Client {
 public:
  explicit ForwardingClient(Client& inner) : inner_(inner) {}

  Result<ControllerInfo> Discover() override {
    return Through("Discover", [&] { return inner_.Discover(); });
  }
  Result<std::vector<QueueItem>> Queue() override {
    return Through("Queue", [&] { return inner_.Queue(); });
  }
  Result<std::map<int64_t, std::string>> ExactLabels() override {
    return Through("ExactLabels", [&] { return inner_.ExactLabels(); });
  }
  Result<std::vector<Computer>> Computers() override {
    return Through("Computers", [&] { return inner_.Computers(); });
  }
  Result<Computer> GetComputer(const std::string& name) override {
    return Through("GetComputer", [&] { return inner_.GetComputer(name); });
  }
  Status CreateNode(const NodeSpec& node) override {
    return Through("CreateNode", [&] { return inner_.CreateNode(node); });
  }
  Result<Secret> AgentSecret(const std::string& name) override {
    return Through("AgentSecret", [&] { return inner_.AgentSecret(name); });
  }
  Status Drain(const std::string& name, const std::string& message) override {
    return Through("Drain", [&] { return inner_.Drain(name, message); });
  }
  Status SetDescription(const std::string& name, const std::string& description) override {
    return Through("SetDescription", [&] { return inner_.SetDescription(name, description); });
  }
  Status DeleteNode(const std::string& name) override {
    return Through("DeleteNode", [&] { return inner_.DeleteNode(name); });
  }
  Result<ItemFate> Fate(int64_t queue_id) override {
    return Through("Fate", [&] { return inner_.Fate(queue_id); });
  }
  Result<RunInfo> Run(const std::string& run_url) override {
    return Through("Run", [&] { return inner_.Run(run_url); });
  }
  Result<LabelLoad> Label(const std::string& expression) override {
    return Through("Label", [&] { return inner_.Label(expression); });
  }

 protected:
  // Must run `call` (the inner client's) exactly once; by default it does nothing else.
  virtual void Around(std::string_view kind, const std::function<void()>& call) {
    (void)kind;
    call();
  }

 private:
  template <typename Call>
  std::invoke_result_t<Call> Through(std::string_view kind, Call call) {
    std::optional<std::invoke_result_t<Call>> result;
    Around(kind, [&] { result.emplace(call()); });
    return std::move(*result);
  }

  Client& inner_;
};

}  // namespace slurmfleet::jenkins
