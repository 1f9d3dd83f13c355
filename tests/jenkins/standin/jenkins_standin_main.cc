// jenkins_standin_main: the stand-in Jenkins controller (test-only) as a process, for the demo
// script and process-level tests. It serves until SIGTERM or SIGINT; SIGUSR1 prints one JSON
// line of stats on stdout, and GET /standin/stats (anonymous, outside Jenkins' namespace)
// serves the same line.
//
//   jenkins_standin_main --port 8080 --token-file /tmp/token --enqueue 'gpu-job:gpu:20' --print-url
#include <signal.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "jenkins/standin/jenkins_standin.h"

namespace {

using slurmfleet::standin::JenkinsStandin;

std::string ReadToken(const std::string& path) {
  std::ifstream in(path);
  std::string token;
  in >> token;
  return token;
}

bool WriteToken(const std::string& path, const std::string& token) {
  umask(077);
  std::ofstream out(path, std::ios::trunc);
  out << token << "\n";
  return static_cast<bool>(out);
}

// "job:label:seconds", where the job path may hold '/' and the label ':'-free text; the label
// may be empty ("job::5").
bool ParseEnqueue(const std::string& spec, std::string& job, std::string& label, double& seconds) {
  size_t first = spec.find(':');
  size_t last = spec.rfind(':');
  if (first == std::string::npos || first == last) return false;
  job = spec.substr(0, first);
  label = spec.substr(first + 1, last - first - 1);
  try {
    size_t used = 0;
    seconds = std::stod(spec.substr(last + 1), &used);
    if (used != spec.size() - last - 1) return false;
  } catch (const std::exception&) {
    return false;
  }
  return !job.empty() && seconds >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The stand-in Jenkins controller (test-only): serves Jenkins' HTTP API as "
      "slurmfleet uses it, until SIGTERM"};
  JenkinsStandin::Options options;
  std::string token_file;
  std::vector<std::string> enqueue, enqueue_pipeline;
  bool print_url = false;
  int quiet_ms = 0;
  app.add_option("--port", options.port, "TCP port (0: ephemeral)");
  app.add_option("--host", options.host, "listen address");
  app.add_option("--user", options.user, "the user whose API token is accepted");
  app.add_option("--token-file", token_file,
                 "API token file; when missing or empty, a new token is written there");
  app.add_option("--enqueue", enqueue, "queue a freestyle build: job:label:seconds (repeatable)");
  app.add_option("--enqueue-pipeline", enqueue_pipeline,
                 "queue a Pipeline node() block: job:label:seconds (repeatable)");
  app.add_option("--quiet-period-ms", quiet_ms, "quiet period of new queue items");
  app.add_option("--default-locale", options.default_locale,
                 "the controller's locale for requests without Accept-Language (en or de)")
      ->check(CLI::IsMember({"en", "de"}))
      ->capture_default_str();
  app.add_flag(
      "--no-administer", [&](int64_t) { options.administer = false; }, "/scriptText answers 403");
  app.add_flag("--print-url", print_url, "print the URL on stdout once listening");
  CLI11_PARSE(app, argc, argv);
  options.quiet_period = std::chrono::milliseconds(quiet_ms);

  if (!token_file.empty()) {
    options.api_token = ReadToken(token_file);
  }

  // Block the signals before any thread starts, so that only sigwait() below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto standin = JenkinsStandin::Start(options);
  if (!standin) return 1;
  if (!token_file.empty() && options.api_token.empty() &&
      !WriteToken(token_file, standin->api_token())) {
    std::cerr << "jenkins_standin_main: --token-file " << token_file << ": cannot write\n";
    return 1;
  }
  for (const auto& [specs, pipeline] : {std::pair{&enqueue, false}, {&enqueue_pipeline, true}}) {
    for (const auto& spec : *specs) {
      std::string job, label;
      double seconds = 0;
      if (!ParseEnqueue(spec, job, label, seconds)) {
        std::cerr << "jenkins_standin_main: --enqueue '" << spec
                  << "': expected job:label:seconds, e.g. gpu-job:gpu:20\n";
        return 2;
      }
      auto duration = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
      if (pipeline) {
        standin->EnqueuePipeline(job, label, duration);
      } else {
        standin->EnqueueFreestyle(job, label, duration);
      }
    }
  }
  if (print_url) std::cout << standin->url() << std::endl;
  std::cerr << "jenkins stand-in listening on " << standin->url() << " (user " << standin->user()
            << ")\n";

  while (true) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal == SIGUSR1) {
      std::cout << standin->StatsJson() << std::endl;
      continue;
    }
    break;
  }
  return 0;
}
