#include "spec/job_desc_schema.h"

#include <limits>

#include "spec/suggest.h"

namespace slurmfleet::spec {
namespace {

using nlohmann::json;

void Problem(std::vector<Error>& problems, const std::string& path, std::string message) {
  problems.push_back(Error{Code::kInvalidInput, std::move(message), path});
}

std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number with a fraction";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

std::vector<std::string_view> Names(std::span<const FieldSchema> fields) {
  std::vector<std::string_view> names;
  for (const FieldSchema& f : fields) names.push_back(f.name);
  return names;
}

bool FitsInt32(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= std::numeric_limits<int32_t>::max();
  int64_t n = v.get<int64_t>();
  return n >= std::numeric_limits<int32_t>::min() && n <= std::numeric_limits<int32_t>::max();
}

void CheckStringArray(const json& v, const std::string& path, std::vector<Error>& problems) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      Problem(problems, path + "[" + std::to_string(i) + "]",
              "expected a string, got " + TypeName(v[i]));
    }
  }
}

void CheckValue(const FieldSchema& field, const json& v, const std::string& path,
                std::vector<Error>& problems);

void CheckObject(std::span<const FieldSchema> fields, const json& v, const std::string& path,
                 std::vector<Error>& problems) {
  if (!v.is_object()) {
    Problem(problems, path, "expected an object, got " + TypeName(v));
    return;
  }
  const std::vector<std::string_view> names = Names(fields);
  for (const auto& [key, value] : v.items()) {
    const std::string sub = path + "." + key;
    const FieldSchema* f = FindField(fields, key);
    if (f == nullptr) {
      Problem(problems, sub, "unknown field '" + key + "'" + DidYouMean(key, names));
      continue;
    }
    CheckValue(*f, value, sub, problems);
  }
}

void CheckNoVal(const json& v, const std::string& path, std::vector<Error>& problems) {
  if (v.is_number_integer()) {
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
      Problem(problems, path, "must not be negative");
    }
    return;
  }
  if (!v.is_object()) {
    Problem(problems, path,
            "expected an integer or {\"set\": true, \"number\": N}, got " + TypeName(v));
    return;
  }
  for (const auto& [key, value] : v.items()) {
    const std::string sub = path + "." + key;
    if (key == "set" || key == "infinite") {
      if (!value.is_boolean()) Problem(problems, sub, "expected a boolean, got " + TypeName(value));
    } else if (key == "number") {
      if (!value.is_number_integer()) {
        Problem(problems, sub, "expected an integer, got " + TypeName(value));
      }
    } else {
      static constexpr std::string_view kKeys[] = {"set", "infinite", "number"};
      Problem(problems, sub, "unknown field '" + key + "'" + DidYouMean(key, kKeys));
    }
  }
}

void CheckValue(const FieldSchema& field, const json& v, const std::string& path,
                std::vector<Error>& problems) {
  switch (field.kind) {
    case FieldKind::kString:
      if (!v.is_string()) Problem(problems, path, "expected a string, got " + TypeName(v));
      return;
    case FieldKind::kInt32:
      if (!v.is_number_integer()) {
        Problem(problems, path, "expected an integer, got " + TypeName(v));
      } else if (!FitsInt32(v)) {
        Problem(problems, path, "does not fit in a 32-bit integer");
      }
      return;
    case FieldKind::kInt64:
      if (!v.is_number_integer())
        Problem(problems, path, "expected an integer, got " + TypeName(v));
      return;
    case FieldKind::kBool:
      if (!v.is_boolean()) Problem(problems, path, "expected a boolean, got " + TypeName(v));
      return;
    case FieldKind::kNumber:
      if (!v.is_number()) Problem(problems, path, "expected a number, got " + TypeName(v));
      return;
    case FieldKind::kStringArray:
      if (!v.is_array()) {
        Problem(problems, path, "expected an array of strings, got " + TypeName(v));
      } else {
        CheckStringArray(v, path, problems);
      }
      return;
    case FieldKind::kCsvString:
      if (v.is_array()) {
        CheckStringArray(v, path, problems);
      } else if (!v.is_string()) {
        Problem(problems, path,
                "expected an array of strings or a comma-separated string, got " + TypeName(v));
      }
      return;
    case FieldKind::kFlags: {
      if (!v.is_array()) {
        Problem(problems, path, "expected an array of flag names, got " + TypeName(v));
        return;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string sub = path + "[" + std::to_string(i) + "]";
        if (!v[i].is_string()) {
          Problem(problems, sub, "expected a flag name, got " + TypeName(v[i]));
          continue;
        }
        const std::string name = v[i].get<std::string>();
        bool known = false;
        for (std::string_view e : field.enum_values) known = known || e == name;
        if (!known) {
          Problem(problems, sub,
                  "unknown flag '" + name + "'" + DidYouMean(name, field.enum_values));
        }
      }
      return;
    }
    case FieldKind::kNoValInt:
      CheckNoVal(v, path, problems);
      return;
    case FieldKind::kObject:
      CheckObject(field.fields, v, path, problems);
      return;
    case FieldKind::kAnyArray:
      if (!v.is_array()) Problem(problems, path, "expected an array, got " + TypeName(v));
      return;
  }
}

}  // namespace

const JobDescSchema* FindJobDescSchema(std::string_view version) {
  for (const JobDescSchema& s : AllJobDescSchemas()) {
    if (s.version == version) return &s;
  }
  return nullptr;
}

const FieldSchema* FindField(std::span<const FieldSchema> fields, std::string_view name) {
  for (const FieldSchema& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void CheckJobDescField(const JobDescSchema& schema, std::string_view name, const json& value,
                       const std::string& path, std::vector<Error>& problems) {
  const FieldSchema* f = FindField(schema.fields, name);
  if (f == nullptr) {
    const std::vector<std::string_view> names = Names(schema.fields);
    Problem(problems, path,
            "unknown job_desc field '" + std::string(name) + "' in API " +
                std::string(schema.version) + DidYouMean(name, names));
    return;
  }
  CheckValue(*f, value, path, problems);
}

void CheckJobDescFieldInAny(std::span<const JobDescSchema* const> schemas, std::string_view name,
                            const json& value, const std::string& path,
                            std::vector<Error>& problems) {
  if (schemas.empty()) {
    problems.push_back(
        Error{Code::kInternal, "no job_desc schema to check it against (internal error)", path});
    return;
  }
  std::vector<Error> first;
  for (size_t i = 0; i < schemas.size(); ++i) {
    std::vector<Error> found;
    CheckJobDescField(*schemas[i], name, value, path, found);
    if (found.empty()) return;
    if (i == 0) first = std::move(found);
  }
  problems.insert(problems.end(), first.begin(), first.end());
}

Status CheckJobDescFields(const json& fields, std::string_view version, const std::string& path) {
  std::vector<const JobDescSchema*> schemas;
  if (const JobDescSchema* s = FindJobDescSchema(version)) {
    schemas.push_back(s);
  } else {
    for (const JobDescSchema& s : AllJobDescSchemas()) schemas.push_back(&s);
  }
  if (!fields.is_object()) return {};
  std::vector<Error> problems;
  for (const auto& [name, value] : fields.items()) {
    CheckJobDescFieldInAny(schemas, name, value, path + "." + name, problems);
    if (!problems.empty()) return std::unexpected(problems.front());
  }
  return {};
}

}  // namespace slurmfleet::spec
