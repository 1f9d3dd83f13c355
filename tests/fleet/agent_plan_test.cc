#include "fleet/agent_plan.h"

#include <gtest/gtest.h>

namespace slurmfleet::fleet {
namespace {

PlanItem Item(int64_t id, std::string label, std::string folder = "") {
  auto expr = jenkins::LabelExpression::Parse(label);
  EXPECT_TRUE(expr.has_value()) << label;
  return PlanItem{id, *expr, std::move(folder)};
}

PlanTemplate Tmpl(std::string name, std::set<std::string> labels, std::optional<int> cap = {},
                  int active = 0, bool exclusive = true) {
  return PlanTemplate{std::move(name), std::move(labels), exclusive, cap, active, false};
}

PlanCloud Cloud(std::string name, int max_agents, std::vector<PlanTemplate> templates,
                std::vector<std::string> folders = {}, int active = 0) {
  return PlanCloud{std::move(name), max_agents, active, std::move(folders), std::move(templates)};
}

TEST(AgentPlanTest, OneAgentPerItemOfAServedLabel) {
  std::vector<PlanItem> items = {Item(1, "gpu"), Item(2, "gpu"), Item(3, "linux")};
  Plan plan = PlanAgents(items, {}, {Cloud("c", 10, {Tmpl("g", {"gpu", "cuda"})})});
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].item_id, 1);
  EXPECT_EQ(plan.launches[1].item_id, 2);
  EXPECT_TRUE(plan.notes.empty());  // nobody serves 'linux': not our business, no note
}

TEST(AgentPlanTest, IdleExecutorsAndStartingAgentsAreSubtracted) {
  std::vector<PlanItem> items = {Item(1, "gpu"), Item(2, "gpu"), Item(3, "gpu"), Item(4, "gpu")};
  std::vector<PlanExecutor> available = {{{"gpu", "node-a"}, false, 2},   // idle foreign node
                                         {{"cpu"}, true, 1},              // cannot take it
                                         {{"gpu", "c-g-1-0"}, true, 1}};  // ours, starting
  Plan plan = PlanAgents(items, available, {Cloud("c", 10, {Tmpl("g", {"gpu"})})});
  EXPECT_EQ(plan.served_by_existing, 3);
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].item_id, 4);
}

TEST(AgentPlanTest, InstanceCapCountsLiveAgentsAndThisPass) {
  std::vector<PlanItem> items;
  for (int i = 1; i <= 10; ++i) items.push_back(Item(i, "linux"));
  Plan plan = PlanAgents(items, {}, {Cloud("c", 100, {Tmpl("cpu", {"linux"}, 3, 1)})});
  EXPECT_EQ(plan.launches.size(), 2u);  // 1 live + 2 new = instanceCap 3
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes[0].message.find("instanceCap"), std::string::npos);
}

TEST(AgentPlanTest, ABackingOffTemplateLeavesItsItemsToTheNextOne) {
  std::vector<PlanItem> items = {Item(1, "gpu")};
  PlanTemplate broken = Tmpl("broken", {"gpu"});
  broken.backing_off = true;
  Plan alone = PlanAgents(items, {}, {Cloud("c", 10, {broken})});
  EXPECT_TRUE(alone.launches.empty());
  ASSERT_EQ(alone.notes.size(), 1u);
  EXPECT_NE(alone.notes[0].message.find("template broken of cloud c is backing off"),
            std::string::npos);
  Plan next = PlanAgents(items, {}, {Cloud("c", 10, {broken, Tmpl("spare", {"gpu"})})});
  ASSERT_EQ(next.launches.size(), 1u);
  EXPECT_EQ(next.launches[0].templ, 1u);
}

TEST(AgentPlanTest, CloudMaxAgentsCapsAllTemplates) {
  std::vector<PlanItem> items = {Item(1, "a"), Item(2, "b"), Item(3, "a")};
  Plan plan = PlanAgents(items, {}, {Cloud("c", 2, {Tmpl("ta", {"a"}), Tmpl("tb", {"b"})}, {}, 0)});
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[1].templ, 1u);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].message.find("maxAgents (2)"), std::string::npos);
}

TEST(AgentPlanTest, FallsBackToTheNextCloudWithCapacity) {
  std::vector<PlanItem> items = {Item(1, "gpu"), Item(2, "gpu"), Item(3, "gpu")};
  Plan plan = PlanAgents(
      items, {},
      {Cloud("first", 1, {Tmpl("g", {"gpu"})}), Cloud("second", 5, {Tmpl("g2", {"gpu"})})});
  ASSERT_EQ(plan.launches.size(), 3u);
  EXPECT_EQ(plan.launches[0].cloud, 0u);
  EXPECT_EQ(plan.launches[1].cloud, 1u);
  EXPECT_EQ(plan.launches[2].cloud, 1u);
  EXPECT_TRUE(plan.notes.empty());
}

