// Engine: the reconcile loop for one Slurm endpoint (one cloud). It compares what the store says
// we want (submissions) with what Slurm says exists, and acts idempotently:
//   - an intent is persisted as kSubmitting *before* its POST; after an unknown outcome it is
//     never sent again blindly: the job is looked up by its tag until it is found (adopted) or
//     its absence is proven by a full job list taken long enough after the POST;
//   - every tracked job is observed through ONE request per pass (jobs/state, or the full job
//     list), however many there are, plus the own GET of at most max_detail_requests jobs that
//     changed; state changes become events; a job that vanished is marked lost after a grace
//     period; a pending reason that cannot resolve fails the submission fast and cancels the job;
//   - a job carrying our instance's tag that no live submission owns is cancelled after a grace
//     period (garbage collection); jobs without our tag or of other users are never touched.
// It works from the store and Slurm, never from memory alone, so it survives restarts.
//
// Thread safety: Tick() runs on one thread (the engine's), which lends a pass's tracking request
// to a helper thread, its POSTs to one more and its cancels to a few more; AddIntent(),
// AddIntents(), SubmitNow(), RequestCancel() and Wake() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "base/kept_thread.h"
#include "base/worker_pool.h"
#include "fleet/active_submissions.h"
#include "fleet/job_phase.h"
#include "fleet/job_tag.h"
#include "slurm/client.h"
#include "store/store.h"

namespace slurmfleet::fleet {

struct EngineOptions {
  std::string cloud;                 // submissions of this cloud only
  std::string instance = "default";  // tag namespace: jobs of other instances are never touched
  std::chrono::milliseconds fast_interval{1000};   // while anything is starting or unsure
  std::chrono::milliseconds slow_interval{10000};  // when everything is steady
  std::chrono::seconds lost_grace{60};    // a tracked job missing from Slurm this long is lost
  std::chrono::seconds orphan_grace{60};  // an untracked tagged job this old is cancelled
  // After an unknown submit outcome, a job list taken this long after the POST that lacks the job
  // proves it absent. Must exceed the transport's total timeout, so a POST still in flight
  // cannot land after the proof.
  std::chrono::seconds absence_margin{45};
  // Passes normally ask only for the states of our jobs (GET jobs/state, small however busy the
  // cluster). A job whose state changed, or that has been pending a while, has its details
  // (reason, exit code, nodes) fetched by its own GET job/{id}, up to max_detail_requests jobs
  // at once; past that, and for tags (unknown submit outcomes), vanished jobs and garbage
  // collection, the full job list is taken, at least this often. A full list costs slurmctld
  // time, under its job lock, in proportion to every job in the cluster.
  std::chrono::seconds full_list_interval{30};
  size_t max_detail_requests = 16;
  // Up to this many jobs, jobs/state names them; past it (slurmctld refuses long id lists with
  // "Insane message length"), it asks for every job's state.
  size_t max_ids_per_state_query = 256;
  // A pending job's details are fetched this often: its reason may say it can never start.
  // More than max_detail_requests pending jobs are looked at by the periodic full list instead.
  std::chrono::seconds pending_check_interval{5};
  // A job seen to start (by jobs/state) has its details fetched this much later, not while
  // slurmctld is still launching it; an end is fetched at once.
  std::chrono::seconds start_details_delay{2};
  size_t max_submits_per_pass = 256;
  // Submit POSTs in flight at once (the Client must then be thread-safe; RestClient is).
  // slurmctld takes them one at a time, but a wave of agents then leaves together instead of
  // in rounds of round trips.
  size_t submit_concurrency = 16;
  FailFastPolicy fail_fast;
  // Debug lines (serve's daemon.logLevel debug): one per pass that did something or changed the
  // interval (DescribePass). Empty: off.
  std::function<void(std::string_view)> debug_log;
};

struct PassStats {
  int tracking_requests =
      0;  // tracking requests this pass: 1, or 0 (Slurm unreachable, nothing tracked)
  bool full_list = false;   // the request was the full job list (else jobs/state)
  size_t jobs_listed = 0;   // full list: the jobs slurmctld listed
  size_t jobs_parsed = 0;   // full list: of those, the ones parsed (not known by their text)
  int detail_requests = 0;  // GET job/{id} of changed or pending jobs, after jobs/state
  int submitted = 0;
  int adopted = 0;
  int state_changes = 0;
  int cancelled = 0;
  int orphans_cancelled = 0;
  std::optional<Error> slurm_error;  // the pass could not talk to Slurm

