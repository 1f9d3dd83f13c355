// JobListStream: decodes a job answer (GET jobs, GET job/{id}) as its bytes arrive. It splits
// the top-level "jobs" array into its job objects and decodes each as soon as it is complete, so
// the whole answer (about 8 KB per job in slurmctld, ~100 MB at 12,000 jobs) is never held, nor
// the parser's index of it: memory is one job's text plus the decoded jobs. Everything else in
// the answer (last_update, errors, warnings, meta) is kept and decoded at the end.
// slurmrestd pretty-prints by default, and then a job object ends with its closing brace on a line
// of its own, indented as its opening brace. A raw newline is never inside a JSON string, so that
// line ends the job exactly: when a job's opening brace is alone on its line, the job's bytes are
// searched for that line (a '}' with a newline as far before it as the job's indentation) instead
// of being scanned one by one. Compact output
// (SLURMRESTD_JSON=compact) takes the byte scan, and so does a job whose closing line does not
// come (by the answer's end, or within 1 MB): what was received of it is scanned again.
// Not thread-safe: one transfer at a time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "slurm/dialect.h"
#include "slurm/job_list_decoder.h"
#include "slurm/job_list_memo.h"
#include "slurm/transport.h"

namespace slurmfleet::slurm {

class JobListStream final : public BodyStream {
 public:
  // With `keep` (which must outlive the stream), the answer holds only the jobs it wants; the
  // others are read only up to their id and comment (JobDecoder). With `keep` and `memo`, a job
  // whose text is in the memo is taken from it, not parsed again, and the memo learns this list
  // when it was read to its end (Finish).
  explicit JobListStream(const Dialect& dialect, const JobFilter* keep = nullptr,
                         JobListMemo* memo = nullptr);

  // Forgets what an earlier (failed) attempt wrote.
  void Reset();
  // Writes this list's kept jobs over `jobs`, the last answer's (or what GiveBack handed over),
  // which a stream with the same memo decoded (`digests` from that answer). The memo knows where
  // each of its jobs is: one sent again unchanged is taken from there, not parsed, and left as it
  // is when at the same place; so a list much like the last one makes few allocations. Without
  // them, every kept job is parsed. Call before the first Write.
  void Reuse(std::vector<JobInfo> jobs, std::vector<uint64_t> digests);
  // After Finish failed, or answered a list of no job ("nothing changed"): the jobs written so
  // far and what is left of those given to Reuse, for the next list's Reuse.
  void GiveBack(std::vector<JobInfo>& jobs, std::vector<uint64_t>& digests);
  // Makes room for this many jobs at once: growing by doubling would move every decoded job
  // each time, and hold the old and the new array together. A large array is backed by huge
  // pages where the system allows (base/huge_pages.h).
  void Reserve(size_t jobs);
  void Write(std::string_view bytes) override;
  // After the last bytes: the answer, or kInternal naming where it is not what slurmrestd sends.
  Result<JobListAnswer> Finish();

 private:
  enum class Part { kSkeleton, kJobsArray, kJob };
  // Scans bytes as the general state machine; returns what is left when a job starts whose end
  // can be searched for (close_indent_ set), else an empty view.
  std::string_view Scan(std::string_view bytes);
  // Appends the bytes of a pretty-printed job to job_ up to its closing line; returns the bytes
  // after the job, or an empty view when the job goes on in the next piece.
  std::string_view SearchJobEnd(std::string_view bytes);
  bool ClosingLineEndsAt(std::string_view bytes, size_t brace) const;
  // The job's closing line did not come: scans what was received of it byte by byte.
  void ScanJobAfresh();
  void Take(const char* from, const char* to);  // bytes [from, to) of part_
  // Ends the job whose whole text is `text`: job_, or a view into the piece being written.
  void EndJob(std::string_view text);
  // Ends job_ by the memo's entry for its text; false when there is none, or the job is wanted
  // and not held (left out before, or written over): then job_ is parsed.
  bool EndJobFromMemo(uint64_t digest);
  // Puts the job of this digest that an earlier list left at `place` at the next kept place;
  // false when it is no longer there.
  bool KeepFrom(uint64_t digest, uint32_t place);
  // Puts the next kept job at its place, over what an earlier list or attempt left there.
  void KeepParsed(uint64_t digest, JobInfo&& job);
  void Malformed(std::string what);
  Result<JobListAnswer> FinishAnswer();

  const Dialect& dialect_;
  JobDecoder decoder_;
  std::string skeleton_;  // the answer without the jobs' objects
  std::string job_;       // the job object being received
  // While the job being received began in the piece being written (and job_ is empty): where.
  // Such a job that also ends in that piece is never copied, unless it is parsed.
  const char* job_start_ = nullptr;
  std::string key_;           // the last string at depth 1: the key of the value that follows
  std::string close_indent_;  // "\n" + the indentation of the job being received, when searched
  const JobFilter* keep_;
  JobListMemo* memo_;  // null without keep_
  // jobs_[i] is what a job text of digest digests_[i] decodes to (with a memo; else digests are
  // 0), for every i: the first kept_ are this list's, the rest an earlier list's or attempt's.
  std::vector<JobInfo> jobs_;
  std::vector<uint64_t> digests_;
  size_t kept_ = 0;
  size_t jobs_read_ = 0;  // kept or not: names the job in errors ("jobs[3]")
  size_t jobs_parsed_ = 0;
  std::optional<Error> error_;
  Part part_ = Part::kSkeleton;
  int depth_ = 0;
  bool in_string_ = false;
  bool key_string_ = false;  // the string being read is at depth 1, kept in key_
  size_t backslashes_ = 0;   // of the string being read, right before the next byte
};

}  // namespace slurmfleet::slurm