TEST(AgentPlanTest, TemplateChoiceFollowsTheLabelExpression) {
  std::vector<PlanItem> items = {Item(1, "gpu && !a100"), Item(2, "(cpu || gpu) && a100"),
                                 Item(3, "x86 && !gpu")};
  Plan plan = PlanAgents(items, {},
                         {Cloud("c", 10,
                                {Tmpl("big", {"gpu", "a100"}), Tmpl("small", {"gpu", "t4"}),
                                 Tmpl("cpu", {"x86", "cpu"})})});
  ASSERT_EQ(plan.launches.size(), 3u);
  EXPECT_EQ(plan.launches[0].templ, 1u);
  EXPECT_EQ(plan.launches[1].templ, 0u);
  EXPECT_EQ(plan.launches[2].templ, 2u);
}

TEST(AgentPlanTest, UnlabelledItemsOnlyGoToNormalTemplates) {
  std::vector<PlanItem> items = {Item(1, "")};
  EXPECT_TRUE(PlanAgents(items, {}, {Cloud("c", 10, {Tmpl("x", {"a"})})}).launches.empty());
  Plan plan =
      PlanAgents(items, {}, {Cloud("c", 10, {Tmpl("x", {"a"}), Tmpl("n", {"b"}, {}, 0, false)})});
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].templ, 1u);
}

TEST(AgentPlanTest, UnknownLabelsAreNotProvisioned) {
  std::vector<PlanItem> items = {PlanItem{1, std::nullopt, ""}};
  EXPECT_TRUE(
      PlanAgents(items, {}, {Cloud("c", 10, {Tmpl("x", {"a"}, {}, 0, false)})}).launches.empty());
}

TEST(AgentPlanTest, FolderRestrictedCloudServesOnlyItsFolders) {
  std::vector<PlanItem> items = {Item(1, "gpu", "team-a/sub"), Item(2, "gpu", "team-b"),
                                 Item(3, "gpu", "")};
  Plan plan = PlanAgents(items, {}, {Cloud("restricted", 10, {Tmpl("g", {"gpu"})}, {"team-a"})});
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].item_id, 1);
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_NE(plan.notes[0].message.find("serves only the folders team-a; the job is in folder "
                                       "team-b"),
            std::string::npos);
  EXPECT_NE(plan.notes[1].message.find("no folder"), std::string::npos);

  // with a second, open cloud the skipped items go there, and nothing is noted
  Plan fallback = PlanAgents(items, {},
                             {Cloud("restricted", 10, {Tmpl("g", {"gpu"})}, {"team-a"}),
                              Cloud("open", 10, {Tmpl("g", {"gpu"})})});
  ASSERT_EQ(fallback.launches.size(), 3u);
  EXPECT_EQ(fallback.launches[1].cloud, 1u);
  EXPECT_TRUE(fallback.notes.empty());
}

TEST(AgentPlanTest, EachItemsOutcomeIsReportedInOrder) {
  std::vector<PlanItem> items = {Item(1, "gpu"), PlanItem{2, std::nullopt, ""},
                                 Item(3, "gpu"), Item(4, "arm"),
                                 Item(5, "gpu"), Item(6, "gpu", "team-b")};
  std::vector<PlanExecutor> available = {{{"gpu", "node-a"}, false, 1}};
  Plan plan = PlanAgents(
      items, available,
      {Cloud("c", 10, {Tmpl("g", {"gpu"}, 1)}), Cloud("r", 10, {Tmpl("g", {"gpu"})}, {"team-a"})});
  EXPECT_EQ(plan.outcomes,
            (std::vector<ItemOutcome>{ItemOutcome::kServedByExisting, ItemOutcome::kLabelUnknown,
                                      ItemOutcome::kLaunched, ItemOutcome::kNoTemplate,
                                      ItemOutcome::kHeldBack, ItemOutcome::kHeldBack}));
}

TEST(AgentPlanTest, FolderAllowedMatchesWholeComponents) {
  EXPECT_TRUE(FolderAllowed({}, "anything"));
  EXPECT_TRUE(FolderAllowed({"a"}, "a"));
  EXPECT_TRUE(FolderAllowed({"a"}, "a/b/c"));
  EXPECT_FALSE(FolderAllowed({"a"}, "ab"));
  EXPECT_FALSE(FolderAllowed({"a/b"}, "a"));
  EXPECT_FALSE(FolderAllowed({"a"}, ""));
}

TEST(AgentPlanTest, ManyItemsAtOnceNeverExceedCaps) {
  std::vector<PlanItem> items;
  for (int i = 0; i < 1000; ++i) items.push_back(Item(i, i % 2 ? "a" : "b"));
  Plan plan = PlanAgents(items, {}, {Cloud("c", 7, {Tmpl("ta", {"a"}, 5), Tmpl("tb", {"b"}, 5)})});
  EXPECT_EQ(plan.launches.size(), 7u);
  int a = 0;
  for (const PlannedLaunch& l : plan.launches) a += l.templ == 0;
  EXPECT_LE(a, 5);
  EXPECT_LE(static_cast<int>(plan.launches.size()) - a, 5);
}

}  // namespace
}  // namespace slurmfleet::fleet