  // Nothing happened: no submit, change, cancel, detail request, full list or error.
  bool Quiet() const;
};

// One debug line for a pass of `cloud`'s engine: "cloud hpc: pass 12 ms, jobs/state of 3 tracked
// jobs, 1 detail request, 1 state change; next pass in 1000 ms".
std::string DescribePass(const std::string& cloud, const PassStats& stats, size_t tracked,
                         std::chrono::milliseconds took, std::chrono::milliseconds next);

class Engine {
 public:
  // `store` and `slurm` must outlive the engine. Loads the live submissions of `options.cloud`.
  // When the last engine of this cloud did not return from Run() (a crash, kill -9, a power
  // loss), its intents are taken as possibly sent: a mark written before a POST is not synced to
  // disk, so a power loss may have taken it. They are marked submitting, as of now, and looked up
  // by tag before any is sent again.
  static Result<std::unique_ptr<Engine>> Create(store::Store& store, slurm::Client& slurm,
                                                const Clock& clock, EngineOptions options);

  // Records an intent (key: the caller's idempotency key, or a fresh one when empty) and wakes
  // the loop. The same key with the same request returns the existing submission; with another
  // request, kConflict. kInvalidInput for a bad key.
  Result<store::Submission> AddIntent(std::string key, const std::string& kind,
                                      const std::string& owner, const slurm::JobRequest& request);

  struct Intent {
    std::string key;
    std::string kind;
    std::string owner;
    slurm::JobRequest request;
  };
  // AddIntent for many, recorded in one transaction (one disk sync) when none of the keys exists
  // yet; otherwise each is added as AddIntent does. One result per intent, in order.
  std::vector<Result<store::Submission>> AddIntents(const std::vector<Intent>& intents);

  // For a caller whose intents should leave at once: records them already marked as being
  // submitted, with the caller's own `records` (written as Store::PutRecords writes them), in ONE
  // transaction, then POSTs them all together from the calling thread, so that they never wait
  // for a pass of the loop; the loop records the outcomes in its next pass. After a crash before
  // that they are looked up by tag and resent once proven absent, as after any POST whose outcome
  // is unknown. All or nothing: on failure (kConflict when a key exists, kInvalidInput for a bad
  // key, store errors) nothing is written and nothing sent. With Sync::kProcess the transaction
  // is not synced to disk before the POSTs: only for a caller that recovers from losing it in a
  // power loss (the jobs are then orphans, cancelled after orphan_grace).
  Status SubmitNow(const std::vector<Intent>& intents,
                   std::vector<std::pair<store::Record*, std::optional<store::Event>>>& records,
                   store::Sync sync = store::Sync::kDisk);

  // Marks the submission for cancelling; the next pass cancels its job. kNotFound for an unknown
  // key.
  Status RequestCancel(const std::string& key);

  // One reconcile pass. Returns what happened; `next` says when the next pass is wanted.
  PassStats Tick();
  std::chrono::milliseconds NextInterval() const;

  // Runs passes until Stop(): sleeps NextInterval() between them, or less after Wake(). On
  // return, every write of the engine is on disk, and the next engine trusts its intents as
  // never sent.
  void Run();
  void Wake();
  void Stop();

  size_t active_count() const;
  const EngineOptions& options() const { return options_; }

 private:
  Engine(store::Store& store, slurm::Client& slurm, const Clock& clock, EngineOptions options);
  // The store's meta entry that says whether this cloud's engine returned from Run().
  std::string StoppedCleanlyMeta() const;
  // After a stop that was not clean: the loaded intents become submitting (see Create).
  Status DistrustIntents();

  // The POSTs SubmitNow sent, by key: its answer, and when it was sent (unix s).
  struct Sent {
    Result<slurm::SubmitReceipt> result;
    int64_t at = 0;
  };
  struct Arrival {
    store::Submission submission;
    std::optional<slurm::JobRequest> request;  // of an intent
  };

