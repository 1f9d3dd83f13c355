// Agent: one elastic Jenkins agent, from the moment the provisioner decides to start it until its
// Jenkins node is deleted and its Slurm job has ended. The provisioner persists it as a store
// Record (kind "agent", name = the agent's name = its node name = its submission key), so a
// restarted daemon finishes what the previous one started.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "store/submission.h"

namespace slurmfleet::fleet {

inline constexpr std::string_view kAgentRecord = "agent";

enum class AgentPhase {
  kCreating,     // decided; the Jenkins node and the Slurm submission are being made
  kLaunching,    // node and submission exist; waiting for the agent to connect
  kOnline,       // connected; idle or building
  kTerminating,  // draining, deleting the node and cancelling the job
  kDone,         // node deleted, job ended: nothing left behind
  kFailed,       // as kDone, but the agent never served (timeout, launch failure)
};

std::string_view AgentPhaseName(AgentPhase phase);  // "creating", ...; persisted
std::optional<AgentPhase> AgentPhaseFromName(std::string_view name);
bool IsFinal(AgentPhase phase);  // kDone or kFailed

struct Agent {
  std::string name;  // {cloud}-{template}-{timestamp}-{sequence}
  std::string cloud;
  std::string template_name;
  std::vector<std::string> labels;  // the template's labels at launch
  bool exclusive = true;            // node mode EXCLUSIVE
  int idle_minutes = 0;             // 0: one build, then the agent ends
  int timeout_minutes = 5;          // from creation to connected
  AgentPhase phase = AgentPhase::kCreating;
  int64_t created_ms = 0;  // when it was decided (unix ms)
  int64_t item_id = 0;     // the queue item it was started for
  bool node_created = false;
  std::optional<uint32_t> job_id;
  bool described = false;   // the node's description names the Slurm job
  std::string slurm_state;  // as last seen, e.g. "PENDING" with the reason beside it
  std::string state_reason;
  bool pending_warned = false;
  int64_t connected_ms = 0;  // 0 until the agent connected
  std::string build_url;     // the build running now; empty when idle
  int builds = 0;            // builds seen on this agent
  bool drained = false;      // we marked the node temporarily offline
  int64_t idle_since_ms = 0;
  bool node_deleted = false;
  bool cancel_requested = false;
  bool failed = false;  // it ends as kFailed: it never served, or broke while serving
  std::string outcome;  // why it ended, for a human; empty while live

  bool operator==(const Agent&) const = default;
};

// Serializes to and from the store's record. kInternal naming the record when its document is
// not what ToRecord writes.
store::Record ToRecord(const Agent& agent, const store::Record& stored);
Result<Agent> FromRecord(const store::Record& record);

}  // namespace slurmfleet::fleet
