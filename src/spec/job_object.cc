#include "spec/job_object.h"

#include "slurm/job.h"
#include "spec/suggest.h"

namespace slurmfleet::spec {
namespace {

using nlohmann::json;

class Decoder {
 public:
  Decoder(const std::string& path, std::vector<Error>& problems)
      : path_(path), problems_(problems) {}

  void Problem(const std::string& key, std::string message) {
    problems_.push_back(Error{Code::kInvalidInput, std::move(message), path_ + "." + key});
  }

  std::optional<std::string> String(const std::string& key, const json& v) {
    if (v.is_string()) return v.get<std::string>();
    Problem(key, "expected a string");
    return std::nullopt;
  }

  // CPUs, tasks, nodes: the range `jobs submit` takes too.
  std::optional<int32_t> Count(const std::string& key, const json& v) {
    std::optional<uint64_t> n = slurm::WholeNumberIn(v, slurm::kCountRange);
    if (!n) {
      Problem(key, slurm::ExpectedWholeNumber(slurm::kCountRange));
      return std::nullopt;
    }
    return static_cast<int32_t>(*n);
  }

  // memory_per_node / time_limit: N, or {"set": true, "number": N}. "infinite" and "set": false
  // are refused: an agent must have a finite, explicit request, or Slurm's defaults apply when the
  // field is simply left out.
  std::optional<uint64_t> NoValNumber(const std::string& key, const json& v,
                                      const slurm::WholeNumberRange& range) {
    const std::string unit(range.unit);
    const json* number = &v;
    if (v.is_object()) {
      for (const auto& [k, value] : v.items()) {
        if (k != "set" && k != "number" && k != "infinite") {
          static constexpr std::string_view kKeys[] = {"set", "infinite", "number"};
          Problem(key + "." + k, "unknown field '" + k + "'" + DidYouMean(k, kKeys));
          return std::nullopt;
        }
      }
      if (v.contains("infinite") && v["infinite"] != false) {
        Problem(key, std::string("must be a number of ") + unit + ", not infinite");
        return std::nullopt;
      }
      if (!v.contains("set") || v["set"] != true || !v.contains("number")) {
        Problem(key, std::string("expected {\"set\": true, \"number\": N} or a plain number of ") +
                         unit + "; leave the field out to use Slurm's default");
        return std::nullopt;
      }
      number = &v["number"];
    }
    std::optional<uint64_t> n = slurm::WholeNumberIn(*number, range);
    if (!n) Problem(key, slurm::ExpectedWholeNumber(range));
    return n;
  }

  std::optional<std::vector<std::string>> Nodes(const std::string& key, const json& v) {
    std::vector<std::string> out;
    if (v.is_string()) {
      // "node1,node2": the csv_string form slurmrestd also takes.
      std::string s = v.get<std::string>();
      size_t start = 0;
      while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
      }
      return out;
    }
    if (!v.is_array()) {
      Problem(key, "expected an array of node names");
      return std::nullopt;
    }
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        Problem(key + "[" + std::to_string(i) + "]", "expected a node name");
        return std::nullopt;
      }
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

 private:
  const std::string& path_;
  std::vector<Error>& problems_;
};

void DecodeEnvironment(const json& v, const std::string& path, JobTemplate& layer,
                       std::vector<Error>& problems) {
  if (!v.is_array()) {
    problems.push_back(
        Error{Code::kInvalidInput, "expected an array of \"NAME=value\" strings", path});
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string sub = path + "[" + std::to_string(i) + "]";
    if (!v[i].is_string() || v[i].get<std::string>().find('=') == std::string::npos) {
      problems.push_back(Error{Code::kInvalidInput, "expected a \"NAME=value\" string", sub});
      continue;
    }
    const std::string entry = v[i].get<std::string>();
    const std::string name = entry.substr(0, entry.find('='));
    if (std::string why = CheckEnvironmentName(name); !why.empty()) {
      problems.push_back(Error{Code::kInvalidInput, why, sub});
      continue;
    }
    layer.environment[name] = entry.substr(entry.find('=') + 1);
  }
}

}  // namespace

