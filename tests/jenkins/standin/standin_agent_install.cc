#include "jenkins/standin/standin_agent_install.h"

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

}  // namespace

void InstallStandinAgent(const std::string& testbed_root) {
  const fs::path dir = fs::path(testbed_root) / std::string(kStandinAgentDir).substr(1);
  fs::create_directories(dir);
  if (!fs::exists(dir / "java") || ReadFile(dir / "java") != ReadFile(STANDIN_JAVA)) {
    fs::copy_file(STANDIN_JAVA, dir / "java", fs::copy_options::overwrite_existing);
  }
  fs::permissions(dir / "java", fs::perms(0755));
  if (!fs::exists(dir / "agent.jar")) std::ofstream(dir / "agent.jar") << "PK stand-in agent.jar";
  fs::permissions(dir / "agent.jar", fs::perms(0644));
}

}  // namespace slurmfleet::standin
