#include "jenkins/standin/standin_agent_install.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace slurmfleet::standin {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Copies `from` to `dir/name` unless an identical file is there, with mode `perms`.
void Place(const fs::path& from, const fs::path& dir, const std::string& name, fs::perms perms) {
  if (!fs::exists(dir / name) || ReadFile(dir / name) != ReadFile(from)) {
    fs::copy_file(from, dir / name, fs::copy_options::overwrite_existing);
  }
  fs::permissions(dir / name, perms);
}

}  // namespace

void InstallStandinAgent(const std::string& testbed_root) {
  const fs::path dir = fs::path(testbed_root) / std::string(kStandinAgentDir).substr(1);
  fs::create_directories(dir);
  Place(STANDIN_JAVA, dir, "java", fs::perms(0755));
  Place(STANDIN_AGENT_IMAGE_SCRIPT, dir, "standin-agent-image", fs::perms(0755));
  if (!fs::exists(dir / "agent.jar")) std::ofstream(dir / "agent.jar") << "PK stand-in agent.jar";
  fs::permissions(dir / "agent.jar", fs::perms(0644));
}

std::string BuildStandinAgentImage(const std::string& testbed_root,
                                   const std::string& testbed_script) {
  InstallStandinAgent(testbed_root);
  const std::string dir = kStandinAgentDir;
  const std::string command = "TESTBED_ROOT='" + testbed_root + "' '" + testbed_script +
                              "' exec /bin/bash " + dir + "/standin-agent-image " + dir + " " +
                              kStandinAgentImage + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "cannot run " + command;
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status == 0) return {};
  return command + " failed (status " + std::to_string(status) + "):\n" + output;
}

}  // namespace slurmfleet::standin
