// FakeJenkinsClient: a Jenkins node table and queue in memory, for provisioner unit tests. Nodes
// connect, build and vanish only when the test says so. Not thread-safe. (The HTTP-level stand-in
// that follows research/jenkins/CONTRACT.md is tests/jenkins/standin/; this fake sits one level
// higher, at the jenkins::Client interface.)
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jenkins/client.h"

namespace slurmfleet::fleet {

class FakeJenkinsClient final : public jenkins::Client {
 public:
  Result<jenkins::ControllerInfo> Discover() override {
    if (down) return Fail(Code::kUnavailable, "connection refused", "GET /api/json");
    return jenkins::ControllerInfo{version, session, quieting_down, "http://jenkins.test/"};
  }
  Result<std::vector<jenkins::QueueItem>> Queue() override { return queue; }
  Result<std::map<int64_t, std::string>> ExactLabels() override {
    ++script_calls;
    if (script_fails) return Fail(Code::kUnavailable, "HTTP 503", "POST /scriptText");
    if (!administer) {
      return Fail(Code::kRejected, "missing permission hudson.model.Hudson.Administer",
                  "POST /scriptText");
    }
    std::map<int64_t, std::string> out;
    for (const auto& [id, label] : exact) {
      if (!unseen_by_script.contains(id)) out[id] = label;
    }
    unseen_by_script.clear();
    return out;
  }
  Result<std::vector<jenkins::Computer>> Computers() override {
    ++computers_calls;
    std::vector<jenkins::Computer> out;
    for (const auto& [name, c] : nodes) out.push_back(c);
    if (after_next_computers) std::exchange(after_next_computers, nullptr)();
    return out;
  }
  Result<jenkins::Computer> GetComputer(const std::string& name) override {
    auto it = nodes.find(name);
    if (it == nodes.end()) return Fail(Code::kNotFound, "no node " + name, "GET");
    return it->second;
  }
  Status CreateNode(const jenkins::NodeSpec& spec) override {
    ++create_calls;
    if (fail_create) return Fail(fail_create->code, fail_create->message, "POST");
    if (nodes.contains(spec.name)) return Fail(Code::kConflict, "already exists", "POST");
    jenkins::Computer c;
    c.name = spec.name;
    c.computer_class = "hudson.slaves.SlaveComputer";
    c.description = spec.description;
    c.num_executors = spec.num_executors;
    c.offline = true;
    c.labels = {spec.name};
    for (size_t start = 0; start < spec.labels.size();) {
      size_t end = spec.labels.find(' ', start);
      if (end == std::string::npos) end = spec.labels.size();
      if (end > start) c.labels.push_back(spec.labels.substr(start, end - start));
      start = end + 1;
    }
    c.executors.resize(1);
    nodes[spec.name] = c;
    specs[spec.name] = spec;
    ++created;
    max_nodes = std::max(max_nodes, static_cast<int>(nodes.size()));
    return {};
  }
  Result<Secret> AgentSecret(const std::string& name) override {
    if (!nodes.contains(name)) return Fail(Code::kNotFound, "no node", "GET");
    return Secret(std::string(64, 'a'));
  }
  Status Drain(const std::string& name, const std::string& message) override {
    if (refuse_drain) return Fail(Code::kRejected, "403: missing Agent/Disconnect", "POST");
    if (on_drain) on_drain(name);
    auto it = nodes.find(name);
    if (it == nodes.end()) return Fail(Code::kNotFound, "no node", "POST");
    it->second.temporarily_offline = true;
    it->second.offline = true;
    it->second.offline_cause_reason = message;
    return {};
  }
  Status SetDescription(const std::string& name, const std::string& description) override {
    ++describe_calls;
    auto it = nodes.find(name);
    if (it == nodes.end()) return Fail(Code::kNotFound, "no node", "POST");
    it->second.description = description;
    specs[name].description = description;
    return {};
  }
  Status DeleteNode(const std::string& name) override {
    ++delete_calls;
    if (refuse_delete) return Fail(Code::kRejected, "403: missing Agent/Delete", "POST");
    if (unavailable_delete) return Fail(Code::kUnavailable, "HTTP 503", "POST");
    if (nodes.erase(name) == 0) return Fail(Code::kNotFound, "no node", "POST");
    ++deleted;
    return {};
  }
  Result<jenkins::LabelLoad> Label(const std::string& e) override {
    return jenkins::LabelLoad{e, 0, 0, 0, 0};
  }
  Result<jenkins::ItemFate> Fate(int64_t queue_id) override {
    ++fate_calls;
    if (fail_fates) return Fail(Code::kUnavailable, "HTTP 503", "GET");
    auto it = fates.find(queue_id);
    if (it == fates.end()) return Fail(Code::kNotFound, "no queue item", "GET");
    return it->second;
  }
  Result<jenkins::RunInfo> Run(const std::string& url) override {
    ++run_calls;
    auto it = runs.find(url);
    if (it == runs.end()) return Fail(Code::kNotFound, "no run", "GET");
    return it->second;
  }

