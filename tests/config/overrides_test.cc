#include "config/overrides.h"

#include <gtest/gtest.h>

namespace slurmfleet::config {
namespace {

TEST(OverridesTest, EveryBatchBackendVariableHasAKey) {
  // The TUNEPLANE_* variables of the batch backend, renamed.
  for (const char* tuneplane :
       {"SLURM_REST_URL", "SLURM_REST_API_VERSION", "SLURM_REST_USER", "SLURM_JWT_FILE",
        "SLURM_PARTITION", "SLURM_RUNTIME_PROFILE", "STORAGE_ROOT", "SLURM_STORAGE_ROOT",
        "SLURM_TLS_VERIFY", "RUNTIME_REGISTRY_FILE"}) {
    const std::string name = std::string("SLURMFLEET_") + tuneplane;
    bool found = false;
    for (const EnvironmentKey& k : EnvironmentKeys()) found = found || k.variable == name;
    EXPECT_TRUE(found) << name;
  }
}

TEST(OverridesTest, FromEnvironmentIgnoresOtherVariables) {
  std::vector<Override> o = OverridesFromEnvironment(
      {{"SLURMFLEET_CONFIG", "/etc/x.yaml"}, {"SLURMFLEET_LISTEN", "0.0.0.0:1"}, {"PATH", "/bin"}});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0], (Override{"daemon.listen", "0.0.0.0:1", "environment SLURMFLEET_LISTEN"}));
}

TEST(OverridesTest, SlurmfleetVariablesFiltersTheBlock) {
  const char* envp[] = {"PATH=/bin", "SLURMFLEET_STATE_FILE=/s.db", "SLURMFLEET_BROKEN",
                        "SLURMFLEET_X=a=b", nullptr};
  EXPECT_EQ(SlurmfleetVariables(envp),
            (std::map<std::string, std::string>{{"SLURMFLEET_STATE_FILE", "/s.db"},
                                                {"SLURMFLEET_X", "a=b"}}));
  EXPECT_TRUE(SlurmfleetVariables(nullptr).empty());
}

TEST(OverridesTest, SetFlags) {
  EXPECT_EQ(*ParseSetFlag("a.b=c=d"), (Override{"a.b", "c=d", "--set a.b=\u2026"}));
  EXPECT_EQ(*ParseSetFlag("a.b="), (Override{"a.b", "", "--set a.b=\u2026"}));
  EXPECT_FALSE(ParseSetFlag("=x"));
  // A token pasted without its PATH= is not printed back.
  Result<Override> pasted = ParseSetFlag("SECRETMARK-token");
  ASSERT_FALSE(pasted);
  EXPECT_EQ(pasted.error().where, "--set");
  EXPECT_EQ(pasted.error().ToString().find("SECRETMARK"), std::string::npos)
      << pasted.error().ToString();
  EXPECT_NE(pasted.error().message.find("has no '='"), std::string::npos);
  Result<std::vector<Override>> all = CollectOverrides({{"SLURMFLEET_LISTEN", "h:1"}}, {"x.y=1"});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].path, "daemon.listen");  // the environment first, so the flag wins
  EXPECT_EQ((*all)[1].path, "x.y");
  EXPECT_FALSE(CollectOverrides({}, {"bad"}));
}

TEST(OverridesTest, ApplyCreatesMappingsAndSelectsListElementsByName) {
  YAML::Node doc = YAML::Load(
      "jenkins:\n  clouds:\n    - slurm: {name: a, maxAgents: 1}\n    - slurm: {name: b}\n");
  ASSERT_TRUE(ApplyOverride(doc, Override{"jenkins.clouds.b.maxAgents", "7", "t"}));
  ASSERT_TRUE(ApplyOverride(doc, Override{"jenkins.clouds.0.slurm.maxAgents", "3", "t"}));
  ASSERT_TRUE(ApplyOverride(doc, Override{"daemon.listen", "h:1", "t"}));
  const YAML::Node& d = doc;
  EXPECT_EQ(d["jenkins"]["clouds"][0]["slurm"]["maxAgents"].Scalar(), "3");
  EXPECT_EQ(d["jenkins"]["clouds"][1]["slurm"]["maxAgents"].Scalar(), "7");
  EXPECT_EQ(d["jenkins"]["clouds"][1]["slurm"]["name"].Scalar(), "b");
  EXPECT_EQ(d["daemon"]["listen"].Scalar(), "h:1");
}

TEST(OverridesTest, ApplyReplacesTheCredentialSource) {
  YAML::Node doc = YAML::Load("batch: {credentials: {user: u, jwtFile: /f}}");
  ASSERT_TRUE(ApplyOverride(doc, Override{"batch.credentials.jwtEnv", "MY_JWT", "t"}));
  const YAML::Node& c = doc["batch"]["credentials"];
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c["user"].Scalar(), "u");
  EXPECT_EQ(c["jwtEnv"].Scalar(), "MY_JWT");
  EXPECT_FALSE(c["jwtFile"]);
}

TEST(OverridesTest, ApplyIntoAnEmptyDocument) {
  YAML::Node doc;
  ASSERT_TRUE(ApplyOverride(doc, Override{"daemon.stateFile", "/s", "t"}));
  const YAML::Node& d = doc;
  EXPECT_EQ(d["daemon"]["stateFile"].Scalar(), "/s");
}

TEST(OverridesTest, ApplyFailures) {
  YAML::Node doc = YAML::Load("a: {b: 1}\nl: [{name: x}]\n");
  Result<YAML::Node> r = ApplyOverride(doc, Override{"a.b.c", "1", "--set a.b.c=1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "--set a.b.c=1");
  EXPECT_FALSE(ApplyOverride(doc, Override{"l.y.k", "1", "t"}));
  EXPECT_FALSE(ApplyOverride(doc, Override{"l.5.k", "1", "t"}));
  EXPECT_FALSE(ApplyOverride(doc, Override{"a..b", "1", "t"}));
}

}  // namespace
}  // namespace slurmfleet::config
