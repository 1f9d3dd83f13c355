#include "slurm/job_list_memo.h"

#include <xxhash.h>
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#endif

#include <random>

namespace slurmfleet::slurm {

JobListMemo::JobListMemo() {
  std::random_device random;
  seed_ = (static_cast<uint64_t>(random()) << 32) ^ random();
}

void JobListMemo::Begin(const JobFilter& filter) {
  if (filter.comment_prefix != prefix_) {
    last_.clear();
    Index();
    prefix_ = filter.comment_prefix;
  }
  next_.clear();
  next_.reserve(last_.size());
  expected_ = 0;
}

uint64_t JobListMemo::Digest(std::string_view text) const {
#if defined(__x86_64__)
  // the widest vector unit this CPU has (AVX2, AVX-512): a full list is ~100 MB to digest
  return XXH3_64bits_withSeed_dispatch(text.data(), text.size(), seed_);
#else
  return XXH3_64bits_withSeed(text.data(), text.size(), seed_);
#endif
}

size_t JobListMemo::Find(uint64_t digest) const {
  if (index_.empty()) return last_.size();
  const size_t mask = index_.size() - 1;
  for (size_t cell = digest & mask;; cell = (cell + 1) & mask) {
    if (index_[cell] == 0) return last_.size();
    if (last_[index_[cell] - 1].digest == digest) return index_[cell] - 1;
  }
}

JobListMemo::Entry* JobListMemo::Recall(uint64_t digest) {
  size_t at = expected_;
  if (at >= last_.size() || last_[at].digest != digest) at = Find(digest);
  if (at >= last_.size() || last_[at].recalled) return nullptr;
  Slot& slot = last_[at];
  slot.recalled = true;
  expected_ = at + 1;
  next_.push_back({digest, std::move(slot.entry)});
  return &next_.back().entry;
}

void JobListMemo::Note(uint64_t digest, Entry entry) {
  if (!next_.empty() && next_.back().digest == digest) {
    next_.back().entry = std::move(entry);
  } else {
    next_.push_back({digest, std::move(entry)});
  }
}

bool JobListMemo::Moved(uint64_t digest, uint32_t place) {
  const size_t at = Find(digest);
  if (at == last_.size() || last_[at].recalled) return false;
  last_[at].entry.place = place;
  return true;
}

void JobListMemo::Commit() {
  // the last list's array holds the next one: no allocation, and no page faults, per list
  last_.swap(next_);
  next_.clear();
  Index();
}

void JobListMemo::Abandon() {
  for (Slot& slot : last_) {
    if (!slot.recalled) next_.push_back(std::move(slot));
  }
  Commit();
}

void JobListMemo::Index() {
  size_t cells = 16;
  while (cells < 2 * last_.size()) cells *= 2;
  index_.assign(cells, 0);
  const size_t mask = cells - 1;
  for (size_t i = 0; i < last_.size(); ++i) {
    last_[i].recalled = false;
    size_t cell = last_[i].digest & mask;
    while (index_[cell] != 0) cell = (cell + 1) & mask;
    index_[cell] = static_cast<uint32_t>(i + 1);
  }
}

}  // namespace slurmfleet::slurm
