// Provisioner: the reconcile loop of the Jenkins side. Each pass it reads Jenkins (controller
// session, the queue, every node) and the agents it owns (store records), then acts so that:
//   - every buildable item that no idle executor and no starting agent can take gets a new agent,
//     from the first cloud and template that may serve it, within every cap (agent_plan.h);
//   - each agent goes creating -> launching -> online -> terminating -> done/failed, every step
//     idempotent and recorded before it is taken, so a restart resumes where the last run was:
//       creating     create the inbound node, read its secret, render, hand the job to the engine
//       launching    wait for the agent to connect; a Slurm job that ended, a pending reason that
//                    cannot resolve, or agentTimeoutMinutes fail it fast
//       online       one build (idleMinutes 0: drained as soon as its build starts) or reuse until
//                    idle that long; a node deleted in Jenkins or a Slurm job that died ends it
//       terminating  delete the node once no build runs on it, then cancel the Slurm job
//   - a node that carries our marker but no live agent is deleted (nodes are never left behind).
// Events go to the store under the agent's name (the same key as its Slurm submission, so one
// agent's activity reads as one stream).
//
// Thread safety: Tick() runs on one thread (Run()'s); Wake(), Stop() and Report() may be called
// from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/worker_pool.h"
#include "fleet/agent.h"
#include "fleet/agent_plan.h"
#include "fleet/engine.h"
#include "fleet/template_registry.h"
#include "jenkins/agent_java.h"
#include "jenkins/client.h"
#include "launch/render.h"
#include "slurm/client.h"
#include "store/store.h"

namespace slurmfleet::fleet {

struct ProvisionerOptions {
  std::string instance = "default";  // marks our nodes: "slurmfleet:<instance>" in descriptions
  std::chrono::milliseconds interval{2000};
  std::chrono::seconds pending_warning{60};  // WARN when a job is still pending this long
  // An agent with idleMinutes 0 that got no build this long after connecting is ended: the
  // demand it was started for went elsewhere or away.
  std::chrono::seconds unused_agent_limit{120};
  // How long a connected agent may stay disconnected before it is given up.
  std::chrono::seconds reconnect_grace{120};
  // After an agent of a template failed to come online, that template launches again only after
  // this back-off, doubled for each failure in a row up to max_backoff (a broken template must
  // not churn Slurm jobs); an agent that connects resets it.
  std::chrono::seconds backoff{10};
  std::chrono::seconds max_backoff{300};
  // How often to ask again whether /scriptText is allowed, after Jenkins refused it.
  std::chrono::seconds label_probe_interval{600};
  // Jenkins calls (make the node, read its secret) in flight at once for a wave of new agents;
  // 1 makes them one by one on the loop's thread.
  size_t jenkins_concurrency = 16;
  // Debug lines (serve's daemon.logLevel debug): what the planner decided for each queue item,
  // written when that decision changes. Empty: off, and nothing is formatted.
  std::function<void(std::string_view)> debug_log;
};

// Where the provisioner launches on one cloud.
struct ProvisionerCloud {
  std::string name;
  Engine* engine = nullptr;        // submits and cancels this cloud's jobs
  slurm::Client* slurm = nullptr;  // its api_version() is the rendering's schema
};

// How the provisioner learns queue items' labels, for test-connection.
struct ProvisionerStatus {
  bool jenkins_reachable = false;
  std::string jenkins_version;
  std::string jenkins_session;
  std::string label_mode;    // "script" or "expression"
  std::string label_reason;  // why that mode
  std::string last_error;    // the last pass's Jenkins error; empty when it worked
  int live_agents = 0;
};

struct ProvisionStats {
  int buildable = 0;  // items wanting an executor
  int launched = 0;   // agents decided this pass
  int ended = 0;      // agents that reached done/failed this pass
  bool jenkins_ok = false;
};

class Provisioner {
 public:
  // Loads the live agents from `store`. Everything given must outlive the provisioner.
  static Result<std::unique_ptr<Provisioner>> Create(jenkins::Client& jenkins,
                                                     TemplateRegistry& templates,
                                                     store::Store& store, const Clock& clock,
                                                     std::vector<ProvisionerCloud> clouds,
                                                     ProvisionerOptions options);

  ProvisionStats Tick();
  void Run();  // passes until Stop(), every options.interval or sooner after Wake()
  void Wake();
  void Stop();

  ProvisionerStatus Report() const;

 private:
  Provisioner(jenkins::Client& jenkins, TemplateRegistry& templates, store::Store& store,
              const Clock& clock, std::vector<ProvisionerCloud> clouds, ProvisionerOptions options);

  int64_t NowMs() const;
  std::string Marker() const;
  std::string Description(const Agent& agent) const;  // the node's: marker, then the Slurm job
  ProvisionerCloud* FindCloud(const std::string& name);
  const TemplateEntry* FindTemplate(const std::vector<CloudTemplates>& snapshot,
                                    const std::string& cloud, const std::string& name) const;

