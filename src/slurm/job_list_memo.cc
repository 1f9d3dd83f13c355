#include "slurm/job_list_memo.h"

#include <xxhash.h>

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
  Reader reader(packed);
  Fields(job, [&reader](auto& field) { reader.Get(field); });
  return job;
}

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
