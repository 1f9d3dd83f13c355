// `slurmfleet agents` and `slurmfleet activities`: what the daemon's provisioner did, read through
// its REST API (/api/v1/agents, /api/v1/activities), like the plugin's Cloud Statistics page.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "base/url.h"
#include "cli/client_options.h"
#include "cli/commands.h"
#include "cli/daemon_client.h"
#include "cli/exit_codes.h"

namespace slurmfleet::cli {
namespace {

struct AgentsOptions {
  DaemonOptions daemon;
  bool all = false;
  int limit = 100;
};

struct ActivitiesOptions {
  DaemonOptions daemon;
  std::string agent;
  std::string cloud;
  int64_t after = 0;
  int limit = 100;
  bool follow = false;
};

// The event's time as the API gives it (ISO-8601 UTC), or "-".
std::string AtText(const nlohmann::json& event) {
  auto at = event.find("at");
  return at != event.end() && at->is_string() ? at->get<std::string>() : "-";
}

// An answer of another shape than this version's API gives.
int ReportUnexpected(const nlohmann::json::exception& e, const std::string& path, bool json) {
  return ReportError(Error{Code::kInternal,
                           std::string("the daemon's answer has another shape than expected (") +
                               e.what() + "); is --daemon a slurmfleet daemon of this version?",
                           "GET " + path},
                     json);
}

int PrintAgents(const nlohmann::json& body, const AgentsOptions& o) {
  const nlohmann::json& agents = body.at("agents");
  if (agents.empty()) {
    std::cout << (o.all ? "no agents yet\n" : "no live agents (--all shows ended ones)\n");
    return kExitOk;
  }
  std::cout << fmt::format("{:<44} {:<12} {:>9} {:<24} {:>6}  {}\n", "AGENT", "PHASE", "SLURM JOB",
                           "SLURM STATE", "BUILDS", "BUILD / OUTCOME");
  for (const nlohmann::json& a : agents) {
    // find, not operator[]: on a const json, [] of a missing key reads past the object
    auto id = a.find("job_id");
    std::string job = id == a.end() || id->is_null() ? "-" : std::to_string(id->get<uint32_t>());
    std::string state = a.value("slurm_state", "");
    if (std::string reason = a.value("state_reason", ""); !reason.empty() && reason != "None") {
      state += " (" + reason + ")";
    }
    std::string detail = a.value("build_url", "");
    if (detail.empty()) detail = a.value("outcome", "");
    std::cout << fmt::format("{:<44} {:<12} {:>9} {:<24} {:>6}  {}\n", a.value("name", ""),
                             a.value("phase", ""), job, state.empty() ? "-" : state,
                             a.value("builds", 0), detail);
  }
  return kExitOk;
}

int RunAgents(const AgentsOptions& o) {
  const std::string path =
      "/api/v1/agents?limit=" + std::to_string(o.limit) + (o.all ? "&all=true" : "");
  Result<nlohmann::json> body = DaemonGet(o.daemon, path);
  if (!body) return ReportError(body.error(), o.daemon.json);
  if (o.daemon.json) {
    std::cout << body->dump(2) << "\n";
    return kExitOk;
  }
  try {
    return PrintAgents(*body, o);
  } catch (const nlohmann::json::exception& e) {
    return ReportUnexpected(e, path, o.daemon.json);
  }
}

int RunActivities(const ActivitiesOptions& o) {
  int64_t after = o.after;
  while (true) {
    std::string path =
        "/api/v1/activities?limit=" + std::to_string(o.limit) + "&after=" + std::to_string(after);
    if (!o.agent.empty()) path += "&agent=" + PercentEncode(o.agent);
    if (!o.cloud.empty()) path += "&cloud=" + PercentEncode(o.cloud);
    Result<nlohmann::json> body = DaemonGet(o.daemon, path);
    if (!body) return ReportError(body.error(), o.daemon.json);
    bool more = false;
    try {
      for (const nlohmann::json& e : body->at("activities")) {
        if (o.daemon.json) {
          std::cout << e.dump() << "\n";
        } else {
          std::cout << fmt::format("{}  {:<4}  {:<40}  {:<10} {}\n", AtText(e),
                                   e.value("level", ""), e.value("key", ""), e.value("type", ""),
                                   e.value("message", ""));
        }
      }
      after = body->value("next_after", after);
      more = body->value("more", false);
    } catch (const nlohmann::json::exception& e) {
      return ReportUnexpected(e, path, o.daemon.json);
    }
    std::cout.flush();
    if (!o.follow) return kExitOk;
    if (!more) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace

void AddAgentsCommand(CLI::App& app, CommandResult& result) {
  auto agents = std::make_shared<AgentsOptions>();
  CLI::App* cmd = app.add_subcommand("agents", "list the Jenkins agents the daemon runs on Slurm");
  AddDaemonFlags(*cmd, agents->daemon);
  cmd->add_flag("--all", agents->all, "include agents that have ended");
  cmd->add_option("--limit", agents->limit, "at most this many, newest first")
      ->check(CLI::Range(1, 1000));
  cmd->callback([agents, &result] { result.exit_code = RunAgents(*agents); });

  auto activities = std::make_shared<ActivitiesOptions>();
  CLI::App* act = app.add_subcommand(
      "activities", "provisioning activity: each agent's events with OK/WARN/FAIL levels");
  AddDaemonFlags(*act, activities->daemon);
  act->add_option("--agent", activities->agent, "only this agent's events");
  act->add_option("--cloud", activities->cloud, "only the events of this cloud's agents");
  act->add_option("--after", activities->after, "only events after this id");
  act->add_option("--limit", activities->limit, "events per page")->check(CLI::Range(1, 1000));
  act->add_flag("--follow,-f", activities->follow, "keep printing new events");
  act->callback([activities, &result] { result.exit_code = RunActivities(*activities); });
}

}  // namespace slurmfleet::cli
