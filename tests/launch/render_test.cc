#include "launch/render.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "config/config.h"
#include "launch/agent_name.h"
#include "launch/golden.h"
#include "spec/inline_json.h"

namespace slurmfleet::launch {
namespace {

using ::slurmfleet::testing::ExpectGolden;
using std::chrono::milliseconds;
using std::chrono::system_clock;

const std::string kTestdata = SLURMFLEET_TESTDATA_DIR;

config::Config Load(const std::string& path) {
  config::LoadResult r = config::LoadConfigFile(path, {});
  for (const config::Diagnostic& d : r.diagnostics) ADD_FAILURE() << config::FormatDiagnostic(d);
  return r.config;
}

const config::Config& Lab() {
  static const config::Config c = Load(kTestdata + "/launch/testdata/templates.yaml");
  return c;
}

const config::Config& Example() {
  static const config::Config c = Load(kTestdata + "/../examples/slurmfleet.yaml");
  return c;
}

struct Rendered {
  RenderedJob job;
  std::string body;  // canonical JSON of the redacted submit body
};

Rendered RenderTemplate(const config::Config& config, const std::string& name,
                        const std::string& pipeline_json = "",
                        const std::string& api_version = "v0.0.45") {
  const config::Cloud& cloud = config.clouds.front();
  std::optional<spec::JobTemplate> pipeline;
  if (!pipeline_json.empty()) {
    const spec::JobDescSchema* schemas[] = {spec::FindJobDescSchema(api_version)};
    Result<spec::JobTemplate> layer = spec::ParseInlineJson(pipeline_json, schemas);
    EXPECT_TRUE(layer) << layer.error().ToString();
    pipeline = *layer;
  }
  Result<spec::ResolvedTemplate> t =
      spec::Resolve(cloud.defaults, cloud.job_templates, name, pipeline ? &*pipeline : nullptr);
  EXPECT_TRUE(t) << t.error().ToString();
  Result<std::string> agent =
      MakeAgentName(cloud.name, name, system_clock::time_point(milliseconds(1712345678901)), 7);
  EXPECT_TRUE(agent);
  LaunchContext ctx{cloud.name,
                    *agent,
                    cloud.jenkins_url,
                    api_version,
                    Secret("0123456789abcdef-the-agent-secret"),
                    7};
  Result<RenderedJob> job = Render(*t, ctx);
  EXPECT_TRUE(job) << job.error().ToString();
  Result<nlohmann::json> body = SubmitBody(*job, /*redact_secrets=*/true);
  EXPECT_TRUE(body) << body.error().ToString();
  return {*job, body->dump(2) + "\n"};
}

void ExpectGoldenPair(const std::string& name, const Rendered& r) {
  ExpectGolden("launch/golden/" + name + ".sh", r.job.request.script);
  ExpectGolden("launch/golden/" + name + ".request.json", r.body);
}

// Runs shellcheck on `script`; a missing shellcheck fails the test instead of skipping it.
void ExpectShellcheckClean(const std::string& name, const std::string& script) {
  ASSERT_EQ(std::system("shellcheck --version > /dev/null 2>&1"), 0)
      << "shellcheck is not installed; it is required (apt-get install shellcheck)";
  char path[] = "/tmp/slurmfleet-render-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << script;
  const std::string command =
      std::string("shellcheck --severity=style --format=gcc ") + path + " > " + path + ".out 2>&1";
  const int rc = std::system(command.c_str());
  const std::string output = ::slurmfleet::testing::ReadFileOrEmpty(std::string(path) + ".out");
  std::remove(path);
  std::remove((std::string(path) + ".out").c_str());
  EXPECT_EQ(rc, 0) << name << ": shellcheck findings:\n" << output;
}

struct GoldenCase {
  const char* golden;
  const char* template_name;
  const char* pipeline_json;
  bool example;  // from examples/slurmfleet.yaml instead of the lab fixture
};

const GoldenCase kCases[] = {
    {"native", "native", "", false},
    {"native-download", "native-download", "", false},
    {"multinode", "multinode", "", false},
    {"pyxis", "pyxis", "", false},
    {"pyxis-minimal", "pyxis-minimal", "", false},
    {"apptainer", "apptainer", "", false},
    {"apptainer-custom-java", "apptainer-custom-java", "", false},
    {"custom", "custom", "", false},
    // Layering: cloud defaults -> template -> pipeline JSON, including a pyxis block that takes
    // precedence over the template's native launch.
    {"layered-pipeline", "native",
     R"({"job": {"partition": "gpu", "cpus_per_task": 16,
                 "memory_per_node": {"set": true, "number": 32768}, "time_limit": 30,
                 "required_nodes": ["node1"], "environment": ["STAGE=test"]},
         "agent": {"java_path": "/opt/jdk-17/bin/java"}})",
     false},
    {"layered-pyxis", "native",
     R"({"pyxis": {"containerImage": "/images/agent.sqsh", "containerMountHome": true}})", false},
    {"example-cpu", "cpu", "", true},
    {"example-cpu-2n", "cpu-2n", "", true},
    {"example-pyxis", "pyxis", "", true},
    {"example-apptainer", "apptainer", "", true},
    {"example-custom", "custom", "", true},
};

class RenderGoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(RenderGoldenTest, MatchesGoldenAndIsShellcheckClean) {
  const GoldenCase& c = GetParam();
  Rendered r = RenderTemplate(c.example ? Example() : Lab(), c.template_name, c.pipeline_json);
  ExpectGoldenPair(c.golden, r);
  ExpectShellcheckClean(c.golden, r.job.request.script);
}

INSTANTIATE_TEST_SUITE_P(AllModes, RenderGoldenTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           std::string name = info.param.golden;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(RenderTest, SecretNeverInScriptAndOnlyInSecretEnvVar) {
  for (const GoldenCase& c : kCases) {
    Rendered r = RenderTemplate(c.example ? Example() : Lab(), c.template_name, c.pipeline_json);
    EXPECT_EQ(r.job.request.script.find("the-agent-secret"), std::string::npos) << c.golden;
    EXPECT_EQ(r.body.find("the-agent-secret"), std::string::npos) << c.golden;
    int secret_vars = 0;
    for (const slurm::EnvVar& v : r.job.request.environment) {
      if (v.value.find("the-agent-secret") != std::string::npos) {
        ++secret_vars;
        EXPECT_EQ(v.name, "JENKINS_SECRET");
        EXPECT_TRUE(v.secret);
      }
    }
    EXPECT_EQ(secret_vars, 1) << c.golden;
  }
}

TEST(RenderTest, GeneratedScriptsPassSecretByFileAndCannotReconnectForever) {
  for (const char* name : {"native", "native-download", "multinode", "pyxis", "apptainer"}) {
    const std::string script = RenderTemplate(Lab(), name).job.request.script;
    EXPECT_NE(script.find("-secret \"@$"), std::string::npos) << name;
    EXPECT_NE(script.find("-noReconnectAfter "), std::string::npos) << name;
    EXPECT_NE(script.find("srun -N1 -n1 "), std::string::npos) << name;
    EXPECT_NE(script.find("-webSocket"), std::string::npos) << name;
  }
}

TEST(RenderTest, RequestCarriesNameAndTag) {
  Rendered r = RenderTemplate(Lab(), "multinode");
  EXPECT_EQ(r.job.request.name, "lab-multinode-1712345678901-7");
  EXPECT_EQ(r.job.request.comment, "slurmfleet:agent cloud=lab template=multinode");
  EXPECT_EQ(r.job.request.minimum_nodes, 2);
  EXPECT_EQ(r.job.request.maximum_nodes, 4);
  EXPECT_EQ(r.job.request.extra_fields["mail_type"], nlohmann::json({"END", "FAIL"}));
}

TEST(RenderTest, RemoteFsPerMode) {
  EXPECT_EQ(RenderTemplate(Lab(), "native").job.remote_fs,
            "/scratch/jenkins ci/agents/lab-native-1712345678901-7");
  EXPECT_EQ(RenderTemplate(Lab(), "apptainer").job.remote_fs,
            "/tmp/jenkins/agents/lab-apptainer-1712345678901-7");
  EXPECT_EQ(RenderTemplate(Lab(), "pyxis").job.remote_fs, "/tmp/jenkins");
  EXPECT_EQ(RenderTemplate(Lab(), "custom").job.remote_fs, "/tmp/jenkins");
}

TEST(RenderTest, CustomScriptIsSubmittedUnchanged) {
  const config::Cloud& cloud = Lab().clouds.front();
  std::string original;
  for (const spec::JobTemplate& t : cloud.job_templates) {
    if (t.name == "custom") original = *t.custom_script;
  }
  EXPECT_EQ(RenderTemplate(Lab(), "custom").job.request.script, original);
}

TEST(RenderTest, EnvironmentOrderAndJenkinsUrlSlash) {
  Rendered r = RenderTemplate(Lab(), "native");
  std::vector<std::string> names;
  for (const slurm::EnvVar& v : r.job.request.environment) names.push_back(v.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"JENKINS_URL", "JENKINS_SECRET", "JENKINS_AGENT_NAME",
                                      "SLURMFLEET_AGENT_INDEX", "BUILD_CACHE", "PATH", "TZ"}));
  EXPECT_EQ(r.job.request.environment[0].value, "https://ci.lab.example/jenkins/");
  EXPECT_EQ(r.job.request.environment[3].value, "7");
}

