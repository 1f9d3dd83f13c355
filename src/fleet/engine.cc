#include "fleet/engine.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "base/move_in_order.h"
#include "slurm/job_outcome.h"
#include "slurm/request_codec.h"

namespace slurmfleet::fleet {
namespace {

using store::Phase;

std::string NewKey() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key = "sf-";
  uint64_t a = rng(), b = rng();
  for (int i = 0; i < 16; ++i) key += kHex[(i < 8 ? a >> (i * 4) : b >> ((i - 8) * 4)) & 0xf];
  return key;
}

// A new intent of `cloud`, phase kIntent; kInvalidInput when its request cannot be stored.
Result<store::Submission> NewSubmission(const std::string& cloud, const Engine::Intent& intent) {
  Result<std::string> request = slurm::EncodeRequest(intent.request);
  if (!request) return std::unexpected(request.error());
  store::Submission s;
  s.key = intent.key;
  s.kind = intent.kind;
  s.cloud = cloud;
  s.owner = intent.owner;
  s.request_json = std::move(*request);
  s.phase = Phase::kIntent;
  return s;
}

bool NeedsAttention(const store::Submission& s) {
  switch (s.phase) {
    case Phase::kIntent:
    case Phase::kSubmitting:
    case Phase::kPending:
    case Phase::kStarting:
    case Phase::kCompleting:
      return true;
    default:
      return s.cancel_requested;
  }
}

// "state" while the job lives, then how it ended.
const char* EventTypeFor(Phase phase) {
  switch (phase) {
    case Phase::kSucceeded:
      return "finished";
    case Phase::kCancelled:
      return "cancelled";
    case Phase::kFailed:
    case Phase::kLost:
      return "failed";
    default:
      return "state";
  }
}

bool Live(const slurm::JobState& state) {
  using slurm::BaseState;
  return state.base == BaseState::kPending || state.base == BaseState::kRunning ||
         state.base == BaseState::kSuspended;
}

std::string StateText(const slurm::JobInfo& job) {
  std::string text = slurm::JobStateString(job.state);
  if (job.state.base == slurm::BaseState::kPending && !job.state_reason.empty() &&
      job.state_reason != "None") {
    text += " (" + job.state_reason + ")";
  } else if (job.state.base == slurm::BaseState::kRunning && !job.nodes.empty()) {
    text += " on " + job.nodes;
  }
  return text;
}

}  // namespace

slurm::JobInfo Engine::TaggedJob::AsJobInfo() const {
  slurm::JobInfo job;
  job.job_id = job_id;
  job.sluid = sluid;
  job.state = state;
  job.state_reason = state_reason;
  job.state_description = state_description;
  job.nodes = nodes;
  job.submit_time = submit_time;
  return job;
}

Engine::Engine(store::Store& store, slurm::Client& slurm, const Clock& clock, EngineOptions options)
    : store_(store), slurm_(slurm), clock_(clock), options_(std::move(options)) {}

Result<std::unique_ptr<Engine>> Engine::Create(store::Store& store, slurm::Client& slurm,
                                               const Clock& clock, EngineOptions options) {
  if (Status s = ValidateTagPart("instance", options.instance); !s)
    return std::unexpected(s.error());
  std::unique_ptr<Engine> engine(new Engine(store, slurm, clock, std::move(options)));
  store::ListFilter filter;
  filter.active_only = true;
  filter.cloud = engine->options_.cloud;
  filter.requests = false;  // RequestOf reads an intent's when it is sent
  Result<std::vector<store::Submission>> live = store.List(filter);
  if (!live) return std::unexpected(live.error());
  for (store::Submission& s : *live) {
    engine->Note(s);
    engine->active_.Put(std::move(s));
  }
  engine->active_count_ = engine->active_.size();
  // No entry: a first start, or one after a version that synced every mark.
  Result<std::optional<std::string>> clean = store.GetMeta(engine->StoppedCleanlyMeta());
  if (!clean) return std::unexpected(clean.error());
  if (*clean == "0") {
    if (Status distrusted = engine->DistrustIntents(); !distrusted) {
      return std::unexpected(distrusted.error());
    }
  }
  if (Status running = store.SetMeta(engine->StoppedCleanlyMeta(), "0"); !running) {
    return std::unexpected(running.error());
  }
  return engine;
}

std::string Engine::StoppedCleanlyMeta() const {
  return "engine of cloud " + options_.cloud + " stopped cleanly";
}

Status Engine::DistrustIntents() {
  std::vector<std::pair<store::Submission*, std::optional<store::Event>>> unsure;
  for (store::Submission& s : active_) {
    if (s.phase == Phase::kSubmitting) {
      // Marked before its POST, which may have left long after the mark (a large batch, a slow
      // slurmrestd) and may still land: only now is known to be after it. Absence is proven
      // relative to this time.
      s.submit_sent_at = Now();
      unsure.emplace_back(&s, std::nullopt);
      continue;
    }
    if (s.phase != Phase::kIntent) continue;
    s.phase = Phase::kSubmitting;
    // the last engine's POSTs all left before this one started
    s.submit_sent_at = Now();
    unsure.emplace_back(
        &s, store::Event{0, s.key, 0, "submitting",
                         "the last slurmfleet stopped without a clean shutdown, and it may have "
                         "sent this before its mark reached the disk: looking for the job by its "
                         "tag before sending it again"});
  }
  if (unsure.empty()) return {};
  return store_.UpdateMany(unsure);
}

int64_t Engine::Now() const { return UnixSeconds(clock_); }

Result<store::Submission> Engine::AddIntent(std::string key, const std::string& kind,
                                            const std::string& owner,
                                            const slurm::JobRequest& request) {
  if (key.empty()) key = NewKey();
  if (Status s = ValidateTagPart("submission key", key); !s) return std::unexpected(s.error());
  Result<store::Submission> fresh = NewSubmission(options_.cloud, {key, kind, owner, request});
  if (!fresh) return fresh;
  store::Submission& s = *fresh;
  if (Status added = store_.Add(s); !added) {
    if (added.error().code != Code::kConflict) return std::unexpected(added.error());
    Result<store::Submission> existing = store_.Get(key);
    if (!existing) return std::unexpected(existing.error());
    if (existing->request_json != s.request_json || existing->cloud != s.cloud) {
      return Fail(Code::kConflict,
                  "submission key '" + key + "' already exists with a different request", "key");
    }
    return existing;  // the same request again: idempotent
  }
  {
    std::lock_guard lock(inbox_mu_);
    arrived_.insert_or_assign(key, Arrival{s, request});
  }
  Wake();
  return s;
}

