#include "fleet/provisioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "fleet/agent_plan.h"
#include "jenkins/label_expression.h"
#include "jenkins/why_text.h"
#include "launch/agent_name.h"
#include "launch/render.h"

namespace slurmfleet::fleet {
namespace {

using store::Phase;

std::string JoinLabels(const std::vector<std::string>& labels) {
  std::string out;
  for (const std::string& l : labels) out += (out.empty() ? "" : " ") + l;
  return out;
}

// The sequence number that ends an agent's name ({cloud}-{template}-{ms}-{sequence}): stable for
// the agent, so its rendered job is the same whenever it is rendered.
uint64_t SequenceOf(const std::string& name) {
  const size_t dash = name.rfind('-');
  uint64_t sequence = 0;
  if (dash != std::string::npos) {
    std::from_chars(name.data() + dash + 1, name.data() + name.size(), sequence);
  }
  return sequence;
}

std::string JobText(const Agent& a) {
  return a.job_id ? "Slurm job " + std::to_string(*a.job_id)
                  : std::string("Slurm job (not yet submitted)");
}

std::string StateText(const Agent& a) {
  if (a.slurm_state.empty()) return "not yet submitted";
  return a.state_reason.empty() || a.state_reason == "None"
             ? a.slurm_state
             : a.slurm_state + " (" + a.state_reason + ")";
}

}  // namespace

Provisioner::Provisioner(jenkins::Client& jenkins, TemplateRegistry& templates, store::Store& store,
                         const Clock& clock, std::vector<ProvisionerCloud> clouds,
                         ProvisionerOptions options)
    : jenkins_(jenkins),
      templates_(templates),
      store_(store),
      clock_(clock),
      clouds_(std::move(clouds)),
      options_(std::move(options)) {}

Result<std::unique_ptr<Provisioner>> Provisioner::Create(jenkins::Client& jenkins,
                                                         TemplateRegistry& templates,
                                                         store::Store& store, const Clock& clock,
                                                         std::vector<ProvisionerCloud> clouds,
                                                         ProvisionerOptions options) {
  std::unique_ptr<Provisioner> p(
      new Provisioner(jenkins, templates, store, clock, std::move(clouds), std::move(options)));
  Result<std::vector<store::Record>> records = store.ListRecords(std::string(kAgentRecord), true);
  if (!records) return std::unexpected(records.error());
  for (const store::Record& r : *records) {
    Result<Agent> agent = FromRecord(r);
    if (!agent) return std::unexpected(agent.error());
    p->records_[r.name] = r;
    p->agents_[r.name] = std::move(*agent);
  }
  p->sequence_ = static_cast<uint64_t>(p->agents_.size());
  return p;
}

int64_t Provisioner::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
      .count();
}

std::string Provisioner::Marker() const { return "slurmfleet:" + options_.instance + " "; }

std::string Provisioner::Description(const Agent& agent) const {
  return Marker() + "cloud " + agent.cloud + ", template " + agent.template_name + "; " +
         (agent.job_id ? JobText(agent) : "Slurm job pending");
}

