#include "jenkins/model.h"

#include <gtest/gtest.h>

namespace slurmfleet::jenkins {
namespace {

QueueItem Item(std::string item_class, bool buildable, bool pending) {
  QueueItem item;
  item.item_class = std::move(item_class);
  item.buildable = buildable;
  item.pending = pending;
  return item;
}

TEST(QueueItemTest, WantsExecutorOnlyForBuildableNotPendingBuildableItems) {
  EXPECT_TRUE(Item("hudson.model.Queue$BuildableItem", true, false).WantsExecutor());
  EXPECT_FALSE(Item("hudson.model.Queue$BuildableItem", true, true).WantsExecutor());
  EXPECT_FALSE(Item("hudson.model.Queue$BuildableItem", false, false).WantsExecutor());
  EXPECT_FALSE(Item("hudson.model.Queue$WaitingItem", true, false).WantsExecutor());
  EXPECT_FALSE(Item("hudson.model.Queue$BlockedItem", true, false).WantsExecutor());
  EXPECT_FALSE(Item("", true, false).WantsExecutor());
}

std::string Folder(std::string task_url) {
  QueueItem item;
  item.task_url = std::move(task_url);
  return item.FolderPath();
}

TEST(QueueItemTest, FolderPathOfTopLevelJobIsEmpty) {
  EXPECT_EQ(Folder("http://127.0.0.1:8080/job/gpu-job/"), "");
  EXPECT_EQ(Folder("http://127.0.0.1:8080/job/gpu-job"), "");
  EXPECT_EQ(Folder(""), "");
  EXPECT_EQ(Folder("http://127.0.0.1:8080/"), "");
}

TEST(QueueItemTest, FolderPathOfNestedJobs) {
  EXPECT_EQ(Folder("http://127.0.0.1:8080/job/team-a/job/sub/job/x/"), "team-a/sub");
  EXPECT_EQ(Folder("https://ci.example/jenkins/job/team-a/job/x/"), "team-a");
  EXPECT_EQ(Folder("job/team-a/job/x/"), "team-a");  // relative
  EXPECT_EQ(Folder("http://h/view/all/job/team-a/job/x/?foo=bar"), "team-a");
}

TEST(QueueItemTest, FolderPathDecodesNames) {
  EXPECT_EQ(Folder("http://h/job/my%20team/job/caf%C3%A9/job/x/"), "my team/caf\u00e9");
  EXPECT_EQ(Folder("http://h/job/100%25/job/x/"), "100%");
  EXPECT_EQ(Folder("http://h/job/bad%zz/job/x/"), "bad%zz");
}

TEST(QueueItemTest, FolderPathOfAFolderNamedJob) {
  EXPECT_EQ(Folder("http://h/job/job/job/x/"), "job");
}

TEST(QueueItemTest, FolderPathOfPipelinePlaceholderTaskRunUrl) {
  // A node() block's task URL is the run's: the last segment is a build number.
  EXPECT_EQ(Folder("http://127.0.0.1:8080/job/f/job/p/12/"), "f");
  EXPECT_EQ(Folder("http://127.0.0.1:8080/job/p/12/"), "");
  EXPECT_EQ(Folder("job/a/job/b/job/p/7/"), "a/b");
}

TEST(ComputerTest, BuildingWhenSomeExecutorRunsABuild) {
  Computer computer;
  EXPECT_FALSE(computer.building());
  computer.executors = {Executor{}, Executor{}};
  EXPECT_FALSE(computer.building());
  computer.executors[1] = Executor{false, "http://h/job/x/1/", 1};
  EXPECT_TRUE(computer.building());
  computer.executors[1] = Executor{false, "", 0};  // busy, executable not exported yet
  EXPECT_TRUE(computer.building());
}

TEST(ComputerTest, ConnectedIffRemotePathIsSet) {
  Computer computer;
  EXPECT_FALSE(computer.connected());
  computer.absolute_remote_path = "/scratch/jenkins/n1";
  EXPECT_TRUE(computer.connected());
}

}  // namespace
}  // namespace slurmfleet::jenkins
