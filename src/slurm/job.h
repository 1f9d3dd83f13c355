// The version-independent job model: what we ask Slurm for (JobRequest), what Slurm tells us
// about a job (JobInfo), and what a submit returns (SubmitReceipt). Dialects translate these to
// and from each API version's JSON; nothing outside src/slurm/ sees that JSON.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slurmfleet::slurm {

using Seconds = std::chrono::sys_seconds;

// One variable of the job's environment. A secret value (an agent secret) is sent to Slurm but
// redacted whenever the request is printed.
struct EnvVar {
  std::string name;
  std::string value;
  bool secret = false;
  bool operator==(const EnvVar&) const = default;
};

// A job_desc. Unset optionals and empty strings are left out of the request, so Slurm's defaults
// apply. Every job is sent with requeue=false (EncodeJobDesc): retries are ours, never Slurm's.
struct JobRequest {
  std::string script;  // the batch script; for a heterogeneous job only component 0's is used
  std::string name;
  std::string comment;  // carries our ownership tag
  std::string partition;
  std::string account;
  std::string qos;
  std::optional<int32_t> cpus_per_task;
  std::optional<int32_t> tasks;
  std::optional<uint64_t> memory_per_node_mb;
  std::optional<uint32_t> time_limit_minutes;
  std::string tres_per_job;  // e.g. "gres/gpu=2"
  std::optional<int32_t> minimum_nodes;
  std::optional<int32_t> maximum_nodes;
  std::vector<std::string> required_nodes;
  std::string constraints;
  std::string current_working_directory;
  std::string standard_output;
  std::string standard_error;
  std::vector<EnvVar> environment;  // Slurm requires it; the job sees only these variables
  bool hold = false;
  // Any other job_desc field, already checked against the API version's schema by the caller.
  // Typed fields above win over a field of the same name here.
  nlohmann::json extra_fields = nlohmann::json::object();

  bool operator==(const JobRequest&) const = default;
};

// The ranges of JobRequest's numbers, shared by every reader of a job description people write
// (`jobs submit --job`, a submission's job, a template's or pipeline's job block), so that no path
// casts a value into another number that a second path refuses, and all refuse in the same words.
struct WholeNumberRange {
  uint64_t min;
  uint64_t max;
  std::string_view unit;  // "minutes"; empty for a count
};
// cpus_per_task, tasks, minimum_nodes, maximum_nodes
inline constexpr WholeNumberRange kCountRange{1, std::numeric_limits<int32_t>::max(), {}};
// memory_per_node; above INT64_MAX, Slurm reads the top bit as "per CPU".
inline constexpr WholeNumberRange kMemoryMbRange{1, std::numeric_limits<int64_t>::max(), "MB"};
// time_limit; the two values above are Slurm's NO_VAL ("not set") and INFINITE.
inline constexpr WholeNumberRange kTimeLimitRange{1, std::numeric_limits<uint32_t>::max() - 2,
                                                  "minutes"};

// `v` when it is a JSON integer within `range`; nullopt for anything else (a float, a string).
std::optional<uint64_t> WholeNumberIn(const nlohmann::json& v, const WholeNumberRange& range);
// "expected a whole number from 1 to 2147483647", "... a whole number of minutes from 1 to ...".
std::string ExpectedWholeNumber(const WholeNumberRange& range);

// The base state of a job: exactly one of these at any time.
enum class BaseState {
  kPending,
  kRunning,
  kSuspended,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
  kUnknown,  // a state name this build does not know; the raw name is kept in JobState::raw
};

// Flags Slurm reports next to the base state (job_state is an array: base state + flags).
enum JobFlag : uint32_t {
  kFlagLaunchFailed = 1u << 0,
  kFlagRequeued = 1u << 1,
  kFlagRequeueHold = 1u << 2,
  kFlagSpecialExit = 1u << 3,
  kFlagResizing = 1u << 4,
  kFlagConfiguring = 1u << 5,
  kFlagCompleting = 1u << 6,
  kFlagStopped = 1u << 7,
  kFlagReconfigFail = 1u << 8,
  kFlagPowerUpNode = 1u << 9,
  kFlagRevoked = 1u << 10,
  kFlagRequeueFed = 1u << 11,
  kFlagResvDelHold = 1u << 12,
  kFlagSignaling = 1u << 13,
  kFlagStageOut = 1u << 14,
  kFlagExpediting = 1u << 15,
};