ProvisionerCloud* Provisioner::FindCloud(const std::string& name) {
  for (ProvisionerCloud& c : clouds_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const TemplateEntry* Provisioner::FindTemplate(const std::vector<CloudTemplates>& snapshot,
                                               const std::string& cloud,
                                               const std::string& name) const {
  for (const CloudTemplates& c : snapshot) {
    if (c.name != cloud) continue;
    for (const TemplateEntry& t : c.templates) {
      if (t.resolved.name == name) return &t;
    }
  }
  return nullptr;
}

bool Provisioner::Save(Agent& agent, const std::string& type, const std::string& message) {
  store::Record& stored = records_[agent.name];
  store::Record record = ToRecord(agent, stored);
  std::optional<store::Event> event;
  if (!type.empty()) event = store::Event{0, agent.name, 0, type, message};
  if (Status put = store_.PutRecord(record, event); !put) {
    std::lock_guard lock(status_mu_);
    status_.last_error = "cannot save agent " + agent.name + ": " + put.error().ToString();
    return false;
  }
  stored = record;
  return true;
}

ProvisionStats Provisioner::Tick() {
  ProvisionStats stats;
  {
    std::lock_guard lock(status_mu_);
    status_.last_error.clear();  // this pass's errors, if any, are set below
  }
  Result<jenkins::ControllerInfo> info = jenkins_.Discover();
  Result<std::vector<jenkins::Computer>> computers =
      info ? jenkins_.Computers()
           : Result<std::vector<jenkins::Computer>>(std::unexpected(info.error()));
  if (!computers) {
    {
      std::lock_guard lock(status_mu_);
      status_.jenkins_reachable = false;
      status_.last_error = computers.error().ToString();
    }
    TimeOutWithoutJenkins();
    return stats;
  }
  stats.jenkins_ok = true;
  if (!session_.empty() && info->session != session_) {
    (void)store_.AppendEvent("jenkins", "warn",
                             "Jenkins restarted (session " + session_ + " -> " + info->session +
                                 "): reconciling agents against its nodes");
    // Queue ids start again after an unclean restart (CONTRACT.md 2.2): what was noted of the
    // last session's items would be taken for new items of the same ids.
    waiting_.clear();
    left_.clear();
    noted_.clear();
    debug_told_.clear();
  }
  session_ = info->session;
  minimum_java_ = jenkins::MinimumAgentJava(info->version);

  std::map<std::string, jenkins::Computer> nodes;
  for (jenkins::Computer& c : *computers) nodes.emplace(c.name, std::move(c));

  const std::vector<CloudTemplates> snapshot = templates_.Snapshot();
  std::vector<std::string> ended;
  AgentCalls calls;
  calls.drains = DrainStartedBuilds(nodes);
  for (auto& [name, agent] : agents_) Advance(agent, nodes, snapshot, calls);
  DrainEnding(calls);
  DeleteNodes(calls.to_delete);
  for (auto it = agents_.begin(); it != agents_.end();) {
    if (IsFinal(it->second.phase)) {
      ++stats.ended;
      ended.push_back(it->first);
      nodes.erase(it->first);  // deleted just now: `nodes` predates that
      warned_.erase(it->first);
      disconnected_since_.erase(it->first);
      records_.erase(it->first);
      it = agents_.erase(it);
    } else {
      ++it;
    }
  }
  DeleteStrayNodes(nodes);

  if (!label_mode_known_) {
    // Find out once at start-up which label source works, so test-connection can say it before
    // the first item arrives.
    std::vector<jenkins::QueueItem> none;
    ResolveLabels(none, nodes, snapshot);
  }
  // Ephemeral templates that live agents or waiting items use; nullopt when the queue is not
  // known this pass, and then none expires: its items may be waiting for them.
  std::optional<std::set<std::string>> in_use;
  if (!info->quieting_down) {
    // While items wait, every pass asks /scriptText for their labels anyway: then it is asked side
    // by side with the queue, so that a new item's label is at hand when the queue shows it. An
    // idle queue never costs Jenkins the script.
    //
    // The nodes are asked for again, side by side with the queue, while an agent of ours that
    // has a node counts as free (idle, or still starting): the snapshot taken at the start of
    // the pass predates Advance's calls, and an item that such an agent took since then (an
    // idle one, or one that connected meanwhile) is gone from the queue while the agent still
    // looks free in it. Counting that agent for the new items started one agent too few, and
    // the last item waited a whole pass for its agent. Asked together, the two answers are at
    // most a few milliseconds apart.
    Result<std::vector<jenkins::QueueItem>> queue;
    std::optional<ExactLabels> asked;
    std::optional<Result<std::vector<jenkins::Computer>>> fresh;
    const bool ask_labels = script_labels_ && items_waited_;
    const bool ask_nodes = std::any_of(agents_.begin(), agents_.end(), [&](const auto& entry) {
      return entry.second.node_created && CountedFree(entry.second, nodes);
    });
    jenkins_calls_.Run(1 + ask_labels + ask_nodes, options_.jenkins_concurrency, [&](size_t i) {
      if (i == 0) {
        queue = jenkins_.Queue();
      } else if (i == 1 && ask_nodes) {
        fresh = jenkins_.Computers();
      } else {
        asked = jenkins_.ExactLabels();
      }
    });
    if (fresh && *fresh) {
      nodes.clear();
      for (jenkins::Computer& c : **fresh) nodes.emplace(c.name, std::move(c));
      for (const std::string& name : ended) nodes.erase(name);  // a delete that failed
    }
    items_waited_ = false;
    if (queue) {
      std::vector<jenkins::QueueItem> wanted;
      for (jenkins::QueueItem& item : *queue) {
        if (item.WantsExecutor()) wanted.push_back(std::move(item));
      }
      items_waited_ = !wanted.empty();
      // Jenkins lists the newest first but serves the oldest first: plan in its order, so each
      // agent is recorded against the item it will most likely run
      std::sort(wanted.begin(), wanted.end(),
                [](const auto& a, const auto& b) { return a.id < b.id; });
      stats.buildable = static_cast<int>(wanted.size());
      NoticeUnseenBuilds(wanted, nodes);  // before planning: such an agent is no longer free
      if (!wanted.empty()) {
        ResolveLabels(wanted, nodes, snapshot, std::move(asked));
        Launch(wanted, nodes, snapshot, stats);
      }
      in_use = WantedEphemeral(wanted, snapshot);
      std::set<std::pair<int64_t, std::string>> still;
      for (const auto& n : noted_) {
        for (const jenkins::QueueItem& item : wanted) {
          if (item.id == n.first) still.insert(n);
        }
      }
      noted_ = std::move(still);
      std::erase_if(debug_told_, [&](const auto& told) {
        return std::none_of(wanted.begin(), wanted.end(),
                            [&](const jenkins::QueueItem& item) { return item.id == told.first; });
      });
    } else {
      std::lock_guard lock(status_mu_);
      status_.last_error = queue.error().ToString();
    }
  }
  // After the new agents' POSTs, side by side: a description is for admins to read, and the
  // POSTs need not wait for it.
  std::vector<std::pair<Agent*, std::string>> describe;  // (agent, its node's new description)
  for (const std::string& name : calls.to_describe) {
    if (auto it = agents_.find(name); it != agents_.end()) {
      describe.emplace_back(&it->second, Description(it->second));
    }
  }
  std::vector<Status> described(describe.size());
  jenkins_calls_.Run(describe.size(), options_.jenkins_concurrency, [&](size_t k) {
    described[k] = jenkins_.SetDescription(describe[k].first->name, describe[k].second);
  });
  for (size_t k = 0; k < describe.size(); ++k) Described(*describe[k].first, described[k]);

  if (in_use) {
    for (const auto& [name, a] : agents_) in_use->insert(a.template_name);
    templates_.Expire(*in_use);
  }

  std::lock_guard lock(status_mu_);
  status_.jenkins_reachable = true;
  status_.jenkins_version = info->version;
  status_.jenkins_session = info->session;
  status_.label_mode = !label_mode_known_ ? "" : script_labels_ ? "script" : "expression";
  status_.live_agents = static_cast<int>(agents_.size());
  return stats;
}

void Provisioner::ResolveLabels(std::vector<jenkins::QueueItem>& items,
                                const std::map<std::string, jenkins::Computer>& nodes,
                                const std::vector<CloudTemplates>& snapshot,
                                std::optional<ExactLabels> asked) {
  const int64_t now = NowMs();
  if (!script_labels_ &&
      now - script_refused_at_ms_ >=
          std::chrono::duration_cast<std::chrono::milliseconds>(options_.label_probe_interval)
              .count()) {
    script_labels_ = true;  // permissions may have been granted since: ask again
  }
  if (script_labels_) {
    // An answer taken with the queue may predate an item that arrived in between: ask again then.
    // A refusal or failure is as good an answer as the next call's.
    const bool covers = asked && (!*asked || std::all_of(items.begin(), items.end(),
                                                         [&](const jenkins::QueueItem& item) {
                                                           return (*asked)->contains(item.id);
                                                         }));
    ExactLabels exact = covers ? std::move(*asked) : jenkins_.ExactLabels();
    label_mode_known_ = true;
    if (exact) {
      for (jenkins::QueueItem& item : items) {
        if (auto it = exact->find(item.id); it != exact->end()) {
          item.label = it->second;
          item.label_source = jenkins::LabelSource::kScript;
        }
      }
      std::lock_guard lock(status_mu_);
      status_.label_reason =
          "exact labels of every queue item from /scriptText (the account may administer Jenkins)";
      return;
    }
    const Code code = exact.error().code;
    std::lock_guard lock(status_mu_);
    if (code == Code::kRejected || code == Code::kAuth) {
      // not allowed: do without it until label_probe_interval has passed
      script_labels_ = false;
      script_refused_at_ms_ = now;
      status_.label_reason =
          "labels from task.labelExpression (freestyle) and the `why` texts (Pipeline), because "
          "/scriptText was refused: " +
          exact.error().message + "; give the account Overall/Administer for exact Pipeline labels";
    } else {
      // a failure of this call only (Jenkins busy, a lost answer): the next pass asks again
      status_.label_reason =
          "exact labels from /scriptText, but its last call failed (" + exact.error().ToString() +
          "), so that pass read labels from task.labelExpression and the `why` texts";
    }
  }
  for (jenkins::QueueItem& item : items) {
    if (item.label) continue;
    jenkins::WhyHint hint = jenkins::ParseWhy(item.why);
    switch (hint.kind) {
      case jenkins::WhyHint::Kind::kLabel:
        item.label = hint.text;
        item.label_source = jenkins::LabelSource::kWhy;
        break;
      case jenkins::WhyHint::Kind::kNodeOrLabel:
        if (!nodes.contains(hint.text)) {
          item.label = hint.text;
          item.label_source = jenkins::LabelSource::kWhy;
          break;
        }
        [[fallthrough]];
      case jenkins::WhyHint::Kind::kNode:
        // The one node of the item's label, busy or offline (starting, or draining around its one
        // build). When it is an agent of ours, its template's labels stand for the label: the
        // planner then counts it as starting or busy like any other agent for them.
        if (auto label = LabelOfAgentNode(hint.text, snapshot)) {
          item.label = std::move(*label);
          item.label_source = jenkins::LabelSource::kWhy;
        }
        break;
      case jenkins::WhyHint::Kind::kNone:
        break;
    }
  }
  LabelsFromLoad(items, snapshot);
}

std::optional<std::string> Provisioner::LabelOfAgentNode(
    const std::string& node, const std::vector<CloudTemplates>& snapshot) const {
  auto agent = agents_.find(node);
  if (agent == agents_.end()) return std::nullopt;
  const TemplateEntry* t = FindTemplate(snapshot, agent->second.cloud, agent->second.template_name);
  if (t == nullptr || t->resolved.labels.empty()) return std::nullopt;
  std::string label;
  for (const std::string& l : t->resolved.labels) label += (label.empty() ? "" : "&&") + l;
  return label;
}

// At cold start (no agents at all) Jenkins drops the label from `why`, and a Pipeline task
// exports none: the label load statistics are then the only hint. They count the items waiting
// for exactly that label name, as a moving average, so ceil(queueLength) items still unlabelled
// are taken to wait for it. Asked only while such items exist, one request per template label.
void Provisioner::LabelsFromLoad(std::vector<jenkins::QueueItem>& items,
                                 const std::vector<CloudTemplates>& snapshot) {
  size_t unknown = 0;
  for (const jenkins::QueueItem& item : items) unknown += !item.label.has_value();
  if (unknown == 0) return;
  std::set<std::string> labels;
  for (const CloudTemplates& c : snapshot) {
    for (const TemplateEntry& t : c.templates)
      labels.insert(t.resolved.labels.begin(), t.resolved.labels.end());
  }
  for (const std::string& label : labels) {
    if (unknown == 0) break;
    Result<jenkins::LabelLoad> load = jenkins_.Label(label);
    if (!load || load->queue_length <= 0) continue;
    auto waiting = static_cast<size_t>(std::ceil(load->queue_length));
    for (const jenkins::QueueItem& item : items) {
      if (item.label == label && waiting > 0) --waiting;  // already known to wait for it
    }
    for (jenkins::QueueItem& item : items) {
      if (waiting == 0 || unknown == 0) break;
      if (item.label) continue;
      item.label = label;
      item.label_source = jenkins::LabelSource::kWhy;
      --waiting;
      --unknown;
    }
  }
}

bool Provisioner::CountedFree(const Agent& agent,
                              const std::map<std::string, jenkins::Computer>& nodes) const {
  const bool starting =
      agent.phase == AgentPhase::kCreating || agent.phase == AgentPhase::kLaunching;
  if ((!starting && agent.phase != AgentPhase::kOnline) || agent.drained) return false;
  const auto node = nodes.find(agent.name);
  if (node == nodes.end() || !node->second.connected()) return starting;
  return !node->second.temporarily_offline && !node->second.building();
}

namespace {

std::string_view LabelSourceText(jenkins::LabelSource source) {
  switch (source) {
    case jenkins::LabelSource::kScript:
      return "from /scriptText";
    case jenkins::LabelSource::kLabelExpression:
      return "from the job's label expression";
    case jenkins::LabelSource::kWhy:
      return "guessed from the queue's why text or the label load";
    case jenkins::LabelSource::kNone:
      break;
  }
  return "";
}

}  // namespace

void Provisioner::DebugPlan(const std::vector<jenkins::QueueItem>& items, const Plan& plan,
                            const std::vector<CloudTemplates>& snapshot) {
  for (size_t i = 0; i < items.size() && i < plan.outcomes.size(); ++i) {
    const jenkins::QueueItem& item = items[i];
    std::string decision;
    switch (plan.outcomes[i]) {
      case ItemOutcome::kLabelUnknown:
        decision = "no agent: neither the job nor the queue's why text nor the label load names it";
        break;
      case ItemOutcome::kServedByExisting:
        decision = "an idle executor or an agent still starting takes it";
        break;
      case ItemOutcome::kLaunched:
        for (const PlannedLaunch& l : plan.launches) {
          if (l.item_id != item.id) continue;
          decision = "a new agent from cloud " + snapshot[l.cloud].name + ", template " +
                     snapshot[l.cloud].templates[l.templ].resolved.name;
        }
        break;
      case ItemOutcome::kHeldBack:
        decision = "held back:";
        for (const PlanNote& note : plan.notes) {
          if (note.item_id == item.id) decision += " " + note.message + ";";
        }
        decision.pop_back();
        break;
      case ItemOutcome::kNoTemplate: {
        // Saying which labels there are makes a typo in either place plain.
        std::string templates;
        for (const CloudTemplates& c : snapshot) {
          templates += (templates.empty() ? "" : "; ") + c.name + ":";
          for (size_t t = 0; t < c.templates.size(); ++t) {
            std::string labels;
            for (const std::string& l : c.templates[t].resolved.labels) {
              labels += (labels.empty() ? "" : " ") + l;
            }
            templates += (t == 0 ? " " : ", ") + c.templates[t].resolved.name + " '" + labels + "'";
          }
        }
        decision = "no template of any cloud serves it (" + templates + ")";
        break;
      }
    }
    std::string& told = debug_told_[item.id];
    if (told == decision) continue;
    told = decision;
    std::string label = !item.label           ? "an unknown label"
                        : item.label->empty() ? "any node (no label)"
                                              : "'" + *item.label + "'";
    if (item.label) label += " " + std::string(LabelSourceText(item.label_source));
    std::string job = item.task_name;
    if (std::string folder = item.FolderPath(); !job.empty() && !folder.empty()) {
      job = folder + "/" + job;
    }
    options_.debug_log("queue item " + std::to_string(item.id) +
                       (job.empty() ? "" : " (" + job + ")") + " wants " + label + ": " + decision);
  }
}

std::optional<jenkins::LabelExpression> Provisioner::ItemLabel(const jenkins::QueueItem& item) {
  if (!item.label) return std::nullopt;
  // only a project's own text is read as Jenkins reads it; the others Jenkins wrote out
  return item.label_source == jenkins::LabelSource::kLabelExpression
             ? jenkins::LabelExpression::FromAssigned(*item.label)
             : jenkins::LabelExpression::FromWritten(*item.label);
}

std::set<std::string> Provisioner::WantedEphemeral(const std::vector<jenkins::QueueItem>& items,
                                                   const std::vector<CloudTemplates>& snapshot) {
  // A pipeline's node() may wait longer than its template's TTL (caps, back-off, a long input
  // step before a second node()): its template must not end under it.
  std::set<std::string> wanted;
  for (const jenkins::QueueItem& item : items) {
    std::optional<jenkins::LabelExpression> label = ItemLabel(item);
    if (!label || label->empty()) continue;
    for (const CloudTemplates& c : snapshot) {
      for (const TemplateEntry& t : c.templates) {
        const std::set<std::string> labels(t.resolved.labels.begin(), t.resolved.labels.end());
        if (t.ephemeral &&
            jenkins::MatchesNode(*label, labels,
                                 t.resolved.node_usage_mode == spec::NodeUsageMode::kExclusive)) {
          wanted.insert(t.resolved.name);
        }
      }
    }
  }
  return wanted;
}

void Provisioner::Launch(const std::vector<jenkins::QueueItem>& items,
                         const std::map<std::string, jenkins::Computer>& nodes,
                         const std::vector<CloudTemplates>& snapshot, ProvisionStats& stats) {
  std::vector<PlanItem> plan_items;
  for (const jenkins::QueueItem& item : items) {
    PlanItem p;
    p.id = item.id;
    p.folder = item.FolderPath();
    if (std::optional<jenkins::LabelExpression> label = ItemLabel(item)) p.label = *label;
    plan_items.push_back(std::move(p));
  }

  std::vector<PlanExecutor> available;
  for (const auto& [name, node] : nodes) {
    if (agents_.contains(name)) continue;  // ours are counted below, from our own state
    if (!node.connected() || node.temporarily_offline) continue;
    int free = 0;
    for (const jenkins::Executor& e : node.executors) free += e.idle && e.current_url.empty();
    if (free == 0) continue;
    // Jenkins does not export a node's mode: a foreign node is taken as NORMAL, so it is
    // assumed to take unlabelled items too.
    available.push_back(PlanExecutor{{node.labels.begin(), node.labels.end()}, false, free});
  }
  std::map<std::pair<std::string, std::string>, int> per_template;
  std::map<std::string, int> per_cloud;
  for (const auto& [name, a] : agents_) {
    ++per_template[{a.cloud, a.template_name}];
    ++per_cloud[a.cloud];
    if (!CountedFree(a, nodes)) continue;
    std::set<std::string> labels(a.labels.begin(), a.labels.end());
    labels.insert(name);
    available.push_back(PlanExecutor{std::move(labels), a.exclusive, 1});
  }

  std::vector<PlanCloud> clouds;
  for (const CloudTemplates& c : snapshot) {
    PlanCloud pc;
    pc.name = c.name;
    pc.max_agents = c.max_agents;
    pc.active = per_cloud[c.name];
    pc.authorized_folders = c.authorized_folders;
    for (const TemplateEntry& t : c.templates) {
      PlanTemplate pt;
      pt.name = t.resolved.name;
      pt.labels = {t.resolved.labels.begin(), t.resolved.labels.end()};
      pt.exclusive = t.resolved.node_usage_mode == spec::NodeUsageMode::kExclusive;
      pt.instance_cap = t.resolved.instance_cap;
      pt.active = per_template[{c.name, t.resolved.name}];
      if (auto b = backoff_.find({c.name, t.resolved.name});
          b != backoff_.end() && b->second.until_ms > NowMs()) {
        pt.backing_off = true;
      }
      pc.templates.push_back(std::move(pt));
    }
    clouds.push_back(std::move(pc));
  }

  Plan plan = PlanAgents(plan_items, std::move(available), clouds);
  if (options_.debug_log) DebugPlan(items, plan, snapshot);
  for (const PlanNote& note : plan.notes) {
    if (!noted_.insert({note.item_id, note.cloud}).second) continue;
    (void)store_.AppendEvent("queue-" + std::to_string(note.item_id), "skipped", note.message);
  }
  // A wave of items is launched as a batch: nodes are made and secrets read for all of them at
  // once, then each cloud's agents are recorded with their Slurm jobs, already marked as being
  // submitted, in one transaction, and this thread sends them at once: no disk sync between the
  // demand and the POSTs, and no wait for the engine's thread. A crash before that transaction
  // leaves only nodes carrying our marker, which DeleteStrayNodes removes, while the items are
  // still queued.
  const auto now = clock_.Now();
  std::vector<Agent> fresh;
  std::vector<std::string> messages;
  for (const PlannedLaunch& l : plan.launches) {
    const CloudTemplates& cloud = snapshot[l.cloud];
    const TemplateEntry& tmpl = cloud.templates[l.templ];
    Result<std::string> name =
        launch::MakeAgentName(cloud.name, tmpl.resolved.name, now, sequence_++);
    if (!name) continue;  // names were validated when the template was loaded
    Agent a;
    a.name = *name;
    a.cloud = cloud.name;
    a.template_name = tmpl.resolved.name;
    a.labels = tmpl.resolved.labels;
    a.exclusive = tmpl.resolved.node_usage_mode == spec::NodeUsageMode::kExclusive;
    a.idle_minutes = tmpl.resolved.idle_minutes;
    a.timeout_minutes = tmpl.resolved.agent_timeout_minutes;
    a.created_ms = NowMs();
    a.item_id = l.item_id;
    std::string label_text;
    for (const PlanItem& p : plan_items) {
      if (p.id == l.item_id && p.label) label_text = p.label->ToString();
    }
    messages.push_back(
        fmt::format("agent for queue item {} (label '{}') from template {} of cloud {}", l.item_id,
                    label_text, a.template_name, a.cloud));
    fresh.push_back(std::move(a));
  }
  if (fresh.empty()) return;
  stats.launched += static_cast<int>(fresh.size());

  std::vector<std::optional<Launching>> launching;
  for (Agent& a : fresh) launching.push_back(Begin(a, snapshot));
  CallJenkins(launching);

  std::map<std::string, std::vector<size_t>> by_cloud;  // agents whose job is ready to record
  std::map<std::string, std::vector<Engine::Intent>> intents;
  std::vector<size_t> waiting;  // neither ready nor ended: Create() tries again next pass
  for (size_t i = 0; i < fresh.size(); ++i) {
    std::optional<slurm::JobRequest> request;
    if (launching[i]) request = Finish(*launching[i]);
    if (request) {
      by_cloud[fresh[i].cloud].push_back(i);
      intents[fresh[i].cloud].push_back(
          {fresh[i].name, "agent", fresh[i].template_name, std::move(*request)});
    } else if (fresh[i].phase == AgentPhase::kCreating) {
      waiting.push_back(i);
    }
  }
  std::vector<store::Record> records(fresh.size());
  for (auto& [cloud, list] : intents) {
    std::vector<std::pair<store::Record*, std::optional<store::Event>>> launched;
    for (size_t i : by_cloud[cloud]) {
      fresh[i].phase = AgentPhase::kLaunching;
      records[i] = ToRecord(fresh[i], store::Record{});
      launched.emplace_back(&records[i],
                            store::Event{0, fresh[i].name, 0, "planned",
                                         messages[i] + "; Jenkins node created and its Slurm job "
                                                       "recorded"});
    }
    // Not synced to disk before the POSTs (a disk sync took 2-30 ms on a busy VM): a power loss
    // that takes this transaction leaves jobs no submission owns, cancelled as orphans, and
    // nodes no record owns, deleted as strays, while the items are still queued.
    if (Status sent = FindCloud(cloud)->engine->SubmitNow(list, launched, store::Sync::kProcess);
        !sent) {
      std::lock_guard lock(status_mu_);
      status_.last_error = "cannot record new agents: " + sent.error().ToString();
      for (size_t i : by_cloud[cloud]) {
        fresh[i].phase = AgentPhase::kCreating;  // their nodes are adopted next pass
        waiting.push_back(i);
      }
      continue;
    }
    for (size_t i : by_cloud[cloud]) records_[fresh[i].name] = records[i];
  }
  if (!waiting.empty()) {
    std::vector<std::pair<store::Record*, std::optional<store::Event>>> planned;
    for (size_t i : waiting) {
      records[i] = ToRecord(fresh[i], store::Record{});
      planned.emplace_back(&records[i], store::Event{0, fresh[i].name, 0, "planned", messages[i]});
    }
    if (Status put = store_.PutRecords(planned); put) {
      for (size_t i : waiting) records_[fresh[i].name] = records[i];
    } else {
      std::lock_guard lock(status_mu_);
      status_.last_error = "cannot record new agents: " + put.error().ToString();
    }
  }
  for (Agent& a : fresh) {
    // unrecorded (the store failed): not kept, so nothing tracks what is not on disk; a node
    // made for it carries our marker and is deleted as a stray
    if (a.phase == AgentPhase::kCreating && !records_.contains(a.name)) continue;
    std::string name = a.name;
    agents_[name] = std::move(a);
  }
}

std::optional<Provisioner::Launching> Provisioner::Begin(
    Agent& agent, const std::vector<CloudTemplates>& snapshot) {
  const TemplateEntry* tmpl = FindTemplate(snapshot, agent.cloud, agent.template_name);
  ProvisionerCloud* cloud = FindCloud(agent.cloud);
  if (tmpl == nullptr || cloud == nullptr) {
    EndAgent(agent, true, "failed",
             "template " + agent.template_name + " of cloud " + agent.cloud +
                 " is gone (released or removed from the configuration) before its agent launched");
    return std::nullopt;
  }
  std::string jenkins_url;
  for (const CloudTemplates& c : snapshot) {
    if (c.name == agent.cloud) jenkins_url = c.jenkins_url;
  }
  Launching l;
  l.agent = &agent;
  l.tmpl = tmpl;
  l.context = {.cloud = agent.cloud,
               .agent_name = agent.name,
               .jenkins_url = jenkins_url,
               .api_version = std::string(cloud->slurm->api_version()),
               .agent_secret = Secret(),
               .agent_index = SequenceOf(agent.name),
               .minimum_java = minimum_java_};
  if (l.context.api_version.empty() || l.context.api_version == "auto") {
    // not connected to slurmrestd yet: rendering needs the version's schema
    if (warned_.insert(agent.name).second) {
      (void)store_.AppendEvent(agent.name, "warn",
                               "waiting for slurmrestd of cloud " + agent.cloud + " to answer");
    }
    return std::nullopt;
  }
  if (!agent.node_created) {
    Result<launch::RenderedJob> draft = launch::Render(tmpl->resolved, l.context);
    if (!draft) {
      EndAgent(agent, true, "failed", "cannot render the agent's job: " + draft.error().ToString());
      return std::nullopt;
    }
    l.node = jenkins::NodeSpec{
        .name = agent.name,
        .description = Description(agent),
        .remote_fs = draft->remote_fs,
        .labels = JoinLabels(agent.labels),
        .mode = agent.exclusive ? jenkins::NodeMode::kExclusive : jenkins::NodeMode::kNormal,
        .num_executors = 1};
  }
  return l;
}

void Provisioner::CallJenkins(Launching& l) const {
  if (l.node) {
    l.created = jenkins_.CreateNode(*l.node);
    if (!l.created && l.created.error().code == Code::kConflict) {
      // ours from before a crash (recorded after the node was made): adopt it
      Result<jenkins::Computer> existing = jenkins_.GetComputer(l.node->name);
      if (existing && existing->description.starts_with(Marker())) {
        l.created = {};
      } else if (!existing && existing.error().code != Code::kNotFound) {
        l.created = std::unexpected(existing.error());  // whose it is: asked again next pass
      }
    }
    if (!l.created) return;
  }
  l.secret = jenkins_.AgentSecret(l.context.agent_name);
}

void Provisioner::CallJenkins(std::vector<std::optional<Launching>>& launching) {
  jenkins_calls_.Run(launching.size(), options_.jenkins_concurrency, [&](size_t i) {
    if (launching[i]) CallJenkins(*launching[i]);
  });
}

std::optional<slurm::JobRequest> Provisioner::Finish(Launching& l) {
  Agent& agent = *l.agent;
  if (l.node) {
    if (!l.created) {
      const Code code = l.created.error().code;
      if (code == Code::kUnavailable || code == Code::kUnknownOutcome) {
        if (warned_.insert(agent.name).second) {
          (void)store_.AppendEvent(
              agent.name, "warn",
              "cannot create the Jenkins node yet: " + l.created.error().ToString());
        }
        return std::nullopt;  // the next pass tries again; an unknown outcome is adopted then
      }
      // No node of ours to delete: one of that name, if any, is someone else's
      agent.node_deleted = true;
      EndAgent(
          agent, true, "failed",
          "Jenkins refused to create node " + agent.name + ": " + l.created.error().ToString());
      return std::nullopt;
    }
    agent.node_created = true;  // recorded with the phase change that follows
  }
  if (!l.secret) {
    if (l.secret.error().code == Code::kRejected || l.secret.error().code == Code::kAuth) {
      EndAgent(agent, true, "failed",
               "cannot read the agent's secret: " + l.secret.error().ToString());
    }
    return std::nullopt;
  }
  l.context.agent_secret = std::move(*l.secret);
  Result<launch::RenderedJob> rendered = launch::Render(l.tmpl->resolved, l.context);
  if (!rendered) {
    EndAgent(agent, true, "failed",
             "cannot render the agent's job: " + rendered.error().ToString());
    return std::nullopt;
  }
  return std::move(rendered->request);
}

std::optional<slurm::JobRequest> Provisioner::Prepare(Agent& agent,
                                                      const std::vector<CloudTemplates>& snapshot) {
  std::optional<Launching> l = Begin(agent, snapshot);
  if (!l) return std::nullopt;
  CallJenkins(*l);
  return Finish(*l);
}

std::optional<store::Event> Provisioner::Launched(Agent& agent,
                                                  const Result<store::Submission>& recorded) {
  // kConflict: recorded by an earlier run with another request (the template changed since):
  // that submission stands
  if (!recorded && recorded.error().code != Code::kConflict) {
    EndAgent(agent, true, "failed", "cannot record the Slurm job: " + recorded.error().ToString());
    return std::nullopt;
  }
  agent.phase = AgentPhase::kLaunching;
  return store::Event{0, agent.name, 0, "node",
                      "Jenkins node " + agent.name + " (labels '" + JoinLabels(agent.labels) +
                          "') created and its Slurm job recorded"};
}

void Provisioner::Create(Agent& agent, const std::vector<CloudTemplates>& snapshot) {
  std::optional<slurm::JobRequest> request = Prepare(agent, snapshot);
  if (!request) return;
  Result<store::Submission> recorded =
      FindCloud(agent.cloud)->engine->AddIntent(agent.name, "agent", agent.template_name, *request);
  if (std::optional<store::Event> event = Launched(agent, recorded)) {
    Save(agent, event->type, event->message);
  }
}

std::string Provisioner::CurrentBuild(const jenkins::Computer& node) {
  std::string current;
  for (const jenkins::Executor& e : node.executors) {
    if (!e.current_url.empty()) current = e.current_url;
  }
  return current;
}

bool Provisioner::DrainWanted(const Agent& agent, const jenkins::Computer& node) {
  // Until the drain is recorded, every pass during the build: a drain that failed, or that
  // Jenkins forgot (before 2.482 a restart clears temporarilyOffline), is sent again; the resumed
  // agent would otherwise take a second build.
  return agent.idle_minutes == 0 && node.connected() && !CurrentBuild(node).empty() &&
         (!agent.drained || !node.temporarily_offline);
}

std::map<std::string, Status> Provisioner::DrainStartedBuilds(
    const std::map<std::string, jenkins::Computer>& nodes) {
  std::vector<const Agent*> due;
  for (const auto& [name, agent] : agents_) {
    // a launching agent whose node connected goes online in this pass, and may drain in it
    if (agent.phase != AgentPhase::kLaunching && agent.phase != AgentPhase::kOnline) continue;
    auto node = nodes.find(name);
    if (node != nodes.end() && DrainWanted(agent, node->second)) due.push_back(&agent);
  }
  std::vector<Status> answers = DrainSideBySide(due, false);
  std::map<std::string, Status> drains;
  for (size_t i = 0; i < due.size(); ++i) drains.emplace(due[i]->name, std::move(answers[i]));
  return drains;
}

std::vector<Status> Provisioner::DrainSideBySide(const std::vector<const Agent*>& agents,
                                                 bool ending) {
  std::vector<Status> answers(agents.size());
  jenkins_calls_.Run(agents.size(), options_.jenkins_concurrency, [&](size_t i) {
    const Agent& agent = *agents[i];
    answers[i] = jenkins_.Drain(
        agent.name, ending
                        ? "slurmfleet: ending this agent; " + JobText(agent) + " ends"
                        : "slurmfleet: one build per agent; " + JobText(agent) + " ends after it");
  });
  return answers;
}

std::vector<Status> Provisioner::DeleteSideBySide(const std::vector<std::string>& names) {
  std::vector<Status> answers(names.size());
  jenkins_calls_.Run(names.size(), options_.jenkins_concurrency,
                     [&](size_t i) { answers[i] = jenkins_.DeleteNode(names[i]); });
  return answers;
}

void Provisioner::Advance(Agent& agent, const std::map<std::string, jenkins::Computer>& nodes,
                          const std::vector<CloudTemplates>& snapshot, AgentCalls& calls) {
  if (agent.phase == AgentPhase::kCreating) {
    if (NowMs() - agent.created_ms >= int64_t{agent.timeout_minutes} * 60000) {
      // slurmrestd (or Jenkins' node API) kept failing: give the capacity back
      EndAgent(agent, true, "failed",
               fmt::format("Timeout launching the agent: no Slurm job recorded after {} min",
                           agent.timeout_minutes));
      Terminate(agent, calls.to_delete);
      return;
    }
    // `nodes` was read before this pass created the node: watch it from the next pass on
    Create(agent, snapshot);
    return;
  }
  std::optional<store::Submission> sub;
  if (Result<store::Submission> got = store_.Get(agent.name); got) sub = std::move(*got);
  if (sub) {
    if (sub->job_id) agent.job_id = sub->job_id;
    agent.slurm_state = sub->slurm_state;
    agent.state_reason = sub->state_reason;
  }
  auto node = nodes.find(agent.name);
  if (agent.job_id && !agent.described && node != nodes.end()) {
    // The job id exists only after the node (its secret goes into the job): name it now, so
    // admins see in the Jenkins UI which Slurm job an agent runs in.
    calls.to_describe.push_back(agent.name);
  }
  if (agent.phase != AgentPhase::kTerminating && FindCloud(agent.cloud) == nullptr) {
    // Started before its cloud left the configuration: nothing tracks its Slurm job or could
    // cancel it now. Ended here (after its build), its node is deleted, and an agent whose node
    // is gone gives up within -noReconnectAfter, which ends the job.
    EndAgent(agent, false, "warn",
             "cloud " + agent.cloud + " is no longer configured: ending the agent once no build " +
                 "runs on it; " + JobText(agent) +
                 " cannot be cancelled from here and ends when its agent gives up reconnecting " +
                 "(scancel it on that cluster to end it sooner)");
  }
  if (agent.phase != AgentPhase::kTerminating) {
    Watch(agent, node == nodes.end() ? nullptr : &node->second, sub ? &*sub : nullptr, snapshot,
          calls);
  }
  if (agent.phase == AgentPhase::kTerminating) {
    // A build runs on only while its agent is connected. A Pipeline block's executor stays busy
    // after the channel drops, until its node is removed, so waiting for it would never end.
    const bool connected = node != nodes.end() && node->second.connected();
    if (connected && node->second.building()) return;
    const bool job_ended = sub && store::IsTerminal(sub->phase);
    if (connected && !job_ended && !agent.drained && !agent.node_deleted) {
      // Jenkins may hand the idle agent an item between this look at it and the delete, and the
      // delete would cut that build off: take the node off the market first, and delete it at the
      // next pass, once it is seen idle again (CONTRACT.md 7.1, 7.2).
      calls.to_drain.push_back(agent.name);
      return;
    }
    Terminate(agent, calls.to_delete);
  }
}

void Provisioner::DrainEnding(AgentCalls& calls) {
  std::vector<const Agent*> due;
  for (const std::string& name : calls.to_drain) due.push_back(&agents_.at(name));
  const std::vector<Status> answers = DrainSideBySide(due, true);
  for (size_t i = 0; i < due.size(); ++i) {
    Agent& agent = agents_.at(calls.to_drain[i]);
    const Status& drained = answers[i];
    if (drained) {
      agent.drained = true;
      Save(agent, "", "");
      continue;
    }
    if (Refused(drained)) {
      TellRefusal(agent.name, "mark the node offline before deleting it", drained.error());
    } else if (drained.error().code != Code::kNotFound) {
      continue;  // next pass
    }
    Terminate(agent, calls.to_delete);
  }
}

void Provisioner::Described(Agent& agent, const Status& described) {
  if (described || described.error().code == Code::kNotFound) {
    agent.described = true;
    Save(agent, "", "");
  } else if (described.error().code == Code::kRejected || described.error().code == Code::kAuth) {
    agent.described = true;  // no Computer/Configure: the node keeps its first description
    Save(agent, "warn",
         "cannot name the Slurm job in the node's description: " + described.error().ToString());
  }
}

bool Provisioner::Refused(const Status& status) {
  if (status) return false;
  const Code code = status.error().code;
  // kInvalidInput: redirected away from Jenkins (a login proxy), which no retry changes
  return code == Code::kRejected || code == Code::kAuth || code == Code::kInvalidInput;
}

void Provisioner::TellRefusal(const std::string& agent, const std::string& what,
                              const Error& error) {
  const std::string text = "Jenkins refused to " + what + ": " + error.ToString() +
                           "; give the account the permission it names (docs/jenkins.md)";
  {
    std::lock_guard lock(status_mu_);
    status_.last_error = text;
  }
  if (refusals_told_.insert({agent, what}).second) (void)store_.AppendEvent(agent, "warn", text);
}

// A one-build agent's build can start and end between two looks at its node, and Jenkins would
// then hand the idle agent a second item. So when items left the queue while such an agent looks
// unused, ask Jenkins what became of them (CONTRACT.md 2.6, 6): a run built on the agent was its
// one build. Jenkins names no node for a Pipeline block's run, so those stay unseen.
void Provisioner::NoticeUnseenBuilds(const std::vector<jenkins::QueueItem>& wanted,
                                     const std::map<std::string, jenkins::Computer>& nodes) {
  const int64_t now = NowMs();
  std::set<int64_t> waiting;
  for (const jenkins::QueueItem& item : wanted) waiting.insert(item.id);
  for (int64_t id : waiting_) {
    if (!waiting.contains(id)) left_.emplace(id, now);
  }
  waiting_ = std::move(waiting);
  const bool claimable = std::any_of(agents_.begin(), agents_.end(), [](const auto& entry) {
    return entry.second.idle_minutes == 0 && entry.second.builds == 0;
  });
  const int64_t window = std::chrono::duration_cast<std::chrono::milliseconds>(kFateWindow).count();
  std::erase_if(left_, [&](const auto& e) {
    return !claimable || now - e.second >= window || waiting_.contains(e.first);
  });
  while (left_.size() > kMaxLeftItems) left_.erase(left_.begin());  // the oldest are let go

  std::map<std::string, Agent*> unused;
  for (auto& [name, agent] : agents_) {
    auto node = nodes.find(name);
    if (agent.idle_minutes == 0 && agent.phase == AgentPhase::kOnline && agent.builds == 0 &&
        node != nodes.end() && node->second.connected() && !node->second.building()) {
      unused.emplace(name, &agent);
    }
  }
  if (unused.empty()) return;
  // Each item's two calls (what became of it, then its run) go side by side with the other
  // items': one after another, a burst of short builds held up the planning of the items that
  // wait now by up to 2 * kMaxFateChecks Jenkins round trips.
  struct Asked {
    int64_t id = 0;
    std::optional<Result<jenkins::ItemFate>> fate;
    std::optional<Result<jenkins::RunInfo>> run;
  };
  std::vector<Asked> asked;
  for (auto it = left_.begin(); it != left_.end() && asked.size() < kMaxFateChecks; ++it) {
    asked.push_back({it->first, std::nullopt, std::nullopt});
  }
  jenkins_calls_.Run(asked.size(), options_.jenkins_concurrency, [&](size_t i) {
    asked[i].fate = jenkins_.Fate(asked[i].id);
    const Result<jenkins::ItemFate>& fate = *asked[i].fate;
    if (fate && fate->left && !fate->executable_url.empty()) {
      asked[i].run = jenkins_.Run(fate->executable_url);
    }
  });
  struct Found {
    Agent* agent;
    std::string build_url;
    bool building;
  };
  std::vector<Found> found_builds;
  for (const Asked& a : asked) {
    auto it = left_.find(a.id);
    const Result<jenkins::ItemFate>& fate = *a.fate;
    if (!fate) {
      // forgotten: it left long ago; any other failure is asked again at the next pass
      if (fate.error().code == Code::kNotFound) left_.erase(it);
      continue;
    }
    if (!fate->left) continue;  // still queued, only not wanting an executor now (blocked)
    if (fate->cancelled) {
      left_.erase(it);
      continue;
    }
    // Jenkins lists an item as left a moment before it names its run: asked again next pass
    if (fate->executable_url.empty()) continue;
    const Result<jenkins::RunInfo>& run = *a.run;
    if (!run) {
      if (run.error().code == Code::kInvalidInput) left_.erase(it);
      continue;
    }
    auto found = unused.find(run->built_on);
    if (found == unused.end()) {
      // On an agent of ours that does not look unused yet (its node not yet seen connected, or
      // still building in this pass's answer): ask again once it does. Any other run, or an
      // agent whose build is known (found through another item just now, say), lets it go.
      auto agent = agents_.find(run->built_on);
      const bool found_now =
          std::any_of(found_builds.begin(), found_builds.end(),
                      [&](const Found& f) { return f.agent->name == run->built_on; });
      if (agent == agents_.end() || agent->second.builds != 0 || found_now) left_.erase(it);
      continue;
    }
    left_.erase(it);
    found_builds.push_back({found->second, fate->executable_url, run->building});
    unused.erase(found);
  }
  // Drained first, side by side, as in Watch: the agents are idle now, and Jenkins hands each the
  // next item; then their builds are recorded.
  std::vector<const Agent*> due;
  for (const Found& f : found_builds) due.push_back(f.agent);
  const std::vector<Status> drains = DrainSideBySide(due, false);
  for (size_t i = 0; i < found_builds.size(); ++i) {
    Agent& agent = *found_builds[i].agent;
    if (drains[i] || drains[i].error().code == Code::kNotFound) agent.drained = true;
    agent.build_url = found_builds[i].build_url;
    ++agent.builds;
    agent.idle_since_ms = 0;
    Save(agent, "build",
         "build started: " + agent.build_url +
             (found_builds[i].building ? "" : " (and ended between two looks at the node)"));
  }
}

// Jenkins hands an idle agent any item its labels match: from outside Jenkins nothing can keep an
// item of another folder off a folder-restricted cloud's agent. Say so when it happens.
void Provisioner::WarnIfOutsideFolders(const Agent& agent, const std::string& build_url,
                                       const std::vector<CloudTemplates>& snapshot) {
  for (const CloudTemplates& c : snapshot) {
    if (c.name != agent.cloud || c.authorized_folders.empty()) continue;
    jenkins::QueueItem run;
    run.task_url = build_url;
    const std::string folder = run.FolderPath();
    if (FolderAllowed(c.authorized_folders, folder)) return;
    (void)store_.AppendEvent(
        agent.name, "warn",
        "build " + build_url + " of " + (folder.empty() ? "no folder" : "folder " + folder) +
            " runs on an agent of cloud " + agent.cloud +
            ", which serves only its authorized folders: Jenkins gives an idle agent any item "
            "its labels match; give this cloud's templates labels only those folders use");
  }
}

void Provisioner::Watch(Agent& agent, const jenkins::Computer* node, const store::Submission* sub,
                        const std::vector<CloudTemplates>& snapshot, const AgentCalls& calls) {
  const int64_t now = NowMs();
  const bool job_ended = sub && store::IsTerminal(sub->phase);
  const std::string job_end =
      sub ? (sub->failure.empty() ? StateText(agent) : StateText(agent) + ": " + sub->failure) : "";
  if (node == nullptr) {
    agent.node_deleted = true;
    const bool failed = agent.phase != AgentPhase::kOnline;
    EndAgent(agent, failed, failed ? "failed" : "warn",
             "node " + agent.name + " was deleted in Jenkins; cancelling " + JobText(agent));
    return;
  }

  if (agent.phase == AgentPhase::kLaunching) {
    if (node->connected()) {
      agent.phase = AgentPhase::kOnline;
      agent.connected_ms = now;
      backoff_.erase({agent.cloud, agent.template_name});
      agent.idle_since_ms = now;
      Save(agent, "connected",
           fmt::format("Agent connected after {}s ({})", (now - agent.created_ms) / 1000,
                       JobText(agent)));
      // fall through: a build may already run
    } else if (job_ended && !agent.job_id && sub->phase == Phase::kFailed) {
      EndAgent(
          agent, true, "failed",
          "Launch failed: Slurm did not take the job: " +
              (sub->failure.empty() ? std::string(store::PhaseName(sub->phase)) : sub->failure));
      return;
    } else if (job_ended) {
      std::string why = JobText(agent) + " ended before the agent connected: " + job_end;
      if (sub->phase == Phase::kSucceeded) {
        why +=
            "; the agent exited 0 on its own, as remoting does when it rejects its arguments or "
            "gives up reconnecting (the job's finished event names the script's output)";
      }
      EndAgent(agent, true, "failed", why);
      return;
    } else if (now - agent.created_ms >= int64_t{agent.timeout_minutes} * 60000) {
      EndAgent(agent, true, "failed",
               fmt::format("Timeout waiting for agent to connect after {} min ({}, state {})",
                           agent.timeout_minutes, JobText(agent), StateText(agent)));
      return;
    } else {
      // counted from the submit, not from the decision: a slow node creation or submit retries
      // are not time the job spent in Slurm's queue
      const bool pending = sub && sub->phase == Phase::kPending && sub->submit_sent_at > 0;
      const int64_t waited_s = pending ? now / 1000 - sub->submit_sent_at : 0;
      if (pending && !agent.pending_warned &&
          waited_s >=
              std::chrono::duration_cast<std::chrono::seconds>(options_.pending_warning).count()) {
        agent.pending_warned = true;
        const bool no_reason = agent.state_reason.empty() || agent.state_reason == "None";
        Save(agent, "warn",
             fmt::format("{} still PENDING after {}s ({})", JobText(agent), waited_s,
                         no_reason ? "no reason given" : agent.state_reason));
      }
      return;
    }
  }

  if (agent.phase != AgentPhase::kOnline) return;
  if (job_ended) {
    EndAgent(agent, agent.builds == 0, agent.builds == 0 ? "failed" : "warn",
             JobText(agent) + " ended while its agent was online: " + job_end);
    return;
  }
  if (!node->connected()) {
    // The channel dropped (a network blip, a Jenkins restart): remoting reconnects by itself,
    // so wait the grace from the moment we saw it gone, then give the agent up.
    auto [since, fresh] = disconnected_since_.try_emplace(agent.name, now);
    if (fresh) {
      (void)store_.AppendEvent(agent.name, "warn",
                               "agent disconnected from Jenkins (" + JobText(agent) + " still " +
                                   StateText(agent) + "); waiting for it to reconnect");
    }
    if (now - since->second >=
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.reconnect_grace).count()) {
      EndAgent(agent, agent.builds == 0, "failed",
               "agent stayed disconnected from Jenkins; ending " + JobText(agent));
    }
    return;
  }
  disconnected_since_.erase(agent.name);
  const std::string current = CurrentBuild(*node);
  if (!current.empty()) {
    // Drained (DrainStartedBuilds) before the build's start is recorded: Jenkins hands the idle
    // agent the next item as soon as a short build ends, and the record's disk sync takes
    // milliseconds.
    bool drained_now = false;
    if (auto sent = calls.drains.find(agent.name); sent != calls.drains.end()) {
      const Status& drained = sent->second;
      if (drained || drained.error().code == Code::kNotFound) {
        agent.drained = drained_now = true;
      } else if (Refused(drained)) {
        TellRefusal(agent.name, "mark the node offline (it may take a second build)",
                    drained.error());
      }
    }
    if (current != agent.build_url) {
      agent.build_url = current;
      ++agent.builds;
      agent.idle_since_ms = 0;
      Save(agent, "build", "build started: " + current);
      WarnIfOutsideFolders(agent, current, snapshot);
    }
    if (drained_now) Save(agent, "drain", "node marked offline so it takes no second build");
    return;
  }
  if (current.empty() && !agent.build_url.empty()) {
    const std::string finished = agent.build_url;
    agent.build_url.clear();
    agent.idle_since_ms = now;
    Save(agent, "build", "build finished: " + finished);
  }
  // Not only right after the build's end: a daemon killed between recording that end and ending
  // the agent finds it idle with its one build done when it starts again.
  if (current.empty() && agent.idle_minutes == 0 && agent.builds > 0) {
    EndAgent(agent, false, "done", "its one build finished");
    return;
  }
  if (current.empty()) {
    if (agent.idle_since_ms == 0) agent.idle_since_ms = now;
    const int64_t idle = now - agent.idle_since_ms;
    if (agent.idle_minutes > 0 && idle >= int64_t{agent.idle_minutes} * 60000) {
      EndAgent(agent, false, "done", fmt::format("idle for {} min", agent.idle_minutes));
    } else if (agent.idle_minutes == 0 && agent.builds == 0 &&
               idle >= std::chrono::duration_cast<std::chrono::milliseconds>(
                           options_.unused_agent_limit)
                           .count()) {
      EndAgent(agent, false, "done", fmt::format("no build came for it in {}s", idle / 1000));
    }
  }
}

void Provisioner::TimeOutWithoutJenkins() {
  const int64_t now = NowMs();
  for (auto& [name, agent] : agents_) {
    if (agent.phase != AgentPhase::kLaunching || agent.connected_ms != 0) continue;
    if (now - agent.created_ms < int64_t{agent.timeout_minutes} * 60000) continue;
    if (Result<store::Submission> sub = store_.Get(agent.name); sub) {
      if (sub->job_id) agent.job_id = sub->job_id;
      agent.slurm_state = sub->slurm_state;
      agent.state_reason = sub->state_reason;
    }
    EndAgent(agent, true, "failed",
             fmt::format("Timeout waiting for agent to connect after {} min ({}, state {}); "
                         "Jenkins does not answer: the job is cancelled now, the node deleted "
                         "once Jenkins answers",
                         agent.timeout_minutes, JobText(agent), StateText(agent)));
    (void)RequestJobCancel(agent);  // if not recorded now, FinishTerminate asks again
  }
}

void Provisioner::EndAgent(Agent& agent, bool failed, const std::string& type,
                           const std::string& outcome) {
  agent.phase = AgentPhase::kTerminating;
  agent.failed = failed;
  agent.outcome = outcome;
  if (failed && agent.connected_ms == 0) {
    Backoff& b = backoff_[{agent.cloud, agent.template_name}];
    ++b.failures;
    const int64_t base =
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.backoff).count();
    const int64_t cap =
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.max_backoff).count();
    b.until_ms = NowMs() + std::min(cap, base << std::min(b.failures - 1, 20));
  }
  Save(agent, type, outcome);
}

