// JobListStream against answers recorded from the real testbed, cut into pieces of every size
// (as curl hands them over), and against texts built to put quotes, backslashes and brackets
// where a split would go wrong.
#include "slurm/job_list_stream.h"

#include <gtest/gtest.h>

#include "slurm/fake_transport.h"

namespace slurmfleet::slurm {
namespace {

// `text` written in pieces of `piece` bytes.
Result<JobListAnswer> Stream(const Dialect& dialect, std::string_view text, size_t piece,
                             const JobFilter* keep = nullptr, JobListMemo* memo = nullptr) {
  JobListStream stream(dialect, keep, memo);
  for (size_t at = 0; at < text.size(); at += piece) stream.Write(text.substr(at, piece));
  return stream.Finish();
}

// Lists read one after another with one memo, each written over the array of the last one that
// listed jobs, or over what a failed or empty one gave back: as RestClient reads them.
class MemoLists {
 public:
  explicit MemoLists(const Dialect& dialect) : dialect_(dialect) {}

  Result<JobListAnswer> Read(std::string_view text, size_t piece, const JobFilter* keep) {
    JobListStream stream(dialect_, keep, &memo_);
    stream.Reuse(std::move(jobs_), std::move(digests_));
    stream.Reserve(64);  // room to spare, as RestClient makes
    for (size_t at = 0; at < text.size(); at += piece) stream.Write(text.substr(at, piece));
    Result<JobListAnswer> got = stream.Finish();
    if (got && got->listed > 0) {
      jobs_ = got->jobs;
      digests_ = got->digests;
    } else {
      stream.GiveBack(jobs_, digests_);
    }
    return got;
  }
  const JobListMemo& memo() const { return memo_; }

 private:
  const Dialect& dialect_;
  JobListMemo memo_;
  std::vector<JobInfo> jobs_;
  std::vector<uint64_t> digests_;
};

void ExpectSameMessages(const std::vector<SlurmMessage>& a, const std::vector<SlurmMessage>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].error_number, b[i].error_number);
    EXPECT_EQ(a[i].error, b[i].error);
    EXPECT_EQ(a[i].description, b[i].description);
    EXPECT_EQ(a[i].source, b[i].source);
  }
}

class JobListStreamRecordedTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JobListStreamRecordedTest, DecodesLikeTheWholeAnswerInPiecesOfAnySize) {
  const Dialect& dialect = *FindDialect(GetParam());
  for (const char* name : {"jobs", "job_running", "job_het", "jobs_unchanged", "job_unknown"}) {
    const std::string text = ReadTestdata(GetParam() + "/" + name + ".json");
    std::string whole = text;
    Result<JobListAnswer> expected = DecodeJobList(dialect, whole);
    ASSERT_TRUE(expected) << name << ": " << expected.error().ToString();
    for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, size_t{1000},
                         size_t{16384}, text.size()}) {
      Result<JobListAnswer> got = Stream(dialect, text, piece);
      ASSERT_TRUE(got) << name << " in pieces of " << piece << ": " << got.error().ToString();
      EXPECT_EQ(got->jobs, expected->jobs) << name << " in pieces of " << piece;
      EXPECT_EQ(got->last_update, expected->last_update) << name;
      ExpectSameMessages(got->errors, expected->errors);
      ExpectSameMessages(got->warnings, expected->warnings);
    }
    if (std::string(name) == "jobs") {
      EXPECT_FALSE(expected->jobs.empty()) << "a real list";
    }
  }
}