struct JobState {
  BaseState base = BaseState::kUnknown;
  uint32_t flags = 0;            // JobFlag bits
  std::vector<std::string> raw;  // the names exactly as Slurm sent them

  bool Has(JobFlag flag) const { return (flags & flag) != 0; }
  bool operator==(const JobState&) const = default;
};

// Parses Slurm's job_state array. Unknown names keep base kUnknown (if no base state is present)
// and are preserved in `raw`; this never fails.
JobState ParseJobState(const std::vector<std::string>& names);
std::string_view BaseStateName(BaseState state);  // "PENDING", "RUNNING", ...
// "RUNNING" or "CANCELLED+COMPLETING": the base state and its flags, for humans.
std::string JobStateString(const JobState& state);

struct ExitCode {
  std::vector<std::string> status;  // "SUCCESS", "ERROR", "SIGNALED", "CORE_DUMPED", ...
  std::optional<int32_t> return_code;
  std::optional<int32_t> signal;
  std::string signal_name;
  bool operator==(const ExitCode&) const = default;
};

struct JobInfo {
  uint32_t job_id = 0;
  std::string sluid;  // v0.0.44+ only; empty where the API has none
  std::string name;
  std::string user_name;
  std::string account;
  std::string partition;
  std::string comment;
  JobState state;
  std::string state_reason;  // "None", "Resources", "Priority", "BadConstraints", ...
  std::string state_description;
  std::string nodes;  // hostlist expression, empty while pending
  ExitCode exit_code;
  std::optional<Seconds> submit_time;
  std::optional<Seconds> start_time;
  std::optional<Seconds> end_time;
  std::optional<uint32_t> time_limit_minutes;
  std::string current_working_directory;
  std::string standard_output;  // the file's name, patterns resolved (slurm/output_path.h)
  std::string standard_error;   // the same; empty when it is the output's file
  std::string batch_host;       // the node that ran the batch script; empty before it started
  std::optional<uint32_t> het_job_id;
  std::optional<uint32_t> het_job_offset;

  bool operator==(const JobInfo&) const = default;
};

struct SubmitReceipt {
  uint32_t job_id = 0;  // the leader's id for a heterogeneous job
  std::string step_id;
  std::string user_message;           // job_submit_user_msg
  std::vector<std::string> warnings;  // Slurm's warnings[], for the operator to see
};

// Names a job for a lifecycle operation: by SLUID where the API has one, else by numeric id.
struct JobRef {
  uint32_t id = 0;
  std::string sluid;
  // The path segment for /job/{...}: the SLUID when known and `sluid_capable`, else the id.
  std::string PathSegment(bool sluid_capable) const;
  std::string ToString() const;  // "123" or "sA6HM8NAVYCT00"
};

// A batch of job states from one request (GET jobs?update_time=...).
struct JobsSnapshot {
  bool changed = true;        // false: nothing changed since the given time; `jobs` is empty
  std::vector<JobInfo> jobs;  // every job slurmctld knows when `changed` (or those wanted)
  size_t listed = 0;          // how many jobs slurmctld listed, those left out included
  size_t parsed = 0;          // of those, the ones parsed (the others were known by their text)
  // Empty, or one per job: a digest of the text it was decoded from. Two jobs of lists from the
  // same client with the same digest were decoded from the same text, so are equal.
  std::vector<uint64_t> digests;
  std::optional<Seconds> last_update;  // pass back as `since` on the next poll
};

struct JobStateEntry {
  uint32_t job_id = 0;
  JobState state;
};

}  // namespace slurmfleet::slurm