Status Engine::SubmitNow(
    const std::vector<Intent>& intents,
    std::vector<std::pair<store::Record*, std::optional<store::Event>>>& records,
    store::Sync sync) {
  std::vector<store::Submission> subs;
  for (const Intent& i : intents) {
    if (i.key.empty()) return Fail(Code::kInvalidInput, "an intent has no key", "submit now");
    if (Status valid = ValidateTagPart("submission key", i.key); !valid) return valid;
    Result<store::Submission> fresh = NewSubmission(options_.cloud, i);
    if (!fresh) return std::unexpected(fresh.error());
    store::Submission& s = *fresh;
    s.phase = Phase::kSubmitting;
    s.attempts = 1;
    s.submit_sent_at = Now();
    subs.push_back(std::move(s));
  }
  std::vector<store::Submission*> batch;
  for (store::Submission& s : subs) batch.push_back(&s);
  if (Status added = store_.AddMany(batch, records, sync); !added) return added;
  std::vector<slurm::JobRequest> wave;
  for (const Intent& i : intents) {
    slurm::JobRequest& request = wave.emplace_back(i.request);
    request.comment = TagComment({options_.instance, i.key}, request.comment);
  }
  std::vector<Result<slurm::SubmitReceipt>> results =
      slurm_.SubmitAll(wave, options_.submit_concurrency);
  // Taken once every POST has ended, not before the first left: with a few in flight at a time,
  // and those with a rejected token sent again, the last of a wave leave much later, and an
  // absence is proven relative to this time.
  const int64_t at = Now();
  {
    std::lock_guard lock(inbox_mu_);
    for (size_t i = 0; i < subs.size(); ++i) {
      std::string key = subs[i].key;
      sent_now_.insert_or_assign(key, Sent{std::move(results[i]), at});
      arrived_.insert_or_assign(std::move(key), Arrival{std::move(subs[i]), std::nullopt});
    }
  }
  Wake();
  return {};
}

std::vector<Result<store::Submission>> Engine::AddIntents(const std::vector<Intent>& intents) {
  std::vector<store::Submission> subs;
  for (const Intent& i : intents) {
    if (i.key.empty() || !ValidateTagPart("submission key", i.key)) break;
    Result<store::Submission> fresh = NewSubmission(options_.cloud, i);
    if (!fresh) break;
    subs.push_back(std::move(*fresh));
  }
  std::vector<Result<store::Submission>> out;
  if (subs.size() == intents.size() && !subs.empty()) {
    std::vector<store::Submission*> batch;
    for (store::Submission& s : subs) batch.push_back(&s);
    if (store_.AddMany(batch)) {
      {
        std::lock_guard lock(inbox_mu_);
        for (size_t i = 0; i < subs.size(); ++i) {
          arrived_.insert_or_assign(subs[i].key, Arrival{subs[i], intents[i].request});
        }
      }
      Wake();
      for (store::Submission& s : subs) out.emplace_back(std::move(s));
      return out;
    }
  }
  // a key exists already (a retry after a restart), or a key or request is invalid: one by one,
  // idempotently
  for (const Intent& i : intents) out.push_back(AddIntent(i.key, i.kind, i.owner, i.request));
  return out;
}

Status Engine::RequestCancel(const std::string& key) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    Result<store::Submission> s = store_.Get(key);
    if (!s) return std::unexpected(s.error());
    if (store::IsTerminal(s->phase) || s->cancel_requested) return {};
    s->cancel_requested = true;
    Status saved = store_.Update(*s, store::Event{0, key, 0, "cancel", "cancel requested"});
    if (saved) {
      {
        std::lock_guard lock(inbox_mu_);
        inbox_.insert(key);
      }
      Wake();
      return {};
    }
    if (saved.error().code != Code::kConflict) return saved;
  }
  return Fail(Code::kConflict, "submission '" + key + "' kept changing; try again", "cancel");
}

void Engine::TakeInbox() {
  std::set<std::string> keys;
  std::map<std::string, Arrival> arrived;
  std::map<std::string, Sent> sent_now;
  {
    std::lock_guard lock(inbox_mu_);
    keys.swap(inbox_);
    arrived.swap(arrived_);
    sent_now.swap(sent_now_);
  }
  for (auto& [key, a] : arrived) {
    if (keys.contains(key)) continue;  // changed since it was handed over
    if (a.request) requests_.insert_or_assign(key, std::move(*a.request));
    Take(std::move(a.submission), sent_now);
  }
  for (const std::string& key : keys) {
    Result<store::Submission> s = store_.Get(key);
    if (!s || s->cloud != options_.cloud) continue;
    Take(std::move(*s), sent_now);
  }
}

void Engine::Take(store::Submission s, std::map<std::string, Sent>& sent_now) {
  // A request is a few KB; 10,000 tracked jobs would hold tens of MB of them that are not sent
  // again. RequestOf reads an intent's back from the store when there is no decoded copy.
  std::string().swap(s.request_json);
  if (auto sent = sent_now.find(s.key); sent != sent_now.end() && s.phase == Phase::kSubmitting) {
    sent_.insert_or_assign(s.key, std::move(sent->second));
  }
  const store::Submission* known = active_.Find(s.key);
  // a handover can come after a newer copy was read back (a cancel request raced it)
  if (known && known->version > s.version) return;
  if (store::IsTerminal(s.phase)) {
    requests_.erase(s.key);
    active_.Erase(s.key);
  } else {
    Note(s);
    active_.Put(std::move(s));
  }
}

void Engine::Note(const store::Submission& s) {
  if (s.phase == Phase::kIntent) intent_keys_.insert(s.key);
  if (s.cancel_requested) cancel_keys_.insert(s.key);
}

bool Engine::HasNewWork() const { return !inbox_.empty() || !arrived_.empty(); }

Result<slurm::JobRequest> Engine::RequestOf(const store::Submission& s) {
  auto handed = requests_.find(s.key);
  if (handed == requests_.end()) {
    Result<store::Submission> stored = store_.Get(s.key);
    if (!stored) return std::unexpected(stored.error());
    return slurm::DecodeRequest(stored->request_json);
  }
  slurm::JobRequest request = std::move(handed->second);
  requests_.erase(handed);
  return request;
}

void Engine::Save(store::Submission& s, const std::string& type, const std::string& message) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::optional<store::Event> event;
    if (!type.empty()) event = store::Event{0, s.key, 0, type, message};
    Status saved = store_.Update(s, event);
    if (saved) return;
    if (saved.error().code != Code::kConflict) return;  // the store reports its own failures
    // another thread set cancel_requested: keep our fields, take theirs
    Result<store::Submission> fresh = store_.Get(s.key);
    if (!fresh) return;
    s.version = fresh->version;
    s.cancel_requested = s.cancel_requested || fresh->cancel_requested;
  }
}

