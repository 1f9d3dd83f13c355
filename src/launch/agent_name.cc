#include "launch/agent_name.h"

#include <string>

namespace slurmfleet::launch {
namespace {

constexpr std::string_view kTagPrefix = "slurmfleet:agent cloud=";
constexpr std::string_view kTagTemplate = " template=";

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Status CheckChars(std::string_view what, std::string_view name, size_t max_length) {
  if (name.empty()) return Fail(Code::kInvalidInput, std::string(what) + " is empty");
  if (name.size() > max_length) {
    return Fail(Code::kInvalidInput, std::string(what) + " '" + std::string(name) + "' is " +
                                         std::to_string(name.size()) + " characters long; use " +
                                         std::to_string(max_length) + " or fewer");
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto u = static_cast<unsigned char>(c);
      const std::string shown = (c >= 0x20 && c < 0x7f)
                                    ? std::string(1, c)
                                    : std::string{'\\', 'x', kHex[u >> 4], kHex[u & 0xf]};
      return Fail(Code::kInvalidInput, std::string(what) + " '" + std::string(name) +
                                           "' contains '" + shown +
                                           "'; use only letters, digits, '.', '_' and '-'");
    }
  }
  if (name.front() == '.' || name.front() == '_' || name.front() == '-') {
    return Fail(Code::kInvalidInput, std::string(what) + " '" + std::string(name) +
                                         "' must start with a letter or a digit");
  }
  if (name.back() == '.') {
    return Fail(Code::kInvalidInput,
                std::string(what) + " '" + std::string(name) + "' must not end with '.'");
  }
  return {};
}

}  // namespace

Status ValidateName(std::string_view what, std::string_view name) {
  return CheckChars(what, name, kMaxNameLength);
}

Status ValidateNamesTogether(std::string_view cloud, std::string_view template_name) {
  const size_t together = cloud.size() + template_name.size();
  if (together <= kMaxCloudAndTemplateLength) return {};
  return Fail(Code::kInvalidInput,
              "cloud name '" + std::string(cloud) + "' and template name '" +
                  std::string(template_name) + "' are " + std::to_string(together) +
                  " characters together; use " + std::to_string(kMaxCloudAndTemplateLength) +
                  " or fewer, since an agent name (cloud-template-time-sequence) is also its "
                  "submission key, at most " +
                  std::to_string(kMaxAgentNameLength) + " characters");
}

Result<std::string> MakeAgentName(std::string_view cloud, std::string_view template_name,
                                  std::chrono::system_clock::time_point at, uint64_t sequence) {
  if (Status s = ValidateName("cloud name", cloud); !s) return std::unexpected(s.error());
  if (Status s = ValidateName("template name", template_name); !s) {
    return std::unexpected(s.error());
  }
  if (Status s = ValidateNamesTogether(cloud, template_name); !s) {
    return std::unexpected(s.error());
  }
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  return std::string(cloud) + "-" + std::string(template_name) + "-" + std::to_string(millis) +
         "-" + std::to_string(sequence);
}

Status ValidateAgentName(std::string_view name) {
  return CheckChars("agent name", name, kMaxAgentNameLength);
}

std::string OwnershipTag(std::string_view cloud, std::string_view template_name) {
  return std::string(kTagPrefix) + std::string(cloud) + std::string(kTagTemplate) +
         std::string(template_name);
}

std::optional<Ownership> ParseOwnershipTag(std::string_view comment) {
  if (!comment.starts_with(kTagPrefix)) return std::nullopt;
  comment.remove_prefix(kTagPrefix.size());
  const size_t split = comment.find(kTagTemplate);
  if (split == std::string_view::npos) return std::nullopt;
  Ownership o{std::string(comment.substr(0, split)),
              std::string(comment.substr(split + kTagTemplate.size()))};
  if (!ValidateName("cloud name", o.cloud) || !ValidateName("template name", o.template_name)) {
    return std::nullopt;
  }
  return o;
}

}  // namespace slurmfleet::launch