void Provisioner::Terminate(Agent& agent, std::vector<std::string>& to_delete) {
  if (!agent.node_deleted) {
    if (agent.node_created || agent.phase == AgentPhase::kTerminating) {
      to_delete.push_back(agent.name);
      return;
    }
    agent.node_deleted = true;
  }
  FinishTerminate(agent);
}

void Provisioner::DeleteNodes(const std::vector<std::string>& names) {
  const std::vector<Status> answers = DeleteSideBySide(names);
  for (size_t i = 0; i < names.size(); ++i) {
    Agent& agent = agents_.at(names[i]);
    const Status& deleted = answers[i];
    if (Refused(deleted)) {
      // Not allowed now is not allowed next pass either: end the Slurm job anyway, and leave
      // the node (offline once its agent is gone) to whoever may delete it.
      TellRefusal(agent.name, "delete node " + agent.name, deleted.error());
    } else if (!deleted && deleted.error().code != Code::kNotFound) {
      // An agent that never connected runs no build: its job (holding a place in Slurm's queue
      // or a node) ends now, not once Jenkins lets the node go.
      if (agent.connected_ms == 0) (void)RequestJobCancel(agent);
      continue;  // next pass
    }
    agent.node_deleted = true;
    FinishTerminate(agent);
  }
}