bool Engine::NeedFullList(int64_t now) const {
  if (!have_full_list_) return true;
  // A full list costs slurmrestd time in proportion to every job it knows (seconds at 10,000
  // jobs): at most one per second per thousand jobs in the last one.
  const int64_t since = now - full_list_at_;
  if (since < static_cast<int64_t>(last_full_list_jobs_ / 1000)) return false;
  if (full_list_wanted_) return true;
  const int64_t pending_interval = static_cast<int64_t>(options_.pending_check_interval.count());
  const int64_t periodic = static_cast<int64_t>(options_.full_list_interval.count());
  if (since >= periodic) {
    // A full list holds slurmctld's job lock while it renders every job; taken just after one of
    // our submits, it can push that job's start to a later scheduling pass. The periodic list
    // waits while a job of ours is that young, for at most pending_check_interval.
    const bool starting =
        std::any_of(active_.begin(), active_.end(), [&](const store::Submission& s) {
          return s.phase == Phase::kPending && now - s.submit_sent_at < pending_interval;
        });
    if (!starting || since >= periodic + pending_interval) return true;
  }
  for (const store::Submission& s : active_) {
    if (s.phase == Phase::kSubmitting) return true;  // only the full list shows tags
  }
  // A few jobs' details come one by one, cheaper than every job in the cluster. Many changed
  // jobs take the full list; many pending ones have their reasons looked at by the periodic one.
  return DueDetails(now, false).size() > options_.max_detail_requests;
}

PassStats Engine::Tick() {
  PassStats stats;
  TakeInbox();
  // New intents, then cancels go out first: neither needs this pass's job list, which can keep
  // slurmrestd busy for hundreds of milliseconds on a large cluster. Intents arriving while the
  // cancels are in flight leave at once too: a wave of agents ending must not hold up the next
  // wave's POSTs. (An agent counts against its cap until its job has ended, so the order of a
  // cancel and a replacement's submit does not matter.)
  SubmitIntents(stats);
  CancelRequested(stats);
  const int64_t poll_started = Now();
  if (NeedFullList(poll_started)) {
    FullTrack(stats, poll_started);
    // the answer was tens of MB on a busy cluster and the next one is seconds away: give the
    // memory back instead of keeping it as the process's high-water mark
    malloc_trim(0);
  } else {
    LightTrack(stats);
    if (!stats.slurm_error) FetchDetails(stats);
  }
  // what tracking just proved absent goes out again in the same pass
  if (!stats.slurm_error || stats.slurm_error->code == Code::kAuth) SubmitIntents(stats);
  CancelRequested(stats);
  if (!stats.slurm_error && have_full_list_) CollectOrphans(stats, poll_started);
  Retire();
  return stats;
}

template <typename Request>
std::invoke_result_t<Request&> Engine::WhileServing(PassStats& stats, Serve serve,
                                                    KeptThread& helper, Request request) {
  std::optional<std::invoke_result_t<Request&>> answer;  // guarded by inbox_mu_
  helper.Start([&] {
    auto result = request();
    std::lock_guard lock(inbox_mu_);
    answer.emplace(std::move(result));
    wake_.notify_all();
  });
  std::unique_lock lock(inbox_mu_);
  while (true) {
    wake_.wait(lock, [&] { return answer.has_value() || HasNewWork(); });
    if (answer) break;
    lock.unlock();
    TakeInbox();
    SubmitIntents(stats);
    if (serve == Serve::kIntentsAndCancels) CancelRequested(stats);
    lock.lock();
  }
  lock.unlock();
  helper.Wait();
  return std::move(*answer);
}

void Engine::FullTrack(PassStats& stats, int64_t poll_started) {
  // Jobs submitted while the list is taken are missing from it; Track() allows for that (a job is
  // lost only when unseen for lost_grace, absent only when listed long after its POST).
  //
  // Only our instance's tagged jobs and the jobs we track are read whole: on a cluster in use most
  // jobs are other users', and each is read only up to its id and comment.
  slurm::JobFilter ours{TagPrefix(options_.instance), {}};
  // slurmctld answers "no change" by its own clock: after a fail-over to a controller whose
  // clock is behind, or a clock stepped back, it says so while jobs change. A list that is to
  // prove a job absent (an unknown submit outcome) or lost (a tracked job the last list lacked,
  // or that jobs/state or its own GET no longer found) is therefore asked for whole.
  bool whole = full_list_wanted_;  // a job vanished from jobs/state or its own GET
  for (const store::Submission& s : active_) {
    if (s.phase == Phase::kSubmitting) whole = true;
    if (!s.job_id) continue;
    ours.ids.push_back(*s.job_id);
    if (!store::IsTerminal(s.phase) &&
        !std::binary_search(known_ids_.begin(), known_ids_.end(), *s.job_id)) {
      whole = true;
    }
  }
  std::sort(ours.ids.begin(), ours.ids.end());
  const std::optional<slurm::Seconds> since = whole ? std::nullopt : cursor_;
  Result<slurm::JobsSnapshot> snapshot =
      WhileServing(stats, Serve::kIntentsAndCancels, tracking_helper_,
                   [&] { return slurm_.JobsChangedSince(since, ours); });
  if (!snapshot) {
    stats.slurm_error = snapshot.error();
    return;
  }
  if (snapshot->changed) last_full_list_jobs_ = snapshot->listed;
  job_user_ = slurm_.JobUser();
  stats.tracking_requests = 1;
  stats.full_list = true;
  stats.jobs_listed = snapshot->listed;
  stats.jobs_parsed = snapshot->parsed;
  cursor_ = snapshot->last_update;
  full_list_wanted_ = false;
  Track(stats, *snapshot, poll_started);
  ForgetSettledOrphans(poll_started);
  details_due_.clear();  // the list had every job's details
  slurm_.Recycle(std::move(*snapshot));
}

void Engine::LightTrack(PassStats& stats) {
  std::vector<uint32_t> ids;
  for (const store::Submission& s : active_) {
    if (s.job_id) ids.push_back(*s.job_id);
  }
  if (ids.empty()) return;
  // sorted id vectors, not trees: built and searched every pass, for thousands of jobs
  std::vector<uint32_t> asked = ids;
  std::sort(asked.begin(), asked.end());
  // slurmctld refuses a long id list; past a few hundred, every job's state is the cheaper ask
  Result<std::vector<slurm::JobStateEntry>> states =
      WhileServing(stats, Serve::kIntentsAndCancels, tracking_helper_, [&] {
        return ids.size() > options_.max_ids_per_state_query ? slurm_.AllJobStates()
                                                             : slurm_.JobStates(ids);
      });
  if (!states) {
    stats.slurm_error = states.error();
    return;
  }
  stats.tracking_requests = 1;
  const auto by_id = [](const slurm::JobStateEntry& a, const slurm::JobStateEntry& b) {
    return a.job_id < b.job_id;
  };
  std::sort(states->begin(), states->end(), by_id);
  // A changed job's details (reason, exit code, nodes) are fetched for the event that records
  // the change: an end at once; a start a moment later, because slurmctld is busy launching its
  // steps. A vanished job takes the full list, whose absence proves it lost after a grace.
  const int64_t now = Now();
  for (const store::Submission& s : active_) {
    // not asked: submitted during the request
    if (!s.job_id || !std::binary_search(asked.begin(), asked.end(), *s.job_id)) continue;
    auto it = std::lower_bound(states->begin(), states->end(), slurm::JobStateEntry{*s.job_id, {}},
                               by_id);
    if (it == states->end() || it->job_id != *s.job_id) {
      full_list_wanted_ = true;
      continue;
    }
    if (slurm::JobStateString(it->state) == s.slurm_state) continue;
    const int64_t due =
        Live(it->state) ? now + static_cast<int64_t>(options_.start_details_delay.count()) : now;
    auto [entry, added] = details_due_.emplace(*s.job_id, due);
    if (!added) entry->second = std::min(entry->second, due);
  }
}