  int64_t Now() const;
  void TakeInbox();
  void Take(store::Submission s, std::map<std::string, Sent>& sent_now);
  // Notes `s` among the intents to send or the cancels to send when it is one, so that neither
  // needs a walk through every live submission. Called where the engine makes a submission an
  // intent, and by Take for every submission handed over (a cancel request comes that way).
  void Note(const store::Submission& s);
  bool HasNewWork() const;  // inbox_mu_ held: something to take
  // An intent's request: as handed over, else read back from the store and decoded.
  Result<slurm::JobRequest> RequestOf(const store::Submission& s);
  bool NeedFullList(int64_t now) const;
  // What a full list's job was taken to be, kept in the list's order when the client gave their
  // texts' digests: a job listed again with the same text is not read again, and a submission
  // observed from that text and left as it was is not observed again. On a big cluster nearly
  // every job is listed unchanged, and reading 10,000 jobs' records is most of a pass's work.
  struct ListedJob {
    uint64_t digest = 0;
    uint32_t job_id = 0;
    int32_t tagged = -1;    // its place in tagged_; -1: it does not carry our tag
    bool observed = false;  // a submission was observed from this text and left in `phase`
    store::Phase phase{};
  };
  bool IsAnotherJob(const store::Submission& s, const slurm::JobInfo& listed) const;
  void Track(PassStats& stats, const slurm::JobsSnapshot& snapshot, int64_t poll_started);
  // Takes a changed list's jobs in: rebuilds tagged_ and known_ids_, and fills scratch_.listed
  // and scratch_.by_id.
  void TakeList(const slurm::JobsSnapshot& snapshot);
  void FullTrack(PassStats& stats, int64_t poll_started);  // the whole job list
  void LightTrack(PassStats& stats);                       // jobs/state of our jobs
  // Ids of the jobs whose details are due now: changed, and (pending_too) pending a while.
  std::vector<uint32_t> DueDetails(int64_t now, bool pending_too) const;
  void FetchDetails(PassStats& stats);  // GET job/{id} of each, when they are few
  // A pass's observations, written in one transaction; jobs that failed fast are cancelled after.
  struct Observations {
    std::vector<std::pair<store::Submission*, std::optional<store::Event>>> changes;
    std::vector<std::pair<store::Submission*, slurm::JobRef>> stuck;
    void Record(store::Submission& s, const std::string& type, const std::string& message);
  };
  // Applies what Slurm says of `s`'s job.
  void Observe(store::Submission& s, const slurm::JobInfo& job, int64_t now, Observations& seen,
               PassStats& stats);
  void Commit(Observations& seen);
  void SubmitIntents(PassStats& stats);
  // Records what SubmitNow's POSTs answered.
  void RecordSentNow(PassStats& stats);
  // Writes POST outcomes in one transaction, or one by one to merge a concurrent cancel request.
  void SaveOutcomes(
      std::vector<std::pair<store::Submission*, std::optional<store::Event>>>& outcomes);
  // Applies a submit POST's result to `sub` and returns the event that records it.
  store::Event Outcome(store::Submission& sub, const Result<slurm::SubmitReceipt>& result,
                       PassStats& stats);
  // Runs `request` (slurmrestd calls) on `helper` and returns its answer. Meanwhile this thread
  // sends the intents (and, with kIntentsAndCancels, the cancels) that arrive, so a slow job list
  // (seconds, on a big cluster) or a round of cancels never holds them back.
  enum class Serve { kIntents, kIntentsAndCancels };
  template <typename Request>
  std::invoke_result_t<Request&> WhileServing(PassStats& stats, Serve serve, KeptThread& helper,
                                              Request request);
  void CancelRequested(PassStats& stats);
  void CollectOrphans(PassStats& stats, int64_t poll_started);
  // Forgets what orphan collection remembered of jobs a full list taken at `poll_started` settles.
  void ForgetSettledOrphans(int64_t poll_started);
  // Writes `s` with an event of `type` (none when empty), merging a concurrent cancel request.
  void Save(store::Submission& s, const std::string& type, const std::string& message);
  void Retire();

  store::Store& store_;
  slurm::Client& slurm_;
  const Clock& clock_;
  EngineOptions options_;

  // Threads kept from pass to pass. The tracking request's, and the cancels' (which
  // CancelRequested sends while a tracking request is out), each a WhileServing helper; the
  // thread that sends a pass's submit POSTs while this one records their outcomes.
  KeptThread tracking_helper_;
  KeptThread cancel_helper_;
  KeptThread submit_sender_;
  // The threads of the GETs and of the cancels sent side by side, each used from one
  // WhileServing helper at a time. Two pools: cancels are sent while the GETs are answered.
  WorkerPool detail_helpers_;
  WorkerPool cancel_helpers_;

