#include "spec/job_desc_schema.h"

#include <gtest/gtest.h>

namespace slurmfleet::spec {
namespace {

using nlohmann::json;

std::vector<Error> Check(std::string_view version, std::string_view field, const json& value) {
  std::vector<Error> problems;
  const JobDescSchema* schema = FindJobDescSchema(version);
  EXPECT_NE(schema, nullptr);
  CheckJobDescField(*schema, field, value, "job." + std::string(field), problems);
  return problems;
}

TEST(JobDescSchemaTest, EveryDialectVersionHasASchema) {
  std::vector<std::string_view> versions;
  for (const JobDescSchema& s : AllJobDescSchemas()) versions.push_back(s.version);
  EXPECT_EQ(versions, (std::vector<std::string_view>{"v0.0.45", "v0.0.44", "v0.0.43", "v0.0.42"}));
  EXPECT_EQ(FindJobDescSchema("v0.0.41"), nullptr);
}

TEST(JobDescSchemaTest, KindsFollowTheOpenApiDocuments) {
  const JobDescSchema& s = *FindJobDescSchema("v0.0.45");
  EXPECT_EQ(FindField(s.fields, "partition")->kind, FieldKind::kString);
  EXPECT_EQ(FindField(s.fields, "cpus_per_task")->kind, FieldKind::kInt32);
  EXPECT_EQ(FindField(s.fields, "deadline")->kind, FieldKind::kInt64);
  EXPECT_EQ(FindField(s.fields, "contiguous")->kind, FieldKind::kBool);
  EXPECT_EQ(FindField(s.fields, "memory_per_node")->kind, FieldKind::kNoValInt);
  EXPECT_EQ(FindField(s.fields, "required_nodes")->kind, FieldKind::kCsvString);
  EXPECT_EQ(FindField(s.fields, "argv")->kind, FieldKind::kStringArray);
  EXPECT_EQ(FindField(s.fields, "mail_type")->kind, FieldKind::kFlags);
  EXPECT_EQ(FindField(s.fields, "rlimits")->kind, FieldKind::kObject);
  EXPECT_EQ(FindField(s.fields, "no_such_field"), nullptr);
}

TEST(JobDescSchemaTest, ValidValuesPass) {
  EXPECT_TRUE(Check("v0.0.45", "account", "physics").empty());
  EXPECT_TRUE(Check("v0.0.45", "nice", 10).empty());
  EXPECT_TRUE(Check("v0.0.45", "memory_per_cpu", 2048).empty());
  EXPECT_TRUE(Check("v0.0.45", "memory_per_cpu", json{{"set", true}, {"number", 2048}}).empty());
  EXPECT_TRUE(Check("v0.0.45", "excluded_nodes", "n1,n2").empty());
  EXPECT_TRUE(Check("v0.0.45", "excluded_nodes", json::array({"n1", "n2"})).empty());
  EXPECT_TRUE(Check("v0.0.45", "mail_type", json::array({"BEGIN", "END"})).empty());
  EXPECT_TRUE(
      Check("v0.0.45", "rlimits", json{{"nofile", {{"set", true}, {"number", 4096}}}}).empty());
  EXPECT_TRUE(Check("v0.0.42", "mail_type", json::array({"FAIL"})).empty());
}

TEST(JobDescSchemaTest, ProblemsNameTheJsonPath) {
  auto p = Check("v0.0.45", "nice", "high");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].where, "job.nice");
  EXPECT_EQ(p[0].message, "expected an integer, got a string");
  EXPECT_EQ(p[0].code, Code::kInvalidInput);

  p = Check("v0.0.45", "mail_type", json::array({"BEGIN", "ENDD", 3}));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].where, "job.mail_type[1]");
  EXPECT_EQ(p[0].message, "unknown flag 'ENDD' (did you mean 'END'?)");
  EXPECT_EQ(p[1].where, "job.mail_type[2]");

  p = Check("v0.0.45", "rlimits", json{{"nofiles", 1}, {"core", "big"}});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].where, "job.rlimits.core");
  EXPECT_EQ(p[1].where, "job.rlimits.nofiles");
  EXPECT_EQ(p[1].message, "unknown field 'nofiles' (did you mean 'nofile'?)");

  p = Check("v0.0.45", "memory_per_cpu", json{{"set", "yes"}, {"numbr", 1}});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].where, "job.memory_per_cpu.numbr");
  EXPECT_EQ(p[1].where, "job.memory_per_cpu.set");

  p = Check("v0.0.45", "nice", int64_t{1} << 40);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message, "does not fit in a 32-bit integer");

  p = Check("v0.0.45", "argv", json::array({"a", 1}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].where, "job.argv[1]");

  p = Check("v0.0.45", "contiguous", 1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message, "expected a boolean, got an integer");
}

TEST(JobDescSchemaTest, UnknownFieldSuggestsTheNearestName) {
  auto p = Check("v0.0.45", "cpus_per_tsk", 4);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].message,
            "unknown job_desc field 'cpus_per_tsk' in API v0.0.45 (did you mean 'cpus_per_task'?)");
}

TEST(JobDescSchemaTest, VersionsDiffer) {
  // cpu_binding_flags is a flag array in every version, but v0.0.42 has CPU_BIND_RANK and
  // v0.0.45 does not.
  EXPECT_TRUE(Check("v0.0.42", "cpu_binding_flags", json::array({"CPU_BIND_RANK"})).empty());
  EXPECT_FALSE(Check("v0.0.45", "cpu_binding_flags", json::array({"CPU_BIND_RANK"})).empty());
  // step_id exists from v0.0.44 on.
  EXPECT_TRUE(Check("v0.0.44", "step_id", json{{"sluid", "x"}}).empty());
  EXPECT_FALSE(Check("v0.0.42", "step_id", json{{"sluid", "x"}}).empty());
}

}  // namespace
}  // namespace slurmfleet::spec