TEST_P(JobListStreamRecordedTest, AFilterKeepsTheJobsItWantsWholeAndOnlyThose) {
  const Dialect& dialect = *FindDialect(GetParam());
  const std::string text = ReadTestdata(GetParam() + "/jobs.json");
  std::string whole = text;
  Result<JobListAnswer> all = DecodeJobList(dialect, whole);
  ASSERT_TRUE(all) << all.error().ToString();
  // the recorder's tagged jobs, and one untagged job named by its id
  const JobFilter keep{"slurmfleet:rec", {4}};
  std::vector<JobInfo> wanted;
  for (const JobInfo& j : all->jobs) {
    if (j.comment.starts_with("slurmfleet:rec") || j.job_id == 4) wanted.push_back(j);
  }
  ASSERT_GE(wanted.size(), 2u);
  ASSERT_LT(wanted.size(), all->jobs.size()) << "the recording has jobs to leave out";
  for (size_t piece : {size_t{1}, size_t{7}, size_t{16384}, text.size()}) {
    Result<JobListAnswer> got = Stream(dialect, text, piece, &keep);
    ASSERT_TRUE(got) << "in pieces of " << piece << ": " << got.error().ToString();
    EXPECT_EQ(got->jobs, wanted) << "in pieces of " << piece;
    EXPECT_EQ(got->listed, all->jobs.size());
    EXPECT_EQ(got->last_update, all->last_update);
  }
  // wanting nothing leaves every job out, and still counts them
  const JobFilter none;
  Result<JobListAnswer> empty = Stream(dialect, text, 16384, &none);
  ASSERT_TRUE(empty) << empty.error().ToString();
  EXPECT_TRUE(empty->jobs.empty());
  EXPECT_EQ(empty->listed, all->jobs.size());
}

TEST_P(JobListStreamRecordedTest, AMemoGivesTheSameAnswerWithoutParsingAJobSentAgain) {
  const Dialect& dialect = *FindDialect(GetParam());
  const std::string text = ReadTestdata(GetParam() + "/jobs.json");
  const JobFilter keep{"slurmfleet:rec", {4}};
  Result<JobListAnswer> plain = Stream(dialect, text, 16384, &keep);
  ASSERT_TRUE(plain) << plain.error().ToString();
  MemoLists lists(dialect);
  for (int list = 0; list < 3; ++list) {
    Result<JobListAnswer> got = lists.Read(text, list == 1 ? 7 : 16384, &keep);
    ASSERT_TRUE(got) << "list " << list << ": " << got.error().ToString();
    EXPECT_EQ(got->jobs, plain->jobs) << "list " << list;
    EXPECT_EQ(got->listed, plain->listed);
    EXPECT_EQ(got->last_update, plain->last_update);
    EXPECT_EQ(got->parsed, list == 0 ? plain->listed : 0u) << "list " << list;
  }
  EXPECT_EQ(lists.memo().size(), plain->listed);
  // without the last list's jobs to take them from, the wanted ones are parsed again
  JobListMemo memo;
  ASSERT_TRUE(Stream(dialect, text, 16384, &keep, &memo));
  Result<JobListAnswer> again = Stream(dialect, text, 16384, &keep, &memo);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->jobs, plain->jobs);
  EXPECT_EQ(again->parsed, plain->jobs.size());
}

INSTANTIATE_TEST_SUITE_P(AllVersions, JobListStreamRecordedTest,
                         ::testing::Values("v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"));

const Dialect& V45() { return *FindDialect("v0.0.45"); }

TEST(JobListStreamTest, QuotesBackslashesAndBracketsInsideStringsDoNotSplit) {
  // name: a"}{[\   comment: x\\"   a key "jobs" inside a job and inside meta
  const std::string text =
      R"({"meta": {"jobs": [1, 2]}, "jobs": [ {"job_id": 7, "name": "a\"}{[\\", )"
      R"("comment": "x\\\\\"", "jobs": [], "job_state": ["PENDING"]} ,)"
      "\n  "
      R"({"job_id": 8, "name": "]],{", "job_state": ["RUNNING"]}], )"
      R"("last_update": {"set": true, "infinite": false, "number": 1800000000}, )"
      R"("errors": [], "warnings": [{"description": "a \"jobs\": [ warning", "source": "s"}]})";
  for (size_t piece = 1; piece <= text.size(); ++piece) {
    Result<JobListAnswer> got = Stream(V45(), text, piece);
    ASSERT_TRUE(got) << "pieces of " << piece << ": " << got.error().ToString();
    ASSERT_EQ(got->jobs.size(), 2u) << "pieces of " << piece;
    EXPECT_EQ(got->jobs[0].job_id, 7u);
    EXPECT_EQ(got->jobs[0].name, "a\"}{[\\");
    EXPECT_EQ(got->jobs[0].comment, "x\\\\\"");
    EXPECT_EQ(got->jobs[0].state.base, BaseState::kPending);
    EXPECT_EQ(got->jobs[1].name, "]],{");
    EXPECT_EQ(got->last_update, 1800000000u);
    ASSERT_EQ(got->warnings.size(), 1u);
    EXPECT_EQ(got->warnings[0].description, "a \"jobs\": [ warning");
  }
}