std::vector<uint32_t> Engine::DueDetails(int64_t now, bool pending_too) const {
  std::vector<uint32_t> ids;
  for (const auto& [id, due] : details_due_) {
    if (due <= now) ids.push_back(id);
  }
  if (!pending_too) return ids;
  // a pending job's reason may say it can never start; one submitted moments ago has none worth
  // asking for yet, and slurmctld is busy starting it
  const int64_t pending = static_cast<int64_t>(options_.pending_check_interval.count());
  for (const store::Submission& s : active_) {
    if (s.phase != Phase::kPending || !s.job_id || details_due_.contains(*s.job_id)) continue;
    if (now - s.submit_sent_at >= pending && now - s.last_seen_at >= pending) {
      ids.push_back(*s.job_id);
    }
  }
  return ids;
}

void Engine::FetchDetails(PassStats& stats) {
  const int64_t now = Now();
  std::vector<uint32_t> ids = DueDetails(now, true);
  if (ids.size() > options_.max_detail_requests) ids = DueDetails(now, false);
  if (ids.empty() || ids.size() > options_.max_detail_requests) return;  // the full list's work
  std::vector<slurm::JobRef> refs;
  for (uint32_t id : ids) refs.push_back({id, ""});
  for (const store::Submission& s : active_) {
    for (slurm::JobRef& ref : refs) {
      if (s.job_id == ref.id) ref.sluid = s.sluid;
    }
  }
  auto answers = WhileServing(stats, Serve::kIntentsAndCancels, tracking_helper_, [this, &refs] {
    std::vector<Result<std::vector<slurm::JobInfo>>> out(refs.size());
    detail_helpers_.Run(refs.size(), options_.submit_concurrency,
                        [&](size_t i) { out[i] = slurm_.GetJob(refs[i]); });
    return out;
  });
  stats.detail_requests = static_cast<int>(refs.size());
  Observations seen;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!answers[i]) {
      if (answers[i].error().code == Code::kNotFound) {  // gone: the full list proves it lost
        details_due_.erase(refs[i].id);
        full_list_wanted_ = true;
      } else if (!stats.slurm_error) {
        stats.slurm_error = answers[i].error();
      }
      continue;
    }
    bool tracked = false;
    for (store::Submission& s : active_) {
      if (s.job_id == refs[i].id && !answers[i]->empty()) {
        Observe(s, answers[i]->front(), now, seen, stats);
        observed_elsewhere_.push_back(refs[i].id);
        tracked = true;
      }
    }
    if (!tracked) details_due_.erase(refs[i].id);  // its submission ended meanwhile
  }
  Commit(seen);
}

void Engine::TakeList(const slurm::JobsSnapshot& snapshot) {
  const size_t n = snapshot.jobs.size();
  const bool digested = snapshot.digests.size() == n;
  ListScratch& x = scratch_;
  // The last list's job with this text: looked for first after the one found before (slurmctld
  // lists its jobs in the same order each time), else by halves in an index built when needed.
  x.matched.assign(listed_.size(), 0);
  x.index.clear();
  size_t cursor = 0;
  const auto find_listed = [&](uint64_t digest) -> const ListedJob* {
    size_t at = cursor;
    if (at >= listed_.size() || listed_[at].digest != digest) {
      if (x.index.empty()) {
        for (size_t i = 0; i < listed_.size(); ++i) x.index.emplace_back(listed_[i].digest, i);
        std::sort(x.index.begin(), x.index.end());
      }
      auto it = std::lower_bound(x.index.begin(), x.index.end(),
                                 std::pair<uint64_t, uint32_t>{digest, 0});
      if (it == x.index.end() || it->first != digest) return nullptr;
      at = it->second;
    }
    if (x.matched[at]) return nullptr;
    x.matched[at] = 1;
    cursor = at + 1;
    return &listed_[at];
  };

  // Our tagged jobs by key, a key's jobs in list order. A job listed again unchanged keeps its
  // record (moved); another's is written over the record that was in its place, whose strings
  // keep their capacity.
  std::vector<TagPlace>& moved = x.moved;
  std::vector<TagPlace>& written = x.written;
  std::vector<ListedJob>& listed = x.listed;
  std::vector<std::pair<uint32_t, uint32_t>>& by_id = x.by_id;
  moved.clear();
  written.clear();
  listed.assign(n, ListedJob{});
  by_id.clear();
  for (size_t i = 0; i < n; ++i) {
    ListedJob& l = listed[i];
    const ListedJob* was = digested ? find_listed(snapshot.digests[i]) : nullptr;
    if (was) {
      l = *was;
      l.tagged = -1;
      if (was->tagged >= 0) {
        moved.push_back({tagged_[was->tagged].key, static_cast<uint32_t>(i), was->tagged});
      }
    } else {
      const slurm::JobInfo& job = snapshot.jobs[i];
      l.job_id = job.job_id;
      std::optional<JobTagView> tag = ParseTagView(job.comment);
      // Another user's job with our tag is not ours, whatever it says: never adopted in place of
      // the job a lost answer left unknown (ours would then be cancelled as its duplicate).
      const bool others =
          !job_user_.empty() && !job.user_name.empty() && job.user_name != job_user_;
      if (tag && tag->instance == options_.instance && !others) {
        written.push_back({tag->key, static_cast<uint32_t>(i), -1});
      }
    }
    if (digested) l.digest = snapshot.digests[i];
    by_id.emplace_back(l.job_id, static_cast<uint32_t>(i));
  }
  // The records moved keep their last order, which was by key and, for a key's records, by
  // place (slurmctld keeps its jobs' order from list to list): no key is compared to sort them.
  // Those written from the list are sorted, and each is put in its place by halves.
  std::sort(moved.begin(), moved.end(),
            [](const TagPlace& a, const TagPlace& b) { return a.was < b.was; });
  std::sort(written.begin(), written.end());
  std::vector<TagPlace>& keyed = x.keyed;
  keyed.clear();
  auto from = moved.begin();
  for (const TagPlace& w : written) {
    auto at = std::lower_bound(from, moved.end(), w);
    keyed.insert(keyed.end(), from, at);
    keyed.push_back(w);
    from = at;
  }
  keyed.insert(keyed.end(), from, moved.end());
  // The records taken again are moved within the kept array (they keep their order), and the
  // others written over what their places held before: no new array, whose pages would be
  // faulted in afresh after the last list's malloc_trim.
  MoveInOrder(tagged_, keyed.size(), [&](size_t k) -> int64_t { return keyed[k].was; });
  for (size_t k = 0; k < keyed.size(); ++k) {
    listed[keyed[k].place].tagged = static_cast<int32_t>(k);
    if (keyed[k].was >= 0) continue;
    TaggedJob& t = tagged_[k];
    const slurm::JobInfo& job = snapshot.jobs[keyed[k].place];
    t.key.assign(keyed[k].key);
    t.job_id = job.job_id;
    t.sluid = job.sluid;
    // a known state is read from its base and flags alone: no copy of the names it came from
    t.state.base = job.state.base;
    t.state.flags = job.state.flags;
    if (t.state.base == slurm::BaseState::kUnknown) {
      t.state.raw = job.state.raw;
    } else {
      t.state.raw.clear();
    }
    t.state_reason = job.state_reason;
    t.state_description = job.state_description;
    t.nodes = job.nodes;
    t.submit_time = job.submit_time;
  }
  std::sort(by_id.begin(), by_id.end());
  known_ids_.clear();
  known_ids_.reserve(by_id.size());
  for (const auto& [id, place] : by_id) known_ids_.push_back(id);
}

