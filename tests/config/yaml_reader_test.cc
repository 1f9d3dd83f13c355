#include "config/yaml_reader.h"

#include <gtest/gtest.h>

namespace slurmfleet::config {
namespace {

TEST(YamlReaderTest, TypedAccessorsReportAndCarryOn) {
  YAML::Node doc = YAML::Load(
      "s: text\ni: 42\nbig: 99\nb: false\nbad_b: maybe\nlist: [a, b]\none: x\n"
      "map: {K: v}\nnested: {x: 1}\nextra: 1\ncolour: red\n");
  DiagnosticSink sink("f.yaml");
  MapReader r(doc, "top", sink);
  EXPECT_EQ(r.String("s"), "text");
  EXPECT_EQ(r.Int("i", 0, 100), 42);
  EXPECT_EQ(r.Int("big", 0, 10), std::nullopt);
  EXPECT_EQ(r.Bool("b"), false);
  EXPECT_EQ(r.Bool("bad_b"), std::nullopt);
  EXPECT_EQ(r.StringList("list", false), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.StringList("one", true), std::vector<std::string>{"x"});
  EXPECT_EQ(r.StringMap("map"), (std::map<std::string, std::string>{{"K", "v"}}));
  EXPECT_EQ(r.String("nested"), std::nullopt);
  EXPECT_EQ(r.String("absent"), std::nullopt);
  r.HintForUnknown("extra", "do something else");
  r.Known("color");
  r.Finish();
  std::vector<std::string> lines;
  for (const Diagnostic& d : sink.diagnostics()) lines.push_back(FormatDiagnostic(d));
  EXPECT_EQ(lines,
            (std::vector<std::string>{
                "f.yaml:3:6: top.big: 99 is out of range (fix: use a number from 0 to 10)",
                "f.yaml:5:8: top.bad_b: expected true or false, got 'maybe' (fix: write true or "
                "false)",
                "f.yaml:9:9: top.nested: expected a text value, got a mapping (fix: write a "
                "single value)",
                "f.yaml:10:1: top.extra: unknown key 'extra' (fix: do something else)",
                "f.yaml:11:1: top.colour: unknown key 'colour'; did you mean 'color'? (fix: "
                "rename it to 'color')"}));
}

TEST(YamlReaderTest, NonMappingIsReportedOnce) {
  YAML::Node doc = YAML::Load("[1, 2]");
  DiagnosticSink sink("f.yaml");
  MapReader r(doc, "jenkins", sink);
  EXPECT_EQ(r.String("x"), std::nullopt);
  r.Finish();
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].message, "expected a mapping of keys to values, got a list");
  EXPECT_EQ(doc.size(), 2u);  // the document itself is left alone
}

TEST(YamlReaderTest, ALoneValueWhereABlockBelongsIsNotQuoted) {
  // a token pasted where its credentials block goes must not reach the log
  YAML::Node doc = YAML::Load(
      "credentials: eyJhbGciOi.secret\nenvironment: eyJhbGciOi.secret\n"
      "labels: eyJhbGciOi.secret\n");
  DiagnosticSink sink("f.yaml");
  MapReader top(doc, "c", sink);
  MapReader credentials(doc["credentials"], "c.credentials", sink);
  EXPECT_EQ(top.StringMap("environment"), std::nullopt);
  EXPECT_EQ(top.StringList("labels", false), std::nullopt);
  ASSERT_EQ(sink.diagnostics().size(), 3u);
  EXPECT_EQ(sink.diagnostics()[0].message,
            "expected a mapping of keys to values, got a single value (not shown)");
  EXPECT_EQ(sink.diagnostics()[1].message,
            "expected a mapping of names to values, got a single value (not shown)");
  EXPECT_EQ(sink.diagnostics()[2].message, "expected a list, got a single value (not shown)");
  for (const Diagnostic& d : sink.diagnostics()) {
    EXPECT_EQ(d.message.find("secret"), std::string::npos) << d.message;
  }
}

TEST(YamlReaderTest, OverriddenNodesReportTheirSource) {
  YAML::Node doc = YAML::Load("a: 1");
  YAML::Node value = doc["a"];
  DiagnosticSink sink("f.yaml");
  sink.AddOverrideSource(value, "environment SLURMFLEET_A");
  sink.Report(value, "a", "bad");
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(FormatDiagnostic(sink.diagnostics()[0]), "environment SLURMFLEET_A: a: bad");
}

TEST(YamlReaderTest, YamlToJsonTypes) {
  YAML::Node doc = YAML::Load(
      "{i: 5, neg: -3, f: 1.5, t: true, n: ~, s: hello, q: '7', qb: \"true\", l: [1, x], "
      "m: {k: v}}");
  EXPECT_EQ(YamlToJson(doc), nlohmann::json::parse(R"({"i": 5, "neg": -3, "f": 1.5, "t": true,
      "n": null, "s": "hello", "q": "7", "qb": "true", "l": [1, "x"], "m": {"k": "v"}})"));
}

TEST(YamlReaderTest, NodeAtJsonPath) {
  YAML::Node job = YAML::Load("mail_type: [END, FAILED]\nrlimits:\n  nofile: x\n");
  EXPECT_EQ(NodeAtJsonPath(job, "job.mail_type[1]").Scalar(), "FAILED");
  EXPECT_EQ(NodeAtJsonPath(job, "job.rlimits.nofile").Mark().line, 2);
  EXPECT_EQ(NodeAtJsonPath(job, "job.rlimits.nofile").Scalar(), "nofile");  // the key
  EXPECT_TRUE(NodeAtJsonPath(job, "job.missing").is(job));
  EXPECT_TRUE(NodeAtJsonPath(job, "job.mail_type[9]").IsSequence());
  EXPECT_TRUE(NodeAtJsonPath(job, "job").is(job));
}

}  // namespace
}  // namespace slurmfleet::config
