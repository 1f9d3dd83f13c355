#include "slurm/request_codec.h"

#include <gtest/gtest.h>

namespace slurmfleet::slurm {
namespace {

TEST(RequestCodecTest, RoundTripsEveryFieldAndSecrecy) {
  JobRequest r;
  r.script = "#!/bin/bash\necho 'quoted \"text\"'\n";
  r.name = "agent-1";
  r.comment = "c";
  r.partition = "debug";
  r.cpus_per_task = 4;
  r.memory_per_node_mb = 1024;
  r.time_limit_minutes = 60;
  r.required_nodes = {"n1"};
  r.environment = {{"PATH", "/bin", false}, {"JENKINS_SECRET", "abc", true}};
  r.hold = true;
  r.extra_fields = {{"nice", 3}};
  Result<JobRequest> back = DecodeRequest(EncodeRequest(r).value());
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, r);
}

TEST(RequestCodecTest, RejectsWhatItDidNotWrite) {
  EXPECT_FALSE(DecodeRequest("not json"));
  EXPECT_FALSE(DecodeRequest("{}"));
  Result<JobRequest> bad = DecodeRequest(R"({"job": {"cpus_per_task": "x"}})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where, "request.job.cpus_per_task");
}

}  // namespace
}  // namespace slurmfleet::slurm
