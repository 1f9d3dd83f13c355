// What slurmfleet reads from and writes to Jenkins, as plain values (research/jenkins/CONTRACT.md
// says which endpoint and `tree=` field each comes from). Nothing here knows about HTTP.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace slurmfleet::jenkins {

// GET /api/json?tree=quietingDown,url plus the headers every api/json answer carries.
struct ControllerInfo {
  std::string version;  // X-Jenkins
  std::string session;  // X-Jenkins-Session: changes on every controller restart
  bool quieting_down = false;
  std::string root_url;  // the configured root URL ("url"); empty when not configured
};

// Where a queue item's label came from, best first.
enum class LabelSource {
  kScript,           // POST /scriptText (exact, for every task type; needs Overall/Administer)
  kLabelExpression,  // task.labelExpression (freestyle/matrix projects)
  kWhy,              // parsed from `why` (Pipeline tasks without admin rights; a guess)
  kNone,             // unknown (e.g. "Waiting for next available executor" at cold start)
};

// One item of GET /queue/api/json.
struct QueueItem {
  int64_t id = 0;
  std::string item_class;  // "hudson.model.Queue$BuildableItem", "...$WaitingItem", ...
  bool buildable = false;
  bool blocked = false;
  bool pending = false;  // already handed to an executor
  bool stuck = false;
  std::string why;
  int64_t in_queue_since_ms = 0;
  std::string task_name;
  std::string task_url;  // absolute, as Jenkins wrote it: ".../job/folder/job/name/"
  std::string task_class;
  // The label expression the item waits for, and where it came from; nullopt with kNone when
  // unknown, and "" (with kLabelExpression) when the task may roam anywhere.
  std::optional<std::string> label;
  LabelSource label_source = LabelSource::kNone;

  // buildable, not pending and a BuildableItem: the only items worth provisioning for.
  bool WantsExecutor() const;
  // The folder path of the task, from task_url: "team-a/sub" for ".../job/team-a/job/sub/job/x/";
  // "" for a top-level job.
  std::string FolderPath() const;
};

struct Executor {
  bool idle = true;
  std::string current_url;  // the running build's URL; empty when idle
  int64_t current_number = 0;
};

// One node as GET /computer/api/json or /computer/<name>/api/json shows it.
struct Computer {
  std::string name;  // displayName
  // "hudson.slaves.SlaveComputer", "hudson.model.Hudson$MasterComputer"
  std::string computer_class;
  std::string description;  // the node description
  bool offline = true;
  bool temporarily_offline = false;
  bool idle = true;
  int num_executors = 0;
  std::optional<std::string> absolute_remote_path;  // set iff the agent's channel is up
  std::string offline_cause_reason;
  std::vector<std::string> labels;  // assignedLabels[name], the node's own name included
  std::vector<Executor> executors;

  bool connected() const { return absolute_remote_path.has_value(); }
  bool building() const;  // some executor runs a build
};

enum class NodeMode { kNormal, kExclusive };

// A permanent inbound (WebSocket) agent to create with POST /computer/doCreateItem.
struct NodeSpec {
  std::string name;
  std::string description;
  std::string remote_fs;
  std::string labels;  // space-separated
  NodeMode mode = NodeMode::kExclusive;
  int num_executors = 1;
};

// What became of a queue item: GET /queue/item/<id>/api/json (CONTRACT.md 2.6).
struct ItemFate {
  bool left = false;           // a Queue$LeftItem: the item is no longer in the queue
  bool cancelled = false;      // it left without a run
  std::string executable_url;  // the run it became (absolute, as Jenkins writes it), once left
};

// A run: GET <run url>api/json (CONTRACT.md 9).
struct RunInfo {
  bool building = false;
  std::string result;    // "SUCCESS", ...; empty while building
  std::string built_on;  // the node's name ("" for the built-in node); absent from Pipeline runs
};

// GET /label/<expr>/api/json: the load statistics are an EWMA, only a hint that work waits.
struct LabelLoad {
  std::string name;
  int idle_executors = 0;
  int busy_executors = 0;
  int total_executors = 0;
  double queue_length = 0;  // loadStatistics.queueLength.sec10.latest
};

}  // namespace slurmfleet::jenkins
