#include "slurm/dialect.h"

#include <algorithm>
#include <array>
#include <type_traits>

namespace slurmfleet::slurm {
namespace {

// Encoding is the same in every version we speak (the job_desc fields we set did not change
// between v0.0.42 and v0.0.45); what differs is what job_info carries back.
constexpr std::array<Dialect, 4> kDialects{{
    {"v0.0.45", /*has_sluid=*/true, /*has_stdout_expanded=*/true, /*deprecated=*/false},
    {"v0.0.44", true, true, false},
    {"v0.0.43", false, true, false},
    {"v0.0.42", false, false, true},
}};

nlohmann::json NoValNumber(uint64_t n) { return {{"set", true}, {"number", n}}; }

// 0 is Slurm's "all of each node's memory", which a batch job may ask for; an agent template must
// name an amount (kMemoryMbRange).
constexpr WholeNumberRange kBatchMemoryMbRange{0, kMemoryMbRange.max, kMemoryMbRange.unit};

}  // namespace

std::string Dialect::Path(std::string_view path) const {
  std::string out = "/slurm/";
  out += version;
  out += path;
  return out;
}

std::span<const Dialect> AllDialects() { return kDialects; }

const Dialect* FindDialect(std::string_view version) {
  for (const Dialect& d : kDialects) {
    if (d.version == version) return &d;
  }
  return nullptr;
}

std::string SupportedVersions() {
  std::string out;
  for (auto it = kDialects.rbegin(); it != kDialects.rend(); ++it) {
    if (!out.empty()) out += ", ";
    out += it->version;
  }
  return out;
}

nlohmann::json EncodeJobDesc(const Dialect&, const JobRequest& r, bool redact_secrets) {
  nlohmann::json j = r.extra_fields.is_object() ? r.extra_fields : nlohmann::json::object();
  auto put_string = [&j](const char* key, const std::string& value) {
    if (!value.empty()) j[key] = value;
  };
  put_string("script", r.script);
  put_string("name", r.name);
  put_string("comment", r.comment);
  put_string("partition", r.partition);
  put_string("account", r.account);
  put_string("qos", r.qos);
  put_string("tres_per_job", r.tres_per_job);
  put_string("constraints", r.constraints);
  put_string("current_working_directory", r.current_working_directory);
  put_string("standard_output", r.standard_output);
  put_string("standard_error", r.standard_error);
  if (r.cpus_per_task) j["cpus_per_task"] = *r.cpus_per_task;
  if (r.tasks) j["tasks"] = *r.tasks;
  if (r.minimum_nodes) j["minimum_nodes"] = *r.minimum_nodes;
  if (r.maximum_nodes) j["maximum_nodes"] = *r.maximum_nodes;
  if (r.memory_per_node_mb) j["memory_per_node"] = NoValNumber(*r.memory_per_node_mb);
  if (r.time_limit_minutes) j["time_limit"] = NoValNumber(*r.time_limit_minutes);
  if (!r.required_nodes.empty()) j["required_nodes"] = r.required_nodes;
  nlohmann::json env = nlohmann::json::array();
  for (const EnvVar& v : r.environment) {
    env.push_back(v.name + "=" + (v.secret && redact_secrets ? std::string("***") : v.value));
  }
  j["environment"] = std::move(env);
  // Never Slurm's requeue: a requeued job runs its script again, and retries are ours.
  j["requeue"] = false;
  j["hold"] = r.hold;
  return j;
}

nlohmann::json EncodeSubmit(const Dialect& dialect, std::span<const JobRequest> components,
                            bool redact_secrets) {
  if (components.size() == 1) {
    return {{"job", EncodeJobDesc(dialect, components[0], redact_secrets)}};
  }
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRequest& c : components) {
    nlohmann::json desc = EncodeJobDesc(dialect, c, redact_secrets);
    desc.erase("script");  // a het job has one script, at the top level
    jobs.push_back(std::move(desc));
  }
  return {{"script", components.empty() ? "" : components[0].script}, {"jobs", std::move(jobs)}};
}