  using ExactLabels = Result<std::map<int64_t, std::string>>;
  // `asked`: /scriptText's answer taken with the queue, used when it covers every item.
  void ResolveLabels(std::vector<jenkins::QueueItem>& items,
                     const std::map<std::string, jenkins::Computer>& nodes,
                     const std::vector<CloudTemplates>& snapshot,
                     std::optional<ExactLabels> asked = std::nullopt);
  void LabelsFromLoad(std::vector<jenkins::QueueItem>& items,
                      const std::vector<CloudTemplates>& snapshot);
  // The labels of the template an agent of ours was made from, as one expression ("linux&&gpu");
  // nullopt for a node that is not ours or whose template is gone.
  std::optional<std::string> LabelOfAgentNode(const std::string& node,
                                              const std::vector<CloudTemplates>& snapshot) const;
  void WarnIfOutsideFolders(const Agent& agent, const std::string& build_url,
                            const std::vector<CloudTemplates>& snapshot);
  // An agent of ours that counts as a free executor for queued items: not drained nor ending,
  // and, once connected in `nodes`, neither offline nor building; until it connects, while it
  // is still starting.
  bool CountedFree(const Agent& agent, const std::map<std::string, jenkins::Computer>& nodes) const;
  // Writes each item's decision to the debug log when it is new or changed.
  void DebugPlan(const std::vector<jenkins::QueueItem>& items, const Plan& plan,
                 const std::vector<CloudTemplates>& snapshot);
  // The label an item waits for, read as Jenkins reads it from where it came; nullopt: unknown.
  static std::optional<jenkins::LabelExpression> ItemLabel(const jenkins::QueueItem& item);
  // The names of the ephemeral templates that could serve one of `items`.
  static std::set<std::string> WantedEphemeral(const std::vector<jenkins::QueueItem>& items,
                                               const std::vector<CloudTemplates>& snapshot);
  void Launch(const std::vector<jenkins::QueueItem>& items,
              const std::map<std::string, jenkins::Computer>& nodes,
              const std::vector<CloudTemplates>& snapshot, ProvisionStats& stats);
  // A pass's Jenkins calls about its agents that go side by side, not one per agent as each
  // advances: one after another, before the look at the queue, a wave of agents held that look up
  // by a Jenkins round trip each.
  struct AgentCalls {
    std::map<std::string, Status> drains;  // sent before the agents advance (DrainStartedBuilds)
    // idle nodes of ending agents to take off the market right after (DrainEnding)
    std::vector<std::string> to_drain;
    std::vector<std::string> to_delete;  // nodes to delete right after those drains (DeleteNodes)
    // nodes yet to name their Slurm job: at the end of the pass, after the new agents' POSTs
    std::vector<std::string> to_describe;
  };
  void Advance(Agent& agent, const std::map<std::string, jenkins::Computer>& nodes,
               const std::vector<CloudTemplates>& snapshot, AgentCalls& calls);
  // Marks offline, side by side, the nodes of one-build agents whose build runs and that may
  // still take another (DrainWanted), before anything else of the pass: Jenkins hands such an
  // agent the next item as soon as a short build ends, and one after another, between the other
  // agents' record writes, the last of a wave waited for them all. Each agent's answer, by name.
  std::map<std::string, Status> DrainStartedBuilds(
      const std::map<std::string, jenkins::Computer>& nodes);
  static bool DrainWanted(const Agent& agent, const jenkins::Computer& node);
  // Marks the agents' nodes offline side by side, with the cause Jenkins shows for each: its one
  // build (`ending` false) or the agent's end. The answers, in the agents' order.
  std::vector<Status> DrainSideBySide(const std::vector<const Agent*>& agents, bool ending);
  // Deletes the nodes side by side; the answers, in the names' order.
  std::vector<Status> DeleteSideBySide(const std::vector<std::string>& names);
  // The URL of the build an executor of the node runs; empty when none does.
  static std::string CurrentBuild(const jenkins::Computer& node);
  void Described(Agent& agent, const Status& described);
  // Makes the node (once) and renders the agent's job; nullopt when it cannot yet (tried again
  // next pass) or failed (the agent is then ending).
  std::optional<slurm::JobRequest> Prepare(Agent& agent,
                                           const std::vector<CloudTemplates>& snapshot);
  // Prepare's three steps, so that a wave's Jenkins calls can run side by side.
  struct Launching {
    Agent* agent = nullptr;
    const TemplateEntry* tmpl = nullptr;
    launch::LaunchContext context;
    std::optional<jenkins::NodeSpec> node;  // to make; nullopt when it exists already
    Status created;                         // CreateNode's answer, or the adoption's
    Result<Secret> secret = Fail(Code::kInternal, "not read");
  };
  // Looks up the template and drafts the node; nullopt when not now, or the agent ended.
  std::optional<Launching> Begin(Agent& agent, const std::vector<CloudTemplates>& snapshot);
  // Makes the node and reads its secret. Touches nothing but the Jenkins client.
  void CallJenkins(Launching& l) const;
  // CallJenkins for many, options_.jenkins_concurrency at a time.
  void CallJenkins(std::vector<std::optional<Launching>>& launching);
  // Acts on the answers and renders the job; nullopt when not now, or the agent ended.
  std::optional<slurm::JobRequest> Finish(Launching& l);
  // After the job was recorded with the engine: the phase change and its event to save, or
  // nullopt when the agent failed (and was saved so).
  std::optional<store::Event> Launched(Agent& agent, const Result<store::Submission>& recorded);
  void Create(Agent& agent, const std::vector<CloudTemplates>& snapshot);  // Prepare + record
  void Watch(Agent& agent, const jenkins::Computer* node, const store::Submission* sub,
             const std::vector<CloudTemplates>& snapshot, const AgentCalls& calls);
  // Adds the agent's node to `to_delete` when it is yet to be deleted; else ends the agent
  // (FinishTerminate).
  void Terminate(Agent& agent, std::vector<std::string>& to_delete);
  // Marks offline, side by side, the idle nodes of `calls.to_drain`, whose agents are ending: an
  // agent drained now has its node deleted next pass, once seen idle again; one whose node is gone
  // or may not be drained goes on to Terminate (into `calls.to_delete`); one whose drain failed
  // otherwise is drained again next pass.
  void DrainEnding(AgentCalls& calls);
  // Deletes the nodes side by side, then goes on ending each agent whose node is gone (or may not
  // be deleted); one whose delete failed otherwise tries again next pass.
  void DeleteNodes(const std::vector<std::string>& names);
  // While Jenkins does not answer: an agent that never connected and is past its timeout runs
  // no build, so it is ended and its Slurm job cancelled now; its node is deleted once Jenkins
  // answers (Terminate, from Advance).
  void TimeOutWithoutJenkins();
  // Asks the engine to cancel the agent's job, once; false when that could not be recorded now.
  bool RequestJobCancel(Agent& agent);
  // Cancels the agent's job, once its node is gone, and ends the agent when the job has ended.
  void FinishTerminate(Agent& agent);
  void EndAgent(Agent& agent, bool failed, const std::string& type, const std::string& outcome);
  // Deletes, side by side, the idle nodes that carry our marker but no live agent owns.
  void DeleteStrayNodes(const std::map<std::string, jenkins::Computer>& nodes);
  // Finds the one build of a one-build agent that ran between two passes, through the items that
  // left the queue (at most kMaxFateChecks of them a pass, two GETs each, the items side by
  // side, options_.jenkins_concurrency at a time); the agents so found are drained side by side,
  // then their builds recorded. An item is asked about
  // once some such agent looks unused, which may be passes after it left: it can be taken while
  // its agent still looks starting or busy in that pass's answers. It is let go once its run is
  // known, when no agent could still claim it, or after kFateWindow (Jenkins forgets it then).
  static constexpr size_t kMaxFateChecks = 16;
  static constexpr size_t kMaxLeftItems = 256;
  static constexpr std::chrono::minutes kFateWindow{5};
  void NoticeUnseenBuilds(const std::vector<jenkins::QueueItem>& wanted,
                          const std::map<std::string, jenkins::Computer>& nodes);
  // A call Jenkins will keep refusing (403: a permission is missing; 401; a redirect away).
  static bool Refused(const Status& status);
  // Shows a refusal in the status, and once per agent and action as a warning event.
  void TellRefusal(const std::string& agent, const std::string& what, const Error& error);
  bool Save(Agent& agent, const std::string& type, const std::string& message);

