// The validate and render subcommands, run as the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CliRun {
  int exit_code;
  std::string out;
};

// Runs the binary with `args`, after the environment assignments in `env` ("A=1 B=2").
CliRun Slurmfleet(const std::string& args, const std::string& env = "") {
  const std::string command = env + " " + SLURMFLEET_BINARY + " " + args + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

const std::string kExample = std::string(SLURMFLEET_TESTDATA_DIR) + "/../examples/slurmfleet.yaml";
const std::string kBroken = std::string(SLURMFLEET_TESTDATA_DIR) + "/config/testdata/broken.yaml";

TEST(ValidateCliTest, ExampleIsValid) {
  CliRun r = Slurmfleet("validate --config " + kExample);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(": valid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu-2n: native launch, labels 'mpi'"), std::string::npos) << r.out;
}

TEST(ValidateCliTest, ReportsEveryProblemAndFailsWithTheConfigExitCode) {
  CliRun r = Slurmfleet("validate --config " + kBroken);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  for (const std::string& expected : {
           kBroken + ":7:9: jenkins.clouds[0].slurm.credentialsId: unknown key 'credentialsId'",
           kBroken + ":9:9: jenkins.clouds[0].slurm.maxAgent: unknown key 'maxAgent'; did you "
                     "mean 'maxAgents'?",
           kBroken + ":12:13: jenkins.clouds[0].slurm.jobTemplates[0].lable: unknown key "
                     "'lable'; did you mean 'label'?",
           kBroken + ":13:24: jenkins.clouds[0].slurm.jobTemplates[0].timeLimit: expected a "
                     "whole number, got 'two hours'",
           kBroken + ":16:15: jenkins.clouds[0].slurm.jobTemplates[0].job.partiton: unknown "
                     "job_desc field 'partiton'",
           kBroken + ":5:9: jenkins.clouds[0].slurm.credentials: no Slurm credentials",
           kBroken + ": 6 problems",
       }) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << "missing: " << expected << "\n" << r.out;
  }
}

TEST(ValidateCliTest, ATemplateThatCanServeNoBuildIsWarnedAbout) {
  const std::string path = ::testing::TempDir() + "/nolabel.yaml";
  std::ofstream(path) << "jenkins:\n  clouds:\n    - slurm:\n        name: c\n"
                         "        slurmRestApiUrl: http://h:6820\n        jenkinsUrl: http://j/\n"
                         "        credentials: {jwtFile: /t}\n        jobTemplates:\n"
                         "          - {name: bare, agentLaunch: {downloadJar: true}}\n"
                         "          - {name: roams, nodeUsageMode: NORMAL, agentLaunch: "
                         "{downloadJar: true}}\n";
  CliRun r = Slurmfleet("validate --config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("bare: native launch, no label\n      warning: with no label and "
                       "nodeUsageMode EXCLUSIVE this template serves no build"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("roams: native launch, no label\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning", r.out.find("roams:")), std::string::npos) << r.out;
}

TEST(ValidateCliTest, NativeLaunchKeysOfAContainerTemplateAreWarnedAbout) {
  const std::string path = ::testing::TempDir() + "/mixed.yaml";
  std::ofstream(path) << "jenkins:\n  clouds:\n    - slurm:\n        name: c\n"
                         "        slurmRestApiUrl: http://h:6820\n        jenkinsUrl: http://j/\n"
                         "        credentials: {jwtFile: /t}\n"
                         "        defaultAgentLaunch: {setupScript: module load java}\n"
                         "        jobTemplates:\n"
                         "          - {name: base, label: b, agentLaunch: {setupScript: module "
                         "load apptainer, javaPath: /opt/jdk/bin/java, downloadJar: true}}\n"
                         "          - {name: sif, label: s, inheritFrom: [base], apptainer: "
                         "{image: /i/a.sif}}\n"
                         "          - {name: sqsh, label: q, pyxis: {containerImage: /i/a.sqsh}}\n";
  CliRun r = Slurmfleet("validate --config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sif: apptainer launch, labels 's'\n      warning: agentLaunch.javaPath, "
                       "agentLaunch.downloadJar, agentLaunch.setupScript apply to native launch "
                       "only; this template's apptainer launch ignores them (inside the image: "
                       "apptainer.javaPath and apptainer.jarPath)\n"),
            std::string::npos)
      << r.out;
  // the cloud's defaultAgentLaunch is for its native templates
  EXPECT_NE(r.out.find("sqsh: pyxis launch, labels 'q'\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning", r.out.find("sqsh:")), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning", r.out.find("base:")), r.out.find("warning", r.out.find("sif:")))
      << "base is native: no warning of its own\n"
      << r.out;
}

