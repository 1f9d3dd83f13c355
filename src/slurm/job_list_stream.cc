#include "slurm/job_list_stream.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <iterator>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/huge_pages.h"

namespace slurmfleet::slurm {
namespace {

bool Blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The bytes that matter outside strings; the rest (indentation is about 40% of slurmrestd's
// text) is skipped through this table.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> table{};
  for (char c : std::string_view("\"{}[]")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

// Far more than a job's text (about 8 KB) in slurmctld's answers.
constexpr size_t kMaxSearchedJob = 1 << 20;

// The first place at or after `from` of a '}' that may end a job whose closing line is n bytes
// long ("\n", indentation, '}'): n bytes before it is a newline, or lies in an earlier piece.
// Nearly every '}' of a job (about one in 80 bytes) closes a nested object on a line indented
// deeper, where that byte is a space: compared 16 bytes at a time, they are passed over without
// stopping at each.
size_t NextClosingBrace(std::string_view bytes, size_t from, size_t n) {
  const char* data = bytes.data();
  size_t i = from;
  for (; i < bytes.size() && i < n; ++i) {
    if (data[i] == '}') return i;
  }
#ifdef __SSE2__
  const __m128i brace = _mm_set1_epi8('}');
  const __m128i newline = _mm_set1_epi8('\n');
  for (; i + 16 <= bytes.size(); i += 16) {
    const __m128i here = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    const __m128i line_start = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i - n));
    const unsigned hits = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_and_si128(_mm_cmpeq_epi8(here, brace), _mm_cmpeq_epi8(line_start, newline))));
    if (hits != 0) return i + std::countr_zero(hits);
  }
#endif
  for (; i < bytes.size(); ++i) {
    if (data[i] == '}' && data[i - n] == '\n') return i;
  }
  return bytes.size();
}

}  // namespace

JobListStream::JobListStream(const Dialect& dialect, const JobFilter* keep, JobListMemo* memo)
    : dialect_(dialect), decoder_(dialect), keep_(keep), memo_(keep ? memo : nullptr) {
  if (memo_) memo_->Begin(*keep_);
}

void JobListStream::Reset() {
  skeleton_.clear();
  job_.clear();
  job_start_ = nullptr;
  key_.clear();
  close_indent_.clear();
  kept_ = 0;
  jobs_read_ = 0;
  jobs_parsed_ = 0;
  error_.reset();
  part_ = Part::kSkeleton;
  depth_ = 0;
  in_string_ = false;
  key_string_ = false;
  backslashes_ = 0;
}

void JobListStream::Take(const char* from, const char* to) {
  if (part_ == Part::kSkeleton) skeleton_.append(from, to);
  if (part_ == Part::kJob) job_.append(from, to);
  // kJobsArray: the separators between jobs, dropped
}

void JobListStream::Write(std::string_view bytes) {
  while (!bytes.empty() && !error_) {
    bytes = part_ == Part::kJob && !close_indent_.empty() ? SearchJobEnd(bytes) : Scan(bytes);
  }
}

bool JobListStream::ClosingLineEndsAt(std::string_view bytes, size_t brace) const {
  // the k-th byte before the brace, from this piece and then from the job's text received before
  const auto before = [&](size_t k) -> int {
    if (k <= brace) return bytes[brace - k];
    if (k - brace <= job_.size()) return job_[job_.size() - (k - brace)];
    return -1;
  };
  // the line's start first: it is what tells a nested object's closing line from the job's
  const size_t n = close_indent_.size();
  if (before(n) != '\n') return false;
  for (size_t k = 1; k < n; ++k) {
    if (before(k) != close_indent_[n - k]) return false;
  }
  return true;
}

void JobListStream::ScanJobAfresh() {
  std::string text = std::move(job_);
  job_.assign(1, '{');
  close_indent_.clear();
  Write(std::string_view(text).substr(1));
}

std::string_view JobListStream::SearchJobEnd(std::string_view bytes) {
  for (size_t from = 0; from < bytes.size();) {
    const size_t brace = NextClosingBrace(bytes, from, close_indent_.size());
    if (brace == bytes.size()) break;
    if (ClosingLineEndsAt(bytes, brace)) {
      close_indent_.clear();
      --depth_;
      if (job_start_) {
        EndJob(std::string_view(job_start_, bytes.data() + brace + 1));
        job_start_ = nullptr;
      } else {
        job_.append(bytes.data(), brace + 1);
        EndJob(job_);
      }
      part_ = Part::kJobsArray;
      return bytes.substr(brace + 1);
    }
    from = brace + 1;
  }
  if (job_start_) {
    job_.assign(job_start_, bytes.data() + bytes.size());
    job_start_ = nullptr;
  } else {
    job_.append(bytes);
  }
  // No job is this large: the layout is not what it looked like, so the byte scan takes over.
  if (job_.size() > kMaxSearchedJob) ScanJobAfresh();
  return {};
}

