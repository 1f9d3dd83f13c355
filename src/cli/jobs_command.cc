// `slurmfleet jobs submit|get|list|cancel`: a thin front end on the slurmrestd client, for admins
// debugging their cluster and for checking later features by hand.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "base/json_depth.h"
#include "base/json_strict.h"
#include "base/utf8.h"
#include "cli/client_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/job_view.h"
#include "cli/output_tail.h"
#include "slurm/job_outcome.h"
#include "spec/job_desc_schema.h"

namespace slurmfleet::cli {
namespace {

struct SubmitOptions {
  std::string script_file;
  std::vector<std::string> job_json;  // one per component; two or more make a heterogeneous job
  std::string name;
  std::string partition;
  std::string cwd;
  bool hold = false;
  bool follow = false;
  double follow_timeout_s = 600;
  std::string output_root;
};

Result<std::string> ReadFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(Code::kInvalidInput, "cannot read '" + path + "'", flag);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `--job` takes inline JSON ({...}) or a file holding it.
Result<slurm::JobRequest> LoadJobDesc(const std::string& arg, size_t index) {
  const std::string where = "--job #" + std::to_string(index + 1);
  std::string text = arg;
  if (arg.find('{') == std::string::npos) {
    Result<std::string> content = ReadFile(arg, where);
    if (!content) return std::unexpected(content.error());
    text = *content;
  }
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    return Fail(Code::kInvalidInput,
                "the JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
                    " levels; no job_desc field needs that",
                where);
  }
  std::expected<nlohmann::json, JsonRefusal> j = ParseJsonStrictly(text);
  if (!j) {
    return Fail(Code::kInvalidInput,
                "the JSON " + j.error().Describe() +
                    "; give a job_desc object such as {\"cpus_per_task\": 2}",
                where);
  }
  return slurm::JobRequestFromJobDesc(*j, where);
}

int RunSubmit(const ClientOptions& co, const SubmitOptions& so) {
  Result<std::string> script = ReadFile(so.script_file, "--script");
  if (!script) return ReportError(script.error(), co.json);
  if (script->find_first_not_of(" \t\r\n") == std::string::npos) {
    return ReportError(Error{Code::kInvalidInput,
                             so.script_file + " is empty; write the job's batch script in it, "
                                              "starting with a line such as #!/bin/bash",
                             "--script"},
                       co.json);
  }
  if (std::optional<size_t> at = FirstInvalidUtf8(*script)) {
    return ReportError(Error{Code::kInvalidInput,
                             so.script_file + " is not UTF-8 (byte " + std::to_string(*at + 1) +
                                 " is not part of a UTF-8 character); convert it, e.g. with "
                                 "iconv -f latin1 -t utf-8",
                             "--script"},
                       co.json);
  }
  std::vector<slurm::JobRequest> components;
  std::vector<std::string> descs =
      so.job_json.empty() ? std::vector<std::string>{"{}"} : so.job_json;
  for (size_t i = 0; i < descs.size(); ++i) {
    Result<slurm::JobRequest> r = LoadJobDesc(descs[i], i);
    if (!r) return ReportError(r.error(), co.json);
    if (!so.name.empty()) r->name = so.name;
    if (!so.partition.empty()) r->partition = so.partition;
    if (!so.cwd.empty()) r->current_working_directory = so.cwd;
    if (so.hold) r->hold = true;
    if (i == 0 && r->current_working_directory.empty()) {
      return ReportError(
          Error{Code::kInvalidInput,
                "the job needs a working directory on the cluster: where its script starts and "
                "Slurm writes its output; pass --cwd DIR (or current_working_directory in --job)",
                "--cwd"},
          co.json);
    }
    if (r->name.empty()) r->name = "slurmfleet-cli";
    // Slurm requires an environment and the job sees only what is sent: give it a usable PATH
    if (r->environment.empty())
      r->environment.push_back({"PATH", "/usr/local/bin:/usr/bin:/bin", false});
    r->script = *script;
    components.push_back(std::move(*r));
  }
  auto conn = Connect(co);
  if (!conn) return ReportError(conn.error(), co.json);
  slurm::Client& client = *(*conn)->client;
  for (size_t i = 0; i < components.size(); ++i) {
    Status checked = spec::CheckJobDescFields(components[i].extra_fields, client.api_version(),
                                              "--job #" + std::to_string(i + 1));
    if (!checked) return ReportError(checked.error(), co.json);
  }
  Result<slurm::SubmitReceipt> receipt =
      components.size() == 1 ? client.Submit(components[0]) : client.SubmitHet(components);
  if (!receipt) return ReportError(receipt.error(), co.json);
  for (const std::string& w : receipt->warnings) std::cerr << "slurm warning: " << w << "\n";
  if (!co.json) std::cout << "submitted job " << receipt->job_id << "\n";
  if (!so.follow) {
    if (co.json) std::cout << nlohmann::json{{"job_id", receipt->job_id}}.dump(2) << "\n";
    return kExitOk;
  }

  // follow: print each state change until the job can no longer change
  slurm::JobRef ref{receipt->job_id, ""};
  std::string last;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(so.follow_timeout_s * 1000));
  std::vector<slurm::JobInfo> jobs;
  for (;;) {
    Result<std::vector<slurm::JobInfo>> got = client.GetJob(ref);
    if (!got) return ReportError(got.error(), co.json);
    jobs = std::move(*got);
    const slurm::JobInfo& leader = jobs.front();
    if (ref.sluid.empty()) ref.sluid = leader.sluid;
    std::string now = slurm::JobStateString(leader.state) + " (" + leader.state_reason + ")";
    if (now != last && !co.json) std::cout << "job " << leader.job_id << ": " << now << "\n";
    last = now;
    bool all_final = true;
    for (const slurm::JobInfo& j : jobs) all_final = all_final && IsFinal(j.state);
    if (all_final) break;
    if (std::chrono::steady_clock::now() > deadline) {
      // not an error of the job nor of the command: the job as it is now, and its own exit code
      std::cerr << "job " << leader.job_id << " still " << now
                << " after --follow-timeout; it keeps running\n";
      if (co.json) std::cout << JobToJson(leader).dump(2) << "\n";
      return kExitStillRunning;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const slurm::JobInfo& leader = jobs.front();
  // The cluster's paths, seen through where that filesystem is mounted here, and only their ends
  // (output_tail.h). A job that failed before its script ran wrote neither file. A file that
  // cannot be read here is said, and changes nothing about the job's result.
  const bool read_files = !so.output_root.empty() && !leader.standard_output.empty() &&
                          leader.exit_code.signal != slurm::kSetupFailureSignal;
  const bool separate_errors =
      !leader.standard_error.empty() && leader.standard_error != "/dev/null";
  struct Shown {
    const char* field;
    const std::string* path;
    Result<OutputTail> tail = Fail(Code::kNotFound, "not read");
  };
  std::vector<Shown> shown;
  if (read_files) {
    shown.push_back({"output", &leader.standard_output});
    if (separate_errors) shown.push_back({"errors", &leader.standard_error});
  }
  for (Shown& s : shown) {
    if (*s.path != "/dev/null") s.tail = ReadOutputTail(so.output_root + *s.path);
  }
  bool ok = leader.state.base == slurm::BaseState::kCompleted;
  if (co.json) {
    nlohmann::json j = JobToJson(leader);
    for (const Shown& s : shown) {
      if (s.tail) {
        j[s.field] = s.tail->text;
        if (s.tail->skipped_bytes > 0)
          j[std::string(s.field) + "_skipped_bytes"] = s.tail->skipped_bytes;
      } else {
        j[std::string(s.field) + "_error"] = s.tail.error().ToString();
      }
    }
    std::cout << j.dump(2) << "\n";
  } else {
    if (!ok) {
      std::cout << fmt::format("job {} ended {}\n", leader.job_id, slurm::DescribeOutcome(leader));
    }
    for (const Shown& s : shown) {
      std::cout << "--- " << *s.path << " ---\n";
      if (!s.tail) {
        std::cout << "(" << s.tail.error().ToString() << ")\n";
      } else if (s.tail->skipped_bytes > 0) {
        std::cout << fmt::format("[the first {} bytes are not shown]\n", s.tail->skipped_bytes)
                  << s.tail->text;
      } else {
        std::cout << s.tail->text;
      }
    }
  }
  return ok ? kExitOk : kExitFailure;
}

slurm::JobRef ParseRef(const std::string& arg) {
  slurm::JobRef ref;
  if (!arg.empty() && arg[0] == 's') {
    ref.sluid = arg;
  } else {
    ref.id = static_cast<uint32_t>(std::stoul(arg));
  }
  return ref;
}

CLI::Validator JobRefValidator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty()) return "a job id or SLUID is required";
        if (s[0] == 's')
          return s.size() == 14 ? "" : "'" + s + "' is not a SLUID (s + 13 characters)";
        for (char c : s) {
          if (c < '0' || c > '9') return "'" + s + "' is not a job id or SLUID";
        }
        return s.size() <= 10 && std::stoull(s) <= UINT32_MAX ? "" : "'" + s + "' is out of range";
      },
      "ID|SLUID");
}

