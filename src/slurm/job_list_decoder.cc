#include "slurm/job_list_decoder.h"

#include <simdjson.h>

#include "slurm/output_path.h"

namespace slurmfleet::slurm {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// A wrong shape at `path`: thrown inside the decoder only, caught at its boundary.
struct ShapeError {
  std::string path;
  std::string expected;
};

// Where a value is, for errors: its JSON path, made into text only when an error is thrown (a
// full list is thousands of jobs of 21 decoded fields each).
class Where {
 public:
  Where(const std::string& path) : base_(path) {}  // a whole path
  Where(const std::string& base, std::string_view field) : base_(base), field_(field) {}
  std::string Text(std::string_view more = "") const {
    std::string text = base_;
    if (!field_.empty()) text.append(".").append(field_);
    return text.append(more);
  }

 private:
  const std::string& base_;
  std::string_view field_;
};

std::string String(value v, const Where& path) {
  std::string_view out;
  if (v.get_string().get(out)) throw ShapeError{path.Text(), "a string"};
  return std::string(out);
}

std::vector<std::string> Strings(value v, const Where& path) {
  array items;
  if (v.get_array().get(items)) throw ShapeError{path.Text(), "an array of strings"};
  std::vector<std::string> out;
  for (auto item : items) {
    std::string_view s;
    if (item.get_string().get(s)) throw ShapeError{path.Text(), "an array of strings"};
    out.emplace_back(s);
  }
  return out;
}

// Slurm's {"set", "infinite", "number"} structs, or a plain number; nullopt when unset/infinite.
std::optional<int64_t> NoVal(value v, const Where& path) {
  json_type type;
  if (v.type().get(type)) throw ShapeError{path.Text(), "a number"};
  if (type == json_type::number) {
    int64_t n = 0;
    if (v.get_int64().get(n)) throw ShapeError{path.Text(), "an integer"};
    return n;
  }
  object o;
  if (v.get_object().get(o))
    throw ShapeError{path.Text(), "a number or a {set, infinite, number} object"};
  bool set = false, infinite = false;
  std::optional<int64_t> number;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) throw ShapeError{path.Text(), "an object"};
    if (key == "set") {
      if (field.value().get_bool().get(set)) throw ShapeError{path.Text(".set"), "true or false"};
    } else if (key == "infinite") {
      if (field.value().get_bool().get(infinite))
        throw ShapeError{path.Text(".infinite"), "true or false"};
    } else if (key == "number") {
      double d = 0;
      int64_t n = 0;
      if (!field.value().get_int64().get(n)) {
        number = n;
      } else if (!field.value().get_double().get(d)) {
        // a double past int64's range has no integer value (casting it is undefined)
        if (!(d > -9.2e18 && d < 9.2e18)) throw ShapeError{path.Text(".number"), "a number"};
        number = static_cast<int64_t>(d);
      } else {
        throw ShapeError{path.Text(".number"), "a number"};
      }
    }
  }
  if (!set || infinite) return std::nullopt;
  return number;
}

std::optional<Seconds> Time(value v, const Where& path) {
  std::optional<int64_t> n = NoVal(v, path);
  if (!n || *n <= 0) return std::nullopt;
  return Seconds(std::chrono::seconds(*n));
}

ExitCode DecodeExitCode(value v, const Where& path) {
  object o;
  if (v.get_object().get(o)) throw ShapeError{path.Text(), "an object"};
  ExitCode e;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) throw ShapeError{path.Text(), "an object"};
    if (key == "status") {
      e.status = Strings(field.value(), path.Text(".status"));
    } else if (key == "return_code") {
      if (auto n = NoVal(field.value(), path.Text(".return_code")))
        e.return_code = static_cast<int32_t>(*n);
    } else if (key == "signal") {
      object sig;
      if (field.value().get_object().get(sig)) throw ShapeError{path.Text(".signal"), "an object"};
      for (auto s : sig) {
        std::string_view k;
        if (s.unescaped_key().get(k)) throw ShapeError{path.Text(".signal"), "an object"};
        if (k == "id") {
          if (auto n = NoVal(s.value(), path.Text(".signal.id")))
            e.signal = static_cast<int32_t>(*n);
        } else if (k == "name") {
          e.signal_name = String(s.value(), path.Text(".signal.name"));
        }
      }
    }
  }
  return e;
}

