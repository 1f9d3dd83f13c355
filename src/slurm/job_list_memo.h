// JobListMemo: where each job of the last filtered job list is held decoded, by a digest of the
// job's text, so that a job sent again unchanged is not parsed again. slurmctld answers a list with
// every job in the cluster whenever any of them changed, and between two lists nearly every job's
// text is the same byte for byte: it changes when the job's state, reason, times or settings do.
// The digest is XXH3 (64 bits) with a seed drawn for each memo, so a user who shapes a job's text
// (its comment, its name) cannot make it take another job's digest.
// A memo holds one list's jobs at a time: of each, its id, whether it carries the tag, and where
// the list's array of kept jobs holds it decoded. That array is handed to the next list to write
// over (JobListStream::Reuse), so a job is held decoded once, not again here: a job whose text
// comes again is taken from its place in the array, and one no longer there (the array was not
// handed back, or another job was written over it) is parsed again. slurmctld lists its jobs in
// the same order each time, so the entries are kept in the list's order and the next job's is
// looked for first where the last one's ended, then through an index by digest. Not thread-safe:
// one list at a time (JobListStream).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/job_filter.h"

namespace slurmfleet::slurm {

class JobListMemo {
 public:
  static constexpr uint32_t kNotKept = UINT32_MAX;

  struct Entry {
    uint32_t job_id = 0;
    // wanted whatever the filter's ids: it carries the filter's tag, or lacks an id or comment
    // to decide by (then it is read whole)
    bool always_wanted = false;
    // its place in the list's array of kept jobs, or kNotKept: read only up to its id and comment
    uint32_t place = kNotKept;
  };

  JobListMemo();

  // Starts reading a list with `filter`. Entries depend on its tag prefix: they are forgotten
  // when it changed since the last list.
  void Begin(const JobFilter& filter);
  uint64_t Digest(std::string_view text) const;
  // The last list's entry for a job text of this digest, moved into the list being read;
  // nullptr when the last list had none. Valid until the next Recall or Note.
  Entry* Recall(uint64_t digest);
  // Records the job of the list being read that was just recalled or parsed (replacing what
  // Recall moved in for it).
  void Note(uint64_t digest, Entry entry);
  // The last list's job of this digest, not recalled yet, is now at `place` of the array. False
  // when there is no such job (this list will not ask for it).
  bool Moved(uint64_t digest, uint32_t place);
  // The list was read to its end: its entries are now the last list's. Jobs that left the list
  // leave the memo.
  void Commit();
  // The list failed, or listed no job: the last list's entries stay, with what this one added.
  // (An entry is never wrong, since it follows from the text; it may only be no longer needed.)
  void Abandon();

  size_t size() const { return last_.size(); }

 private:
  struct Slot {
    uint64_t digest = 0;
    Entry entry;
    bool recalled = false;  // moved into next_
  };

  // Indexes last_ (and marks each slot not recalled).
  void Index();
  // The place in last_ of the slot with this digest, or last_.size().
  size_t Find(uint64_t digest) const;

  uint64_t seed_;
  std::string prefix_;
  std::vector<Slot> last_;  // the last list's jobs, in its order
  // Open addressing by digest (already uniformly spread): a place in last_ plus one, 0 when
  // empty. At least twice as many cells as entries, a power of two.
  std::vector<uint32_t> index_;
  size_t expected_ = 0;     // where in last_ the next job of the list is looked for first
  std::vector<Slot> next_;  // the list being read
};

}  // namespace slurmfleet::slurm