// Signals by name (TERM or SIGTERM) or number. An empty one is refused: `--signal "$SIG"` with
// SIG unset must not cancel the job.
CLI::Validator SignalValidator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        static constexpr std::string_view kNames[] = {
            "HUP",  "INT",   "QUIT", "ABRT", "KILL", "USR1", "USR2",   "PIPE", "ALRM",
            "TERM", "CONT",  "STOP", "TSTP", "TTIN", "TTOU", "URG",    "XCPU", "XFSZ",
            "PROF", "WINCH", "BUS",  "SEGV", "ILL",  "FPE",  "VTALRM", "TRAP", "SYS"};
        std::string upper;
        for (char c : s) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const std::string_view name =
            std::string_view(upper).starts_with("SIG") ? std::string_view(upper).substr(3) : upper;
        for (std::string_view known : kNames) {
          if (name == known) return {};
        }
        if (!s.empty() && s.size() <= 2 && s.find_first_not_of("0123456789") == std::string::npos &&
            std::stoi(s) >= 1 && std::stoi(s) <= 64) {
          return {};
        }
        return "'" + s +
               "' is not a signal; give a name such as TERM, KILL, USR1 or INT (with or without "
               "SIG) or a number from 1 to 64, or leave --signal out to cancel the job";
      },
      "SIGNAL");
}