std::string_view JobListStream::Scan(std::string_view bytes) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  const char* taken = p;  // the bytes before this one are taken
  while (p < end) {
    if (in_string_) {
      // Most of the text is strings: jump to the next quote, then see whether it is escaped
      // (an odd run of backslashes before it, which may have begun in an earlier piece).
      const char* quote = static_cast<const char*>(std::memchr(p, '"', end - p));
      const char* stop = quote ? quote : end;
      size_t run = 0;
      for (const char* b = stop; b > p && b[-1] == '\\'; --b) ++run;
      if (run == static_cast<size_t>(stop - p)) run += backslashes_;
      if (key_string_) key_.append(p, stop);
      if (!quote) {
        backslashes_ = run;
        p = end;
        break;
      }
      p = quote + 1;
      backslashes_ = 0;
      if (run % 2 == 1) {
        if (key_string_) key_ += '"';
        continue;
      }
      in_string_ = false;
      key_string_ = false;
      continue;
    }
    const bool between_jobs = part_ == Part::kJobsArray && depth_ == 2;
    const char* next = p;
    while (next < end) {
      uint64_t word;
      if (end - next >= 8 && (std::memcpy(&word, next, 8), word == 0x2020202020202020u)) {
        next += 8;  // a run of indentation
      } else if (!kStructural[static_cast<unsigned char>(*next)]) {
        ++next;
      } else {
        break;
      }
    }
    if (between_jobs && std::any_of(p, next, [](char c) { return c != ',' && !Blank(c); })) {
      Malformed("expected a job object");
      return {};
    }
    p = next;
    if (p == end) break;
    const char c = *p;
    switch (c) {
      case '"':
        if (between_jobs) {
          Malformed("expected a job object, not a string");
          return {};
        }
        in_string_ = true;
        backslashes_ = 0;
        key_string_ = part_ == Part::kSkeleton && depth_ == 1;
        if (key_string_) key_.clear();
        ++p;
        break;
      case '{':
      case '[':
        if (between_jobs) {
          if (c != '{') {
            Malformed("expected a job object, not an array");
            return {};
          }
          Take(taken, p);
          taken = p;
          part_ = Part::kJob;
          // pretty-printed: the brace is alone on its line, after nothing but indentation
          const char* line = p;
          while (line > bytes.data() && line[-1] == ' ') --line;
          if (line > bytes.data() && line[-1] == '\n' && p + 1 < end && p[1] == '\n') {
            close_indent_.assign("\n").append(line, p);
            ++depth_;
            job_start_ = p;
            return std::string_view(p + 1, end - (p + 1));
          }
        }
        ++depth_;
        ++p;
        if (part_ == Part::kSkeleton && depth_ == 2 && c == '[' && key_ == "jobs") {
          Take(taken, p);
          taken = p;
          part_ = Part::kJobsArray;
        }
        break;
      case '}':
      case ']':
        if (between_jobs) {  // the jobs array ends; its bracket belongs to the skeleton
          Take(taken, p);
          taken = p;
          part_ = Part::kSkeleton;
        }
        if (--depth_ < 0) {
          Malformed("a closing bracket without an opening one");
          return {};
        }
        ++p;
        if (part_ == Part::kJob && depth_ == 2) {
          Take(taken, p);
          taken = p;
          EndJob(job_);
          if (error_) return {};
          part_ = Part::kJobsArray;
        }
        break;
    }
  }
  Take(taken, end);
  return {};
}

void JobListStream::Reuse(std::vector<JobInfo> jobs, std::vector<uint64_t> digests) {
  if (!memo_ || jobs.size() != digests.size()) return;
  jobs_ = std::move(jobs);
  digests_ = std::move(digests);
}

void JobListStream::GiveBack(std::vector<JobInfo>& jobs, std::vector<uint64_t>& digests) {
  jobs = std::move(jobs_);
  digests = std::move(digests_);
  jobs_.clear();
  digests_.clear();
  kept_ = 0;
}

void JobListStream::Reserve(size_t jobs) {
  if (jobs <= jobs_.capacity()) return;
  // Advised before the kept jobs move in, since the advice only helps pages not touched yet:
  // growing past 9,400 jobs took 1,377 page faults and 16 ms of CPU on the testbed's VM advised
  // after the move, 355 and 5 ms advised before it.
  std::vector<JobInfo> larger;
  larger.reserve(jobs);
  AdviseHugePages(larger.data(), larger.capacity() * sizeof(JobInfo));
  larger.insert(larger.end(), std::make_move_iterator(jobs_.begin()),
                std::make_move_iterator(jobs_.end()));
  jobs_ = std::move(larger);
  digests_.reserve(jobs);
}