bool Provisioner::RequestJobCancel(Agent& agent) {
  if (agent.cancel_requested) return true;
  if (ProvisionerCloud* cloud = FindCloud(agent.cloud)) {
    Status cancelled = cloud->engine->RequestCancel(agent.name);
    if (!cancelled && cancelled.error().code != Code::kNotFound) return false;
  }
  agent.cancel_requested = true;
  return true;
}

void Provisioner::FinishTerminate(Agent& agent) {
  if (!RequestJobCancel(agent)) return;  // next pass
  // The agent keeps its place in its template's and cloud's caps until its Slurm job has ended,
  // not merely been asked to: a replacement then never runs alongside the job it replaces, and
  // the engine need not order cancels before submits.
  std::string end_state;
  if (Result<store::Submission> sub = store_.Get(agent.name); sub && FindCloud(agent.cloud)) {
    if (!store::IsTerminal(sub->phase)) return;  // next pass
    end_state = sub->slurm_state;
  } else if (!sub && sub.error().code != Code::kNotFound && FindCloud(agent.cloud)) {
    return;  // the store could not say whether the job ended: next pass
  }
  agent.phase = agent.failed ? AgentPhase::kFailed : AgentPhase::kDone;
  Save(agent, "ended",
       "node deleted and " + JobText(agent) + " ended" +
           (end_state.empty() ? "" : " (" + end_state + ")") + ": " + agent.outcome);
}

