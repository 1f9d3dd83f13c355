#include "config/config.h"

#include <gtest/gtest.h>

#include "spec/resolve.h"

namespace slurmfleet::config {
namespace {

const std::string kExample = std::string(SLURMFLEET_TESTDATA_DIR) + "/../examples/slurmfleet.yaml";

std::vector<std::string> Lines(const LoadResult& r) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.diagnostics) out.push_back(FormatDiagnostic(d));
  return out;
}

std::string Cloud(const std::string& body) {
  return "jenkins:\n"
         "  clouds:\n"
         "    - slurm:\n"
         "        name: c\n"
         "        slurmRestApiUrl: http://127.0.0.1:6820\n"
         "        credentials: {user: ci, jwtFile: /t}\n"
         "        jenkinsUrl: http://j:8080\n" +
         body;
}

TEST(ConfigTest, TheExampleIsValid) {
  LoadResult r = LoadConfigFile(kExample, {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  ASSERT_EQ(r.config.clouds.size(), 1u);
  const config::Cloud& c = r.config.clouds[0];
  EXPECT_EQ(c.name, "local");
  EXPECT_EQ(c.slurm_rest_api_url, "http://127.0.0.1:6820");
  EXPECT_EQ(c.credentials.user, "ci");
  EXPECT_EQ(c.credentials.source, SlurmCredentials::Source::kTokenFile);
  EXPECT_EQ(c.defaults.default_partition, "debug");
  EXPECT_FALSE(c.defaults.job.partition.has_value());
  EXPECT_EQ(c.job_templates.size(), 5u);
  ASSERT_TRUE(r.config.batch);
  EXPECT_EQ(r.config.batch->runtime_profile, RuntimeProfile::kApptainer);
  EXPECT_EQ(r.config.batch->cluster_storage_root, "/tmp/slurmfleet");
  EXPECT_EQ(r.config.daemon.listen, "127.0.0.1:8470");
  EXPECT_NE(r.config.FindCloud("local"), nullptr);
  EXPECT_EQ(r.config.FindCloud("other"), nullptr);
}

TEST(ConfigTest, TheMigrationExampleIsValid) {
  LoadResult r = LoadConfigFile(
      std::string(SLURMFLEET_TESTDATA_DIR) + "/../examples/static-node-migration.yaml", {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  EXPECT_EQ(r.config.clouds[0].credentials.source, SlurmCredentials::Source::kMintFromKey);
  EXPECT_EQ(r.config.clouds[0].job_templates.size(), 3u);
}

TEST(ConfigTest, MinimalCloudGetsDefaults) {
  LoadResult r = LoadConfigText(Cloud(""), "f.yaml", {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  const config::Cloud& c = r.config.clouds[0];
  EXPECT_EQ(c.jenkins_url, "http://j:8080/");  // trailing slash added
  EXPECT_EQ(c.api_version, "auto");
  EXPECT_TRUE(c.tls_verify);
  EXPECT_EQ(c.max_agents, 10);
  EXPECT_FALSE(r.config.batch);
  EXPECT_EQ(r.config.daemon.state_file, "/var/lib/slurmfleet/state.db");
}

TEST(ConfigTest, ReportsEveryProblemWithPositionPathAndFix) {
  const std::string text = Cloud(
      "        maxAgents: many\n"                       // line 8
      "        jobTemplates:\n"                         // 9
      "          - name: cpu\n"                         // 10
      "            cpusPerTsk: 4\n"                     // 11
      "            memoryPerNode: -1\n"                 // 12
      "            nodeUsageMode: SHARED\n"             // 13
      "            agentLaunch: {downloadJar: yes}\n"   // 14
      "            job:\n"                              // 15
      "              mail_type: [END, FAILED]\n"        // 16
      "              nice: high\n"                      // 17
      "          - name: gpu large\n"                   // 18
      "            inheritFrom: ghost\n"                // 19
      "            agentLaunch: {downloadJar: true}\n"  // 20
      "daemon:\n"                                       // 21
      "  listen: localhost\n"                           // 22
      "unknownTop: 1\n");                               // 23
  LoadResult r = LoadConfigText(text, "bad.yaml", {});
  EXPECT_EQ(Lines(r),
            (std::vector<std::string>{
                "bad.yaml:8:20: jenkins.clouds[0].slurm.maxAgents: expected a whole number, got "
                "'many' (fix: write a number from 1 to 100000)",
                "bad.yaml:12:28: jenkins.clouds[0].slurm.jobTemplates[0].memoryPerNode: -1 is out "
                "of range (fix: use a number from 1 to 9223372036854775807)",
                "bad.yaml:13:28: jenkins.clouds[0].slurm.jobTemplates[0].nodeUsageMode: 'SHARED' "
                "is not a node usage mode (fix: write NORMAL or EXCLUSIVE)",
                "bad.yaml:14:40: jenkins.clouds[0].slurm.jobTemplates[0].agentLaunch.downloadJar: "
                "expected true or false, got 'yes' (fix: write true or false)",
                "bad.yaml:16:32: jenkins.clouds[0].slurm.jobTemplates[0].job.mail_type[1]: "
                "unknown flag 'FAILED' (did you mean 'FAIL'?)",
                "bad.yaml:17:15: jenkins.clouds[0].slurm.jobTemplates[0].job.nice: expected an "
                "integer, got a string",
                "bad.yaml:11:13: jenkins.clouds[0].slurm.jobTemplates[0].cpusPerTsk: unknown key "
                "'cpusPerTsk'; did you mean 'cpusPerTask'? (fix: rename it to 'cpusPerTask')",
                "bad.yaml:18:19: jenkins.clouds[0].slurm.jobTemplates[1].name: template name 'gpu "
                "large' contains ' '; use only letters, digits, '.', '_' and '-'",
                "bad.yaml:14:26: jenkins.clouds[0].slurm.jobTemplates[0].agentLaunch.jarPath: "
                "native launch needs agent.jar: set agentLaunch.jarPath to its path on the compute "
                "nodes, or set agentLaunch.downloadJar: true (in a pipeline's JSON: agent.jar_path "
                "or agent.download_jar)",
                "bad.yaml:19:13: jenkins.clouds[0].slurm.jobTemplates[1].inheritFrom: inheritFrom "
                "names 'ghost', which is not a job template of this cloud",
                "bad.yaml:22:11: daemon.listen: 'localhost' is not HOST:PORT (fix: write e.g. "
                "127.0.0.1:8470)",
                "bad.yaml:23:1: unknownTop: unknown key 'unknownTop' (fix: remove it; the keys "
                "allowed here are: jenkins, batch, daemon)",
            }));
}

TEST(ConfigTest, YamlSyntaxErrorHasAPosition) {
  LoadResult r = LoadConfigText("jenkins:\n  clouds: [\n", "s.yaml", {});
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].source, "s.yaml");
  EXPECT_GT(r.diagnostics[0].line, 0);
  EXPECT_NE(r.diagnostics[0].message.find("not valid YAML"), std::string::npos);
}

// yaml-cpp reads an unclosed quote as a value running to the end of the file: every later key
// would be lost without a word.
TEST(ConfigTest, AnUnclosedQuoteIsReportedWhereItOpens) {
  const std::string rest =
      "        jobTemplates:\n"
      "          - {name: a, agentLaunch: {downloadJar: true}}\n";
  const std::string problem =
      ": the quote opened here is never closed, so the rest of the file would be read as this "
      "one value (fix: close it on the same line)";
  EXPECT_EQ(
      Lines(LoadConfigText(Cloud("        defaultPartition: \"debug\n" + rest), "q.yaml", {})),
      std::vector<std::string>{"q.yaml:8:27" + problem});
  EXPECT_EQ(Lines(LoadConfigText(Cloud("        defaultPartition: 'debug\n" + rest), "q.yaml", {})),
            std::vector<std::string>{"q.yaml:8:27" + problem});
  // an escaped quote closes nothing
  EXPECT_EQ(
      Lines(LoadConfigText(Cloud("        defaultPartition: \"debug\\\"\n" + rest), "q.yaml", {})),
      std::vector<std::string>{"q.yaml:8:27" + problem});
  EXPECT_EQ(Lines(LoadConfigText(Cloud("        defaultPartition: 'it''s\n" + rest), "q.yaml", {})),
            std::vector<std::string>{"q.yaml:8:27" + problem});
  // yaml-cpp's mark is at the tag or anchor before the quote
  EXPECT_EQ(Lines(LoadConfigText(Cloud("        defaultPartition: !!str &p \"debug\n" + rest),
                                 "q.yaml", {})),
            std::vector<std::string>{"q.yaml:8:36" + problem});
  EXPECT_EQ(Lines(LoadConfigText(
                Cloud("        defaultPartition: &p # the partition\n          \"debug\n" + rest),
                "q.yaml", {})),
            std::vector<std::string>{"q.yaml:9:11" + problem});
  // a key; and after a byte order mark, which yaml-cpp's marks do not count
  EXPECT_EQ(Lines(LoadConfigText("\"jenkins:\n  clouds: []\n", "q.yaml", {})),
            std::vector<std::string>{"q.yaml:1:1" + problem});
  EXPECT_EQ(
      Lines(LoadConfigText("\xEF\xBB\xBF" + Cloud("        defaultPartition: \"debug\n" + rest),
                           "q.yaml", {})),
      std::vector<std::string>{"q.yaml:8:27" + problem});
}

TEST(ConfigTest, QuotedValuesOverSeveralLinesAreRead) {
  const std::string text = Cloud(
      "        environment:\n"
      "          A: \"one \\\"two\\\"\n"
      "            three\"\n"
      "          B: 'it''s\n"
      "            fine'\n"
      "          C: \"a backslash \\\\\"\n"
      "          D: \"joined \\\n"
      "            line\"\n"
      "        defaultAgentLaunch: {downloadJar: true}\n"
      "        jobTemplates:\n"
      "          - {name: a, label: 'x'}\n");
  for (const std::string& prefix : {std::string(), std::string("\xEF\xBB\xBF")}) {
    LoadResult r = LoadConfigText(prefix + text, "m.yaml", {});
    ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
    EXPECT_EQ(r.config.clouds[0].defaults.environment,
              (std::map<std::string, std::string>{{"A", "one \"two\" three"},
                                                  {"B", "it's fine"},
                                                  {"C", "a backslash \\"},
                                                  {"D", "joined line"}}));
    EXPECT_EQ(r.config.clouds[0].job_templates.size(), 1u);
  }
}

// YAML::Load reads the first document only: whatever follows would be ignored.
TEST(ConfigTest, ASecondDocumentIsRefusedWhereItStarts) {
  const std::string problem =
      ": a second YAML document starts here; a configuration file holds one, and slurmfleet "
      "would ignore this one (fix: keep one document: remove the '---' or '...' that ends the "
      "first and merge the keys into it, or remove what follows it)";
  EXPECT_EQ(Lines(LoadConfigText(Cloud("") + "---\ndaemon: {listen: 0.0.0.0:1}\n", "d.yaml", {})),
            std::vector<std::string>{"d.yaml:8:1" + problem});
  EXPECT_EQ(Lines(LoadConfigText(Cloud("") + "...\ngarbage\n", "d.yaml", {})),
            std::vector<std::string>{"d.yaml:9:1" + problem});
  EXPECT_EQ(Lines(LoadConfigText(Cloud("") + "--- []\n", "d.yaml", {})),
            std::vector<std::string>{"d.yaml:8:1" + problem});
  // what the first holds is not decoded either: it is not all the file says
  EXPECT_EQ(Lines(LoadConfigText("daemon: {listen: nope}\n---\n" + Cloud(""), "d.yaml", {})),
            std::vector<std::string>{"d.yaml:2:1" + problem});
  // a document of nothing loses nothing
  for (const std::string& text : {"---\n" + Cloud(""), Cloud("") + "---\n", Cloud("") + "...\n",
                                  Cloud("") + "---\n# nothing more\n"}) {
    EXPECT_TRUE(LoadConfigText(text, "d.yaml", {}).ok()) << text;
  }
}

TEST(ConfigTest, TheListenHostIsANameOrAnAddress) {
  auto load = [](const std::string& listen) {
    return Lines(LoadConfigText(Cloud("") + "daemon:\n  listen: '" + listen + "'\n", "l.yaml", {}));
  };
  for (const char* good :
       {"127.0.0.1:8470", "0.0.0.0:1", "localhost:8470", "build-01.example.org:80", "my_service:80",
        "[::1]:8470", "[::]:8470", "[fe80::1:2]:65535"}) {
    EXPECT_EQ(load(good), std::vector<std::string>{}) << good;
  }
  const std::string fix = " (fix: write e.g. 127.0.0.1:8470 or localhost:8470)";
  const std::string not_a_name =
      "' is not a host name (parts of letters, digits, '-' and '_', separated by '.')";
  const std::string not_ipv4 =
      "' is not an IPv4 address (four numbers from 0 to 255, separated by '.')";
  for (const auto& [listen, problem] : std::vector<std::pair<std::string, std::string>>{
           {"host name:1", "'host name" + not_a_name},
           {"-x:80", "'-x" + not_a_name},
           {"a..b:80", "'a..b" + not_a_name},
           {"b\xC3\xBChne:80", "'b\xC3\xBChne" + not_a_name},
           {"[::1:8470", "the IPv6 address has no ']' closing it"},
           {"[]:80", "'[]' does not hold an IPv6 address"},
           {"[1.2.3.4]:80", "'[1.2.3.4]' does not hold an IPv6 address"},
           {"a:b:c:8470", "'a:b:c' holds ':'; an IPv6 address goes in brackets"},
           {"999.1.1.1:80", "'999.1.1.1" + not_ipv4},
           {"10.1:80", "'10.1" + not_ipv4},
       }) {
    EXPECT_EQ(load(listen), std::vector<std::string>{"l.yaml:9:11: daemon.listen: '" + listen +
                                                     "': " + problem + fix})
        << listen;
  }
}

// `label` is label names: an expression there names a label that no build can ask for.
TEST(ConfigTest, ATemplatesLabelListsNamesNotAnExpression) {
  auto load = [](const std::string& label) {
    return Lines(LoadConfigText(Cloud("        defaultAgentLaunch: {downloadJar: true}\n"
                                      "        jobTemplates:\n"
                                      "          - name: t\n"
                                      "            label: '" +
                                      label + "'\n"),
                                "l.yaml", {}));
  };
  EXPECT_EQ(load("linux gpu  os/linux linux-x86_64 v1.2 gpu:a100 a_b @home \xC3\xBCnic\xC3\xB6"
                 "de"),
            std::vector<std::string>{});
  const std::string fix =
      " (fix: `label` lists names separated by spaces; the expression (&&, ||, !) belongs in the "
      "build's label)";
  EXPECT_EQ(load("linux||x"),
            std::vector<std::string>{
                "l.yaml:11:20: jenkins.clouds[0].slurm.jobTemplates[0].label: 'linux||x' is not a "
                "label name: a build's label would read it as an expression, not as this one "
                "label" +
                fix});
  EXPECT_EQ(load("lin(ux"),
            std::vector<std::string>{
                "l.yaml:11:20: jenkins.clouds[0].slurm.jobTemplates[0].label: 'lin(ux' is not a "
                "label name: a build's label cannot hold it (label expression 'lin(ux': expected "
                "an operator or the end at 3, found '(')" +
                fix});
  for (const char* bad : {"!x", "a->b", "a<->b", "(x)", "\"x\"", "a&&b"}) {
    std::vector<std::string> lines = load(std::string("ok ") + bad);
    ASSERT_EQ(lines.size(), 1u) << bad << "\n" << testing::PrintToString(lines);
    EXPECT_NE(lines[0].find("label: '" + std::string(bad) + "' is not a label name: "),
              std::string::npos)
        << lines[0];
  }
  // each word on its own, as the template's labels are split
  std::vector<std::string> lines = load("linux && gpu");
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("label: '&&' is not a label name: a build's label cannot hold it"),
            std::string::npos)
      << lines[0];
}

TEST(ConfigTest, EmptyAndMissingFiles) {
  EXPECT_EQ(Lines(LoadConfigText("", "e.yaml", {})),
            std::vector<std::string>{"e.yaml:1:1: the configuration is empty (fix: start from "
                                     "examples/slurmfleet.yaml)"});
  LoadResult r = LoadConfigFile("/nonexistent/slurmfleet.yaml", {});
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message,
            "cannot read /nonexistent/slurmfleet.yaml: No such file or directory");
  r = LoadConfigFile(::testing::TempDir(), {});
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("is a directory, not a file"), std::string::npos);
  r = LoadConfigFile("/dev/zero", {});
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].message, "/dev/zero holds more than 16 MiB; is it the right file?");
  EXPECT_EQ(Lines(LoadConfigText("daemon: {}\n", "d.yaml", {})),
            std::vector<std::string>{"d.yaml:1:1: nothing to run: no jenkins.clouds and no batch "
                                     "section (fix: add a cloud under jenkins.clouds, a batch "
                                     "section, or both)"});
}