// The job fields JobInfo holds. A job has about 120 fields and only these are read: the key is
// sorted out by its length first, so most keys cost one switch and at most a few compares.
enum class JobKey {
  kOther,
  kJobId,
  kName,
  kUserName,
  kAccount,
  kPartition,
  kComment,
  kJobState,
  kStateReason,
  kStateDescription,
  kNodes,
  kExitCode,
  kSubmitTime,
  kStartTime,
  kEndTime,
  kTimeLimit,
  kCurrentWorkingDirectory,
  kStandardOutput,
  kStdoutExpanded,
  kStandardError,
  kStderrExpanded,
  kBatchHost,
  kHetJobId,
  kHetJobOffset,
  kStepId,
};

JobKey JobKeyOf(std::string_view key) {
  switch (key.size()) {
    case 4:
      if (key == "name") return JobKey::kName;
      break;
    case 5:
      if (key == "nodes") return JobKey::kNodes;
      break;
    case 6:
      if (key == "job_id") return JobKey::kJobId;
      break;
    case 7:
      if (key == "account") return JobKey::kAccount;
      if (key == "comment") return JobKey::kComment;
      if (key == "step_id") return JobKey::kStepId;
      break;
    case 8:
      if (key == "end_time") return JobKey::kEndTime;
      break;
    case 9:
      if (key == "user_name") return JobKey::kUserName;
      if (key == "partition") return JobKey::kPartition;
      if (key == "job_state") return JobKey::kJobState;
      if (key == "exit_code") return JobKey::kExitCode;
      break;
    case 10:
      if (key == "start_time") return JobKey::kStartTime;
      if (key == "time_limit") return JobKey::kTimeLimit;
      if (key == "het_job_id") return JobKey::kHetJobId;
      if (key == "batch_host") return JobKey::kBatchHost;
      break;
    case 11:
      if (key == "submit_time") return JobKey::kSubmitTime;
      break;
    case 12:
      if (key == "state_reason") return JobKey::kStateReason;
      break;
    case 14:
      if (key == "het_job_offset") return JobKey::kHetJobOffset;
      if (key == "standard_error") return JobKey::kStandardError;
      break;
    case 15:
      if (key == "standard_output") return JobKey::kStandardOutput;
      if (key == "stdout_expanded") return JobKey::kStdoutExpanded;
      if (key == "stderr_expanded") return JobKey::kStderrExpanded;
      break;
    case 17:
      if (key == "state_description") return JobKey::kStateDescription;
      break;
    case 25:
      if (key == "current_working_directory") return JobKey::kCurrentWorkingDirectory;
      break;
  }
  return JobKey::kOther;
}