void Provisioner::DeleteStrayNodes(const std::map<std::string, jenkins::Computer>& nodes) {
  std::vector<std::string> strays;
  for (const auto& [name, node] : nodes) {
    if (agents_.contains(name) || !node.description.starts_with(Marker())) continue;
    // Never cut a running build: delete it once it ended. A Pipeline block's executor stays busy
    // after its agent is gone, until the node is removed, so only a connected one is waited for.
    if (node.connected() && node.building()) continue;
    strays.push_back(name);
  }
  const std::vector<Status> answers = DeleteSideBySide(strays);
  for (size_t i = 0; i < strays.size(); ++i) {
    const std::string& name = strays[i];
    const Status& deleted = answers[i];
    if (deleted || deleted.error().code == Code::kNotFound) {
      (void)store_.AppendEvent(
          "jenkins", "deleted",
          "deleted Jenkins node " + name + ": it carries our marker but no live agent owns it");
    } else if (Refused(deleted)) {
      TellRefusal("jenkins", "delete node " + name + ", which no live agent owns", deleted.error());
    }
  }
}

void Provisioner::Run() {
  while (!stop_) {
    Tick();
    std::unique_lock lock(wake_mu_);
    wake_.wait_for(lock, options_.interval, [this] { return woken_ || stop_.load(); });
    woken_ = false;
  }
}

void Provisioner::Wake() {
  {
    std::lock_guard lock(wake_mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

void Provisioner::Stop() {
  stop_ = true;
  Wake();
}

ProvisionerStatus Provisioner::Report() const {
  std::lock_guard lock(status_mu_);
  return status_;
}

}  // namespace slurmfleet::fleet