TEST(ConfigTest, CredentialProblems) {
  auto load = [](const std::string& credentials) {
    return Lines(
        LoadConfigText("jenkins:\n  clouds:\n    - slurm:\n        name: c\n"
                       "        slurmRestApiUrl: http://x\n        jenkinsUrl: http://j/\n" +
                           credentials,
                       "c.yaml", {}));
  };
  EXPECT_EQ(load(""), std::vector<std::string>{
                          "c.yaml:4:9: jenkins.clouds[0].slurm.credentials: no Slurm credentials "
                          "(fix: add credentials: {user: ci, jwtFile: /path/to/token})"});
  EXPECT_EQ(load("        credentials: {user: ci}\n"),
            std::vector<std::string>{
                "c.yaml:7:22: jenkins.clouds[0].slurm.credentials: no token source (fix: set "
                "exactly one of jwtFile (a token file), jwtEnv (a variable such as SLURM_JWT) or "
                "jwtKeyFile (Slurm's jwt_key, to mint tokens))"});
  EXPECT_EQ(load("        credentials: {user: ci, jwtFile: /a, jwtEnv: SLURM_JWT}\n"),
            std::vector<std::string>{
                "c.yaml:7:54: jenkins.clouds[0].slurm.credentials.jwtEnv: both jwtFile and jwtEnv "
                "are set (fix: keep exactly one token source)"});
  EXPECT_EQ(load("        credentials: {jwtKeyFile: /etc/slurm/jwt.key}\n"),
            std::vector<std::string>{
                "c.yaml:7:22: jenkins.clouds[0].slurm.credentials.user: minting a token needs the "
                "user it is for (fix: add user: ci (the Slurm user the agents run as))"});
  std::vector<std::string> inline_token = load("        credentials: {user: ci, token: eyJhbGc}\n");
  ASSERT_EQ(inline_token.size(), 2u);
  EXPECT_NE(inline_token[1].find("credentials.token: unknown key 'token' (fix: credentials are "
                                 "never written inline"),
            std::string::npos)
      << inline_token[1];
  std::vector<std::string> jcasc =
      load("        credentials: {user: ci, jwtFile: /t}\n        credentialsId: slurm-jwt\n");
  ASSERT_EQ(jcasc.size(), 1u);
  EXPECT_NE(jcasc[0].find("credentialsId: unknown key 'credentialsId' (fix: slurmfleet reads the "
                          "JWT itself"),
            std::string::npos)
      << jcasc[0];
  EXPECT_EQ(load("        credentials: {user: ci, jwtFile: relative/token}\n"),
            std::vector<std::string>{
                "c.yaml:7:42: jenkins.clouds[0].slurm.credentials.jwtFile: not an absolute path "
                "(the value is not shown: it may be a secret) (fix: write the path of the file "
                "that holds the secret, starting with /; never the secret itself)"});
  // a token pasted where its file or variable belongs is never quoted back
  const std::string token = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJjaSJ9.c2lnbmF0dXJl";
  for (const std::string key : {"jwtFile", "jwtKeyFile", "jwtEnv"}) {
    std::vector<std::string> lines =
        load("        credentials: {user: ci, " + key + ": " + token + "}\n");
    ASSERT_EQ(lines.size(), 1u) << key;
    EXPECT_NE(lines[0].find("credentials." + key + ": not a"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].find("c2lnbmF0dXJl"), std::string::npos) << lines[0];
  }
}