// Left out (not `whole`) when `keep` does not want the job: known once its id and comment were
// read, so the fields after them are neither read nor stepped over.
DecodedJob DecodeJob(const Dialect& dialect, value v, const std::string& path,
                     const JobFilter* keep) {
  object o;
  if (v.get_object().get(o)) throw ShapeError{path, "an object"};
  DecodedJob decoded;
  JobInfo& j = decoded.job;
  std::string stdout_expanded, standard_output, stderr_expanded, standard_error;
  bool seen_id = false, seen_comment = false;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) throw ShapeError{path, "an object"};
    const Where at(path, key);
    const JobKey job_key = JobKeyOf(key);
    seen_id |= job_key == JobKey::kJobId;
    seen_comment |= job_key == JobKey::kComment;
    switch (job_key) {
      case JobKey::kOther:
        break;
      case JobKey::kJobId: {
        uint64_t id = 0;
        if (field.value().get_uint64().get(id) || id > UINT32_MAX) {
          throw ShapeError{at.Text(), "a job id"};
        }
        j.job_id = static_cast<uint32_t>(id);
        break;
      }
      case JobKey::kName:
        j.name = String(field.value(), at);
        break;
      case JobKey::kUserName:
        j.user_name = String(field.value(), at);
        break;
      case JobKey::kAccount:
        j.account = String(field.value(), at);
        break;
      case JobKey::kPartition:
        j.partition = String(field.value(), at);
        break;
      case JobKey::kComment:
        j.comment = String(field.value(), at);
        break;
      case JobKey::kJobState:
        j.state = ParseJobState(Strings(field.value(), at));
        break;
      case JobKey::kStateReason:
        j.state_reason = String(field.value(), at);
        break;
      case JobKey::kStateDescription:
        j.state_description = String(field.value(), at);
        break;
      case JobKey::kNodes:
        j.nodes = String(field.value(), at);
        break;
      case JobKey::kExitCode:
        j.exit_code = DecodeExitCode(field.value(), at);
        break;
      case JobKey::kSubmitTime:
        j.submit_time = Time(field.value(), at);
        break;
      case JobKey::kStartTime:
        j.start_time = Time(field.value(), at);
        break;
      case JobKey::kEndTime:
        j.end_time = Time(field.value(), at);
        break;
      case JobKey::kTimeLimit:
        if (auto n = NoVal(field.value(), at)) j.time_limit_minutes = static_cast<uint32_t>(*n);
        break;
      case JobKey::kCurrentWorkingDirectory:
        j.current_working_directory = String(field.value(), at);
        break;
      case JobKey::kStandardOutput:
        standard_output = String(field.value(), at);
        break;
      case JobKey::kStdoutExpanded:
        if (dialect.has_stdout_expanded) stdout_expanded = String(field.value(), at);
        break;
      case JobKey::kStandardError:
        standard_error = String(field.value(), at);
        break;
      case JobKey::kStderrExpanded:
        if (dialect.has_stdout_expanded) stderr_expanded = String(field.value(), at);
        break;
      case JobKey::kBatchHost:
        j.batch_host = String(field.value(), at);
        break;
      case JobKey::kHetJobId:
        if (auto n = NoVal(field.value(), at); n && *n != 0) {
          j.het_job_id = static_cast<uint32_t>(*n);
        }
        break;
      case JobKey::kHetJobOffset:
        if (auto n = NoVal(field.value(), at)) j.het_job_offset = static_cast<uint32_t>(*n);
        break;
      case JobKey::kStepId:
        if (dialect.has_sluid) {
          object step;
          if (field.value().get_object().get(step)) throw ShapeError{at.Text(), "an object"};
          for (auto s : step) {
            std::string_view k;
            if (s.unescaped_key().get(k)) throw ShapeError{at.Text(), "an object"};
            if (k == "sluid") j.sluid = String(s.value(), at.Text(".sluid"));
          }
        }
        break;
    }
    if (keep && seen_id && seen_comment) {
      decoded.decided_by_filter = true;
      if (!Wants(*keep, j.job_id, j.comment)) {
        decoded.whole = false;
        return decoded;
      }
      keep = nullptr;  // wanted: read whole
    }
  }
  if (dialect.has_stdout_expanded) {
    j.standard_output = stdout_expanded.empty() ? standard_output : stdout_expanded;
    j.standard_error = stderr_expanded.empty() ? standard_error : stderr_expanded;
  } else {
    j.standard_output = CompleteOutputPath(standard_output, j);
    j.standard_error = CompleteOutputPath(standard_error, j);
  }
  if (j.standard_error == j.standard_output) j.standard_error.clear();
  if (!j.het_job_id) j.het_job_offset.reset();
  return decoded;
}

