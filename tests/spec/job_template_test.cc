#include "spec/job_template.h"

#include <gtest/gtest.h>

namespace slurmfleet::spec {
namespace {

TEST(JobTemplateTest, TopWinsFieldByField) {
  JobTemplate base;
  base.name = "base";
  base.label = "linux";
  base.job.partition = "compute";
  base.job.cpus_per_task = 4;
  base.agent.java_path = "/opt/java";
  base.agent.jar_path = "/opt/agent.jar";
  base.environment = {{"A", "1"}, {"B", "2"}};
  base.job.extra = {{"nice", 1}, {"mail_type", {"END"}}};

  JobTemplate top;
  top.name = "top";
  top.inherit_from = {"base"};
  top.job.cpus_per_task = 8;
  top.agent.java_path = "/usr/bin/java";
  top.environment = {{"B", "3"}};
  top.job.extra = {{"nice", 5}};

  JobTemplate m = Overlay(base, top);
  EXPECT_EQ(m.name, "top");
  EXPECT_EQ(m.inherit_from, std::vector<std::string>{"base"});
  EXPECT_EQ(m.label, "linux");
  EXPECT_EQ(m.job.partition, "compute");
  EXPECT_EQ(m.job.cpus_per_task, 8);
  EXPECT_EQ(m.agent.java_path, "/usr/bin/java");
  EXPECT_EQ(m.agent.jar_path, "/opt/agent.jar");
  EXPECT_EQ(m.environment, (std::map<std::string, std::string>{{"A", "1"}, {"B", "3"}}));
  EXPECT_EQ(m.job.extra, (nlohmann::json{{"nice", 5}, {"mail_type", {"END"}}}));
}

TEST(JobTemplateTest, ALayersMemoryRequestReplacesAnEarlierOneInAnyForm) {
  JobTemplate per_node;
  per_node.job.memory_per_node_mb = 4096;
  JobTemplate per_cpu;
  per_cpu.job.extra = {{"memory_per_cpu", {{"set", true}, {"number", 2048}}}, {"nice", 1}};
  JobTemplate m = Overlay(per_node, per_cpu);
  EXPECT_FALSE(m.job.memory_per_node_mb);
  EXPECT_EQ(m.job.extra, per_cpu.job.extra);

  JobTemplate per_gpu;
  per_gpu.job.extra = {{"memory_per_tres", "gres/gpu:8192"}};
  m = Overlay(m, per_gpu);
  EXPECT_EQ(m.job.extra, (nlohmann::json{{"nice", 1}, {"memory_per_tres", "gres/gpu:8192"}}));

  m = Overlay(m, per_node);
  EXPECT_EQ(m.job.memory_per_node_mb, 4096u);
  EXPECT_EQ(m.job.extra, (nlohmann::json{{"nice", 1}}));

  JobTemplate no_memory;
  no_memory.job.cpus_per_task = 2;
  EXPECT_EQ(Overlay(m, no_memory).job.memory_per_node_mb, 4096u);
}

TEST(JobTemplateTest, ContainerBlocksMergeFieldByField) {
  JobTemplate base;
  base.pyxis = PyxisLaunch{};
  base.pyxis->container_image = "/a.sqsh";
  base.pyxis->container_mounts = "/data:/data";
  JobTemplate top;
  top.pyxis = PyxisLaunch{};
  top.pyxis->container_image = "/b.sqsh";
  top.pyxis->container_writable = true;
  JobTemplate m = Overlay(base, top);
  ASSERT_TRUE(m.pyxis);
  EXPECT_EQ(m.pyxis->container_image, "/b.sqsh");
  EXPECT_EQ(m.pyxis->container_mounts, "/data:/data");
  EXPECT_EQ(m.pyxis->container_writable, true);

  JobTemplate only_base = Overlay(base, JobTemplate{});
  EXPECT_EQ(only_base.pyxis, base.pyxis);
  JobTemplate only_top = Overlay(JobTemplate{}, top);
  EXPECT_EQ(only_top.pyxis, top.pyxis);

  base.apptainer = ApptainerLaunch{"/a.sif", std::vector<std::string>{"/x"}, {}, {}};
  top.apptainer = ApptainerLaunch{{}, {}, "/java", {}};
  m = Overlay(base, top);
  EXPECT_EQ(*m.apptainer, (ApptainerLaunch{"/a.sif", std::vector<std::string>{"/x"}, "/java", {}}));
}

TEST(JobTemplateTest, EmptyTopChangesNothingButTheName) {
  JobTemplate base;
  base.name = "b";
  base.job.time_limit_minutes = 60;
  base.custom_script = "#!/bin/sh\n";
  JobTemplate m = Overlay(base, JobTemplate{});
  m.name = "b";
  EXPECT_EQ(m, base);
}

}  // namespace
}  // namespace slurmfleet::spec