TEST(ConfigTest, TextThatIsNotUtf8IsRefusedWhereItIs) {
  LoadResult r = LoadConfigText(
      "batch:\n  restUrl: http://x\n  partition: deb\xE9ug\n  storageRoot: /s\n"
      "  credentials: {jwtFile: /t}\n  \xFFkey: 1\n",
      "u.yaml", {});
  EXPECT_EQ(Lines(r),
            (std::vector<std::string>{
                "u.yaml:3:14: batch.partition: this value is not UTF-8 (byte 4 is not part of a "
                "UTF-8 character) (fix: write it in UTF-8; it looks like Latin-1 or another "
                "8-bit encoding)",
                "u.yaml:6:3: batch.?: this key is not UTF-8 (byte 1 is not part of a UTF-8 "
                "character) (fix: write it in UTF-8; it looks like Latin-1 or another 8-bit "
                "encoding)"}));
  r = LoadConfigText(
      "batch:\n  restUrl: http://x\n  partition: debug\n  storageRoot: /s\n"
      "  credentials: {jwtFile: /t}\n",
      "u.yaml", OverridesFromEnvironment({{"SLURMFLEET_INSTANCE", "a\xFF"}}));
  ASSERT_EQ(Lines(r).size(), 1u);
  EXPECT_NE(Lines(r)[0].find("environment SLURMFLEET_INSTANCE: daemon.instance: this value is "
                             "not UTF-8"),
            std::string::npos)
      << Lines(r)[0];
}