std::vector<SlurmMessage> Messages(value v, const std::string& path) {
  array items;
  if (v.get_array().get(items)) throw ShapeError{path, "an array"};
  std::vector<SlurmMessage> out;
  for (auto item : items) {
    object o;
    if (item.get_object().get(o)) throw ShapeError{path, "an array of objects"};
    SlurmMessage m;
    for (auto field : o) {
      std::string_view key;
      if (field.unescaped_key().get(key)) throw ShapeError{path, "an object"};
      if (key == "error_number") {
        int64_t n = 0;
        if (!field.value().get_int64().get(n)) m.error_number = static_cast<int>(n);
      } else if (key == "error") {
        m.error = String(field.value(), path + ".error");
      } else if (key == "description") {
        m.description = String(field.value(), path + ".description");
      } else if (key == "source") {
        m.source = String(field.value(), path + ".source");
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Parses an answer `body` (given the parser's padding) and walks its top-level object: errors and
// warnings go to `errors` and `warnings`, every other field to on_field(key, value), which
// throws ShapeError on another shape. kInternal naming the JSON path when the answer has one.
template <typename OnField>
Status DecodeAnswer(simdjson::ondemand::parser& parser, std::string& body,
                    std::vector<SlurmMessage>& errors, std::vector<SlurmMessage>& warnings,
                    OnField on_field) {
  const size_t size = body.size();
  body.reserve(size + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (auto error = parser.iterate(simdjson::padded_string_view(body.data(), size, body.capacity()))
                       .get(doc)) {
    return Fail(Code::kInternal, std::string("not JSON: ") + simdjson::error_message(error), "");
  }
  try {
    object top;
    if (doc.get_object().get(top)) throw ShapeError{"", "a JSON object"};
    for (auto field : top) {
      std::string_view key;
      if (field.unescaped_key().get(key)) throw ShapeError{"", "a JSON object"};
      if (key == "errors") {
        errors = Messages(field.value(), "errors");
      } else if (key == "warnings") {
        warnings = Messages(field.value(), "warnings");
      } else {
        on_field(key, field.value());
      }
    }
  } catch (const ShapeError& e) {
    return Fail(Code::kInternal, "expected " + e.expected, e.path);
  }
  return {};
}

}  // namespace

Result<JobListAnswer> DecodeJobList(const Dialect& dialect, std::string& body) {
  JobListAnswer answer;
  simdjson::ondemand::parser parser;
  Status decoded = DecodeAnswer(
      parser, body, answer.errors, answer.warnings, [&](std::string_view key, value field) {
        if (key == "jobs") {
          array jobs;
          if (field.get_array().get(jobs)) throw ShapeError{"jobs", "an array"};
          size_t i = 0;
          for (auto job : jobs) {
            value v;
            if (job.get(v)) throw ShapeError{"jobs[" + std::to_string(i) + "]", "a job"};
            answer.jobs.push_back(
                DecodeJob(dialect, v, "jobs[" + std::to_string(i) + "]", nullptr).job);
            ++i;
          }
        } else if (key == "last_update") {
          if (auto n = NoVal(field, std::string("last_update")); n && *n > 0)
            answer.last_update = static_cast<uint64_t>(*n);
        }
      });
  if (!decoded) return std::unexpected(decoded.error());
  answer.listed = answer.parsed = answer.jobs.size();
  return answer;
}

struct OnDemandParser {
  simdjson::ondemand::parser parser;
};

void OnDemandParserDeleter::operator()(OnDemandParser* parser) const { delete parser; }

OnDemandParserPtr NewOnDemandParser() { return OnDemandParserPtr(new OnDemandParser); }

Result<JobStatesAnswer> JobStatesDecoder::Decode(std::string& body) {
  JobStatesAnswer answer;
  Status decoded = DecodeAnswer(
      parser_->parser, body, answer.errors, answer.warnings,
      [&](std::string_view key, value field) {
        if (key != "jobs") return;
        array jobs;
        if (field.get_array().get(jobs)) throw ShapeError{"jobs", "an array"};
        // Room for as many entries as the text could hold (each takes at least 28 bytes): grown
        // by doubling, every larger copy would be written, and its pages faulted in, again.
        // Pages never written are never faulted in.
        answer.jobs.reserve(body.size() / 28);
        size_t i = 0;
        for (auto job : jobs) {
          const std::string path = "jobs[" + std::to_string(i++) + "]";
          object o;
          if (job.get_object().get(o)) throw ShapeError{path, "an object"};
          JobStateEntry entry;
          bool leader = true, has_id = false;
          for (auto f : o) {
            std::string_view k;
            if (f.unescaped_key().get(k)) throw ShapeError{path, "an object"};
            if (k == "job_id") {
              // a string here: "7", "7+1" for a heterogeneous job's component, "7_3" for an
              // array task (a number on some versions)
              std::string_view text;
              uint64_t id = 0;
              if (!f.value().get_string().get(text)) {
                const size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
                leader = digits == text.size() || text.substr(digits) == "+0";
                if (digits == 0 || digits > 10) throw ShapeError{path + ".job_id", "a job id"};
                id = std::stoull(std::string(text.substr(0, digits)));
              } else if (f.value().get_uint64().get(id)) {
                throw ShapeError{path + ".job_id", "a job id"};
              }
              if (id > UINT32_MAX) throw ShapeError{path + ".job_id", "a job id"};
              entry.job_id = static_cast<uint32_t>(id);
              has_id = true;
            } else if (k == "state") {
              entry.state = ParseJobState(Strings(f.value(), path + ".state"));
            }
          }
          if (!has_id) throw ShapeError{path + ".job_id", "a job id"};
          if (leader) answer.jobs.push_back(std::move(entry));
        }
      });
  if (!decoded) return std::unexpected(decoded.error());
  return answer;
}

Result<JobSubmitAnswer> JobSubmitDecoder::Decode(std::string& body) {
  JobSubmitAnswer answer;
  Status decoded =
      DecodeAnswer(parser_->parser, body, answer.errors, answer.warnings,
                   [&](std::string_view key, value field) {
                     if (key == "job_id") {
                       uint64_t id = 0;
                       std::string_view text;
                       if (!field.get_string().get(text)) {  // as jobs/state sends it
                         if (text.empty() || text.size() > 10 ||
                             text.find_first_not_of("0123456789") != std::string_view::npos) {
                           throw ShapeError{"job_id", "a job id"};
                         }
                         id = std::stoull(std::string(text));
                       } else if (field.get_uint64().get(id)) {
                         throw ShapeError{"job_id", "a job id"};
                       }
                       if (id > UINT32_MAX) throw ShapeError{"job_id", "a job id"};
                       answer.job_id = static_cast<uint32_t>(id);
                     } else if (key == "step_id") {
                       answer.step_id = String(field, std::string("step_id"));
                     } else if (key == "job_submit_user_msg") {
                       answer.user_message = String(field, std::string("job_submit_user_msg"));
                     }
                   });
  if (!decoded) return std::unexpected(decoded.error());
  return answer;
}

Result<DecodedJob> JobDecoder::Decode(std::string& text, const std::string& path,
                                      const JobFilter* keep) {
  const size_t size = text.size();
  text.reserve(size + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (auto error =
          parser_->parser.iterate(simdjson::padded_string_view(text.data(), size, text.capacity()))
              .get(doc)) {
    return Fail(Code::kInternal, std::string("not JSON: ") + simdjson::error_message(error), path);
  }
  try {
    value v;
    if (doc.get_value().get(v)) throw ShapeError{path, "a job"};
    return DecodeJob(dialect_, v, path, keep);
  } catch (const ShapeError& e) {
    return Fail(Code::kInternal, "expected " + e.expected, e.path);
  }
}

}  // namespace slurmfleet::slurm
