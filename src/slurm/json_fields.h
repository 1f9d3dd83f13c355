// JsonFields reads typed fields out of one JSON object of a slurmrestd response without throwing.
// A missing field reads as empty/nullopt (slurmrestd omits fields freely across versions); a
// field of the wrong type is recorded as the first error, with its JSON path, and reads as empty.
// Internal to src/slurm/.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace slurmfleet::slurm {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string path) : o_(object), path_(std::move(path)) {}

  std::string String(const char* key);
  std::vector<std::string> StringArray(const char* key);
  uint32_t UInt32(const char* key);
  bool Bool(const char* key);
  const nlohmann::json* Object(const char* key);
  const nlohmann::json* Array(const char* key);
  // Slurm's {"set": bool, "infinite": bool, "number": N} structs (plain numbers are accepted too);
  // nullopt when unset or infinite.
  std::optional<uint64_t> OptionalNoValUInt64(const char* key);

  std::string PathOf(const char* key) const { return path_ + "." + key; }
  bool ok() const { return !error_; }
  const Error& error() const { return *error_; }

 private:
  const nlohmann::json* Find(const char* key);
  void WrongType(const char* key, const char* expected);

  const nlohmann::json& o_;
  std::string path_;
  std::optional<Error> error_;
};

}  // namespace slurmfleet::slurm