TEST(RenderTest, SameInputsSameBytes) {
  EXPECT_EQ(RenderTemplate(Lab(), "pyxis").body, RenderTemplate(Lab(), "pyxis").body);
}

TEST(RenderTest, EveryApiVersionRenders) {
  for (const char* v : {"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"}) {
    Rendered r = RenderTemplate(Lab(), "multinode", "", v);
    EXPECT_EQ(r.job.api_version, v);
  }
}

spec::ResolvedTemplate Native() {
  const config::Cloud& cloud = Lab().clouds.front();
  return *spec::Resolve(cloud.defaults, cloud.job_templates, "native");
}

LaunchContext Context() {
  return LaunchContext{"lab", "lab-native-1-1", "http://jenkins/", "v0.0.45", Secret("s"), 1};
}

TEST(RenderTest, RejectsBadInputs) {
  LaunchContext c = Context();
  c.agent_name = "lab native";
  EXPECT_FALSE(Render(Native(), c));
  c = Context();
  c.cloud = "-lab";
  EXPECT_FALSE(Render(Native(), c));
  c = Context();
  c.jenkins_url = "admin:SECRETMARK@jenkins:8080";
  Result<RenderedJob> r = Render(Native(), c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "jenkinsUrl");
  EXPECT_EQ(r.error().message,
            "'***@jenkins:8080' is not an http:// or https:// URL; write it with its scheme: "
            "http://***@jenkins:8080 or https://***@jenkins:8080");
  c = Context();
  c.jenkins_url = "http://jenkins:0/#x";  // the shared check (base/url.h), not just the scheme
  r = Render(Native(), c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "jenkinsUrl");
  EXPECT_NE(r.error().message.find("has a port that is not a number from 1 to 65535"),
            std::string::npos)
      << r.error().message;
  c = Context();
  c.agent_name = std::string(kMaxAgentNameLength + 1, 'a');
  r = Render(Native(), c);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("use 128 or fewer"), std::string::npos) << r.error().message;
  c = Context();
  c.api_version = "v0.0.39";
  EXPECT_FALSE(Render(Native(), c));
}

TEST(RenderTest, ExtraFieldsAreRecheckedForTheApiVersionInUse) {
  spec::ResolvedTemplate t = Native();
  t.job.extra["oom_kill_step"] = 1;  // v0.0.42 and later: accepted
  EXPECT_TRUE(Render(t, Context()));
  t.job.extra["no_such_field"] = true;
  Result<RenderedJob> r = Render(t, Context());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "job.no_such_field");
}

TEST(RenderTest, HostileStringsStayQuoted) {
  spec::ResolvedTemplate t = Native();
  t.java_path = "/opt/java $(rm -rf ~)/bin/java";
  t.jar_path = "/opt/a'b.jar";
  Result<RenderedJob> r = Render(t, Context());
  ASSERT_TRUE(r);
  EXPECT_NE(r->request.script.find("java_cmd='/opt/java $(rm -rf ~)/bin/java'\n"),
            std::string::npos);
  EXPECT_NE(r->request.script.find("\"$java_cmd\" -jar '/opt/a'\\''b.jar'"), std::string::npos);
  ExpectShellcheckClean("hostile", r->request.script);
}

