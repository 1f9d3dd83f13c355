// Decodes slurmrestd's job answers (GET jobs, GET job/{id}, GET jobs/state, POST job/submit) with
// simdjson's on-demand parser, reading only the fields we keep, without building a DOM. A
// full job list is about 8 KB per job (tens of MB on a busy cluster): RestClient splits it as it
// arrives (JobListStream) and decodes it job by job with JobDecoder; DecodeJobList decodes a whole
// text. Pure functions, and decoders that only reuse their buffers; internal to src/slurm/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "slurm/dialect.h"
#include "slurm/job.h"
#include "slurm/job_filter.h"
#include "slurm/response_errors.h"

namespace slurmfleet::slurm {

struct JobListAnswer {
  std::vector<JobInfo> jobs;
  size_t listed = 0;  // jobs in the answer, kept or not
  size_t parsed = 0;  // of those, the ones parsed (the others were known by their text)
  // With a memo: each kept job's text digest, for JobListStream::Reuse; else empty.
  std::vector<uint64_t> digests;
  std::optional<uint64_t> last_update;  // unset, infinite or absent: nullopt
  std::vector<SlurmMessage> errors;
  std::vector<SlurmMessage> warnings;
};

// `body` gets spare capacity for simdjson's padding (it may reallocate; its contents stay).
// kInternal naming the JSON path ("jobs[3].job_state") when the answer has another shape.
Result<JobListAnswer> DecodeJobList(const Dialect& dialect, std::string& body);

// simdjson's on-demand parser, behind a pointer so that this header need not include simdjson.
// Each decoder keeps one from answer to answer, so its buffers are allocated once.
struct OnDemandParser;
struct OnDemandParserDeleter {
  void operator()(OnDemandParser* parser) const;
};
using OnDemandParserPtr = std::unique_ptr<OnDemandParser, OnDemandParserDeleter>;
OnDemandParserPtr NewOnDemandParser();

struct JobStatesAnswer {
  std::vector<JobStateEntry> jobs;
  std::vector<SlurmMessage> errors;
  std::vector<SlurmMessage> warnings;
};

// Decodes GET jobs/state answers: every job's id and state, a heterogeneous job by its leader
// ("7+0"); its other components ("7+1") and array tasks ("7_3") are left out: they are not jobs
// we submit. Reuses its parser's buffers from answer to answer: the parser needs about five bytes
// per byte of answer, and under the daemon's allocator settings (base/allocator_tuning.h) a
// buffer that large is mapped afresh and faulted in page by page on every call (measured with
// 20,000 jobs, a 1.7 MB answer: 8–9 ms a decode with a new parser each time, 2–4 ms with this
// one). Not thread-safe: one answer at a time.
class JobStatesDecoder {
 public:
  // `body` gets spare capacity as for DecodeJobList; kInternal naming the JSON path on another
  // shape.
  Result<JobStatesAnswer> Decode(std::string& body);

 private:
  OnDemandParserPtr parser_ = NewOnDemandParser();
};

// A POST job/submit answer: what a SubmitReceipt is made of.
struct JobSubmitAnswer {
  uint32_t job_id = 0;  // 0: absent
  std::string step_id;
  std::string user_message;  // job_submit_user_msg
  std::vector<SlurmMessage> errors;
  std::vector<SlurmMessage> warnings;
};

// Decodes POST job/submit answers, reusing its parser's buffers from answer to answer: one for
// every job an engine submits, where a DOM parse of its 600 bytes took 15-20 us of the sending
// thread. Strict: any other shape (a job_id that is not a job id, errors that are not an array)
// is kInternal naming the field, for the caller to read the answer another way. Not thread-safe.
class JobSubmitDecoder {
 public:
  // `body` gets spare capacity as for DecodeJobList.
  Result<JobSubmitAnswer> Decode(std::string& body);

 private:
  OnDemandParserPtr parser_ = NewOnDemandParser();
};

struct DecodedJob {
  JobInfo job;                     // whole, or (left out) only its id and comment
  bool whole = true;               // false: left out, the filter does not want it
  bool decided_by_filter = false;  // the filter was asked (false: no filter, or no id or comment)
};

// Decodes one job object's text at a time (an element of an answer's "jobs"), reusing its
// parser's buffers from job to job: for a list split as it arrives (JobListStream).
class JobDecoder {
 public:
  explicit JobDecoder(const Dialect& dialect) : dialect_(dialect) {}

  // `text` gets spare capacity for the parser's padding. `path` names the job in errors
  // ("jobs[3]"): kInternal naming the field when the job has another shape. With `keep`, a job it
  // does not want is read only up to its id and comment; a job that lacks either is read whole.
  Result<DecodedJob> Decode(std::string& text, const std::string& path,
                            const JobFilter* keep = nullptr);

 private:
  const Dialect& dialect_;
  OnDemandParserPtr parser_ = NewOnDemandParser();
};

}  // namespace slurmfleet::slurm
