#include "jenkins/model.h"

#include <string_view>

namespace slurmfleet::jenkins {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Jenkins writes job names with Util.rawEncode (%XX); a malformed escape is kept as it is.
std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

bool QueueItem::WantsExecutor() const {
  return std::string_view(item_class).ends_with("$BuildableItem") && buildable && !pending;
}

std::string QueueItem::FolderPath() const {
  std::string_view url = task_url;
  url = url.substr(0, url.find_first_of("?#"));
  // Only the path counts: the host is whatever root URL Jenkins has configured.
  if (size_t scheme = url.find("://"); scheme != std::string_view::npos) {
    size_t path = url.find('/', scheme + 3);
    url = path == std::string_view::npos ? std::string_view() : url.substr(path);
  }
  std::vector<std::string_view> segments;
  while (!url.empty()) {
    size_t slash = url.find('/');
    std::string_view segment = url.substr(0, slash);
    if (!segment.empty()) segments.push_back(segment);
    url = slash == std::string_view::npos ? std::string_view() : url.substr(slash + 1);
  }
  // Every `job/<name>` pair names one level. Whatever follows the last pair (a Pipeline
  // placeholder's build number, a view) is not part of the job's path.
  std::vector<std::string> jobs;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    if (segments[i] == "job") jobs.push_back(PercentDecode(segments[++i]));
  }
  if (jobs.size() <= 1) return "";
  std::string path;
  for (size_t i = 0; i + 1 < jobs.size(); ++i) {
    if (!path.empty()) path += '/';
    path += jobs[i];
  }
  return path;
}

bool Computer::building() const {
  for (const Executor& executor : executors) {
    if (!executor.idle || !executor.current_url.empty()) return true;
  }
  return false;
}

}  // namespace slurmfleet::jenkins