TEST(JobListStreamTest, APrettyPrintedJobEndsAtItsClosingLineWhateverItsStringsHold) {
  // As slurmrestd indents: each job's braces alone on their lines. Strings may hold braces and
  // escaped newlines followed by the job's indentation; only a raw newline ends a line.
  const std::string text =
      "{\n  \"jobs\": [\n    {\n      \"job_id\": 7,\n      \"name\": \"a}\\n    }\",\n"
      "      \"exit_code\": {\n        \"status\": [\n          \"SUCCESS\"\n        ]\n      },\n"
      "      \"job_state\": [\n        \"PENDING\"\n      ]\n    },\n    {\n"
      "      \"job_id\": 8,\n      \"job_state\": [\n        \"RUNNING\"\n      ]\n    }\n  ],\n"
      "  \"last_update\": {\n    \"set\": true,\n    \"number\": 1800000000\n  }\n}\n";
  for (size_t piece = 1; piece <= text.size(); ++piece) {
    Result<JobListAnswer> got = Stream(V45(), text, piece);
    ASSERT_TRUE(got) << "pieces of " << piece << ": " << got.error().ToString();
    ASSERT_EQ(got->jobs.size(), 2u) << "pieces of " << piece;
    EXPECT_EQ(got->jobs[0].job_id, 7u);
    EXPECT_EQ(got->jobs[0].name, "a}\n    }");
    EXPECT_EQ(got->jobs[0].state.base, BaseState::kPending);
    EXPECT_EQ(got->jobs[1].job_id, 8u);
    EXPECT_EQ(got->last_update, 1800000000u);
  }
}

TEST(JobListStreamTest, AJobThatOnlyBeginsLikePrettyPrintingIsScannedByteByByte) {
  // The opening brace alone on its line, the closing one not: the search for the closing line
  // finds nothing, and what was received is scanned again when the answer ends.
  const std::string text =
      "{\"jobs\": [\n  {\n\"job_id\": 7, \"job_state\": [\"PENDING\"]},\n  {\n\"job_id\": 8}],\n"
      "\"errors\": []}";
  for (size_t piece = 1; piece <= text.size(); ++piece) {
    Result<JobListAnswer> got = Stream(V45(), text, piece);
    ASSERT_TRUE(got) << "pieces of " << piece << ": " << got.error().ToString();
    ASSERT_EQ(got->jobs.size(), 2u) << "pieces of " << piece;
    EXPECT_EQ(got->jobs[0].job_id, 7u);
    EXPECT_EQ(got->jobs[1].job_id, 8u);
  }
}

TEST(JobListStreamTest, AnEmptyListAndAnAnswerWithoutJobs) {
  Result<JobListAnswer> empty = Stream(V45(), R"({"jobs": [], "errors": []})", 5);
  ASSERT_TRUE(empty) << empty.error().ToString();
  EXPECT_TRUE(empty->jobs.empty());
  Result<JobListAnswer> none = Stream(
      V45(), R"({"errors": [{"error_number": 2017, "error": "Invalid job id specified"}]})", 3);
  ASSERT_TRUE(none) << none.error().ToString();
  EXPECT_TRUE(none->jobs.empty());
  ASSERT_EQ(none->errors.size(), 1u);
  EXPECT_EQ(none->errors[0].error_number, 2017);
}

TEST(JobListStreamTest, NamesWhereAnAnswerIsNotWhatSlurmrestdSends) {
  Result<JobListAnswer> shape = Stream(
      V45(), R"({"jobs": [{"job_id": 1, "job_state": ["PENDING"]}, {"job_state": "RUNNING"}]})", 4);
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error().code, Code::kInternal);
  EXPECT_EQ(shape.error().where, "jobs[1].job_state");

  Result<JobListAnswer> number = Stream(V45(), R"({"jobs": [{"job_id": 1}, 42]})", 100);
  ASSERT_FALSE(number);
  EXPECT_EQ(number.error().where, "jobs[1]");
  EXPECT_NE(number.error().message.find("expected a job object"), std::string::npos);

  Result<JobListAnswer> cut = Stream(V45(), R"({"jobs": [{"job_id": 1, "name": "ab)", 100);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("ends inside a value"), std::string::npos);

  EXPECT_FALSE(Stream(V45(), "", 1));
  EXPECT_FALSE(Stream(V45(), "]", 1));
  EXPECT_FALSE(Stream(V45(), "<html>proxy error</html>", 4));
}

