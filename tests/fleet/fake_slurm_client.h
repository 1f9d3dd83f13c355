// FakeSlurmClient: a job table plus scripted failures, nothing more. Jobs change only when the
// test says so (SetState, Forget) or through Submit/Cancel.
//
// Its calls may come from several threads at once, as the engine makes them (a job list on a
// helper thread while intents are submitted, detail GETs side by side): each holds the fake's
// lock, except the while_* hooks, which run outside it so that they may wait for the engine.
// The knobs and counters below are set and read by the test between the engine's passes.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "slurm/client.h"

namespace slurmfleet::fleet {

class FakeSlurmClient final : public slurm::Client {
 public:
  explicit FakeSlurmClient(std::string user = "ci") : user_(std::move(user)) {}

  std::string_view api_version() const override { return "v0.0.45"; }
  std::string JobUser() override { return user_; }
  Result<slurm::PingReport> Ping() override { return slurm::PingReport{}; }

  Result<slurm::SubmitReceipt> Submit(const slurm::JobRequest& r) override {
    std::lock_guard lock(mu_);
    return SubmitLocked(r);
  }
  std::vector<Result<slurm::SubmitReceipt>> SubmitAll(const std::vector<slurm::JobRequest>& rs,
                                                      size_t) override {
    std::unique_lock lock(mu_);
    ++submit_all_calls;
    RunOnce(while_submitting_all, lock);
    std::vector<Result<slurm::SubmitReceipt>> results;
    for (const slurm::JobRequest& r : rs) results.push_back(SubmitLocked(r));
    return results;
  }
  Result<slurm::SubmitReceipt> SubmitHet(const std::vector<slurm::JobRequest>& c) override {
    return Submit(c.at(0));
  }

  Result<std::vector<slurm::JobInfo>> GetJob(const slurm::JobRef& ref) override {
    std::unique_lock lock(mu_);
    ++get_calls;
    RunOnce(while_getting, lock);
    for (const auto& [id, j] : jobs_) {
      if (id == ref.id || (!ref.sluid.empty() && j.sluid == ref.sluid))
        return std::vector<slurm::JobInfo>{j};
    }
    return Fail(Code::kNotFound, "no such job", "GET");
  }

  // Leaves out the jobs `keep` does not want, as RestClient does.
  Result<slurm::JobsSnapshot> JobsChangedSince(std::optional<slurm::Seconds> since,
                                               const slurm::JobFilter& keep) override {
    Result<slurm::JobsSnapshot> all = JobsChangedSince(since);
    if (all) {
      std::erase_if(all->jobs, [&](const slurm::JobInfo& j) {
        return !slurm::Wants(keep, j.job_id, j.comment);
      });
      if (digests) {
        std::lock_guard lock(mu_);
        for (const slurm::JobInfo& j : all->jobs) all->digests.push_back(DigestLocked(j));
      }
    }
    return all;
  }
  Result<slurm::JobsSnapshot> JobsChangedSince(std::optional<slurm::Seconds> since) override {
    std::unique_lock lock(mu_);
    ++list_calls;
    RunOnce(while_listing, lock);
    if (unavailable_lists > 0) {
      --unavailable_lists;
      return Fail(Code::kUnavailable, "connection refused", "GET");
    }
    slurm::JobsSnapshot s;
    s.last_update = changed_at_;
    if (since && *since >= changed_at_) {
      s.changed = false;
      return s;
    }
    for (const auto& [id, j] : jobs_) s.jobs.push_back(j);
    s.listed = s.jobs.size();
    return s;
  }
  Result<std::vector<slurm::JobStateEntry>> JobStates(const std::vector<uint32_t>& ids) override {
    std::lock_guard lock(mu_);
    return JobStatesLocked(ids);
  }
  Result<std::vector<slurm::JobStateEntry>> AllJobStates() override {
    std::lock_guard lock(mu_);
    std::vector<uint32_t> ids;
    for (const auto& [id, j] : jobs_) ids.push_back(id);
    ++all_state_calls;
    return JobStatesLocked(ids);
  }
  Result<std::vector<slurm::JobInfo>> ListJobs(std::string_view) override { return {}; }

