#include "fleet/agent.h"

#include <array>
#include <nlohmann/json.hpp>

namespace slurmfleet::fleet {
namespace {

constexpr std::array<std::pair<AgentPhase, std::string_view>, 6> kPhaseNames{{
    {AgentPhase::kCreating, "creating"},
    {AgentPhase::kLaunching, "launching"},
    {AgentPhase::kOnline, "online"},
    {AgentPhase::kTerminating, "terminating"},
    {AgentPhase::kDone, "done"},
    {AgentPhase::kFailed, "failed"},
}};

}  // namespace

std::string_view AgentPhaseName(AgentPhase phase) {
  for (const auto& [p, name] : kPhaseNames) {
    if (p == phase) return name;
  }
  return "unknown";
}

std::optional<AgentPhase> AgentPhaseFromName(std::string_view name) {
  for (const auto& [p, n] : kPhaseNames) {
    if (n == name) return p;
  }
  return std::nullopt;
}

bool IsFinal(AgentPhase phase) {
  return phase == AgentPhase::kDone || phase == AgentPhase::kFailed;
}

store::Record ToRecord(const Agent& a, const store::Record& stored) {
  nlohmann::json doc = {
      {"template", a.template_name},
      {"labels", a.labels},
      {"exclusive", a.exclusive},
      {"idleMinutes", a.idle_minutes},
      {"timeoutMinutes", a.timeout_minutes},
      {"phase", AgentPhaseName(a.phase)},
      {"createdMs", a.created_ms},
      {"itemId", a.item_id},
      {"nodeCreated", a.node_created},
      {"described", a.described},
      {"slurmState", a.slurm_state},
      {"stateReason", a.state_reason},
      {"pendingWarned", a.pending_warned},
      {"connectedMs", a.connected_ms},
      {"buildUrl", a.build_url},
      {"builds", a.builds},
      {"drained", a.drained},
      {"idleSinceMs", a.idle_since_ms},
      {"nodeDeleted", a.node_deleted},
      {"cancelRequested", a.cancel_requested},
      {"failed", a.failed},
      {"outcome", a.outcome},
  };
  if (a.job_id) doc["jobId"] = *a.job_id;
  store::Record r = stored;
  r.kind = std::string(kAgentRecord);
  r.name = a.name;
  r.cloud = a.cloud;
  r.active = !IsFinal(a.phase);
  r.doc = doc.dump();
  return r;
}

Result<Agent> FromRecord(const store::Record& record) {
  try {
    const nlohmann::json doc = nlohmann::json::parse(record.doc);
    Agent a;
    a.name = record.name;
    a.cloud = record.cloud;
    a.template_name = doc.at("template").get<std::string>();
    a.labels = doc.at("labels").get<std::vector<std::string>>();
    a.exclusive = doc.at("exclusive").get<bool>();
    a.idle_minutes = doc.at("idleMinutes").get<int>();
    a.timeout_minutes = doc.at("timeoutMinutes").get<int>();
    std::optional<AgentPhase> phase = AgentPhaseFromName(doc.at("phase").get<std::string>());
    if (!phase) throw std::invalid_argument("unknown phase");
    a.phase = *phase;
    a.created_ms = doc.at("createdMs").get<int64_t>();
    a.item_id = doc.at("itemId").get<int64_t>();
    a.node_created = doc.at("nodeCreated").get<bool>();
    a.described = doc.value("described", false);
    if (auto id = doc.find("jobId"); id != doc.end()) a.job_id = id->get<uint32_t>();
    a.slurm_state = doc.at("slurmState").get<std::string>();
    a.state_reason = doc.at("stateReason").get<std::string>();
    a.pending_warned = doc.at("pendingWarned").get<bool>();
    a.connected_ms = doc.at("connectedMs").get<int64_t>();
    a.build_url = doc.at("buildUrl").get<std::string>();
    a.builds = doc.at("builds").get<int>();
    a.drained = doc.at("drained").get<bool>();
    a.idle_since_ms = doc.at("idleSinceMs").get<int64_t>();
    a.node_deleted = doc.at("nodeDeleted").get<bool>();
    a.cancel_requested = doc.at("cancelRequested").get<bool>();
    a.failed = doc.at("failed").get<bool>();
    a.outcome = doc.at("outcome").get<std::string>();
    return a;
  } catch (const std::exception& e) {
    return Fail(Code::kInternal, std::string("agent record is damaged: ") + e.what(),
                "agent " + record.name);
  }
}

}  // namespace slurmfleet::fleet