TEST(ConfigTest, AliasesThatStandForTooManyValuesAreRefused) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 7; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) text += ", " + prev;
    text += "]\n";
  }
  LoadResult r = LoadConfigText(text, "bomb.yaml", {});
  ASSERT_EQ(Lines(r).size(), 1u) << "nothing decoded after it";
  EXPECT_NE(Lines(r)[0].find("the document stands for more than 1000000 values (counting each "
                             "use of an alias)"),
            std::string::npos)
      << Lines(r)[0];
}

TEST(ConfigTest, NestingDeeperThanAnyConfigurationIsRefused) {
  std::string text = "batch:\n  x: ";
  for (int i = 0; i < 100; ++i) text += "[";
  for (int i = 0; i < 100; ++i) text += "]";
  LoadResult r = LoadConfigText(text + "\n", "deep.yaml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Lines(r)[0].find("nested deeper than 64 levels"), std::string::npos) << Lines(r)[0];
}

// yaml-cpp stops on its own at 500 levels, before the document check could count them.
TEST(ConfigTest, AFileNestedTooDeeplyForTheParserSaysSoWithTheLine) {
  const std::string text =
      "batch:\n  x: " + std::string(1000, '[') + std::string(1000, ']') + "\ndaemon: {}\n";
  std::vector<std::string> lines = Lines(LoadConfigText(text, "deep.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_EQ(lines[0],
            "deep.yaml:2: the file nests too deeply to be read (the YAML parser stops at 500 "
            "levels; a configuration needs no more than 64) (fix: look for '[' or '{' left open, "
            "or lines indented ever further, up to this line)");
}

TEST(ConfigTest, TheTopLevelMustBeAMappingOfKeys) {
  // a token file given as --config by mistake: its text is not shown
  std::vector<std::string> lines =
      Lines(LoadConfigText("eyJhbGciOiJIUzI1NiJ9.SECRETMARK\n", "token.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_EQ(lines[0],
            "token.yaml:1:1: the top level must be a mapping of keys (jenkins:, batch:, daemon:), "
            "but the file holds a single value (not shown) (fix: write each top-level key at the "
            "start of its line, followed by ':', as in examples/slurmfleet.yaml)");
  lines = Lines(LoadConfigText("- jenkins:\n    url: http://j/\n- batch: {}\n", "list.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("list.yaml:1:1: the top level must be a mapping of keys (jenkins:, "
                          "batch:, daemon:), but the file holds a list (fix: write each"),
            std::string::npos)
      << lines[0];
}

TEST(ConfigTest, CredentialSourcesDecode) {
  LoadResult r = LoadConfigText(
      "jenkins:\n  clouds:\n    - slurm:\n        name: c\n        slurmRestApiUrl: http://x\n"
      "        jenkinsUrl: http://j/\n"
      "        credentials: {user: ci, jwtKeyFile: /k, tokenLifetimeSeconds: 600}\n"
      "    - slurm:\n        name: d\n        slurmRestApiUrl: https://y\n"
      "        jenkinsUrl: http://j/\n        credentials: {jwtEnv: MY_JWT}\n",
      "c.yaml", {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  EXPECT_EQ(r.config.clouds[0].credentials.source, SlurmCredentials::Source::kMintFromKey);
  EXPECT_EQ(r.config.clouds[0].credentials.jwt_key_file, "/k");
  EXPECT_EQ(r.config.clouds[0].credentials.token_lifetime_seconds, 600);
  EXPECT_EQ(r.config.clouds[1].credentials.source, SlurmCredentials::Source::kEnvironment);
  EXPECT_EQ(r.config.clouds[1].credentials.token_env, "MY_JWT");
  EXPECT_EQ(r.config.clouds[1].credentials.token_env_key,
            "jenkins.clouds[1].slurm.credentials.jwtEnv");
}

// 4294967294 is Slurm's NO_VAL: the JSON paths refuse it, and so does the YAML one.
TEST(ConfigTest, TimeLimitStopsBelowSlurmsSpecialValues) {
  const std::string body =
      "        jobTemplates:\n          - name: a\n            agentLaunch: {downloadJar: "
      "true}\n            timeLimit: ";
  EXPECT_TRUE(LoadConfigText(Cloud(body + "4294967293\n"), "t.yaml", {}).ok());
  std::vector<std::string> lines =
      Lines(LoadConfigText(Cloud(body + "4294967294\n"), "t.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("timeLimit: 4294967294 is out of range (fix: use a number from 1 to "
                          "4294967293)"),
            std::string::npos)
      << lines[0];
}

TEST(ConfigTest, AFieldGivenTwiceInsideAJobIsReported) {
  std::vector<std::string> lines = Lines(LoadConfigText(
      Cloud("        jobTemplates:\n          - name: a\n            agentLaunch: {downloadJar: "
            "true}\n            job:\n              account: first\n              account: "
            "second\n"),
      "j.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("jenkins.clouds[0].slurm.jobTemplates[0].job.account: 'account' is "
                          "given twice"),
            std::string::npos)
      << lines[0];
}

TEST(ConfigTest, DuplicatesAreReported) {
  std::vector<std::string> lines =
      Lines(LoadConfigText(Cloud("        maxAgents: 2\n        maxAgents: 3\n"
                                 "        jobTemplates:\n"
                                 "          - {name: a, agentLaunch: {downloadJar: true}}\n"
                                 "          - {name: a, agentLaunch: {downloadJar: true}}\n"),
                           "d.yaml", {}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("d.yaml:9:9: jenkins.clouds[0].slurm.maxAgents: 'maxAgents' is given "
                          "twice"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("jobTemplates[1].name: another template of this cloud is already "
                          "named 'a'"),
            std::string::npos)
      << lines[1];
}

// Each name may be 63 characters, but agent names (cloud-template-time-sequence) are submission
// keys of at most 128: a template whose agents could never be recorded is refused at load.
TEST(ConfigTest, ACloudAndTemplateNameTooLongTogetherAreReported) {
  auto config = [](const std::string& cloud, const std::string& templ) {
    return "jenkins:\n"
           "  clouds:\n"
           "    - slurm:\n"
           "        name: " +
           cloud +
           "\n"
           "        slurmRestApiUrl: http://127.0.0.1:6820\n"
           "        credentials: {user: ci, jwtFile: /t}\n"
           "        jenkinsUrl: http://j:8080\n"
           "        jobTemplates:\n"
           "          - {name: " +
           templ + ", agentLaunch: {downloadJar: true}}\n";
  };
  const std::string cloud(63, 'c');
  EXPECT_TRUE(Lines(LoadConfigText(config(cloud, std::string(29, 't')), "n.yaml", {})).empty());
  std::vector<std::string> lines =
      Lines(LoadConfigText(config(cloud, std::string(30, 't')), "n.yaml", {}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("jobTemplates[0].name: cloud name '" + cloud + "' and template name '" +
                          std::string(30, 't') + "' are 93 characters together; use 92 or fewer"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("shorten the cloud's or the template's name"), std::string::npos)
      << lines[0];
}

TEST(ConfigTest, InheritanceCycleIsReportedAtEachTemplate) {
  std::vector<std::string> lines =
      Lines(LoadConfigText(Cloud("        defaultAgentLaunch: {downloadJar: true}\n"
                                 "        jobTemplates:\n"
                                 "          - {name: a, inheritFrom: b}\n"
                                 "          - {name: b, inheritFrom: [a]}\n"),
                           "i.yaml", {}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("inheritFrom forms a cycle (a -> b -> a)"), std::string::npos)
      << lines[0];
}

TEST(ConfigTest, MemoryPerNodeBesideAnotherMemoryRequestIsRefused) {
  std::vector<std::string> lines =
      Lines(LoadConfigText(Cloud("        jobTemplates:\n"
                                 "          - name: t\n"
                                 "            memoryPerNode: 4096\n"
                                 "            agentLaunch: {downloadJar: true}\n"
                                 "            job:\n"
                                 "              memory_per_cpu: 1024\n"),
                           "m.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("jobTemplates[0].job.memory_per_cpu: asks for memory a second way beside "
                          "'memoryPerNode'"),
            std::string::npos)
      << lines[0];
}

TEST(ConfigTest, TemplateFieldsAndRawJobMerge) {
  LoadResult r = LoadConfigText(Cloud("        apiVersion: v0.0.42\n"
                                      "        jobTemplates:\n"
                                      "          - name: t\n"
                                      "            partition: gpu\n"
                                      "            environment: {A: '1'}\n"
                                      "            agentLaunch: {downloadJar: true}\n"
                                      "            job:\n"
                                      "              account: physics\n"
                                      "              minimum_nodes: 2\n"
                                      "              environment: [B=2]\n"
                                      "              comment: '123'\n"
                                      "              partition: other\n"),
                                "t.yaml", {});
  std::vector<std::string> lines = Lines(r);
  ASSERT_EQ(lines.size(), 2u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("job.comment: 'comment' is set by slurmfleet"), std::string::npos);
  EXPECT_NE(lines[1].find("job.partition: set both here and as 'partition' (fix: keep only "
                          "'partition')"),
            std::string::npos)
      << lines[1];
  const spec::JobTemplate& t = r.config.clouds[0].job_templates[0];
  EXPECT_EQ(t.job.partition, "gpu");
  EXPECT_EQ(t.job.account, "physics");
  EXPECT_EQ(t.job.minimum_nodes, 2);
  EXPECT_EQ(t.environment, (std::map<std::string, std::string>{{"A", "1"}, {"B", "2"}}));
}

TEST(ConfigTest, ApiVersionsAndUrls) {
  std::vector<std::string> lines =
      Lines(LoadConfigText("jenkins:\n  clouds:\n    - slurm:\n        name: c\n        "
                           "slurmRestApiUrl: 127.0.0.1:6820\n"
                           "        apiVersion: v0.0.40\n        credentials: {jwtEnv: SLURM_JWT}\n"
                           "        jenkinsUrl: ftp://j\n",
                           "u.yaml", {}));
  ASSERT_EQ(lines.size(), 3u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("slurmRestApiUrl: '127.0.0.1:6820' is not an http:// or https:// URL "
                          "(fix: write it with its scheme: http://127.0.0.1:6820 or "
                          "https://127.0.0.1:6820)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("apiVersion: 'v0.0.40' is not an API version slurmfleet speaks (fix: "
                          "use auto or one of v0.0.42, v0.0.43, v0.0.44, v0.0.45)"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("jenkinsUrl: 'ftp://j' is not an http:// or https:// URL (fix: write "
                          "an http:// or https:// URL, e.g. https://jenkins.example.org/)"),
            std::string::npos)
      << lines[2];
}

TEST(ConfigTest, UrlsWithCredentialsInsideAreRefusedWithoutShowingThem) {
  std::vector<std::string> lines = Lines(LoadConfigText(
      "jenkins:\n  url: http://admin:S3cretTok@j:8080/\n"
      "  credentials: {user: u, apiTokenFile: /t}\n  clouds:\n    - slurm:\n        name: c\n"
      "        slurmRestApiUrl: https://u:SlurmPw@s:6820\n"
      "        credentials: {jwtEnv: SLURM_JWT}\n        jenkinsUrl: http://tok@j/x@y\n",
      "u.yaml", {}));
  ASSERT_EQ(lines.size(), 3u) << testing::PrintToString(lines);
  for (const std::string key : {"jenkins.url", "slurm.slurmRestApiUrl", "slurm.jenkinsUrl"}) {
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find(key + ": '") != std::string::npos && l.find("***@") != std::string::npos &&
             l.find("' holds a user name or password (not shown here)") != std::string::npos;
    })) << key;
  }
  for (const std::string& l : lines) {
    EXPECT_EQ(l.find("S3cretTok"), std::string::npos) << l;
    EXPECT_EQ(l.find("SlurmPw"), std::string::npos) << l;
  }
  // A password holding '/' whose start reads as a host and port leaves an '@' in the "path".
  lines =
      Lines(LoadConfigText("batch:\n  restUrl: http://u:2024/S3cretTok@s:6820/\n"
                           "  partition: p\n  storageRoot: /s\n  credentials: {jwtFile: /t}\n",
                           "at.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("batch.restUrl: 'http://***@s:6820/' has an '@' after its host"),
            std::string::npos)
      << lines[0];
}

// Every URL key gets the check the CLI and the clients make (base/url.h), not just its scheme.
TEST(ConfigTest, UrlsNeedAHostAPortFrom1To65535AndNoSpaceOrFragment) {
  auto config = [](const std::string& url) {
    return "jenkins:\n  url: '" + url +
           "'\n  credentials: {user: u, apiTokenFile: /t}\n  clouds:\n    - slurm:\n"
           "        name: c\n        slurmRestApiUrl: '" +
           url + "'\n        credentials: {jwtFile: /t}\n        jenkinsUrl: '" + url +
           "'\nbatch:\n  restUrl: '" + url +
           "'\n  partition: p\n  storageRoot: /s\n  credentials: {jwtFile: /t}\n";
  };
  const std::pair<std::string, std::string> cases[] = {
      {"http:///", "'http:///' has no host (fix: write the host after '//', e.g. "},
      {"http://:8080/", "'http://:8080/' has no host (fix: write the host after '//', e.g. "},
      {"http://ho st/", "'http://ho st/' contains a space (fix: remove it"},
      {"http://host/#frag",
       "'http://host/#frag' has a fragment ('#'), which is never sent to the server (fix: remove "
       "the '#' and all that follows it)"},
      {"http://host:abc/", "'http://host:abc/' has a port that is not a number from 1 to 65535"},
      {"http://host:0/", "'http://host:0/' has a port that is not a number from 1 to 65535"},
      {"http://host:99999/",
       "'http://host:99999/' has a port that is not a number from 1 to 65535"},
  };
  for (const auto& [url, expected] : cases) {
    std::vector<std::string> lines = Lines(LoadConfigText(config(url), "u.yaml", {}));
    EXPECT_EQ(lines.size(), 4u) << url << "\n" << testing::PrintToString(lines);
    for (const std::string key :
         {"jenkins.url: ", "slurm.slurmRestApiUrl: ", "slurm.jenkinsUrl: ", "batch.restUrl: "}) {
      EXPECT_TRUE(std::any_of(
          lines.begin(), lines.end(),
          [&](const std::string& l) { return l.find(key + expected) != std::string::npos; }))
          << key + expected << "\n"
          << testing::PrintToString(lines);
    }
  }
  for (const std::string url :
       {"http://[::1]:8080/", "https://host:65535/x", "http://10.0.0.1:1"}) {
    LoadResult r = LoadConfigText(config(url), "u.yaml", {});
    EXPECT_TRUE(r.ok()) << url << "\n" << testing::PrintToString(Lines(r));
  }
}

TEST(ConfigTest, UrlsThatAreNotHttpAreQuotedWithoutTheirCredentials) {
  LoadResult r = LoadConfigText(
      "jenkins:\n  url: 'admin:SECRETMARK1@jenkins.example.org:8080/'\n"
      "  credentials: {user: u, apiTokenFile: /t}\n  clouds:\n    - slurm:\n        name: c\n"
      "        slurmRestApiUrl: 'unix:u:SECRETMARK2@s'\n"
      "        credentials: {jwtEnv: SLURM_JWT}\n        jenkinsUrl: ftp://u:SECRETMARK3@j/\n",
      "u.yaml", {Override{"batch.restUrl", "u:SECRETMARK4@s:6820", "environment SLURMFLEET_X"}});
  std::vector<std::string> lines = Lines(r);
  ASSERT_GE(lines.size(), 4u) << testing::PrintToString(lines);
  for (const std::string& l : lines) EXPECT_EQ(l.find("SECRETMARK"), std::string::npos) << l;
  for (const std::string expected :
       {"jenkins.url: '***@jenkins.example.org:8080/' is not an http:// or https:// URL (fix: "
        "write it with its scheme: http://***@jenkins.example.org:8080/ or "
        "https://***@jenkins.example.org:8080/)",
        "slurm.slurmRestApiUrl: '***@s' does not name the socket by its absolute path",
        "slurm.jenkinsUrl: 'ftp://***@j/' is not an http:// or https:// URL",
        "batch.restUrl: '***@s:6820' is not an http:// or https:// URL"}) {
    EXPECT_TRUE(
        std::any_of(lines.begin(), lines.end(),
                    [&](const std::string& l) { return l.find(expected) != std::string::npos; }))
        << expected << "\n"
        << testing::PrintToString(lines);
  }
}

// Entries that are no cloud are skipped when decoding: later checks still name the right entry.
TEST(ConfigTest, ProblemsFoundAfterDecodingNameTheCloudsOwnEntry) {
  const std::string cloud =
      "    - slurm: {name: a, slurmRestApiUrl: http://h:6820, credentials: "
      "{jwtFile: /t}}\n";
  std::vector<std::string> lines =
      Lines(LoadConfigText("jenkins:\n  clouds:\n    - oops\n" + cloud, "i.yaml", {}));
  ASSERT_EQ(lines.size(), 3u) << testing::PrintToString(lines);
  EXPECT_NE(lines[2].find("i.yaml:4:14: jenkins.clouds[1].slurm.jenkinsUrl: no Jenkins URL"),
            std::string::npos)
      << lines[2];
  lines =
      Lines(LoadConfigText("jenkins:\n  url: http://j/\n  credentials: {user: u, "
                           "apiTokenFile: /t}\n  clouds:\n    - {}\n" +
                               cloud + cloud,
                           "i.yaml", {}));
  ASSERT_EQ(lines.size(), 2u) << testing::PrintToString(lines);
  EXPECT_NE(lines[1].find("i.yaml:7:21: jenkins.clouds[2].slurm.name: another cloud is already "
                          "named 'a'"),
            std::string::npos)
      << lines[1];
}

TEST(ConfigTest, SlurmrestdMayBeALocalSocketNamedByItsAbsolutePath) {
  const std::string cloud =
      "jenkins:\n  clouds:\n    - slurm:\n        name: c\n        credentials: {jwtEnv: "
      "SLURM_JWT}\n        jenkinsUrl: http://j:8080/\n        slurmRestApiUrl: ";
  EXPECT_EQ(Lines(LoadConfigText(cloud + "unix:/run/slurmrestd/slurmrestd.socket\n", "s.yaml", {})),
            std::vector<std::string>{});
  std::vector<std::string> lines =
      Lines(LoadConfigText(cloud + "unix:slurmrestd.socket\n", "s.yaml", {}));
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("slurmRestApiUrl: 'unix:slurmrestd.socket' does not name the socket by "
                          "its absolute path (fix: write unix:/path/to/slurmrestd.socket"),
            std::string::npos)
      << lines[0];
}

// The plugin's template form lists defaultPartition too: a JCasC template that has it loads.
TEST(ConfigTest, ATemplateMayHaveADefaultPartition) {
  LoadResult r = LoadConfigText(
      "jenkins:\n  clouds:\n    - slurm:\n        name: c\n        slurmRestApiUrl: "
      "http://s:6820\n        jenkinsUrl: http://j:8080/\n        credentials: {jwtEnv: "
      "SLURM_JWT}\n        defaultPartition: compute\n        defaultAgentLaunch: {downloadJar: "
      "true}\n        jobTemplates:\n          - name: gpu\n            label: gpu\n"
      "            defaultPartition: gpu\n          - name: cpu\n            label: cpu\n",
      "p.yaml", {});
  ASSERT_TRUE(r.ok()) << FormatDiagnostic(r.diagnostics.front());
  const config::Cloud& cloud = r.config.clouds[0];
  Result<spec::ResolvedTemplate> gpu = spec::Resolve(cloud.defaults, cloud.job_templates, "gpu");
  Result<spec::ResolvedTemplate> cpu = spec::Resolve(cloud.defaults, cloud.job_templates, "cpu");
  ASSERT_TRUE(gpu && cpu);
  EXPECT_EQ(gpu->job.partition, "gpu");
  EXPECT_EQ(cpu->job.partition, "compute");
}

TEST(ConfigTest, BatchSection) {
  std::vector<std::string> lines = Lines(LoadConfigText(
      "batch:\n  restUrl: https://slurmrestd:6820\n  runtimeProfile: docker\n"
      "  credentials: {user: tp, jwtFile: /run/secrets/slurm-jwt}\n  storageRoot: lustre\n",
      "b.yaml", {}));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "b.yaml:2:3: batch.partition: 'partition' is required (fix: the partition "
                       "batch runs go to, e.g. partition: gpu)",
                       "b.yaml:3:19: batch.runtimeProfile: 'docker' is not a runtime profile (fix: "
                       "write enroot-pyxis or apptainer)",
                       "b.yaml:5:16: batch.storageRoot: 'lustre' is not an absolute path (fix: "
                       "write a path starting with /)"}));
}

TEST(ConfigTest, EnvironmentAndFlagsOverrideTheFile) {
  const std::string text =
      "batch:\n  restUrl: https://a:6820\n  credentials: {user: tp, jwtFile: /f}\n"
      "  partition: gpu\n  storageRoot: /lustre\n";
  std::vector<Override> overrides = OverridesFromEnvironment({
      {"SLURMFLEET_SLURM_PARTITION", "cpu"},
      {"SLURMFLEET_SLURM_JWT_KEY_FILE", "/etc/slurm/jwt.key"},
      {"SLURMFLEET_SLURM_STORAGE_ROOT", "/mnt/lustre"},
      {"SLURMFLEET_SLURM_TLS_VERIFY", "false"},
  });
  overrides.push_back(*ParseSetFlag("batch.partition=debug"));
  LoadResult r = LoadConfigText(text, "o.yaml", overrides);
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  EXPECT_EQ(r.config.batch->partition, "debug");  // the flag wins over the environment
  EXPECT_EQ(r.config.batch->credentials.source, SlurmCredentials::Source::kMintFromKey);
  EXPECT_EQ(r.config.batch->cluster_storage_root, "/mnt/lustre");
  EXPECT_EQ(r.config.batch->storage_root, "/lustre");
  EXPECT_FALSE(r.config.batch->tls_verify);
}

TEST(ConfigTest, OverrideProblemsNameTheirSource) {
  const std::string text =
      "batch:\n  restUrl: https://a:6820\n  credentials: {user: tp, jwtFile: /f}\n"
      "  partition: gpu\n  storageRoot: /lustre\n";
  LoadResult r = LoadConfigText(
      text, "o.yaml", OverridesFromEnvironment({{"SLURMFLEET_SLURM_RUNTIME_PROFILE", "podman"}}));
  EXPECT_EQ(Lines(r),
            std::vector<std::string>{
                "environment SLURMFLEET_SLURM_RUNTIME_PROFILE: batch.runtimeProfile: "
                "'podman' is not a runtime profile (fix: write enroot-pyxis or apptainer)"});
  r = LoadConfigText(text, "o.yaml", {*ParseSetFlag("batch.partition.x=1")});
  EXPECT_EQ(Lines(r), std::vector<std::string>{
                          "--set batch.partition.x=\u2026: batch.partition.x: batch.partition is a "
                          "single value or a list, so 'batch.partition.x' cannot go inside it"});
}

TEST(ConfigTest, LoadConfigSummarisesForOtherCommands) {
  Result<Config> c = LoadConfig(kExample, {*ParseSetFlag("daemon.listen=nope")});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kInvalidInput);
  EXPECT_NE(c.error().message.find("daemon.listen: 'nope' is not HOST:PORT"), std::string::npos);
  EXPECT_TRUE(LoadConfig(kExample, {}));
}

TEST(ConfigTest, TheSpecsOneAndZeroAreBooleans) {
  for (const auto& [value, verify] : {std::pair{"1", true}, {"0", false}, {"false", false}}) {
    Result<Config> c =
        LoadConfig(kExample, OverridesFromEnvironment({{"SLURMFLEET_SLURM_TLS_VERIFY", value}}));
    ASSERT_TRUE(c) << value << ": " << c.error().ToString();
    ASSERT_TRUE(c->batch);
    EXPECT_EQ(c->batch->tls_verify, verify) << value;
  }
  EXPECT_FALSE(
      LoadConfig(kExample, OverridesFromEnvironment({{"SLURMFLEET_SLURM_TLS_VERIFY", "2"}})));
}

TEST(ConfigTest, TheBatchSideTakesASiteCa) {
  Result<Config> c = LoadConfig(kExample, {*ParseSetFlag("batch.caFile=/etc/ssl/site-ca.pem")});
  ASSERT_TRUE(c) << c.error().ToString();
  ASSERT_TRUE(c->batch);
  EXPECT_EQ(c->batch->ca_file, "/etc/ssl/site-ca.pem");
  Result<Config> relative = LoadConfig(kExample, {*ParseSetFlag("batch.caFile=site-ca.pem")});
  ASSERT_FALSE(relative);
  EXPECT_NE(relative.error().message.find("batch.caFile"), std::string::npos)
      << relative.error().message;
}

TEST(ConfigTest, NoCloudIsNamedBatchBesideABatchSection) {
  Result<Config> c = LoadConfig(kExample, {*ParseSetFlag("jenkins.clouds.local.name=batch")});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("'batch' is the name the batch section's runs go under"),
            std::string::npos)
      << c.error().message;
}

TEST(ConfigTest, HistoryIsKeptThirtyDaysUnlessSaidOtherwise) {
  Result<Config> plain = LoadConfig(kExample, {});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->daemon.history_days, 30);
  Result<Config> forever = LoadConfig(kExample, {*ParseSetFlag("daemon.historyDays=0")});
  ASSERT_TRUE(forever) << forever.error().ToString();
  EXPECT_EQ(forever->daemon.history_days, 0);
  Result<Config> bad = LoadConfig(kExample, {*ParseSetFlag("daemon.historyDays=-1")});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("daemon.historyDays: -1 is out of range"), std::string::npos)
      << bad.error().message;
}

TEST(ConfigTest, LogLevelIsInfoOrDebug) {
  Result<Config> plain = LoadConfig(kExample, {});
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->daemon.debug_log);
  Result<Config> debug = LoadConfig(kExample, {*ParseSetFlag("daemon.logLevel=debug")});
  ASSERT_TRUE(debug) << debug.error().ToString();
  EXPECT_TRUE(debug->daemon.debug_log);
  Result<Config> from_env =
      LoadConfig(kExample, OverridesFromEnvironment({{"SLURMFLEET_LOG_LEVEL", "debug"}}));
  ASSERT_TRUE(from_env) << from_env.error().ToString();
  EXPECT_TRUE(from_env->daemon.debug_log);
  Result<Config> bad = LoadConfig(kExample, {*ParseSetFlag("daemon.logLevel=verbose")});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(
                "daemon.logLevel: 'verbose' is not a log level (fix: write info or debug)"),
            std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace slurmfleet::config

namespace slurmfleet::config {
namespace {

std::string WithJenkins(const std::string& jenkins_keys, const std::string& cloud_keys = "") {
  return "jenkins:\n" + jenkins_keys +
         "  clouds:\n"
         "    - slurm:\n"
         "        name: c\n"
         "        slurmRestApiUrl: http://127.0.0.1:6820\n"
         "        credentials: {user: ci, jwtFile: /t}\n" +
         cloud_keys;
}

TEST(JenkinsConfigTest, CaFilesForJenkinsAndSlurmrestd) {
  LoadResult r = LoadConfigText(
      WithJenkins("  url: https://jenkins:8443\n"
                  "  credentials: {user: admin, apiTokenFile: /etc/sf/jenkins.token}\n"
                  "  caFile: /etc/ssl/site-ca.pem\n",
                  "        caFile: /etc/ssl/hpc-ca.pem\n"),
      "f.yaml", {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  EXPECT_EQ(r.config.jenkins->ca_file, "/etc/ssl/site-ca.pem");
  EXPECT_EQ(r.config.clouds[0].ca_file, "/etc/ssl/hpc-ca.pem");
  EXPECT_EQ(Lines(LoadConfigText(
                WithJenkins("  url: https://jenkins:8443\n"
                            "  credentials: {user: admin, apiTokenFile: /etc/sf/jenkins.token}\n",
                            "        caFile: ca.pem\n"),
                "f.yaml", {})),
            std::vector<std::string>{"f.yaml:9:17: jenkins.clouds[0].slurm.caFile: 'ca.pem' is not "
                                     "an absolute path (fix: write a path starting with /)"});
}

TEST(JenkinsConfigTest, UrlCredentialsAndDefaults) {
  LoadResult r = LoadConfigText(
      WithJenkins("  url: http://jenkins:8080\n"
                  "  credentials: {user: admin, apiTokenFile: /etc/sf/jenkins.token}\n"),
      "f.yaml", {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  ASSERT_TRUE(r.config.jenkins);
  EXPECT_EQ(r.config.jenkins->url, "http://jenkins:8080/");
  EXPECT_EQ(r.config.jenkins->credentials.user, "admin");
  EXPECT_EQ(r.config.jenkins->credentials.api_token_file, "/etc/sf/jenkins.token");
  EXPECT_EQ(r.config.jenkins->poll_ms, 2000);
  EXPECT_FALSE(r.config.jenkins->agent_timeout_minutes);
  EXPECT_EQ(r.config.jenkins->ephemeral_ttl_seconds, 3600);
  EXPECT_EQ(r.config.clouds[0].jenkins_url, "http://jenkins:8080/")
      << "a cloud without jenkinsUrl gives its agents jenkins.url";
}

TEST(JenkinsConfigTest, CloudJenkinsUrlWinsForAgents) {
  LoadResult r = LoadConfigText(WithJenkins("  url: http://jenkins:8080/\n"
                                            "  credentials: {user: admin, apiTokenFile: /t}\n",
                                            "        jenkinsUrl: http://10.0.0.5:8080/jenkins\n"),
                                "f.yaml", {});
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  EXPECT_EQ(r.config.clouds[0].jenkins_url, "http://10.0.0.5:8080/jenkins/");
}

TEST(JenkinsConfigTest, MistakesAreNamedWithTheirFix) {
  auto first = [](const std::string& text) {
    std::vector<std::string> lines = Lines(LoadConfigText(text, "f.yaml", {}));
    return lines.empty() ? std::string() : lines.front();
  };
  EXPECT_NE(first(WithJenkins("  url: http://j/\n")).find("jenkins.credentials"),
            std::string::npos);
  EXPECT_NE(first(WithJenkins("  url: \"\"\n  credentials: {user: a, apiTokenFile: /t}\n"))
                .find("jenkins.url: must not be empty"),
            std::string::npos);
  EXPECT_NE(first(WithJenkins("  url: ftp://j/\n  credentials: {user: a, apiTokenFile: /t}\n"))
                .find("not an http:// or https:// URL"),
            std::string::npos);
  EXPECT_NE(testing::PrintToString(
                Lines(LoadConfigText(
                    WithJenkins("  url: http://j/\n  credentials: {user: a, apiToken: x}\n"),
                    "f.yaml", {})))
                .find("never written inline"),
            std::string::npos);
  EXPECT_NE(first(WithJenkins("  pollMs: 500\n", "        jenkinsUrl: http://j/\n"))
                .find("jenkins.pollMs: has no effect without jenkins.url"),
            std::string::npos);
  EXPECT_NE(first(WithJenkins("")).find("no Jenkins URL for the agents of this cloud"),
            std::string::npos);
  EXPECT_NE(first(WithJenkins("  url: http://j/\n  credentials: {user: a, apiTokenFile: /t}\n",
                              "        jenkinsCredentials: {user: a, apiTokenFile: /t}\n"))
                .find("move this block to jenkins.credentials"),
            std::string::npos);
}

TEST(JenkinsConfigTest, EnvironmentOverridesTheAgentTimeout) {
  std::vector<Override> env = OverridesFromEnvironment(
      {{"SLURMFLEET_AGENT_TIMEOUT_MINUTES", "9"}, {"SLURMFLEET_JENKINS_URL", "http://k/"}});
  LoadResult r = LoadConfigText(
      WithJenkins("  url: http://j/\n  credentials: {user: a, apiTokenFile: /t}\n"), "f.yaml", env);
  ASSERT_TRUE(r.ok()) << testing::PrintToString(Lines(r));
  EXPECT_EQ(r.config.jenkins->agent_timeout_minutes, 9);
  EXPECT_EQ(r.config.jenkins->url, "http://k/");
}

}  // namespace
}  // namespace slurmfleet::config