// Whether `listed`, under `s`'s job id, is another job: its SLUID differs, and it does not carry
// `s`'s tag (should the SLUIDs ever be read differently, our own job is still ours).
bool Engine::IsAnotherJob(const store::Submission& s, const slurm::JobInfo& listed) const {
  if (s.sluid.empty() || listed.sluid.empty() || listed.sluid == s.sluid) return false;
  std::optional<JobTagView> tag = ParseTagView(listed.comment);
  return !tag || tag->instance != options_.instance || tag->key != s.key;
}

void Engine::Track(PassStats& stats, const slurm::JobsSnapshot& snapshot, int64_t poll_started) {
  // (job id, place in the list), sorted by id, searched by halves: built for every job listed
  const std::vector<std::pair<uint32_t, uint32_t>>& by_id = scratch_.by_id;
  std::vector<ListedJob>& listed = scratch_.listed;
  if (snapshot.changed) {
    TakeList(snapshot);
    have_full_list_ = true;
    std::sort(observed_elsewhere_.begin(), observed_elsewhere_.end());
  }
  // an unchanged answer means the last full list still holds as of this poll
  if (have_full_list_) full_list_at_ = poll_started;

  const int64_t now = Now();
  // Every change of this pass is written in one transaction: after a full list, thousands of
  // jobs may have changed at once.
  Observations seen;
  for (store::Submission& s : active_) {
    if (s.phase == Phase::kSubmitting) {
      // Its job is the first live one with its tag, else the first: a copy that ended (a POST
      // thought lost that landed, then failed) must not decide the outcome while another runs.
      // Any other live job with the tag is a duplicate for CollectOrphans.
      const auto same_key = std::ranges::equal_range(tagged_, s.key, {}, &TaggedJob::key);
      auto found = std::ranges::find_if(same_key, [](const TaggedJob& t) { return Live(t.state); });
      if (found == same_key.end()) found = same_key.begin();
      if (found != same_key.end()) {
        const slurm::JobInfo job = found->AsJobInfo();
        s.job_id = job.job_id;
        s.sluid = job.sluid;
        s.last_seen_at = now;
        PhaseDecision d = DecidePhase(job, Phase::kPending, options_.fail_fast);
        s.phase = d.phase;
        s.failure = d.failure;
        s.slurm_state = slurm::JobStateString(job.state);
        s.state_reason = job.state_reason;
        ++stats.adopted;
        seen.Record(s, "adopted",
                    "found job " + std::to_string(job.job_id) +
                        " by its tag after an unknown submit outcome: " + StateText(job) +
                        (d.failure.empty() ? "" : ": " + d.failure));
        if (d.phase == Phase::kFailed && job.state.base == slurm::BaseState::kPending) {
          seen.stuck.emplace_back(&s, slurm::JobRef{job.job_id, job.sluid});
        }
      } else if (have_full_list_ &&
                 full_list_at_ >
                     s.submit_sent_at + static_cast<int64_t>(options_.absence_margin.count())) {
        s.phase = Phase::kIntent;
        Note(s);
        seen.Record(s, "absent",
                    "no job carries this submission's tag " +
                        std::to_string(full_list_at_ - s.submit_sent_at) +
                        " s after the POST: it never reached Slurm; submitting again");
      }
      continue;
    }
    if (!s.job_id) continue;
    if (snapshot.changed) {
      auto it =
          std::lower_bound(by_id.begin(), by_id.end(), std::pair<uint32_t, uint32_t>{*s.job_id, 0});
      if (it != by_id.end() && it->first == *s.job_id &&
          IsAnotherJob(s, snapshot.jobs[it->second])) {
        // The id now names another job: slurmctld lost its state and numbers jobs afresh. Ours
        // is gone, and what is done to this id must never reach the other job.
        s.phase = Phase::kLost;
        s.failure = "Slurm job " + std::to_string(*s.job_id) + " (SLUID " + s.sluid +
                    ") is gone: its id now names another job (SLUID " +
                    snapshot.jobs[it->second].sluid + "); slurmctld lost its state";
        ++stats.state_changes;
        seen.Record(s, "lost", s.failure);
        continue;
      }
      if (it != by_id.end() && it->first == *s.job_id) {
        ListedJob& l = listed[it->second];
        if (l.observed && l.phase == s.phase &&
            !std::binary_search(observed_elsewhere_.begin(), observed_elsewhere_.end(), l.job_id)) {
          // listed with the text it was observed from, and left as it was since: observing it
          // again would change nothing
          s.last_seen_at = now;
          details_due_.erase(l.job_id);
        } else {
          Observe(s, snapshot.jobs[it->second], now, seen, stats);
        }
        l.observed = true;
        l.phase = s.phase;
        continue;
      }
    }
    if (have_full_list_ && !std::binary_search(known_ids_.begin(), known_ids_.end(), *s.job_id) &&
        !store::IsTerminal(s.phase)) {
      int64_t last = s.last_seen_at ? s.last_seen_at : s.submit_sent_at;
      if (now - last > static_cast<int64_t>(options_.lost_grace.count())) {
        s.phase = Phase::kLost;
        s.failure = "Slurm job " + std::to_string(*s.job_id) +
                    " vanished from Slurm without a final state (last seen " +
                    std::to_string(now - last) + " s ago as " + s.slurm_state + ")";
        ++stats.state_changes;
        seen.Record(s, "lost", s.failure);
      }
    }
  }
  if (snapshot.changed) {
    // without digests, no job of the next list could be matched with this one's
    if (snapshot.digests.size() == snapshot.jobs.size()) {
      std::swap(listed_, listed);
    } else {
      listed_.clear();
    }
    observed_elsewhere_.clear();
  }
  Commit(seen);
}