TEST(ValidateCliTest, JsonOutput) {
  CliRun r = Slurmfleet("validate --json --config " + kBroken);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("\"valid\": false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"path\": \"jenkins.clouds[0].slurm.maxAgent\""), std::string::npos);
}

TEST(ValidateCliTest, JsonOutputCarriesTheWarnings) {
  const std::string path = ::testing::TempDir() + "/warned.yaml";
  std::ofstream(path) << "jenkins:\n  clouds:\n    - slurm:\n        name: c\n"
                         "        slurmRestApiUrl: http://h:6820\n        jenkinsUrl: http://j/\n"
                         "        credentials: {jwtFile: /t}\n        jobTemplates:\n"
                         "          - {name: ok, label: x, agentLaunch: {downloadJar: true}}\n"
                         "          - {name: bare, agentLaunch: {downloadJar: true}}\n"
                         "          - {name: sif, label: s, agentLaunch: {javaPath: /j}, "
                         "apptainer: {image: /i/a.sif}}\n";
  CliRun r = Slurmfleet("validate --json --config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(out.is_discarded()) << r.out;
  EXPECT_EQ(out["valid"], true);
  EXPECT_EQ(out["problems"], nlohmann::json::array());
  auto warning = [&](int index, const std::string& message, const std::string& fix) {
    return nlohmann::json{
        {"source", path},
        {"line", 0},
        {"column", 0},
        {"path", "jenkins.clouds[0].slurm.jobTemplates[" + std::to_string(index) + "]"},
        {"message", message},
        {"fix", fix}};
  };
  EXPECT_EQ(out["warnings"],
            nlohmann::json::array(
                {warning(1,
                         "with no label and nodeUsageMode EXCLUSIVE this template serves no "
                         "build",
                         "give it a label, or set nodeUsageMode: NORMAL"),
                 warning(2,
                         "agentLaunch.javaPath apply to native launch only; this template's "
                         "apptainer launch ignores them (inside the image: apptainer.javaPath and "
                         "apptainer.jarPath)",
                         "")}))
      << r.out;
  r = Slurmfleet("validate --json --config " + kBroken);
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false)["warnings"], nlohmann::json::array())
      << r.out;
}

TEST(ValidateCliTest, SetFlagsOverride) {
  CliRun r =
      Slurmfleet("validate --config " + kExample + " --set jenkins.clouds.local.maxAgents=0");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--set jenkins.clouds.local.maxAgents=\u2026: "
                       "jenkins.clouds[0].slurm.maxAgents: 0 is out of range"),
            std::string::npos)
      << r.out;
}

TEST(ValidateCliTest, EnvironmentOverrides) {
  CliRun r = Slurmfleet("validate --config " + kExample, "SLURMFLEET_SLURM_PARTITION=");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(
      r.out.find("environment SLURMFLEET_SLURM_PARTITION: batch.partition: must not be empty"),
      std::string::npos)
      << r.out;
}