bool JobListStream::KeepFrom(uint64_t digest, uint32_t place) {
  if (place == JobListMemo::kNotKept || place < kept_ || place >= jobs_.size() ||
      digests_[place] != digest) {
    return false;
  }
  if (place != kept_) {
    // swapped, not moved: the job at the next place may be one this list has yet to come to
    std::swap(jobs_[kept_], jobs_[place]);
    std::swap(digests_[kept_], digests_[place]);
    memo_->Moved(digests_[place], place);
  }
  ++kept_;
  return true;
}

void JobListStream::KeepParsed(uint64_t digest, JobInfo&& job) {
  if (kept_ == jobs_.size()) {
    jobs_.push_back(std::move(job));
    digests_.push_back(digest);
  } else {
    // A job of the last list that this one may yet come to (one that joined before it moves it
    // a place on) goes to the end while there is room without growing the array; else it is
    // written over, and parsed if it comes.
    if (memo_ && jobs_.size() < jobs_.capacity() &&
        memo_->Moved(digests_[kept_], static_cast<uint32_t>(jobs_.size()))) {
      jobs_.push_back(std::move(jobs_[kept_]));
      digests_.push_back(digests_[kept_]);
    }
    jobs_[kept_] = std::move(job);
    digests_[kept_] = digest;
  }
  ++kept_;
}

bool JobListStream::EndJobFromMemo(uint64_t digest) {
  JobListMemo::Entry* known = memo_->Recall(digest);
  if (!known) return false;
  const bool wanted = known->always_wanted || Tracks(*keep_, known->job_id);
  if (wanted) {
    if (!KeepFrom(digest, known->place)) return false;  // no longer held: parsed
    known->place = static_cast<uint32_t>(kept_ - 1);
  } else {
    known->place = JobListMemo::kNotKept;
  }
  ++jobs_read_;
  return true;
}

void JobListStream::EndJob(std::string_view text) {
  const uint64_t digest = memo_ ? memo_->Digest(text) : 0;
  if (memo_ && EndJobFromMemo(digest)) {
    job_.clear();
    return;
  }
  if (text.data() != job_.data()) job_.assign(text);  // the decoder wants its own, padded copy
  ++jobs_parsed_;
  Result<DecodedJob> decoded =
      decoder_.Decode(job_, "jobs[" + std::to_string(jobs_read_++) + "]", keep_);
  job_.clear();
  if (!decoded) {
    error_ = decoded.error();
    return;
  }
  JobInfo& job = decoded->job;
  if (memo_) {
    memo_->Note(digest, {job.job_id, !decoded->decided_by_filter || Tagged(*keep_, job.comment),
                         decoded->whole ? static_cast<uint32_t>(kept_) : JobListMemo::kNotKept});
  }
  if (decoded->whole) KeepParsed(digest, std::move(job));
}

void JobListStream::Malformed(std::string what) {
  error_ = Error{Code::kInternal, "not JSON as slurmrestd writes it: " + std::move(what),
                 "jobs[" + std::to_string(jobs_read_) + "]"};
}

Result<JobListAnswer> JobListStream::Finish() {
  Result<JobListAnswer> answer = FinishAnswer();
  if (memo_) {
    // "nothing changed" lists no job, and says nothing of the jobs the memo holds
    if (answer && answer->listed > 0) {
      memo_->Commit();
    } else {
      memo_->Abandon();
    }
  }
  return answer;
}

Result<JobListAnswer> JobListStream::FinishAnswer() {
  while (part_ == Part::kJob && !close_indent_.empty() && !error_) ScanJobAfresh();
  if (error_) return std::unexpected(*error_);
  if (in_string_ || depth_ != 0 || part_ != Part::kSkeleton) {
    return Fail(Code::kInternal, "not JSON: the answer ends inside a value", "");
  }
  Result<JobListAnswer> answer = DecodeJobList(dialect_, skeleton_);
  if (!answer) return answer;
  answer->listed = jobs_read_;
  answer->parsed = jobs_parsed_;
  // "nothing changed": the jobs given to Reuse stay for GiveBack, where the memo knows them
  if (memo_ && jobs_read_ == 0) return answer;
  jobs_.resize(kept_);
  digests_.resize(kept_);
  answer->jobs = std::move(jobs_);
  if (memo_) answer->digests = std::move(digests_);
  jobs_.clear();
  digests_.clear();
  kept_ = 0;
  return answer;
}

}  // namespace slurmfleet::slurm
