// A Submission is one job we intend to have in Slurm, from the moment the intent is recorded
// until the job has ended (or the intent failed for a recorded reason). It is what the store
// persists and what the engine reconciles; the store does not interpret `request_json`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace slurmfleet::store {

// Where a submission is in its life. Terminal: kSucceeded, kFailed, kCancelled, kLost.
enum class Phase {
  kIntent,      // recorded, not yet sent (or proven absent after an unknown outcome: send again)
  kSubmitting,  // a POST was sent and its outcome is unknown: look before sending again
  kPending,     // Slurm has it, waiting for resources
  kStarting,    // allocated, nodes configuring/booting
  kRunning,
  kSuspended,
  kCompleting,  // ended, but the epilog/stage-out still holds resources
  kSucceeded,
  kFailed,
  kCancelled,
  kLost,  // vanished from Slurm without a final state, after the grace period
};

std::string_view PhaseName(Phase phase);  // "intent", "submitting", ...; persisted
std::optional<Phase> PhaseFromName(std::string_view name);
bool IsTerminal(Phase phase);

struct Submission {
  std::string key;           // unique; carried by the job (comment tag) so we can find it again
  std::string kind;          // "agent", "run", "job"
  std::string cloud;         // the Slurm endpoint (cloud name) it belongs to
  std::string owner;         // who asked: a template name, a run id, an API token's name
  std::string request_json;  // the job request as the engine serialized it; opaque to the store,
                             // written by Add only
  Phase phase = Phase::kIntent;
  int attempts = 0;  // submit POSTs sent so far
  std::optional<uint32_t> job_id;
  std::string sluid;
  std::string slurm_state;   // "PENDING", "CANCELLED+COMPLETING", ...
  std::string state_reason;  // Slurm's reason, kept while pending
  std::string failure;       // why it failed, for a human; empty unless kFailed/kLost
  bool cancel_requested = false;
  int64_t created_at = 0;      // unix seconds
  int64_t updated_at = 0;      // unix seconds, set by the store on every write
  int64_t submit_sent_at = 0;  // when the last submit POST was sent (unix seconds); 0 if never
  int64_t last_seen_at = 0;    // when Slurm last showed us the job (unix seconds)
  int64_t version = 0;         // for test-and-set updates; set by the store
};

// A front end's own document (a Jenkins agent, an ephemeral template), kept beside the
// submissions so that it survives restarts and changes in the same file.
struct Record {
  std::string kind;  // "agent", "template"
  std::string name;  // unique within its kind
  std::string cloud;
  bool active = true;   // false once it has ended for good; kept for history
  std::string doc;      // a JSON object; opaque to the store
  int64_t version = 0;  // 0: not stored yet; then set by the store for test-and-set
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

struct Event {
  int64_t id = 0;  // increasing; use as a cursor
  std::string key;
  int64_t at = 0;       // unix seconds
  std::string type;     // "intent", "submitted", "state", "warn", "failed", "adopted", ...
  std::string message;  // for a human; never contains a secret
};

}  // namespace slurmfleet::store