bool IsReservedJobField(std::string_view name) {
  return name == "script" || name == "name" || name == "comment" || name == "requeue" ||
         name == "hold" || name == "user_id" || name == "group_id";
}

std::string CheckEnvironmentName(std::string_view name) {
  bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    ok = ok &&
         ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (!ok) {
    return "'" + std::string(name) +
           "' is not a valid variable name; use letters, digits and '_', not starting with a "
           "digit";
  }
  if (name == "JENKINS_URL" || name == "JENKINS_SECRET" || name == "JENKINS_AGENT_NAME" ||
      name.starts_with("SLURMFLEET_")) {
    return "'" + std::string(name) + "' is set by slurmfleet for every agent; choose another name";
  }
  return {};
}

void DecodeJobObject(const json& job, const std::string& path, SchemaSet schemas,
                     JobTemplate& layer, std::vector<Error>& problems) {
  if (!job.is_object()) {
    problems.push_back(Error{Code::kInvalidInput, "expected an object of job_desc fields", path});
    return;
  }
  Decoder d(path, problems);
  JobFields& f = layer.job;
  for (const auto& [key, v] : job.items()) {
    if (key == "user_id" || key == "group_id") {
      // A pipeline's JSON must not pick whom its agent runs as: a cloud's token may belong to a
      // user allowed to submit for others.
      d.Problem(key, "agent jobs run as the Slurm user of the cloud's token, and '" + key +
                         "' cannot change that; remove it (give the cloud a token for the user "
                         "agents should run as)");
    } else if (key == "hold") {
      d.Problem(key, "an agent job must start by itself; remove 'hold'");
    } else if (key == "array") {
      d.Problem(key,
                "an agent is one Slurm job, and each array task would start another agent "
                "of the same name; remove 'array'");
    } else if (IsReservedJobField(key)) {
      d.Problem(key, "'" + key +
                         "' is set by slurmfleet for every agent job and cannot be overridden; "
                         "remove it");
    } else if (key == "environment") {
      DecodeEnvironment(v, path + "." + key, layer, problems);
    } else if (key == "partition") {
      f.partition = d.String(key, v);
    } else if (key == "account") {
      f.account = d.String(key, v);
    } else if (key == "qos") {
      f.qos = d.String(key, v);
    } else if (key == "tres_per_job") {
      f.tres_per_job = d.String(key, v);
    } else if (key == "constraints") {
      f.constraints = d.String(key, v);
    } else if (key == "current_working_directory") {
      f.current_working_directory = d.String(key, v);
    } else if (key == "standard_output") {
      f.standard_output = d.String(key, v);
    } else if (key == "standard_error") {
      f.standard_error = d.String(key, v);
    } else if (key == "cpus_per_task") {
      f.cpus_per_task = d.Count(key, v);
    } else if (key == "tasks") {
      f.tasks = d.Count(key, v);
    } else if (key == "minimum_nodes") {
      f.minimum_nodes = d.Count(key, v);
    } else if (key == "maximum_nodes") {
      f.maximum_nodes = d.Count(key, v);
    } else if (key == "memory_per_node") {
      f.memory_per_node_mb = d.NoValNumber(key, v, slurm::kMemoryMbRange);
    } else if (key == "time_limit") {
      if (auto minutes = d.NoValNumber(key, v, slurm::kTimeLimitRange)) {
        f.time_limit_minutes = static_cast<uint32_t>(*minutes);
      }
    } else if (key == "required_nodes") {
      f.required_nodes = d.Nodes(key, v);
    } else {
      const size_t before = problems.size();
      CheckJobDescFieldInAny(schemas, key, v, path + "." + key, problems);
      if (problems.size() == before) f.extra[key] = v;
    }
  }
  // Slurm keeps one memory request and would take one of two silently.
  std::vector<std::string> memory;
  for (const char* key : {"memory_per_node", "memory_per_cpu", "memory_per_tres"}) {
    if (job.contains(key)) memory.emplace_back(key);
  }
  if (memory.size() > 1) {
    d.Problem(memory[1], "'" + memory[0] + "' and '" + memory[1] +
                             "' are one request in Slurm: a job's memory is given per node, per "
                             "CPU or per GPU; keep one of them");
  }
}

}  // namespace slurmfleet::spec