void PrintJobs(const std::vector<slurm::JobInfo>& jobs, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const slurm::JobInfo& j : jobs) out.push_back(JobToJson(j));
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << JobHeaderLine() << "\n";
  for (const slurm::JobInfo& j : jobs) std::cout << JobLine(j) << "\n";
}

int RunGet(const ClientOptions& co, const std::string& arg) {
  auto conn = Connect(co);
  if (!conn) return ReportError(conn.error(), co.json);
  slurm::JobRef ref = ParseRef(arg);
  if (!ref.sluid.empty() && !(*conn)->client->dialect().has_sluid) {
    return ReportError(
        {Code::kInvalidInput,
         "API " + std::string((*conn)->client->api_version()) + " has no SLUIDs; use the job id",
         "jobs get"},
        co.json);
  }
  Result<std::vector<slurm::JobInfo>> jobs = (*conn)->client->GetJob(ref);
  if (!jobs) return ReportError(jobs.error(), co.json);
  PrintJobs(*jobs, co.json);
  return kExitOk;
}

int RunList(const ClientOptions& co, const std::string& prefix) {
  auto conn = Connect(co);
  if (!conn) return ReportError(conn.error(), co.json);
  Result<std::vector<slurm::JobInfo>> jobs = (*conn)->client->ListJobs(prefix);
  if (!jobs) return ReportError(jobs.error(), co.json);
  PrintJobs(*jobs, co.json);
  return kExitOk;
}

