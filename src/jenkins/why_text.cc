#include "jenkins/why_text.h"

#include <optional>
#include <vector>

namespace slurmfleet::jenkins {
namespace {

constexpr std::string_view kOpenQuote = "\u2018";   // ‘ in UTF-8
constexpr std::string_view kCloseQuote = "\u2019";  // ’ in UTF-8, also the apostrophe of doesn’t

// Matches `pattern` at `text[pos]`, where each ‘ or ’ in the pattern also matches an ASCII
// apostrophe. Returns the position after the match.
std::optional<size_t> MatchAt(std::string_view text, size_t pos, std::string_view pattern) {
  while (!pattern.empty()) {
    if (pattern.starts_with(kOpenQuote) || pattern.starts_with(kCloseQuote)) {
      std::string_view quote = pattern.substr(0, kOpenQuote.size());
      pattern.remove_prefix(quote.size());
      if (text.substr(pos).starts_with(quote)) {
        pos += quote.size();
      } else if (pos < text.size() && text[pos] == '\'') {
        ++pos;
      } else {
        return std::nullopt;
      }
      continue;
    }
    if (pos >= text.size() || text[pos] != pattern.front()) return std::nullopt;
    ++pos;
    pattern.remove_prefix(1);
  }
  return pos;
}

// `text` is prefix + X + suffix; returns X. The suffix is searched from the end, so X may itself
// hold quotes (a quoted atom of a label expression).
std::optional<std::string_view> Between(std::string_view text, std::string_view prefix,
                                        std::string_view suffix) {
  auto start = MatchAt(text, 0, prefix);
  if (!start) return std::nullopt;
  for (size_t end = text.size(); end + 1 > *start; --end) {
    auto matched = MatchAt(text, end, suffix);
    if (matched && *matched == text.size()) {
      if (end == *start) return std::nullopt;
      return text.substr(*start, end - *start);
    }
    if (end == 0) break;
  }
  return std::nullopt;
}

std::vector<std::string_view> SplitParts(std::string_view text) {
  std::vector<std::string_view> parts;
  for (;;) {
    size_t separator = text.find("; ");
    parts.push_back(text.substr(0, separator));
    if (separator == std::string_view::npos) return parts;
    text.remove_prefix(separator + 2);
  }
}

// "‘x’ doesn’t have label ‘gpu’": the label, whatever the node is called.
std::optional<std::string_view> MissingLabel(std::string_view part) {
  constexpr std::string_view kMiddle = "\u2019 doesn\u2019t have label \u2018";
  if (!MatchAt(part, 0, kOpenQuote)) return std::nullopt;
  for (size_t pos = 1; pos < part.size(); ++pos) {
    auto after = MatchAt(part, pos, kMiddle);
    if (!after) continue;
    return Between(part.substr(*after), "", kCloseQuote);
  }
  return std::nullopt;
}

WhyHint Hint(WhyHint::Kind kind, std::string_view text) { return {kind, std::string(text)}; }

}  // namespace

WhyHint ParseWhy(std::string_view why) {
  using Kind = WhyHint::Kind;
  if (auto label = Between(why, "There are no nodes with the label \u2018", kCloseQuote)) {
    return Hint(Kind::kLabel, *label);
  }
  if (auto label = Between(why, "All nodes of label \u2018", "\u2019 are offline")) {
    return Hint(Kind::kLabel, *label);
  }
  if (auto name = Between(why, "Waiting for next available executor on \u2018", kCloseQuote)) {
    return Hint(Kind::kNodeOrLabel, *name);
  }
  // A composite: the causes each idle executor gave for refusing the item.
  std::vector<std::string_view> parts = SplitParts(why);
  for (std::string_view part : parts) {
    if (auto label = MissingLabel(part)) return Hint(Kind::kLabel, *label);
  }
  if (parts.size() == 1) {
    if (auto node = Between(why, kOpenQuote, "\u2019 is offline")) return Hint(Kind::kNode, *node);
  }
  return {};
}

}  // namespace slurmfleet::jenkins