TEST(ValidateCliTest, ConfigPathFromTheEnvironment) {
  CliRun r = Slurmfleet("validate", "SLURMFLEET_CONFIG=" + kExample);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(RenderCliTest, PrintsScriptAndRedactedBody) {
  CliRun r = Slurmfleet("render --config " + kExample +
                        " --template cpu --timestamp-ms 1712345678901 --sequence 2");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("# agent local-cpu-1712345678901-2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# ---- batch script ----\n#!/bin/bash\n"), std::string::npos);
  EXPECT_NE(r.out.find("# ---- POST /slurm/v0.0.45/job/submit (secrets redacted) ----"),
            std::string::npos);
  EXPECT_NE(r.out.find("\"JENKINS_SECRET=***\""), std::string::npos);
  EXPECT_EQ(r.out.find("rendered-without-a-secret"), std::string::npos);
}

TEST(RenderCliTest, PipelineJsonAndApiVersion) {
  CliRun r = Slurmfleet("render --config " + kExample +
                        " --template cpu --output body --api-version v0.0.42 --json "
                        "'{\"job\": {\"cpus_per_task\": 2, \"time_limit\": 5}}'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"cpus_per_task\": 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"number\": 5"), std::string::npos) << r.out;
}

TEST(RenderCliTest, ScriptOutputIsShellcheckClean) {
  for (const char* t : {"cpu", "cpu-2n", "pyxis", "apptainer", "custom"}) {
    CliRun r = Slurmfleet("render --config " + kExample + " --template " + t +
                          " --output script | shellcheck -");
    EXPECT_EQ(r.exit_code, 0) << t << "\n" << r.out;
  }
  const std::string migration =
      std::string(SLURMFLEET_TESTDATA_DIR) + "/../examples/static-node-migration.yaml";
  for (const char* t : {"linux", "gpu"}) {
    CliRun r = Slurmfleet("render --config " + migration + " --template " + t +
                          " --output script | shellcheck -");
    EXPECT_EQ(r.exit_code, 0) << t << "\n" << r.out;
  }
}

TEST(RenderCliTest, Errors) {
  CliRun r = Slurmfleet("render --config " + kExample + " --template nope");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--template: no job template named 'nope' in cloud 'local'; its "
                       "templates: cpu, cpu-2n, pyxis, apptainer, custom"),
            std::string::npos)
      << r.out;
  r = Slurmfleet("render --config " + kExample + " --template cpu2n");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no job template named 'cpu2n' in cloud 'local' (did you mean "
                       "'cpu-2n'?)"),
            std::string::npos)
      << r.out;
  r = Slurmfleet("render --config " + kExample + " --template cpu --json '{\"job\": 1}'");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  r = Slurmfleet("render --config " + kExample + " --template cpu --api-version v9");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  r = Slurmfleet("render --config " + kBroken + " --template cpu");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("more problems; run slurmfleet validate"), std::string::npos) << r.out;
}

// A later time than the clock holds would overflow into a negative agent name.
TEST(RenderCliTest, TheTimestampIsBoundedToWhatTheClockHolds) {
  for (const char* ms : {"9223372036854775807", "253402300799999", "9223372036855", "-1"}) {
    CliRun r = Slurmfleet("render --config " + kExample + " --template cpu --timestamp-ms " + ms);
    EXPECT_EQ(r.exit_code, 2) << ms << "\n" << r.out;
    EXPECT_NE(
        r.out.find("--timestamp-ms: Value " + std::string(ms) + " not in range 0 to 9223372036854"),
        std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("# agent"), std::string::npos) << r.out;
  }
  for (const char* ms : {"0", "9223372036854"}) {
    CliRun r = Slurmfleet("render --config " + kExample + " --template cpu --timestamp-ms " + ms);
    EXPECT_EQ(r.exit_code, 0) << ms << "\n" << r.out;
    EXPECT_NE(r.out.find("# agent local-cpu-" + std::string(ms) + "-1 "), std::string::npos)
        << r.out;
  }
}

}  // namespace
