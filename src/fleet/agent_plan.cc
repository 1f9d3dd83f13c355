#include "fleet/agent_plan.h"

namespace slurmfleet::fleet {
namespace {

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

bool FolderAllowed(const std::vector<std::string>& authorized, const std::string& folder) {
  if (authorized.empty()) return true;
  for (const std::string& a : authorized) {
    if (folder == a ||
        (folder.size() > a.size() && folder.starts_with(a) && folder[a.size()] == '/'))
      return true;
  }
  return false;
}

Plan PlanAgents(std::span<const PlanItem> items, std::vector<PlanExecutor> available,
                std::vector<PlanCloud> clouds) {
  Plan plan;
  for (const PlanItem& item : items) {
    if (!item.label) {
      plan.outcomes.push_back(ItemOutcome::kLabelUnknown);
      continue;
    }
    const jenkins::LabelExpression& label = *item.label;

    bool served = false;
    for (PlanExecutor& e : available) {
      if (e.free > 0 && jenkins::MatchesNode(label, e.labels, e.exclusive)) {
        --e.free;
        served = true;
        break;
      }
    }
    if (served) {
      ++plan.served_by_existing;
      plan.outcomes.push_back(ItemOutcome::kServedByExisting);
      continue;
    }

    std::vector<PlanNote> notes;
    for (size_t c = 0; c < clouds.size() && !served; ++c) {
      PlanCloud& cloud = clouds[c];
      std::optional<size_t> match;
      bool capped = false;
      std::string backing_off;
      for (size_t t = 0; t < cloud.templates.size(); ++t) {
        const PlanTemplate& tmpl = cloud.templates[t];
        if (!jenkins::MatchesNode(label, tmpl.labels, tmpl.exclusive)) continue;
        if (tmpl.backing_off) {
          backing_off = tmpl.name;
          continue;
        }
        if (tmpl.instance_cap && tmpl.active >= *tmpl.instance_cap) {
          capped = true;
          continue;
        }
        match = t;
        break;
      }
      if (!match) {
        if (!backing_off.empty()) {
          notes.push_back({item.id, cloud.name,
                           "template " + backing_off + " of cloud " + cloud.name +
                               " is backing off after failed launches"});
        } else if (capped) {
          notes.push_back({item.id, cloud.name,
                           "every template of cloud " + cloud.name + " that serves '" +
                               label.ToString() + "' is at its instanceCap"});
        }
        continue;
      }
      if (!FolderAllowed(cloud.authorized_folders, item.folder)) {
        notes.push_back(
            {item.id, cloud.name,
             "cloud " + cloud.name + " serves only the folders " + Join(cloud.authorized_folders) +
                 "; the job is in " +
                 (item.folder.empty() ? std::string("no folder") : "folder " + item.folder)});
        continue;
      }
      if (cloud.active >= cloud.max_agents) {
        notes.push_back({item.id, cloud.name,
                         "cloud " + cloud.name + " is at its maxAgents (" +
                             std::to_string(cloud.max_agents) + ")"});
        continue;
      }
      ++cloud.active;
      ++cloud.templates[*match].active;
      plan.launches.push_back({item.id, c, *match});
      served = true;
    }
    if (served) {
      plan.outcomes.push_back(ItemOutcome::kLaunched);
    } else {
      plan.outcomes.push_back(notes.empty() ? ItemOutcome::kNoTemplate : ItemOutcome::kHeldBack);
      plan.notes.insert(plan.notes.end(), notes.begin(), notes.end());
    }
  }
  return plan;
}

}  // namespace slurmfleet::fleet
