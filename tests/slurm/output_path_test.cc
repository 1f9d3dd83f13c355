#include "slurm/output_path.h"

#include <gtest/gtest.h>

namespace slurmfleet::slurm {
namespace {

JobInfo Ran(uint32_t id, std::string host) {
  JobInfo j;
  j.job_id = id;
  j.batch_host = std::move(host);
  return j;
}

TEST(OutputPathTest, FillsInWhatOnlyTheNodeResolves) {
  JobInfo j = Ran(17, "n1");
  // what Slurm 24.11 answered for p-%j-%u-%N-%s-%t-%n-%J.out, and the file slurmstepd wrote
  EXPECT_EQ(CompleteOutputPath("/tmp/p-17-ci-%N-%s-%t-%n-%J.out", j),
            "/tmp/p-17-ci-n1-batch-0-0-17.out");
}

TEST(OutputPathTest, WidthsPadNumbersOnly) {
  JobInfo j = Ran(17, "n1");
  EXPECT_EQ(CompleteOutputPath("%5J %3t %2n %4N %7s", j), "00017 000 00 n1 batch");
  EXPECT_EQ(CompleteOutputPath("%1J", j), "17");           // never shortened
  EXPECT_EQ(CompleteOutputPath("%99J", j), "0000000017");  // at most 10 digits, as Slurm
  EXPECT_EQ(CompleteOutputPath("%0t", j), "0");
}

TEST(OutputPathTest, LeavesWhatSlurmctldFilledInOrCannotBeKnown) {
  JobInfo j = Ran(17, "n1");
  EXPECT_EQ(CompleteOutputPath("/tmp/slurm-17.out", j), "/tmp/slurm-17.out");
  EXPECT_EQ(CompleteOutputPath("", j), "");
  // a '%' left over from "%%", or before something that is no specifier
  EXPECT_EQ(CompleteOutputPath("/w/100%-%q-%j", j), "/w/100%-%q-%j");
  EXPECT_EQ(CompleteOutputPath("/w/a%", j), "/w/a%");
  EXPECT_EQ(CompleteOutputPath("/w/a%12", j), "/w/a%12");
  // a backslash turns Slurm's expansion off for the whole name
  EXPECT_EQ(CompleteOutputPath("/w/e\\%N-%t", j), "/w/e\\%N-%t");
}

TEST(OutputPathTest, AJobThatNeverStartedKeepsItsHostPattern) {
  JobInfo pending = Ran(17, "");
  EXPECT_EQ(CompleteOutputPath("/w/%N-%J.out", pending), "/w/%N-17.out");
}

}  // namespace
}  // namespace slurmfleet::slurm