  Status Cancel(const slurm::JobRef& ref, std::string_view) override {
    std::unique_lock lock(mu_);
    ++cancel_calls;
    RunOnce(while_cancelling, lock);
    if (unavailable_cancels > 0) {
      --unavailable_cancels;
      return Fail(Code::kUnavailable, "connection refused", "DELETE");
    }
    auto it = jobs_.find(ref.id);
    if (it == jobs_.end()) return Fail(Code::kNotFound, "no such job", "DELETE");
    if (it->second.user_name != user_)
      return Fail(Code::kRejected, "belongs to another user", "DELETE");
    auto b = it->second.state.base;
    if (b == slurm::BaseState::kPending || b == slurm::BaseState::kRunning) {
      it->second.state = slurm::ParseJobState({"CANCELLED"});
      Touch();
    }
    return {};
  }

  // --- knobs
  void SetComment(uint32_t id, std::string comment) {
    std::lock_guard lock(mu_);
    jobs_.at(id).comment = std::move(comment);
    Touch();
  }
  void SetState(uint32_t id, std::vector<std::string> state, std::string reason = "None") {
    std::lock_guard lock(mu_);
    jobs_.at(id).state = slurm::ParseJobState(state);
    jobs_.at(id).state_reason = std::move(reason);
    Touch();
  }
  // slurmctld lost its state and gave `id` to another job of the same user, untagged (or, with
  // `keep_tag`, only the SLUID reads differently).
  void ReuseId(uint32_t id, bool keep_tag = false) {
    std::lock_guard lock(mu_);
    slurm::JobInfo& job = jobs_.at(id);
    job.sluid = "s9" + job.sluid.substr(2);
    if (keep_tag) {
      Touch();
      return;
    }
    job.comment = "someone else's job";
    job.name = "other";
    job.state = slurm::ParseJobState({"RUNNING"});
    Touch();
  }
  void SetOutput(uint32_t id, std::string standard_output, std::string batch_host) {
    std::lock_guard lock(mu_);
    jobs_.at(id).standard_output = std::move(standard_output);
    jobs_.at(id).batch_host = std::move(batch_host);
    Touch();
  }
  void Forget(uint32_t id) {
    std::lock_guard lock(mu_);
    jobs_.erase(id);
    Touch();
  }
  // A job someone else (another user, or no tag) runs.
  uint32_t AddForeignJob(std::string comment, std::string user) {
    std::lock_guard lock(mu_);
    slurm::JobInfo j;
    j.job_id = next_id_++;
    j.comment = std::move(comment);
    j.user_name = std::move(user);
    j.state = slurm::ParseJobState({"RUNNING"});
    j.submit_time = now;
    jobs_[j.job_id] = j;
    Touch();
    return j.job_id;
  }
  // Read between passes, when no call is running.
  const std::map<uint32_t, slurm::JobInfo>& jobs() const { return jobs_; }
  const slurm::JobRequest& request_of(uint32_t id) const { return requests_.at(id); }
  // Advance "Slurm time" with the test's clock so snapshots change.
  void Touch() {
    if (!clock_behind) changed_at_ = std::max(changed_at_ + std::chrono::seconds(1), now);
  }
  // slurmctld failed over to a controller whose clock is behind the cursor: it stamps changes
  // with earlier times, and answers "no change" to a list asked since the cursor.
  bool clock_behind = false;

