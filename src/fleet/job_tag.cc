#include "fleet/job_tag.h"

namespace slurmfleet::fleet {
namespace {

constexpr std::string_view kPrefix = "slurmfleet:";

bool ValidChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool ValidPart(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    if (!ValidChar(c)) return false;
  }
  return true;
}

}  // namespace

Status ValidateTagPart(std::string_view what, std::string_view value) {
  if (ValidPart(value)) return {};
  return Fail(Code::kInvalidInput,
              "'" + std::string(value) + "' is not a valid " + std::string(what) +
                  "; use 1-128 characters from A-Z a-z 0-9 . _ -",
              std::string(what));
}

std::string TagPrefix(std::string_view instance) {
  return std::string(kPrefix) + std::string(instance) + ":";
}

std::string TagComment(const JobTag& tag, std::string_view user_comment) {
  std::string out = TagPrefix(tag.instance) + tag.key;
  if (!user_comment.empty()) {
    out += ' ';
    out += user_comment;
  }
  return out;
}

std::optional<JobTag> ParseTag(std::string_view comment) {
  std::optional<JobTagView> tag = ParseTagView(comment);
  if (!tag) return std::nullopt;
  return JobTag{std::string(tag->instance), std::string(tag->key)};
}

std::optional<JobTagView> ParseTagView(std::string_view comment) {
  if (!comment.starts_with(kPrefix)) return std::nullopt;
  comment.remove_prefix(kPrefix.size());
  size_t end = comment.find(' ');
  std::string_view tag = comment.substr(0, end);
  size_t colon = tag.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  JobTagView out{tag.substr(0, colon), tag.substr(colon + 1)};
  if (!ValidPart(out.instance) || !ValidPart(out.key)) return std::nullopt;
  return out;
}

}  // namespace slurmfleet::fleet