  // Owned by the engine thread.
  ActiveSubmissions active_;
  // Keys of the submissions that were intents, or had a cancel requested, when last noted: what
  // SubmitIntents and CancelRequested look at, twice a pass each. An entry is checked against its
  // submission when used and dropped once it no longer applies.
  std::set<std::string> intent_keys_;
  std::set<std::string> cancel_keys_;
  std::optional<slurm::Seconds> cursor_;  // last_update of the last job list
  // What the last full list showed of a job carrying our tag: what adopting it or collecting it
  // as an orphan reads, not the whole record (a list can hold thousands of our jobs).
  // TakeList writes a changed job's record field by field: a field added here must be written
  // there too.
  struct TaggedJob {
    std::string key;  // the submission key its tag carries
    uint32_t job_id = 0;
    std::string sluid;
    slurm::JobState state;
    std::string state_reason;
    std::string state_description;
    std::string nodes;
    std::optional<slurm::Seconds> submit_time;

    slurm::JobInfo AsJobInfo() const;  // these fields set, the rest empty
  };
  // The last full job list: our tagged jobs sorted by key, and the ids (sorted) of the jobs it
  // held whole (ours: tagged or tracked), with the time it was asked. A key can have several jobs
  // (a POST thought lost that landed after all): each is kept, in the list's order (by id), so
  // that every duplicate is seen and collected, whatever its id. A sorted vector, not a multimap:
  // it is rebuilt at every full list, for thousands of jobs.
  std::vector<TaggedJob> tagged_;
  std::vector<uint32_t> known_ids_;
  std::vector<ListedJob> listed_;  // the last full list's jobs, in its order
  // A tagged job's place while its record is rebuilt.
  struct TagPlace {
    std::string_view key;
    uint32_t place;  // in the list
    int32_t was;     // its record's place in tagged_, -1: written from the list
    bool operator<(const TagPlace& o) const {
      return std::tie(key, place) < std::tie(o.key, o.place);
    }
  };
  // TakeList's arrays, kept from list to list: allocated anew, they would be given back by the
  // malloc_trim after each list and faulted in again at the next (~1.5 ms at 10,000 jobs).
  struct ListScratch {
    std::vector<ListedJob> listed;                     // the list being taken, in its order
    std::vector<std::pair<uint32_t, uint32_t>> by_id;  // (job id, place in the list), by id
    std::vector<char> matched;                         // listed_[i] was found in it
    std::vector<std::pair<uint64_t, uint32_t>> index;  // (digest, place in listed_), by digest
    std::vector<TagPlace> moved, written, keyed;
  };
  ListScratch scratch_;
  // Jobs observed since the last full list from their details: observed again from the next.
  // Sorted when that list comes.
  std::vector<uint32_t> observed_elsewhere_;
  // Orphan jobs already cancelled (or refused): never again. Orphan jobs whose cancel failed for
  // now: said once. Both keep only jobs the last full list showed.
  std::set<uint32_t> orphans_cancelled_;
  std::set<uint32_t> orphans_failing_;
  // Job id -> when its submission was retired (unix s). The last full list may predate its end and
  // still show it live: it is no orphan until a list taken after that says so.
  std::map<uint32_t, int64_t> retired_at_;
  int64_t full_list_at_ = 0;
  bool have_full_list_ = false;
  std::string job_user_;           // the Slurm user our jobs run as, as of the last full list
  bool full_list_wanted_ = false;  // a job vanished from jobs/state
  std::map<uint32_t, int64_t> details_due_;  // job id -> when its details are wanted (unix s)
  size_t last_full_list_jobs_ = 0;           // how many jobs the last full list held
  std::map<std::string, int64_t>
      cancel_sent_at_;  // by key: no second cancel while Slurm catches up

  // Keys added or changed by other threads, picked up at the start of a pass.
  mutable std::mutex inbox_mu_;
  std::set<std::string> inbox_;  // guarded by inbox_mu_: read back from the store
  // Submissions this engine just recorded, handed over as written (the store holds the same), so
  // a pass need not read them back and decode their requests. A key also in inbox_ changed
  // since, and is read back instead.
  std::map<std::string, Arrival> arrived_;             // guarded by inbox_mu_
  std::map<std::string, slurm::JobRequest> requests_;  // engine thread: of arrived intents
  std::map<std::string, Sent> sent_now_;               // guarded by inbox_mu_: not yet taken
  std::map<std::string, Sent> sent_;                   // engine thread: taken, not yet recorded
  std::condition_variable wake_;
  bool woken_ = false;  // guarded by inbox_mu_
  std::atomic<bool> stop_{false};
  std::atomic<size_t> active_count_{0};
};

}  // namespace slurmfleet::fleet
