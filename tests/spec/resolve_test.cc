#include "spec/resolve.h"

#include <gtest/gtest.h>

namespace slurmfleet::spec {
namespace {

JobTemplate Named(std::string name, std::vector<std::string> parents = {}) {
  JobTemplate t;
  t.name = std::move(name);
  t.inherit_from = std::move(parents);
  return t;
}

TEST(ResolveTest, InheritanceNearestWins) {
  JobTemplate base = Named("base");
  base.job.partition = "compute";
  base.job.cpus_per_task = 2;
  base.label = "linux";
  JobTemplate gpu = Named("gpu");
  gpu.job.partition = "gpu";
  gpu.job.tres_per_job = "gres/gpu:1";
  JobTemplate big = Named("big", {"base", "gpu"});  // gpu is listed later: wins over base
  big.job.cpus_per_task = 16;                       // the template itself wins over both
  std::vector<JobTemplate> all = {base, gpu, big};

  Result<JobTemplate> r = ResolveInheritance(all, "big");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->name, "big");
  EXPECT_EQ(r->job.partition, "gpu");
  EXPECT_EQ(r->job.cpus_per_task, 16);
  EXPECT_EQ(r->job.tres_per_job, "gres/gpu:1");
  EXPECT_EQ(r->label, "linux");
}

TEST(ResolveTest, InheritanceIsTransitive) {
  JobTemplate a = Named("a");
  a.job.qos = "high";
  JobTemplate b = Named("b", {"a"});
  JobTemplate c = Named("c", {"b"});
  std::vector<JobTemplate> all = {c, b, a};
  EXPECT_EQ(ResolveInheritance(all, "c")->job.qos, "high");
}

TEST(ResolveTest, CyclesAndUnknownParents) {
  std::vector<JobTemplate> all = {Named("a", {"b"}), Named("b", {"c"}), Named("c", {"a"})};
  Result<JobTemplate> r = ResolveInheritance(all, "a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kInvalidInput);
  EXPECT_NE(r.error().message.find("a -> b -> c -> a"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().where, "templates.c.inheritFrom");

  all = {Named("self", {"self"})};
  EXPECT_FALSE(ResolveInheritance(all, "self"));

  all = {Named("a", {"ghost"})};
  r = ResolveInheritance(all, "a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "templates.a.inheritFrom");
  EXPECT_NE(r.error().message.find("'ghost'"), std::string::npos);

  r = ResolveInheritance(all, "nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kNotFound);
}

TEST(ResolveTest, DiamondInheritanceIsNotACycle) {
  std::vector<JobTemplate> all = {Named("root"), Named("l", {"root"}), Named("r", {"root"}),
                                  Named("d", {"l", "r"})};
  EXPECT_TRUE(ResolveInheritance(all, "d"));
}

TEST(ResolveTest, DefaultsOfANativeTemplate) {
  JobTemplate t = Named("t");
  t.agent.jar_path = "/opt/agent.jar";
  t.label = "  linux   x86 ";
  Result<ResolvedTemplate> r = Finalize(t);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->mode, LaunchMode::kNative);
  EXPECT_EQ(r->java_path, "java");
  EXPECT_EQ(r->jar_path, "/opt/agent.jar");
  EXPECT_FALSE(r->download_jar);
  EXPECT_EQ(r->job.current_working_directory, "/tmp/jenkins");
  EXPECT_EQ(r->labels, (std::vector<std::string>{"linux", "x86"}));
  EXPECT_EQ(r->agent_timeout_minutes, 5);
  EXPECT_EQ(r->no_reconnect_after_minutes, 10);
  EXPECT_EQ(r->idle_minutes, 0);
  EXPECT_EQ(r->node_usage_mode, NodeUsageMode::kExclusive);
  EXPECT_FALSE(r->instance_cap);
  EXPECT_EQ(r->environment.at("PATH"), "/usr/local/bin:/usr/bin:/bin");
}

TEST(ResolveTest, NativeNeedsAJar) {
  Result<ResolvedTemplate> r = Finalize(Named("t"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "templates.t.agentLaunch.jarPath");
  JobTemplate t = Named("t");
  t.agent.download_jar = true;
  EXPECT_TRUE(Finalize(t));
}

TEST(ResolveTest, PyxisTakesPrecedenceOverNative) {
  JobTemplate t = Named("t");
  t.agent.java_path = "/opt/java";
  t.pyxis = PyxisLaunch{};
  t.pyxis->container_image = "/img.sqsh";
  Result<ResolvedTemplate> r = Finalize(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->mode, LaunchMode::kPyxis);
}

TEST(ResolveTest, ModeConflictsAndMissingPieces) {
  struct Case {
    JobTemplate t;
    std::string where;
  };
  std::vector<Case> cases;
  {
    JobTemplate t = Named("t");
    t.pyxis = PyxisLaunch{};
    cases.push_back({t, "templates.t.pyxis.containerImage"});
  }
  {
    JobTemplate t = Named("t");
    t.pyxis = PyxisLaunch{};
    t.pyxis->container_image = "i";
    t.pyxis->container_workdir = "work";
    cases.push_back({t, "templates.t.pyxis.containerWorkdir"});
  }
  {
    JobTemplate t = Named("t");
    t.apptainer = ApptainerLaunch{};
    cases.push_back({t, "templates.t.apptainer.image"});
  }
  {
    JobTemplate t = Named("t");
    t.apptainer = ApptainerLaunch{};
    t.apptainer->image = "i";
    t.pyxis = PyxisLaunch{};
    t.pyxis->container_image = "i";
    cases.push_back({t, "templates.t.apptainer"});
  }
  {
    JobTemplate t = Named("t");
    t.custom_script = "#!/bin/sh\n";
    t.pyxis = PyxisLaunch{};
    cases.push_back({t, "templates.t.customScript"});
  }
  {
    JobTemplate t = Named("t");
    t.custom_script = "echo no shebang\n";
    cases.push_back({t, "templates.t.customScript"});
  }
  {
    JobTemplate t = Named("t");
    t.agent.download_jar = true;
    t.job.current_working_directory = "relative/dir";
    cases.push_back({t, "templates.t.workingDirectory"});
  }
  for (const Case& c : cases) {
    Result<ResolvedTemplate> r = Finalize(c.t);
    ASSERT_FALSE(r) << c.where;
    EXPECT_EQ(r.error().code, Code::kInvalidInput);
    EXPECT_EQ(r.error().where, c.where) << r.error().message;
  }
}

TEST(ResolveTest, ApptainerDefaultsToTheInboundAgentLayout) {
  JobTemplate t = Named("t");
  t.apptainer = ApptainerLaunch{};
  t.apptainer->image = "/a.sif";
  Result<ResolvedTemplate> r = Finalize(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->apptainer.java_path, "/opt/java/openjdk/bin/java");
  EXPECT_EQ(r->apptainer.jar_path, "/usr/share/jenkins/agent.jar");
}

TEST(ResolveTest, LayeringCloudTemplatePipeline) {
  JobTemplate cloud;
  cloud.job.partition = "compute";
  cloud.agent.java_path = "/cloud/java";
  cloud.agent.jar_path = "/cloud/agent.jar";
  cloud.agent_timeout_minutes = 7;
  JobTemplate tmpl = Named("t");
  tmpl.agent.java_path = "/template/java";
  tmpl.job.cpus_per_task = 4;
  JobTemplate pipeline;
  pipeline.job.cpus_per_task = 32;
  pipeline.name = "ignored";
  pipeline.inherit_from = {"ignored"};
  std::vector<JobTemplate> all = {tmpl};

  Result<ResolvedTemplate> r = Resolve(cloud, all, "t", &pipeline);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->name, "t");
  EXPECT_EQ(r->job.partition, "compute");
  EXPECT_EQ(r->java_path, "/template/java");
  EXPECT_EQ(r->jar_path, "/cloud/agent.jar");
  EXPECT_EQ(r->job.cpus_per_task, 32);
  EXPECT_EQ(r->agent_timeout_minutes, 7);

  Result<ResolvedTemplate> without = Resolve(cloud, all, "t");
  ASSERT_TRUE(without);
  EXPECT_EQ(without->job.cpus_per_task, 4);
  EXPECT_FALSE(Resolve(cloud, all, "missing"));
}

// Spec: later levels override earlier ones. Where agent.jar comes from is one setting, given
// as a path or as downloadJar.
TEST(ResolveTest, TheLatestLayersAnswerToWhereTheJarComesFromWins) {
  JobTemplate downloading;
  downloading.agent.download_jar = true;
  JobTemplate pipeline;
  pipeline.agent.jar_path = "/opt/jenkins/agent.jar";
  std::vector<JobTemplate> plain = {Named("t")};
  Result<ResolvedTemplate> r = Resolve(downloading, plain, "t", &pipeline);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_FALSE(r->download_jar);
  EXPECT_EQ(r->jar_path, "/opt/jenkins/agent.jar");

  JobTemplate with_jar = Named("j");
  with_jar.agent.jar_path = "/template/agent.jar";
  std::vector<JobTemplate> jarred = {with_jar};
  Result<ResolvedTemplate> t = Resolve(downloading, jarred, "j");
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_FALSE(t->download_jar);
  EXPECT_EQ(t->jar_path, "/template/agent.jar");

  JobTemplate download_again;
  download_again.agent.download_jar = true;
  Result<ResolvedTemplate> d = Resolve(downloading, jarred, "j", &download_again);
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_TRUE(d->download_jar);

  JobTemplate child = Named("child");
  child.inherit_from = {"j"};
  child.agent.download_jar = false;  // not an answer: the parent's jar stands
  std::vector<JobTemplate> family = {with_jar, child};
  Result<ResolvedTemplate> c = Resolve(JobTemplate{}, family, "child");
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->jar_path, "/template/agent.jar");
}

// defaultPartition (on the cloud, and on a template as the plugin's template form has it) is the
// partition when no layer names one; any layer's partition wins over it.
TEST(ResolveTest, DefaultPartitionIsTheFallbackOfEveryLayer) {
  JobTemplate cloud;
  cloud.default_partition = "compute";
  cloud.agent.download_jar = true;
  JobTemplate plain = Named("plain");
  JobTemplate gpu = Named("gpu");
  gpu.default_partition = "gpu";
  JobTemplate pinned = Named("pinned");
  pinned.job.partition = "pinned";
  pinned.default_partition = "gpu";
  JobTemplate child = Named("child");
  child.inherit_from = {"gpu"};
  std::vector<JobTemplate> all = {plain, gpu, pinned, child};
  auto partition = [&](std::string_view name, const JobTemplate* pipeline = nullptr) {
    Result<ResolvedTemplate> r = Resolve(cloud, all, name, pipeline);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? r->job.partition.value_or("(none)") : "(error)";
  };
  EXPECT_EQ(partition("plain"), "compute");
  EXPECT_EQ(partition("gpu"), "gpu");
  EXPECT_EQ(partition("pinned"), "pinned");
  EXPECT_EQ(partition("child"), "gpu");
  JobTemplate pipeline;
  pipeline.job.partition = "from-pipeline";
  EXPECT_EQ(partition("gpu", &pipeline), "from-pipeline");
  EXPECT_EQ(partition("plain", &pipeline), "from-pipeline");
}

TEST(ResolveTest, ModeNames) {
  EXPECT_EQ(LaunchModeName(LaunchMode::kNative), "native");
  EXPECT_EQ(LaunchModeName(LaunchMode::kPyxis), "pyxis");
  EXPECT_EQ(LaunchModeName(LaunchMode::kApptainer), "apptainer");
  EXPECT_EQ(LaunchModeName(LaunchMode::kCustomScript), "custom");
}

}  // namespace
}  // namespace slurmfleet::spec