void Engine::Observations::Record(store::Submission& s, const std::string& type,
                                  const std::string& message) {
  changes.emplace_back(&s, store::Event{0, s.key, 0, type, message});
}

void Engine::Observe(store::Submission& s, const slurm::JobInfo& job, int64_t now,
                     Observations& seen, PassStats& stats) {
  s.last_seen_at = now;
  details_due_.erase(job.job_id);
  PhaseDecision d = DecidePhase(job, s.phase, options_.fail_fast);
  std::string state = slurm::JobStateString(job.state);
  const bool changed =
      d.phase != s.phase || state != s.slurm_state || job.state_reason != s.state_reason;
  if (!changed) {
    if (s.sluid.empty() && !job.sluid.empty()) {  // learnt, not an event of the job's
      s.sluid = job.sluid;
      seen.changes.emplace_back(&s, std::nullopt);
    }
    return;
  }
  const bool fail_fast = d.phase == Phase::kFailed && job.state.base == slurm::BaseState::kPending;
  s.phase = d.phase;
  s.slurm_state = state;
  s.state_reason = job.state_reason;
  s.sluid = job.sluid.empty() ? s.sluid : job.sluid;
  if (!d.failure.empty()) s.failure = d.failure;
  ++stats.state_changes;
  std::string message = "Slurm job " + std::to_string(job.job_id) + ": " + StateText(job) +
                        (d.failure.empty() ? "" : ": " + d.failure);
  // a failure names the output already (DescribeOutcome); a success says where to find it
  if (s.phase == Phase::kSucceeded) {
    if (std::string where = slurm::OutputLocation(job); !where.empty()) message += "; " + where;
  }
  seen.Record(s, EventTypeFor(s.phase), message);
  if (fail_fast) seen.stuck.emplace_back(&s, slurm::JobRef{job.job_id, job.sluid});
}

void Engine::Commit(Observations& seen) {
  // What Slurm said is said again after a restart: no disk sync for it (Sync::kProcess).
  if (!seen.changes.empty() && !store_.UpdateMany(seen.changes, store::Sync::kProcess)) {
    // a cancel request raced us: write one by one, merging theirs
    for (auto& [sub, event] : seen.changes) {
      Save(*sub, event ? event->type : "", event ? event->message : "");
    }
  }
  for (auto& [sub, job] : seen.stuck) {
    // the job would wait forever: take it out of the queue
    Status cancelled = slurm_.Cancel(job);
    if (!cancelled)
      Save(*sub, "warn", "could not cancel the stuck job: " + cancelled.error().ToString());
  }
}

void Engine::CancelRequested(PassStats& stats) {
  std::vector<std::string> keys;
  std::vector<slurm::JobRef> refs;
  for (auto it = cancel_keys_.begin(); it != cancel_keys_.end();) {
    store::Submission* found = active_.Find(*it);
    if (!found || !found->cancel_requested || store::IsTerminal(found->phase)) {
      it = cancel_keys_.erase(it);
      continue;
    }
    ++it;
    store::Submission& s = *found;
    if (s.phase == Phase::kIntent) {
      s.phase = Phase::kCancelled;
      s.failure = "cancelled before it was submitted";
      Save(s, "cancelled", s.failure);
      continue;
    }
    if (!s.job_id) continue;  // kSubmitting: cancel once the job is found or proven absent
    if (s.phase == Phase::kCompleting) continue;
    auto sent = cancel_sent_at_.find(s.key);
    if (sent != cancel_sent_at_.end() && Now() - sent->second < 30) continue;
    keys.push_back(s.key);
    refs.push_back({*s.job_id, s.sluid});
  }
  if (keys.empty()) return;
  // Side by side, and on helper threads: intents arriving meanwhile are sent at once (which may
  // change active_, so the helpers see only their own copies).
  std::vector<Status> results = WhileServing(stats, Serve::kIntents, cancel_helper_, [this, &refs] {
    std::vector<Status> out(refs.size());
    cancel_helpers_.Run(refs.size(), options_.submit_concurrency,
                        [&](size_t i) { out[i] = slurm_.Cancel(refs[i]); });
    return out;
  });
  for (size_t i = 0; i < keys.size(); ++i) {
    store::Submission* found = active_.Find(keys[i]);
    if (!found) continue;
    store::Submission& s = *found;
    if (results[i]) {
      cancel_sent_at_[s.key] = Now();
      ++stats.cancelled;
    } else if (results[i].error().code == Code::kNotFound) {
      s.phase = Phase::kCancelled;
      s.failure = "cancelled; the job was already gone from Slurm";
      Save(s, "cancelled", s.failure);
    }
  }
}

void Engine::RecordSentNow(PassStats& stats) {
  std::vector<std::pair<store::Submission*, std::optional<store::Event>>> outcomes;
  for (auto& [key, sent] : sent_) {
    store::Submission* found = active_.Find(key);
    if (!found || found->phase != Phase::kSubmitting) continue;
    store::Submission& s = *found;
    s.submit_sent_at = sent.at;
    outcomes.emplace_back(&s, Outcome(s, sent.result, stats));
  }
  sent_.clear();
  if (!outcomes.empty()) SaveOutcomes(outcomes);
}

void Engine::SaveOutcomes(
    std::vector<std::pair<store::Submission*, std::optional<store::Event>>>& outcomes) {
  // Without a disk sync (Sync::kProcess), as the mark before it: if a power loss took them, the
  // next engine looks for the job by its tag (DistrustIntents), as after a lost answer.
  if (store_.UpdateMany(outcomes, store::Sync::kProcess)) return;
  // e.g. a cancel request arrived meanwhile: record one by one, merging theirs
  for (auto& [sub, event] : outcomes) Save(*sub, event->type, event->message);
}

