#include "slurm/job_list_memo.h"

#include <xxhash.h>

#include <random>

namespace slurmfleet::slurm {

JobListMemo::JobListMemo() {
  std::random_device random;
  seed_ = (static_cast<uint64_t>(random()) << 32) ^ random();
}

void JobListMemo::Begin(const JobFilter& filter) {
  if (filter.comment_prefix != prefix_) {
    last_.clear();
    prefix_ = filter.comment_prefix;
  }
  next_.clear();
  next_.reserve(last_.size());
}

uint64_t JobListMemo::Digest(std::string_view text) const {
  return XXH3_64bits_withSeed(text.data(), text.size(), seed_);
}

JobListMemo::Entry* JobListMemo::Recall(uint64_t digest) {
  auto found = last_.find(digest);
  if (found == last_.end()) return nullptr;
  Entry& moved = next_.insert_or_assign(digest, std::move(found->second)).first->second;
  last_.erase(found);
  return &moved;
}

void JobListMemo::Note(uint64_t digest, Entry entry) {
  next_.insert_or_assign(digest, std::move(entry));
}

void JobListMemo::Commit() {
  last_.swap(next_);
  next_.clear();
}

void JobListMemo::Abandon() {
  last_.merge(next_);
  next_.clear();
}

}  // namespace slurmfleet::slurm
