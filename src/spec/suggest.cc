#include "spec/suggest.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace slurmfleet::spec {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Lower case without '_' and '-': the spelling-independent form of a key, so the snake_case
// JSON name of a field matches its camelCase YAML name.
std::string Folded(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != '-') out += Lower(c);
  }
  return out;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: Levenshtein plus adjacent transposition.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string Suggest(std::string_view typed, std::span<const std::string_view> candidates) {
  const std::string folded = Folded(typed);
  for (std::string_view c : candidates) {
    if (Folded(c) == folded) return std::string(c);
  }
  const size_t limit = std::clamp<size_t>(typed.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (std::string_view c : candidates) {
    size_t d = EditDistance(typed, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

std::string DidYouMean(std::string_view typed, std::span<const std::string_view> candidates) {
  std::string s = Suggest(typed, candidates);
  return s.empty() ? std::string() : " (did you mean '" + s + "'?)";
}

}  // namespace slurmfleet::spec