  slurm::Seconds now{std::chrono::seconds(1'800'000'000)};
  // Runs once, inside the next JobsChangedSince, before it answers (on the engine's helper
  // thread): a slow job list with something happening meanwhile.
  std::function<void()> while_listing;
  // The same, inside the next SubmitAll, before its POSTs: a wave whose last POSTs leave late.
  std::function<void()> while_submitting_all;
  // The same, inside the next Cancel: a slow cancel with intents arriving meanwhile.
  std::function<void()> while_cancelling;
  // The same, inside the next GetJob: a slow detail GET with cancels requested meanwhile.
  std::function<void()> while_getting;
  // Whether filtered lists carry digests, as RestClient's do when its memo is free.
  bool digests = true;
  int dropped_responses = 0;
  int lost_before_slurm = 0;
  int unavailable_submits = 0;
  int unavailable_lists = 0;
  int unavailable_cancels = 0;
  int reject_submits = 0;
  int submit_calls = 0, submit_all_calls = 0, list_calls = 0, state_calls = 0, all_state_calls = 0,
      cancel_calls = 0, get_calls = 0;

 private:
  // Runs a while_* hook once, outside the lock, so that it may wait for the engine.
  static void RunOnce(std::function<void()>& hook, std::unique_lock<std::mutex>& lock) {
    if (auto run = std::exchange(hook, nullptr)) {
      lock.unlock();
      run();
      lock.lock();
    }
  }
  // Equal for equal jobs and only for them, as a digest of the text they were decoded from is.
  uint64_t DigestLocked(const slurm::JobInfo& job) {
    auto [from, to] = digests_.equal_range(job.job_id);
    for (auto it = from; it != to; ++it) {
      if (it->second.first == job) return it->second.second;
    }
    digests_.emplace(job.job_id, std::pair{job, ++last_digest_});
    return last_digest_;
  }
  Result<slurm::SubmitReceipt> SubmitLocked(const slurm::JobRequest& r) {
    ++submit_calls;
    if (unavailable_submits > 0) {
      --unavailable_submits;
      return Fail(Code::kUnavailable, "connection refused", "POST");
    }
    if (reject_submits > 0) {
      --reject_submits;
      return Fail(Code::kRejected, "[2002] Invalid partition name specified", "POST");
    }
    if (lost_before_slurm > 0) {  // the request never reached slurmctld, but we cannot know
      --lost_before_slurm;
      return Fail(Code::kUnknownOutcome, "timeout", "POST");
    }
    slurm::JobInfo job;
    job.job_id = next_id_++;
    job.sluid =
        "s" + std::string(13 - std::to_string(job.job_id).size(), '0') + std::to_string(job.job_id);
    job.name = r.name;
    job.comment = r.comment;
    job.user_name = user_;
    job.state = slurm::ParseJobState({"PENDING"});
    job.state_reason = "None";
    job.submit_time = now;
    jobs_[job.job_id] = job;
    requests_[job.job_id] = r;
    Touch();
    if (dropped_responses > 0) {  // the job exists, the answer was lost
      --dropped_responses;
      return Fail(Code::kUnknownOutcome, "connection reset", "POST");
    }
    return slurm::SubmitReceipt{job.job_id, "batch", "", {}};
  }
  Result<std::vector<slurm::JobStateEntry>> JobStatesLocked(const std::vector<uint32_t>& ids) {
    ++state_calls;
    if (unavailable_lists > 0) {
      --unavailable_lists;
      return Fail(Code::kUnavailable, "connection refused", "GET");
    }
    std::vector<slurm::JobStateEntry> out;
    for (uint32_t id : ids) {
      if (auto it = jobs_.find(id); it != jobs_.end()) out.push_back({id, it->second.state});
    }
    return out;
  }

  std::mutex mu_;
  std::string user_;
  uint32_t next_id_ = 100;
  std::map<uint32_t, slurm::JobInfo> jobs_;
  std::multimap<uint32_t, std::pair<slurm::JobInfo, uint64_t>> digests_;  // every job text listed
  uint64_t last_digest_ = 0;
  std::map<uint32_t, slurm::JobRequest> requests_;
  slurm::Seconds changed_at_{std::chrono::seconds(1'800'000'000)};
};

}  // namespace slurmfleet::fleet