  // --- knobs
  int64_t Enqueue(std::string label, std::string task_url = "http://jenkins.test/job/j/",
                  bool freestyle = true) {
    jenkins::QueueItem item;
    item.id = next_id++;
    item.item_class = "hudson.model.Queue$BuildableItem";
    item.buildable = true;
    item.task_url = std::move(task_url);
    item.why = "There are no nodes with the label \u2018" + label + "\u2019";
    if (freestyle) {
      item.label = label;
      item.label_source = jenkins::LabelSource::kLabelExpression;
    }
    exact[item.id] = label;
    queue.push_back(item);
    return item.id;
  }
  void Connect(const std::string& name) {
    jenkins::Computer& c = nodes.at(name);
    c.absolute_remote_path = "/tmp/jenkins/agents/" + name;
    c.offline = c.temporarily_offline;
  }
  void Disconnect(const std::string& name) {
    jenkins::Computer& c = nodes.at(name);
    c.absolute_remote_path.reset();
    c.offline = true;
    c.executors.assign(1, {});
  }
  // The item leaves the queue and builds on `name`.
  void StartBuild(const std::string& name, const std::string& url) {
    jenkins::Computer& c = nodes.at(name);
    c.executors.assign(1, jenkins::Executor{false, url, 1});
    c.idle = false;
    if (!queue.empty()) queue.erase(queue.begin());
  }
  void EndBuild(const std::string& name) {
    jenkins::Computer& c = nodes.at(name);
    c.executors.assign(1, {});
    c.idle = true;
  }

  struct Failure {
    Code code;
    std::string message;
  };
  std::optional<Failure> fail_create;            // every CreateNode fails so while set
  std::map<int64_t, jenkins::ItemFate> fates;    // what became of items that left the queue
  std::map<std::string, jenkins::RunInfo> runs;  // by run URL
  int fate_calls = 0, run_calls = 0;
  bool fail_fates = false;                           // Fate answers 503 while set
  bool refuse_drain = false;                         // Drain answers 403 while set
  std::function<void(const std::string&)> on_drain;  // called at each Drain, before it acts
  bool refuse_delete = false;                        // DeleteNode answers 403 while set
  bool unavailable_delete = false;                   // DeleteNode answers 503 while set
  // Runs once, right after the next Computers() took its answer: what Jenkins did meanwhile.
  std::function<void()> after_next_computers;

  std::string version = "2.541.1";  // X-Jenkins
  std::string session = "s1";
  bool down = false;
  bool quieting_down = false;
  bool administer = true;
  bool script_fails = false;  // /scriptText answers 503 while set
  std::vector<jenkins::QueueItem> queue;
  std::map<int64_t, std::string> exact;
  // left out of the next /scriptText answer, as if they were queued just after the script ran
  std::set<int64_t> unseen_by_script;
  std::map<std::string, jenkins::Computer> nodes;
  std::map<std::string, jenkins::NodeSpec> specs;
  int64_t next_id = 1;
  int created = 0, deleted = 0, max_nodes = 0;
  int create_calls = 0, delete_calls = 0, script_calls = 0, describe_calls = 0, computers_calls = 0;
};

}  // namespace slurmfleet::fleet
