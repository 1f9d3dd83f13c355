// JobListMemo: what each job of the last filtered job list decoded to, by a digest of the job's
// text, so that a job sent again unchanged is not parsed again. slurmctld answers a list with
// every job in the cluster whenever any of them changed, and between two lists nearly every job's
// text is the same byte for byte: it changes when the job's state, reason, times or settings do.
// The digest is XXH3 (64 bits) with a seed drawn for each memo, so a user who shapes a job's text
// (its comment, its name) cannot make it take another job's digest.
// A memo holds one list's jobs at a time: those it wanted whole, packed (a JobInfo takes about
// 1 KB in memory, packed about the size of its text values), and of the others their id and
// whether they carry the tag. Not thread-safe: one list at a time (JobListStream).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "slurm/job.h"
#include "slurm/job_filter.h"

namespace slurmfleet::slurm {

class JobListMemo {
 public:
  struct Entry {
    uint32_t job_id = 0;
    // wanted whatever the filter's ids: it carries the filter's tag, or lacks an id or comment
    // to decide by (then it is read whole)
    bool always_wanted = false;
    std::string packed_job;  // Pack() of the job as decoded when it was read whole, else empty
  };

  static std::string Pack(const JobInfo& job);
  static JobInfo Unpack(std::string_view packed);

  JobListMemo();

  // Starts reading a list with `filter`. Entries depend on its tag prefix: they are forgotten
  // when it changed since the last list.
  void Begin(const JobFilter& filter);
  uint64_t Digest(std::string_view text) const;
  // The last list's entry for a job text of this digest, moved into the list being read;
  // nullptr when the last list had none.
  Entry* Recall(uint64_t digest);
  // Records a job of the list being read (replacing what Recall moved in for it).
  void Note(uint64_t digest, Entry entry);
  // The list was read to its end: its entries are now the last list's. Jobs that left the list
  // leave the memo.
  void Commit();
  // The list failed, or listed no job: the last list's entries stay, with what this one added.
  // (An entry is never wrong, since it follows from the text; it may only be no longer needed.)
  void Abandon();

  size_t size() const { return last_.size(); }

 private:
  struct Identity {  // digests are already uniformly spread
    size_t operator()(uint64_t digest) const { return static_cast<size_t>(digest); }
  };
  using Entries = std::unordered_map<uint64_t, Entry, Identity>;

  uint64_t seed_;
  std::string prefix_;
  Entries last_;
  Entries next_;
};

}  // namespace slurmfleet::slurm
