// FakeBackend: the engine side of server::Backend, small. Submissions go into a real store (so the
// server's reads see them); every other answer is a knob. Safe from the server's worker threads.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/backend.h"
#include "store/store.h"

namespace slurmfleet::server {

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(store::Store& store) : store_(store) {}

  // Knobs.
  void SetReady(bool ready) {
    std::lock_guard lock(mu_);
    ready_ = ready;
  }
  void SetClouds(std::vector<CloudInfo> clouds) {
    std::lock_guard lock(mu_);
    clouds_ = std::move(clouds);
  }
  void SetReport(ConnectionReport report) {
    std::lock_guard lock(mu_);
    report_ = std::move(report);
  }
  // The next Submit (or TestConnection, Cancel) fails with this error instead.
  void FailNextSubmit(Error error) {
    std::lock_guard lock(mu_);
    submit_error_ = std::move(error);
  }
  void FailNextTestConnection(Error error) {
    std::lock_guard lock(mu_);
    test_error_ = std::move(error);
  }

  // What reached the engine.
  std::vector<SubmitCommand> submits() const {
    std::lock_guard lock(mu_);
    return submits_;
  }
  std::vector<std::string> cancels() const {
    std::lock_guard lock(mu_);
    return cancels_;
  }

  std::vector<CloudInfo> Clouds() override {
    std::lock_guard lock(mu_);
    return clouds_;
  }

  Result<ConnectionReport> TestConnection(const std::string& cloud) override {
    std::lock_guard lock(mu_);
    if (test_error_) return std::unexpected(*std::exchange(test_error_, std::nullopt));
    for (const auto& c : clouds_) {
      if (c.name == cloud) return report_;
    }
    return Fail(Code::kNotFound, "no cloud named '" + cloud + "'", "cloud");
  }

  Result<store::Submission> Submit(const SubmitCommand& command) override {
    std::lock_guard lock(mu_);
    submits_.push_back(command);
    if (submit_error_) return std::unexpected(*std::exchange(submit_error_, std::nullopt));
    bool known = false;
    for (const auto& c : clouds_) known = known || c.name == command.cloud;
    if (command.cloud.empty()) return Fail(Code::kInvalidInput, "missing; name a cloud", "cloud");
    if (!known) return Fail(Code::kNotFound, "no cloud named '" + command.cloud + "'", "cloud");

    store::Submission submission;
    submission.key = command.key.empty() ? "job-" + std::to_string(++generated_) : command.key;
    submission.kind = command.kind;
    submission.cloud = command.cloud;
    submission.owner = command.owner;
    submission.request_json = command.job.dump();
    if (auto existing = store_.Get(submission.key)) {
      if (existing->request_json != submission.request_json || existing->cloud != command.cloud ||
          existing->kind != command.kind) {
        return Fail(Code::kConflict,
                    "key '" + submission.key + "' was submitted with another request", "key");
      }
      return *existing;
    }
    if (auto added = store_.Add(submission); !added) return std::unexpected(added.error());
    return store_.Get(submission.key);
  }

  Status Cancel(const std::string& key) override {
    std::lock_guard lock(mu_);
    auto submission = store_.Get(key);
    if (!submission) return std::unexpected(submission.error());
    cancels_.push_back(key);
    submission->cancel_requested = true;
    return store_.Update(*submission);
  }

  void SetAgents(std::vector<AgentView> agents) {
    std::lock_guard lock(mu_);
    agents_ = std::move(agents);
  }
  std::vector<TemplateCommand> registered() const {
    std::lock_guard lock(mu_);
    return registered_;
  }

  std::vector<AgentView> Agents(bool include_ended, size_t limit) override {
    std::lock_guard lock(mu_);
    std::vector<AgentView> out;
    for (const AgentView& a : agents_) {
      if (limit > 0 && out.size() >= limit) break;
      if (include_ended || (a.phase != "done" && a.phase != "failed")) out.push_back(a);
    }
    return out;
  }

  JenkinsReport Jenkins() override {
    return {true, true, "http://jenkins.example/", "2.541.1", "script", "admin", "", 0};
  }

  std::vector<TemplateView> Templates() override {
    std::lock_guard lock(mu_);
    return templates_;
  }

  Result<TemplateView> RegisterTemplate(const TemplateCommand& command) override {
    std::lock_guard lock(mu_);
    registered_.push_back(command);
    if (command.cloud != "local")
      return Fail(Code::kNotFound, "no cloud is named " + command.cloud, "cloud");
    if (command.json.find("bogus") != std::string::npos) {
      return Fail(Code::kInvalidInput, "unknown key 'bogus'", "json.job.bogus");
    }
    if (command.job.starts_with("elsewhere/")) {
      return Fail(Code::kForbidden, "cloud local serves only jobs in the folders team", "job");
    }
    TemplateView t{
        "eph-" + std::to_string(registered_.size()), "", "local", true, command.owner, 100};
    t.label = "slurmfleet-" + t.name;
    templates_.push_back(t);
    return t;
  }

  Result<TemplateView> TouchTemplate(const std::string& name) override {
    std::lock_guard lock(mu_);
    for (TemplateView& t : templates_) {
      if (t.name == name) return t;
    }
    return Fail(Code::kNotFound, "no template " + name, "name");
  }

  Status ReleaseTemplate(const std::string& name) override {
    std::lock_guard lock(mu_);
    for (auto it = templates_.begin(); it != templates_.end(); ++it) {
      if (it->name == name) {
        templates_.erase(it);
        return {};
      }
    }
    return Fail(Code::kNotFound, "no template " + name, "name");
  }

  bool Ready() const override {
    std::lock_guard lock(mu_);
    return ready_;
  }

 private:
  store::Store& store_;
  mutable std::mutex mu_;
  bool ready_ = true;
  std::vector<CloudInfo> clouds_;
  ConnectionReport report_;
  std::optional<Error> submit_error_;
  std::optional<Error> test_error_;
  std::vector<SubmitCommand> submits_;
  std::vector<std::string> cancels_;
  std::vector<AgentView> agents_;
  std::vector<TemplateView> templates_;
  std::vector<TemplateCommand> registered_;
  int generated_ = 0;
};

}  // namespace slurmfleet::server