void Engine::SubmitIntents(PassStats& stats) {
  struct Outgoing {
    store::Submission* s;
    Result<slurm::SubmitReceipt> result = Fail(Code::kInternal, "not sent");
    int64_t sent_at = 0;
  };
  std::vector<Outgoing> batch;
  std::vector<slurm::JobRequest> requests;  // batch[i]'s
  for (auto it = intent_keys_.begin();
       it != intent_keys_.end() && batch.size() < options_.max_submits_per_pass;) {
    store::Submission* found = active_.Find(*it);
    if (!found || found->phase != Phase::kIntent || found->cancel_requested) {
      it = intent_keys_.erase(it);  // a cancel request is CancelRequested's to end
      continue;
    }
    ++it;  // kept until it is no longer an intent: one the store could not read now is tried again
    store::Submission& s = *found;
    Result<slurm::JobRequest> request = RequestOf(s);
    if (!request && request.error().code == Code::kUnavailable) continue;  // store busy: retry
    if (!request) {
      s.phase = Phase::kFailed;
      s.failure = "stored request is unreadable: " + request.error().ToString();
      Save(s, "failed", s.failure);
      continue;
    }
    request->comment = TagComment({options_.instance, s.key}, request->comment);
    batch.push_back({&s});
    requests.push_back(std::move(*request));
  }
  // after the batch is chosen: one that never left is sent again a pass later, not at once
  RecordSentNow(stats);
  if (batch.empty()) return;

  // Each intent is marked kSubmitting, and written, before its POST: after a lost answer or a
  // crash we know to look before sending again. The mark is not synced to disk (Sync::kProcess):
  // a disk sync took 1.5-31 ms on the testbed, ahead of every pass's first POST. A process that
  // dies keeps it; a power loss may take it, and then the next engine, which finds that this one
  // did not stop cleanly, looks for every intent by tag first (DistrustIntents). Marks are
  // written a chunk per transaction; the sender starts on a chunk as soon as it is written, and
  // outcomes are recorded while later POSTs are in flight, so the store's work overlaps the round
  // trips instead of adding to them. The first chunk is one per POST in flight.
  const size_t first_chunk = std::max<size_t>(1, options_.submit_concurrency);
  const size_t chunk = std::max<size_t>(64, options_.submit_concurrency * 4);
  std::mutex mu;
  std::condition_variable progress;
  size_t marked = 0;                            // guarded by mu: batch[0, marked) may be sent
  bool marking_failed = false;                  // guarded by mu
  std::vector<char> sent(batch.size(), 0);      // guarded by mu: result is final
  size_t sent_count = 0;                        // guarded by mu
  std::vector<char> recorded(batch.size(), 0);  // this thread's: outcome written
  size_t recorded_count = 0;                    // this thread's
  bool sender_done = false;                     // guarded by mu
  // guarded by mu: the sent_count this thread waits for; an answer short of it wakes no one
  size_t wake_at = SIZE_MAX;
  // One thread sends them all (libcurl's multi interface in RestClient): a thread per POST in
  // flight cost more CPU, which slurmctld and slurmrestd then lacked on a small machine.
  submit_sender_.Start([&] {
    slurm_.SubmitReleased(
        requests, options_.submit_concurrency,
        [&](size_t i) {
          std::lock_guard lock(mu);
          if (i >= marked) return marking_failed ? Release::kNever : Release::kLater;
          batch[i].sent_at = Now();
          return Release::kNow;
        },
        [&](size_t i, Result<slurm::SubmitReceipt> result) {
          bool wake = false;
          {
            std::lock_guard lock(mu);
            batch[i].result = std::move(result);
            sent[i] = 1;
            wake = ++sent_count >= wake_at;
          }
          if (wake) progress.notify_all();
        });
    {
      std::lock_guard lock(mu);
      sender_done = true;
    }
    progress.notify_all();
  });

  auto record_sent = [&] {
    std::vector<size_t> ready;
    {
      std::lock_guard lock(mu);
      for (size_t i = 0; i < batch.size(); ++i) {
        if (sent[i] && !recorded[i]) ready.push_back(i);
      }
    }
    if (ready.empty()) return;
    std::vector<std::pair<store::Submission*, std::optional<store::Event>>> outcomes;
    for (size_t i : ready) {
      recorded[i] = 1;
      ++recorded_count;
      // the POST's own time, not the mark's: an absence is proven relative to it
      batch[i].s->submit_sent_at = batch[i].sent_at;
      outcomes.emplace_back(batch[i].s, Outcome(*batch[i].s, batch[i].result, stats));
    }
    SaveOutcomes(outcomes);
  };

  for (size_t begin = 0, end = 0; begin < batch.size(); begin = end) {
    end = std::min(batch.size(), begin + (begin == 0 ? first_chunk : chunk));
    std::vector<std::pair<store::Submission*, std::optional<store::Event>>> marks;
    for (size_t i = begin; i < end; ++i) {
      store::Submission& sub = *batch[i].s;
      sub.phase = Phase::kSubmitting;
      sub.attempts += 1;
      sub.submit_sent_at = Now();
      marks.emplace_back(&sub, store::Event{0, sub.key, 0, "submitting",
                                            "attempt " + std::to_string(sub.attempts)});
    }
    if (Status saved = store_.UpdateMany(marks, store::Sync::kProcess); !saved) {
      // Another thread touched one of them (a cancel request), or the store failed: send none of
      // the rest now and start them over from the store on the next pass.
      {
        std::lock_guard lock(mu);
        marking_failed = true;
      }
      progress.notify_all();
      std::lock_guard lock(inbox_mu_);
      for (size_t i = begin; i < batch.size(); ++i) inbox_.insert(batch[i].s->key);
      break;
    }
    {
      std::lock_guard lock(mu);
      marked = end;
    }
    progress.notify_all();
    record_sent();
  }
  // The rest of the outcomes, a sender's worth at a time while POSTs are in flight, so that the
  // pass goes on right after the last answer instead of writing them all then.
  while (true) {
    {
      std::unique_lock lock(mu);
      wake_at = recorded_count + first_chunk;
      progress.wait(lock, [&] { return sender_done || sent_count >= wake_at; });
      if (sender_done && recorded_count == sent_count) break;
    }
    record_sent();
  }
  submit_sender_.Wait();
}

store::Event Engine::Outcome(store::Submission& sub, const Result<slurm::SubmitReceipt>& result,
                             PassStats& stats) {
  store::Event event{0, sub.key, 0, "", ""};
  if (result) {
    sub.job_id = result->job_id;
    sub.phase = Phase::kPending;
    sub.slurm_state = "PENDING";
    sub.state_reason = "None";  // what slurmctld shows until the scheduler has looked at it
    sub.last_seen_at = Now();
    ++stats.submitted;
    event.type = "submitted";
    event.message = "Submitted Slurm job " + std::to_string(result->job_id);
    for (const std::string& w : result->warnings) event.message += "; Slurm warns: " + w;
    return event;
  }
  const Error& e = result.error();
  switch (e.code) {
    case Code::kUnknownOutcome:
      event.type = "warn";
      event.message = "submit outcome unknown (" + e.message +
                      "): looking for the job by its tag before any retry";
      break;
    case Code::kUnavailable:
    case Code::kAuth:
      // provably not accepted: it is safe to send again later
      sub.phase = Phase::kIntent;
      Note(sub);
      stats.slurm_error = e;
      event.type = "warn";
      event.message = "not submitted, will retry: " + e.ToString();
      break;
    default:
      sub.phase = Phase::kFailed;
      sub.failure = e.message;
      event.type = "failed";
      event.message = "Slurm refused the job: " + e.message;
      break;
  }
  return event;
}