TEST(JobListStreamTest, AFilterReadsAJobOnlyUpToItsIdAndComment) {
  // The unwanted job's later fields are never read, so their shape does not matter; a wanted
  // job's do, and a job without a comment is read whole. Errors still name the job by its place
  // in the answer, counting those left out.
  const JobFilter keep{"slurmfleet:a:", {7}};
  Result<JobListAnswer> got = Stream(V45(),
                                     R"({"jobs": [
    {"comment": "someone else's", "job_id": 1, "job_state": "not an array"},
    {"comment": "slurmfleet:a:k1", "job_id": 2, "job_state": ["RUNNING"]},
    {"job_id": 7, "comment": "", "job_state": ["PENDING"]}]})",
                                     5, &keep);
  ASSERT_TRUE(got) << got.error().ToString();
  ASSERT_EQ(got->jobs.size(), 2u);
  EXPECT_EQ(got->jobs[0].job_id, 2u);
  EXPECT_EQ(got->jobs[0].state.base, BaseState::kRunning);
  EXPECT_EQ(got->jobs[1].job_id, 7u);
  EXPECT_EQ(got->listed, 3u);

  Result<JobListAnswer> bad = Stream(V45(),
                                     R"({"jobs": [
    {"comment": "", "job_id": 1},
    {"job_id": 3, "job_state": "not an array", "comment": ""}]})",
                                     100, &keep);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where, "jobs[1].job_state");
}

struct ListedJob {
  uint32_t id;
  std::string comment;
  std::string state = "PENDING";
  std::string reason = "JobHeldUser";
};

// A list as slurmrestd pretty-prints it.
std::string PrettyList(const std::vector<ListedJob>& jobs) {
  std::string text = "{\n  \"jobs\": [";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const ListedJob& j = jobs[i];
    text += std::string(i ? "," : "") + "\n    {\n      \"comment\": \"" + j.comment +
            "\",\n      \"job_id\": " + std::to_string(j.id) +
            ",\n      \"job_state\": [\n        \"" + j.state +
            "\"\n      ],\n      \"state_reason\": \"" + j.reason + "\"\n    }";
  }
  return text + "\n  ],\n  \"errors\": [],\n  \"warnings\": []\n}\n";
}

std::vector<uint32_t> Ids(const std::vector<JobInfo>& jobs) {
  std::vector<uint32_t> ids;
  for (const JobInfo& j : jobs) ids.push_back(j.job_id);
  return ids;
}

TEST(JobListStreamTest, AMemoParsesOnlyTheJobsWhoseTextChanged) {
  const JobFilter keep{"slurmfleet:a:", {}};
  const std::vector<ListedJob> before = {
      {1, "slurmfleet:a:k1"}, {2, "someone else's"}, {3, "slurmfleet:a:k3", "RUNNING", "None"}};
  std::vector<ListedJob> after = before;
  after[0].reason = "Priority";
  after[1].state = "RUNNING";
  after.push_back({4, "slurmfleet:a:k4"});
  for (size_t piece : {size_t{1}, size_t{13}, size_t{4096}}) {
    MemoLists lists(V45());
    ASSERT_TRUE(lists.Read(PrettyList(before), 100, &keep));
    Result<JobListAnswer> got = lists.Read(PrettyList(after), piece, &keep);
    ASSERT_TRUE(got) << got.error().ToString();
    EXPECT_EQ(Ids(got->jobs), (std::vector<uint32_t>{1, 3, 4})) << "pieces of " << piece;
    EXPECT_EQ(got->jobs[0].state_reason, "Priority");
    EXPECT_EQ(got->jobs[1].state.base, BaseState::kRunning);
    EXPECT_EQ(got->listed, 4u);
    EXPECT_EQ(got->parsed, 3u) << "jobs 1, 2 and 4; job 3 was known";
  }
}

