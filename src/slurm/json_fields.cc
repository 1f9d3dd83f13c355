#include "slurm/json_fields.h"

namespace slurmfleet::slurm {

const nlohmann::json* JsonFields::Find(const char* key) {
  if (!o_.is_object()) return nullptr;
  auto it = o_.find(key);
  if (it == o_.end() || it->is_null()) return nullptr;
  return &*it;
}

void JsonFields::WrongType(const char* key, const char* expected) {
  if (!error_) error_ = Error{Code::kInternal, std::string("expected ") + expected, PathOf(key)};
}

std::string JsonFields::String(const char* key) {
  const nlohmann::json* v = Find(key);
  if (!v) return {};
  if (!v->is_string()) {
    WrongType(key, "a string");
    return {};
  }
  return v->get<std::string>();
}

std::vector<std::string> JsonFields::StringArray(const char* key) {
  std::vector<std::string> out;
  const nlohmann::json* v = Find(key);
  if (!v) return out;
  if (!v->is_array()) {
    WrongType(key, "an array of strings");
    return out;
  }
  for (const nlohmann::json& item : *v) {
    if (!item.is_string()) {
      WrongType(key, "an array of strings");
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

uint32_t JsonFields::UInt32(const char* key) {
  const nlohmann::json* v = Find(key);
  if (!v) return 0;
  if (v->is_number_unsigned() || v->is_number_integer()) {
    if (v->is_number_integer() && !v->is_number_unsigned() && v->get<int64_t>() < 0) {
      WrongType(key, "a job id");
      return 0;
    }
    if (v->get<uint64_t>() > UINT32_MAX) {
      WrongType(key, "a job id");
      return 0;
    }
    return v->get<uint32_t>();
  }
  // jobs/state sends job_id as a string
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    uint64_t n = 0;
    for (char c : s) {
      if (c < '0' || c > '9' || n > UINT32_MAX) {
        WrongType(key, "a job id");
        return 0;
      }
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    if (s.empty() || n > UINT32_MAX) {
      WrongType(key, "a job id");
      return 0;
    }
    return static_cast<uint32_t>(n);
  }
  WrongType(key, "an integer");
  return 0;
}

bool JsonFields::Bool(const char* key) {
  const nlohmann::json* v = Find(key);
  if (!v) return false;
  if (!v->is_boolean()) {
    WrongType(key, "a boolean");
    return false;
  }
  return v->get<bool>();
}

const nlohmann::json* JsonFields::Object(const char* key) {
  const nlohmann::json* v = Find(key);
  if (v && !v->is_object()) {
    WrongType(key, "an object");
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonFields::Array(const char* key) {
  const nlohmann::json* v = Find(key);
  if (v && !v->is_array()) {
    WrongType(key, "an array");
    return nullptr;
  }
  return v;
}

std::optional<uint64_t> JsonFields::OptionalNoValUInt64(const char* key) {
  const nlohmann::json* v = Find(key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned() || v->is_number_integer()) {
    int64_t n = v->get<int64_t>();
    if (n < 0) return std::nullopt;
    return static_cast<uint64_t>(n);
  }
  if (!v->is_object()) {
    WrongType(key, "a number or a {set, infinite, number} object");
    return std::nullopt;
  }
  JsonFields inner(*v, PathOf(key));
  bool set = inner.Bool("set");
  bool infinite = inner.Bool("infinite");
  const nlohmann::json* number = inner.Find("number");
  if (!inner.ok()) {
    error_ = inner.error();
    return std::nullopt;
  }
  if (!set || infinite || !number) return std::nullopt;
  if (!number->is_number()) {
    WrongType(key, "a numeric 'number'");
    return std::nullopt;
  }
  if (number->is_number_float()) {
    const double d = number->get<double>();
    if (!(d >= 0 && d < 1.8e19)) return std::nullopt;  // no uint64 value (casting is undefined)
    return static_cast<uint64_t>(d);
  }
  int64_t n = number->get<int64_t>();
  if (n < 0) return std::nullopt;
  return static_cast<uint64_t>(n);
}

}  // namespace slurmfleet::slurm