void Engine::CollectOrphans(PassStats& stats, int64_t poll_started) {
  // Both are ordered by key: they are walked side by side, not searched once per job.
  auto live = active_.begin();
  for (const TaggedJob& job : tagged_) {
    const std::string& key = job.key;
    if (!Live(job.state) || orphans_cancelled_.contains(job.job_id)) continue;
    while (live != active_.end() && live->key < key) ++live;
    // A live submission's own job is never an orphan; another job with its tag is a duplicate
    // (a POST that landed after its absence was proven and it was sent again).
    if (live != active_.end() && live->key == key &&
        (!live->job_id || *live->job_id == job.job_id)) {
      continue;
    }
    if (!job.submit_time || retired_at_.contains(job.job_id)) continue;
    int64_t age = poll_started - job.submit_time->time_since_epoch().count();
    if (age < static_cast<int64_t>(options_.orphan_grace.count())) continue;
    Result<store::Submission> owner = store_.Get(key);
    // A store that cannot say whether the key is live proves no orphan: the next pass asks again.
    if (!owner && owner.error().code != Code::kNotFound) continue;
    bool duplicate = owner && owner->job_id && *owner->job_id != job.job_id;
    if (owner && !store::IsTerminal(owner->phase) && !duplicate)
      continue;  // another cloud's engine has it
    Status c = slurm_.Cancel({job.job_id, job.sluid});
    std::string why = duplicate ? "its submission's job is " + std::to_string(*owner->job_id)
                      : owner   ? "its submission is " + std::string(store::PhaseName(owner->phase))
                                : "no submission owns it";
    // Once, when it was cancelled or refused for good (another user's job): Slurm's next list
    // shows the outcome. One whose cancel may not have landed (slurmrestd unreachable, no answer)
    // is tried again at the next pass, and said once.
    const bool transient =
        !c && (c.error().code == Code::kUnavailable || c.error().code == Code::kUnknownOutcome ||
               c.error().code == Code::kAuth);
    if (!transient) orphans_cancelled_.insert(job.job_id);
    if (c) {
      ++stats.orphans_cancelled;
      (void)store_.AppendEvent(
          key, "orphan",
          "cancelled job " + std::to_string(job.job_id) + " carrying our tag: " + why);
    } else if (!transient || orphans_failing_.insert(job.job_id).second) {
      (void)store_.AppendEvent(key, "warn",
                               "could not cancel orphan job " + std::to_string(job.job_id) + ": " +
                                   c.error().ToString() + (transient ? "; trying again" : ""));
    }
  }
}

void Engine::ForgetSettledOrphans(int64_t poll_started) {
  std::erase_if(retired_at_, [&](const auto& r) { return r.second < poll_started; });
  // a job that left the list is not listed again; its id may later name a new job
  const auto gone = [&](uint32_t id) {
    return !std::binary_search(known_ids_.begin(), known_ids_.end(), id);
  };
  std::erase_if(orphans_cancelled_, gone);
  std::erase_if(orphans_failing_, gone);
}

void Engine::Retire() {
  const int64_t now = Now();
  active_.EraseIf([&](const store::Submission& s) {
    if (!store::IsTerminal(s.phase)) return false;
    if (s.job_id) retired_at_[*s.job_id] = now;
    cancel_sent_at_.erase(s.key);
    requests_.erase(s.key);
    if (s.job_id) details_due_.erase(*s.job_id);
    return true;
  });
  active_count_ = active_.size();
}

std::chrono::milliseconds Engine::NextInterval() const {
  {
    std::lock_guard lock(inbox_mu_);
    if (HasNewWork()) return options_.fast_interval;
  }
  for (const store::Submission& s : active_) {
    if (NeedsAttention(s)) return options_.fast_interval;
  }
  return options_.slow_interval;
}

size_t Engine::active_count() const { return active_count_.load(); }

void Engine::Wake() {
  {
    std::lock_guard lock(inbox_mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

void Engine::Stop() {
  stop_ = true;
  Wake();
}

bool PassStats::Quiet() const {
  return submitted == 0 && adopted == 0 && state_changes == 0 && cancelled == 0 &&
         orphans_cancelled == 0 && detail_requests == 0 && !full_list && !slurm_error;
}

std::string DescribePass(const std::string& cloud, const PassStats& stats, size_t tracked,
                         std::chrono::milliseconds took, std::chrono::milliseconds next) {
  std::string line = fmt::format("cloud {}: pass {} ms", cloud, took.count());
  auto count = [&line](int n, std::string_view one, std::string_view many) {
    if (n > 0) line += fmt::format(", {} {}", n, n == 1 ? one : many);
  };
  count(stats.submitted, "submitted", "submitted");
  if (stats.tracking_requests > 0) {
    line +=
        fmt::format(", {} of {} tracked job{}", stats.full_list ? "full job list" : "jobs/state",
                    tracked, tracked == 1 ? "" : "s");
    if (stats.full_list) {
      line += fmt::format(" ({} listed, {} parsed)", stats.jobs_listed, stats.jobs_parsed);
    }
  }
  count(stats.detail_requests, "detail request", "detail requests");
  count(stats.state_changes, "state change", "state changes");
  count(stats.adopted, "adopted", "adopted");
  count(stats.cancelled, "cancelled", "cancelled");
  count(stats.orphans_cancelled, "orphan cancelled", "orphans cancelled");
  if (stats.slurm_error) line += ", Slurm: " + stats.slurm_error->ToString();
  return line + fmt::format("; next pass in {} ms", next.count());
}

void Engine::Run() {
  std::chrono::milliseconds logged_interval{-1};
  while (!stop_) {
    const auto started = clock_.Monotonic();
    PassStats stats = Tick();
    std::chrono::milliseconds interval = NextInterval();
    if (options_.debug_log && (!stats.Quiet() || interval != logged_interval)) {
      logged_interval = interval;
      options_.debug_log(DescribePass(
          options_.cloud, stats, active_count(),
          std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Monotonic() - started),
          interval));
    }
    std::unique_lock lock(inbox_mu_);
    wake_.wait_for(lock, interval, [this] { return woken_ || stop_.load(); });
    woken_ = false;
  }
  // The outcomes of a wave the provisioner sent since the last pass are recorded (store writes
  // only). One that arrives after this leaves its mark's time as the only one stored, earlier
  // than its POST: the next engine must then count absences from its own start.
  TakeInbox();
  PassStats last;
  RecordSentNow(last);
  {
    std::lock_guard lock(inbox_mu_);
    if (!sent_now_.empty()) return;
  }
  // A synced write: it takes every unsynced one before it to disk too. If it fails, the next
  // engine looks for this one's intents by tag, which is only slower.
  (void)store_.SetMeta(StoppedCleanlyMeta(), "1");
}

}  // namespace slurmfleet::fleet