  jenkins::Client& jenkins_;
  TemplateRegistry& templates_;
  store::Store& store_;
  const Clock& clock_;
  std::vector<ProvisionerCloud> clouds_;
  ProvisionerOptions options_;

  // Owned by the loop's thread.
  WorkerPool jenkins_calls_;                      // the threads of Jenkins calls made side by side
  std::map<std::string, Agent> agents_;           // live agents by name
  std::map<std::string, store::Record> records_;  // their stored records, for test-and-set
  std::string session_;
  int minimum_java_ = jenkins::kAgentJavaFloor;  // of the controller's version
  bool script_labels_ = true;
  bool label_mode_known_ = false;  // /scriptText was tried at least once
  int64_t script_refused_at_ms_ = 0;
  bool items_waited_ = false;  // the last queue had items wanting an executor
  uint64_t sequence_ = 0;
  std::set<std::pair<int64_t, std::string>> noted_;  // (queue item, cloud) skips already told
  std::map<int64_t, std::string> debug_told_;        // queue item -> its decision last logged
  struct Backoff {
    int failures = 0;
    int64_t until_ms = 0;
  };
  std::map<std::pair<std::string, std::string>, Backoff> backoff_;  // by (cloud, template)
  std::map<std::string, int64_t> disconnected_since_;  // online agents whose channel is down
  std::set<std::string> warned_;  // agents already told "waiting for Jenkins/slurmrestd"
  std::set<std::pair<std::string, std::string>> refusals_told_;  // (agent, action)
  std::set<int64_t> waiting_;        // the queue items provisioned for at the last pass
  std::map<int64_t, int64_t> left_;  // items gone from the queue, not yet asked about -> ms gone

  mutable std::mutex status_mu_;
  ProvisionerStatus status_;  // guarded by status_mu_

  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool woken_ = false;  // guarded by wake_mu_
  std::atomic<bool> stop_{false};
};

}  // namespace slurmfleet::fleet