TEST(JobListStreamTest, AJobTheMemoLeftOutIsReadWholeOnceItsIdIsWanted) {
  const std::vector<ListedJob> jobs = {{1, "slurmfleet:a:k1"}, {2, "an edited comment"}};
  MemoLists lists(V45());
  const JobFilter tagged{"slurmfleet:a:", {}};
  Result<JobListAnswer> first = lists.Read(PrettyList(jobs), 4096, &tagged);
  ASSERT_TRUE(first);
  EXPECT_EQ(Ids(first->jobs), (std::vector<uint32_t>{1}));

  const JobFilter tracked{"slurmfleet:a:", {2}};
  Result<JobListAnswer> second = lists.Read(PrettyList(jobs), 4096, &tracked);
  ASSERT_TRUE(second);
  ASSERT_EQ(Ids(second->jobs), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(second->jobs[1].comment, "an edited comment");
  EXPECT_EQ(second->jobs[1].state_reason, "JobHeldUser");
  EXPECT_EQ(second->parsed, 1u) << "job 2 only: it was read only up to its comment before";

  for (const JobFilter* keep : {&tracked, &tagged}) {
    Result<JobListAnswer> again = lists.Read(PrettyList(jobs), 4096, keep);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->jobs.size(), keep->ids.empty() ? 1u : 2u);
    EXPECT_EQ(again->parsed, 0u);
  }
}

TEST(JobListStreamTest, AMemoOutlivesAnswersThatListNoJobAndFailedOnes) {
  const JobFilter keep{"slurmfleet:a:", {}};
  const std::string list = PrettyList({{1, "slurmfleet:a:k1"}, {2, "other"}});
  MemoLists lists(V45());
  ASSERT_TRUE(lists.Read(list, 4096, &keep));
  // "nothing changed", then a list cut short after its first job
  Result<JobListAnswer> unchanged =
      lists.Read(R"({"jobs": [], "last_update": {"set": true, "number": 0}})", 4096, &keep);
  ASSERT_TRUE(unchanged);
  EXPECT_TRUE(unchanged->jobs.empty());
  EXPECT_TRUE(unchanged->digests.empty());
  ASSERT_FALSE(lists.Read(list.substr(0, list.find("\"other\"")), 4096, &keep));
  Result<JobListAnswer> got = lists.Read(list, 4096, &keep);
  ASSERT_TRUE(got);
  EXPECT_EQ(Ids(got->jobs), (std::vector<uint32_t>{1}));
  EXPECT_EQ(got->parsed, 0u);
}

TEST(JobListStreamTest, AListWithoutAFilterDoesNotUseTheMemo) {
  // an unfiltered list (the CLI's) is read once, and would only fill the memo
  JobListMemo memo;
  const std::string list = PrettyList({{1, "slurmfleet:a:k1"}, {2, "other"}});
  for (int i = 0; i < 2; ++i) {
    Result<JobListAnswer> got = Stream(V45(), list, 4096, nullptr, &memo);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->parsed, 2u);
  }
  EXPECT_EQ(memo.size(), 0u);
}

// `text` decoded with `memo`, written over `earlier` (an answer of the same memo).
Result<JobListAnswer> StreamOver(JobListAnswer earlier, std::string_view text, size_t piece,
                                 const JobFilter& keep, JobListMemo& memo) {
  JobListStream stream(V45(), &keep, &memo);
  stream.Reuse(std::move(earlier.jobs), std::move(earlier.digests));
  for (size_t at = 0; at < text.size(); at += piece) stream.Write(text.substr(at, piece));
  return stream.Finish();
}