// Runs a native agent's script with bash, as slurmd would: java and srun are stand-ins on PATH
// (srun records the secret file the agent would read, and the file's path).
struct ScriptRun {
  int status = -1;
  std::string output;     // the job's stdout and stderr
  std::string agent_saw;  // what the secret file held when srun started the agent
  bool agent_dir_left = true;
};

ScriptRun RunNativeScript(const std::string& setup_script) {
  char dir[] = "/tmp/slurmfleet-native-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  const std::string root = dir;
  const std::string bin = root + "/bin";
  EXPECT_EQ(mkdir(bin.c_str(), 0700), 0);
  std::ofstream(bin + "/java") << "#!/bin/sh\necho 'openjdk version \"21.0.2\" 2024-01-16' >&2\n";
  std::ofstream(bin + "/srun") << "#!/bin/sh\nwhile [ \"$1\" != -secret ]; do shift; done\n"
                                  "f=${2#@}\ncat \"$f\" > " +
                                      root + "/agent-saw\n";
  EXPECT_EQ(chmod((bin + "/java").c_str(), 0755), 0);
  EXPECT_EQ(chmod((bin + "/srun").c_str(), 0755), 0);

  spec::ResolvedTemplate t = Native();
  t.setup_script = setup_script;
  t.java_path = bin + "/java";
  t.job.current_working_directory = root + "/work";
  EXPECT_EQ(mkdir((root + "/work").c_str(), 0700), 0);
  LaunchContext c = Context();
  c.agent_secret = Secret("agent-secret-6f1d2e");
  Result<RenderedJob> job = Render(t, c);
  EXPECT_TRUE(job) << job.error().ToString();
  std::ofstream(root + "/job.sh") << job->request.script;

  const std::string command = "cd " + root + " && env -i PATH=" + bin +
                              ":/usr/bin:/bin JENKINS_SECRET=agent-secret-6f1d2e "
                              "JENKINS_URL=http://jenkins/ JENKINS_AGENT_NAME=lab-native-1-1 "
                              "SLURMD_NODENAME=n1 bash job.sh > out 2>&1";
  ScriptRun run;
  run.status = std::system(command.c_str());
  run.output = ::slurmfleet::testing::ReadFileOrEmpty(root + "/out");
  run.agent_saw = ::slurmfleet::testing::ReadFileOrEmpty(root + "/agent-saw");
  run.agent_dir_left = access((root + "/work/agents/lab-native-1-1").c_str(), F_OK) == 0;
  EXPECT_EQ(std::system(("rm -rf -- " + root).c_str()), 0);
  return run;
}

TEST(RenderTest, TheSetupScriptRunsAfterTheSecretLeftTheEnvironment) {
  ScriptRun run = RunNativeScript("env\nset -x\n");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("JENKINS_AGENT_NAME=lab-native-1-1"), std::string::npos)
      << "the setup script's env did not run:\n"
      << run.output;
  EXPECT_EQ(run.output.find("agent-secret-6f1d2e"), std::string::npos) << run.output;
  EXPECT_EQ(run.agent_saw, "agent-secret-6f1d2e\n");
  EXPECT_FALSE(run.agent_dir_left);
}

TEST(RenderTest, ASetupScriptCannotMoveOrKeepTheCleanup) {
  ScriptRun trapped = RunNativeScript("trap 'echo setup trap' EXIT\n");
  EXPECT_EQ(trapped.status, 0) << trapped.output;
  EXPECT_FALSE(trapped.agent_dir_left) << trapped.output;

  // the common names stay the setup script's own
  ScriptRun own = RunNativeScript("workdir=/tmp\nagent_dir=/\n");
  EXPECT_EQ(own.status, 0) << own.output;
  EXPECT_EQ(own.agent_saw, "agent-secret-6f1d2e\n");
  EXPECT_FALSE(own.agent_dir_left) << own.output;

  ScriptRun moved = RunNativeScript("slurmfleet_agent_dir=/\n");
  EXPECT_NE(moved.status, 0);
  EXPECT_NE(moved.output.find("slurmfleet_agent_dir: readonly variable"), std::string::npos)
      << moved.output;
  EXPECT_EQ(moved.agent_saw, "");
  EXPECT_FALSE(moved.agent_dir_left) << moved.output;
}

}  // namespace
}  // namespace slurmfleet::launch
