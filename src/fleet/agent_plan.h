// PlanAgents: how many agents to start, and from which template of which cloud, for the items
// waiting in the Jenkins queue. Pure: values in, values out.
//
// Items are taken in queue order. Each is first matched to capacity that exists already: an idle
// executor of a connected node that takes it (any node, not only ours), then an agent of ours
// that is still starting. Only an item left over gets a new agent: from the first cloud, in
// configuration order, that may serve the item's folder and has a template whose labels satisfy
// the item's label expression and room under both the template's instanceCap and the cloud's
// maxAgents. Capacity is counted as it is handed out, so caps hold however many items arrive at
// once. This is Jenkins' "buildable − idle − starting", per label, without its hysteresis.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "jenkins/label_expression.h"

namespace slurmfleet::fleet {

struct PlanTemplate {
  std::string name;
  std::set<std::string> labels;
  bool exclusive = true;
  std::optional<int> instance_cap;  // unset: only the cloud's maxAgents
  int active = 0;                   // live agents of this template now
  bool backing_off = false;         // its last launches failed: no new agent for now
};

struct PlanCloud {
  std::string name;
  int max_agents = 0;
  int active = 0;                               // live agents of this cloud now
  std::vector<std::string> authorized_folders;  // empty: every folder
  std::vector<PlanTemplate> templates;
};

struct PlanItem {
  int64_t id = 0;
  std::optional<jenkins::LabelExpression> label;  // nullopt: the label is not known
  std::string folder;                             // "" for a top-level job
};

// Capacity that can take an item without a new agent: an idle executor, or a starting agent.
struct PlanExecutor {
  std::set<std::string> labels;  // the node's labels (its name included)
  bool exclusive = true;
  int free = 1;  // executors it still has for the queue
};

struct PlannedLaunch {
  int64_t item_id = 0;
  size_t cloud = 0;  // index into the clouds given
  size_t templ = 0;  // index into that cloud's templates
};

// Why an item that some template could serve gets no agent this pass.
struct PlanNote {
  int64_t item_id = 0;
  std::string cloud;
  std::string message;
};

// What the plan did with one item, for the debug log.
enum class ItemOutcome {
  kLabelUnknown,      // its label could not be learned: left alone
  kServedByExisting,  // an idle executor or a starting agent takes it
  kLaunched,          // a new agent (in `launches`)
  kHeldBack,          // a template serves it but a cap, back-off or folder holds it (in `notes`)
  kNoTemplate,        // no template of any cloud serves its label
};

struct Plan {
  std::vector<PlannedLaunch> launches;
  std::vector<PlanNote> notes;
  int served_by_existing = 0;         // items matched to an idle executor or a starting agent
  std::vector<ItemOutcome> outcomes;  // one per item, in the order given
};

// `folder` is under `authorized` when equal to it or inside it ("a/b" is under "a").
bool FolderAllowed(const std::vector<std::string>& authorized, const std::string& folder);

Plan PlanAgents(std::span<const PlanItem> items, std::vector<PlanExecutor> available,
                std::vector<PlanCloud> clouds);

}  // namespace slurmfleet::fleet