int RunCancel(const ClientOptions& co, const std::string& arg, const std::string& signal) {
  auto conn = Connect(co);
  if (!conn) return ReportError(conn.error(), co.json);
  slurm::JobRef ref = ParseRef(arg);
  Status s = (*conn)->client->Cancel(ref, signal);
  if (!s) return ReportError(s.error(), co.json);
  if (co.json) {
    std::cout << nlohmann::json{{"cancelled", ref.ToString()}}.dump(2) << "\n";
  } else {
    std::cout << (signal.empty() ? "cancelled job " : "sent " + signal + " to job ")
              << ref.ToString() << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddJobsCommand(CLI::App& app, CommandResult& result) {
  CLI::App* jobs =
      app.add_subcommand("jobs", "submit, inspect and cancel Slurm jobs through slurmrestd");
  jobs->require_subcommand(1);

  {
    auto co = std::make_shared<ClientOptions>();
    auto so = std::make_shared<SubmitOptions>();
    CLI::App* cmd = jobs->add_subcommand("submit", "submit a batch script");
    AddClientFlags(*cmd, *co);
    cmd->add_option("--script", so->script_file, "the batch script file")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option(
        "--job", so->job_json,
        "job_desc JSON, inline or a file; repeat for each component of a heterogeneous job");
    cmd->add_option("--name", so->name, "job name");
    cmd->add_option("--partition", so->partition, "partition");
    cmd->add_option("--cwd", so->cwd, "working directory on the cluster");
    cmd->add_flag("--hold", so->hold, "submit held");
    cmd->add_flag("--follow", so->follow, "wait until the job ends, printing its state changes");
    cmd->add_option("--follow-timeout", so->follow_timeout_s,
                    "give up following after this many seconds")
        ->default_val(600)
        ->check(Seconds(86400 * 30));
    cmd->add_option(
        "--output-root", so->output_root,
        "where the cluster's filesystem is visible here; with --follow, print the job's output");
    cmd->callback([co, so, &result] { result.exit_code = RunSubmit(*co, *so); });
  }
  {
    auto co = std::make_shared<ClientOptions>();
    auto id = std::make_shared<std::string>();
    CLI::App* cmd =
        jobs->add_subcommand("get", "show a job (every component of a heterogeneous job)");
    AddClientFlags(*cmd, *co);
    cmd->add_option("job", *id, "job id or SLUID")->required()->check(JobRefValidator());
    cmd->callback([co, id, &result] { result.exit_code = RunGet(*co, *id); });
  }
  {
    auto co = std::make_shared<ClientOptions>();
    auto prefix = std::make_shared<std::string>();
    CLI::App* cmd = jobs->add_subcommand("list", "list jobs, optionally by name prefix");
    AddClientFlags(*cmd, *co);
    cmd->add_option("--prefix", *prefix, "only jobs whose name starts with this");
    cmd->callback([co, prefix, &result] { result.exit_code = RunList(*co, *prefix); });
  }
  {
    auto co = std::make_shared<ClientOptions>();
    auto id = std::make_shared<std::string>();
    auto signal = std::make_shared<std::string>();
    CLI::App* cmd =
        jobs->add_subcommand("cancel", "cancel a job of the token's user (or send it a signal)");
    AddClientFlags(*cmd, *co);
    cmd->add_option("job", *id, "job id or SLUID")->required()->check(JobRefValidator());
    cmd->add_option("--signal", *signal, "send this signal (e.g. SIGTERM) instead of cancelling")
        ->check(SignalValidator());
    cmd->callback([co, id, signal, &result] { result.exit_code = RunCancel(*co, *id, *signal); });
  }
}

}  // namespace slurmfleet::cli