TEST(JobListStreamTest, AListWrittenOverAnEarlierOneDecodesAsIfFresh) {
  // Jobs changed, gone, new, moved, joined before others, and wanted by id only now, in every
  // kind of next list: what is left of the earlier list at each place must never show through,
  // and a job is parsed only when its text is new to the memo.
  const JobFilter keep{"slurmfleet:a:", {5}};
  const std::vector<ListedJob> first = {
      {1, "slurmfleet:a:k1"}, {2, "someone else's"},    {3, "slurmfleet:a:k3", "RUNNING", "None"},
      {4, "slurmfleet:a:k4"}, {5, "an edited comment"}, {6, "slurmfleet:a:k6"}};
  std::vector<std::vector<ListedJob>> lists = {first};
  std::vector<ListedJob> next = first;
  next[0].reason = "Priority";   // changed in place
  next.erase(next.begin() + 2);  // the rest moves up a place
  next.push_back({7, "slurmfleet:a:k7"});
  lists.push_back(next);
  lists.push_back({first[5], first[3], first[0]});  // another order, fewer jobs
  lists.push_back(first);  // more jobs than the last list kept, jobs 3 and 5 before 4 and 6
  lists.push_back({});
  lists.push_back(first);
  const std::vector<size_t> parsed = {6, 2, 1, 3, 0, 0};
  for (size_t piece : {size_t{1}, size_t{4096}}) {
    MemoLists memo_lists(V45());
    for (size_t i = 0; i < lists.size(); ++i) {
      const std::string text = PrettyList(lists[i]);
      Result<JobListAnswer> fresh = Stream(V45(), text, 4096, &keep);
      Result<JobListAnswer> over = memo_lists.Read(text, piece, &keep);
      ASSERT_TRUE(fresh && over) << "list " << i;
      EXPECT_EQ(over->jobs, fresh->jobs) << "list " << i << ", pieces of " << piece;
      EXPECT_EQ(over->parsed, parsed[i]) << "list " << i;
      EXPECT_EQ(over->digests.size(), over->jobs.size());
    }
  }
}

TEST(JobListStreamTest, AJobSentAgainAtItsPlaceIsLeftAsItWas) {
  const JobFilter keep{"slurmfleet:a:", {}};
  std::vector<ListedJob> jobs = {{1, "slurmfleet:a:k1"}, {2, "slurmfleet:a:k2"}};
  JobListMemo memo;
  Result<JobListAnswer> first = Stream(V45(), PrettyList(jobs), 4096, &keep, &memo);
  ASSERT_TRUE(first);
  const JobInfo* array = first->jobs.data();
  // marks that unpacking or parsing a job would overwrite (a caller must never do this)
  first->jobs[0].batch_host = "left as it was";
  first->jobs[1].batch_host = "left as it was";
  jobs[1].reason = "Priority";
  Result<JobListAnswer> second = StreamOver(std::move(*first), PrettyList(jobs), 4096, keep, memo);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->jobs.data(), array) << "the array is written over";
  EXPECT_EQ(second->jobs[0].batch_host, "left as it was") << "job 1 was not even moved";
  EXPECT_EQ(second->jobs[1].batch_host, "") << "job 2 was parsed anew";
  EXPECT_EQ(second->jobs[1].state_reason, "Priority");
}

TEST(JobListStreamTest, JobsToWriteOverAreIgnoredWithoutAMemo) {
  // the digests mean nothing without the memo that made them
  JobListAnswer earlier;
  earlier.jobs.emplace_back().comment = "stale";
  earlier.digests.push_back(0);
  JobListStream stream(V45());
  stream.Reuse(std::move(earlier.jobs), std::move(earlier.digests));
  stream.Write(PrettyList({{1, "slurmfleet:a:k1"}}));
  Result<JobListAnswer> got = stream.Finish();
  ASSERT_TRUE(got);
  ASSERT_EQ(Ids(got->jobs), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(got->digests.empty());
}

TEST(JobListStreamTest, ResetForgetsAnEarlierAttempt) {
  JobListStream stream(V45());
  stream.Write(R"({"jobs": [{"job_id": 1, "job_state": ["PENDING"]}, {"job_id": 2, "na)");
  stream.Reset();
  stream.Write(R"({"jobs": [{"job_id": 3, "job_state": ["RUNNING"]}], "errors": []})");
  Result<JobListAnswer> got = stream.Finish();
  ASSERT_TRUE(got) << got.error().ToString();
  ASSERT_EQ(got->jobs.size(), 1u);
  EXPECT_EQ(got->jobs[0].job_id, 3u);
}

}  // namespace
}  // namespace slurmfleet::slurm
