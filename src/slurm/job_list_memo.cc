#include "slurm/job_list_memo.h"

#include <xxhash.h>
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#endif

#include <cstring>
#include <random>
#include <type_traits>

namespace slurmfleet::slurm {
namespace {

template <typename T>
void Put(std::string& out, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void Put(std::string& out, const std::string& text) {
  Put(out, static_cast<uint32_t>(text.size()));
  out.append(text);
}

void Put(std::string& out, const std::vector<std::string>& texts) {
  Put(out, static_cast<uint32_t>(texts.size()));
  for (const std::string& t : texts) Put(out, t);
}

template <typename T>
void Put(std::string& out, const std::optional<T>& value) {
  Put(out, value.has_value());
  if (value) Put(out, *value);
}

// Reads back what Put wrote, in the same order.
class Reader {
 public:
  explicit Reader(std::string_view packed) : rest_(packed) {}

  template <typename T>
  void Get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(&value, rest_.data(), sizeof value);
    rest_.remove_prefix(sizeof value);
  }
  void Get(std::string& text) {
    uint32_t size = 0;
    Get(size);
    text.assign(rest_.substr(0, size));
    rest_.remove_prefix(size);
  }
  void Get(std::vector<std::string>& texts) {
    uint32_t count = 0;
    Get(count);
    texts.resize(count);
    for (std::string& t : texts) Get(t);
  }
  template <typename T>
  void Get(std::optional<T>& value) {
    bool present = false;
    Get(present);
    if (!present) return value.reset();
    value.emplace();
    Get(*value);
  }

 private:
  std::string_view rest_;
};

// Every field of a JobInfo, in one order for packing and unpacking.
template <typename Job, typename F>
void Fields(Job& j, F&& f) {
  f(j.job_id), f(j.sluid), f(j.name), f(j.user_name), f(j.account), f(j.partition), f(j.comment);
  f(j.state.base), f(j.state.flags), f(j.state.raw), f(j.state_reason), f(j.state_description);
  f(j.nodes), f(j.exit_code.status), f(j.exit_code.return_code), f(j.exit_code.signal);
  f(j.exit_code.signal_name), f(j.submit_time), f(j.start_time), f(j.end_time);
  f(j.time_limit_minutes), f(j.current_working_directory), f(j.standard_output);
  f(j.standard_error), f(j.batch_host), f(j.het_job_id), f(j.het_job_offset);
}

}  // namespace

std::string JobListMemo::Pack(const JobInfo& job) {
  std::string out;
  Fields(job, [&out](const auto& field) { Put(out, field); });
  return out;
}

JobInfo JobListMemo::Unpack(std::string_view packed) {
  JobInfo job;
  UnpackInto(packed, job);
  return job;
}

void JobListMemo::UnpackInto(std::string_view packed, JobInfo& job) {
  Reader reader(packed);
  Fields(job, [&reader](auto& field) { reader.Get(field); });
}

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