Result<JobRequest> JobRequestFromJobDesc(const nlohmann::json& desc, const std::string& where) {
  if (!desc.is_object())
    return Fail(Code::kInvalidInput, "a job description must be a JSON object", where);
  JobRequest r;
  nlohmann::json rest = desc;
  std::optional<Error> error;
  auto path = [&where](const std::string& key) { return where.empty() ? key : where + "." + key; };
  auto take = [&](const char* key) -> std::optional<nlohmann::json> {
    auto it = rest.find(key);
    if (it == rest.end()) return std::nullopt;
    nlohmann::json v = std::move(*it);
    rest.erase(it);
    return v;
  };
  auto problem = [&](const char* key, std::string message) {
    if (!error) error = Error{Code::kInvalidInput, std::move(message), path(key)};
  };
  auto bad = [&](const char* key, const std::string& expected) {
    problem(key, "must be " + expected);
  };
  auto str = [&](const char* key, std::string& out) {
    if (auto v = take(key)) {
      if (v->is_string())
        out = v->get<std::string>();
      else
        bad(key, "a string");
    }
  };
  auto count = [&](const char* key, std::optional<int32_t>& out) {
    if (auto v = take(key)) {
      if (std::optional<uint64_t> n = WholeNumberIn(*v, kCountRange))
        out = static_cast<int32_t>(*n);
      else
        problem(key, ExpectedWholeNumber(kCountRange));
    }
  };
  // N or {"set": true, "number": N}; {"set": false} leaves the field unset, as Slurm reads it.
  auto noval = [&](const char* key, const WholeNumberRange& range, auto& out) {
    auto v = take(key);
    if (!v) return;
    const nlohmann::json* number = &*v;
    if (v->is_object()) {
      if (auto infinite = v->find("infinite"); infinite != v->end() && *infinite != false) {
        // JobRequest cannot carry "infinite", and dropping it would quietly give Slurm's default
        problem(key, "must be a number of " + std::string(range.unit) +
                         ", not infinite; leave the field out to use Slurm's default");
        return;
      }
      auto set = v->find("set");
      if (set != v->end() && *set == false) return;
      auto n = v->find("number");
      if (set == v->end() || *set != true || n == v->end()) {
        bad(key, "a number or {\"set\": true, \"number\": N}");
        return;
      }
      number = &*n;
    }
    if (std::optional<uint64_t> n = WholeNumberIn(*number, range))
      out = static_cast<std::remove_cvref_t<decltype(*out)>>(*n);
    else
      problem(key, ExpectedWholeNumber(range));
  };
  auto boolean = [&](const char* key, bool& out) {
    if (auto v = take(key)) {
      if (v->is_boolean())
        out = v->get<bool>();
      else
        bad(key, "true or false");
    }
  };
  str("script", r.script);
  str("name", r.name);
  str("comment", r.comment);
  str("partition", r.partition);
  str("account", r.account);
  str("qos", r.qos);
  str("tres_per_job", r.tres_per_job);
  str("constraints", r.constraints);
  str("current_working_directory", r.current_working_directory);
  str("standard_output", r.standard_output);
  str("standard_error", r.standard_error);
  count("cpus_per_task", r.cpus_per_task);
  count("tasks", r.tasks);
  count("minimum_nodes", r.minimum_nodes);
  count("maximum_nodes", r.maximum_nodes);
  noval("memory_per_node", kBatchMemoryMbRange, r.memory_per_node_mb);
  noval("time_limit", kTimeLimitRange, r.time_limit_minutes);
  if (auto v = take("requeue"); v && *v != false) {
    bad("requeue",
        "false or left out: slurmfleet submits every job with requeue=false and retries on its "
        "own, since a requeued job runs its script a second time");
  }
  if (take("array")) {
    problem("array",
            "job arrays are not submitted by slurmfleet: every task would carry the job's tag, and "
            "all but one would be taken for duplicates and cancelled; submit one job per task");
  }
  boolean("hold", r.hold);
  if (auto v = take("required_nodes")) {
    if (v->is_string()) {
      std::string csv = v->get<std::string>();
      for (size_t start = 0; start <= csv.size();) {
        size_t comma = csv.find(',', start);
        if (comma == std::string::npos) comma = csv.size();
        if (comma > start) r.required_nodes.push_back(csv.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (v->is_array() &&
               std::all_of(v->begin(), v->end(), [](const auto& x) { return x.is_string(); })) {
      r.required_nodes = v->get<std::vector<std::string>>();
    } else {
      bad("required_nodes", "a list of node names");
    }
  }
  if (auto v = take("environment")) {
    bool ok = v->is_array();
    if (ok) {
      for (const nlohmann::json& item : *v) {
        std::string kv = item.is_string() ? item.get<std::string>() : "";
        size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
          ok = false;
          break;
        }
        r.environment.push_back({kv.substr(0, eq), kv.substr(eq + 1), false});
      }
    }
    if (!ok) bad("environment", "a list of \"NAME=value\" strings");
  }
  if (error) return std::unexpected(*error);
  r.extra_fields = std::move(rest);
  return r;
}

}  // namespace slurmfleet::slurm
