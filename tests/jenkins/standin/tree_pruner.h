// Stapler's `tree=` pruning for the stand-in Jenkins (test-only): `a,b[c,d[e]]` keeps only the
// named properties at each level, applied to every element of arrays; `_class` is always kept,
// as Jenkins' ExportConfig adds it independently of the pruner. A property named without
// brackets keeps a primitive value whole and reduces an object (or array of objects) to its
// `_class`, as NamedPathPruner does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

namespace slurmfleet::standin {

struct TreeSpec {
  // In the order given; std::vector allows the incomplete element type.
  std::vector<std::pair<std::string, TreeSpec>> children;
  const TreeSpec* Find(std::string_view name) const;
};

// kInvalidInput for unbalanced brackets or an empty property name.
Result<TreeSpec> ParseTree(std::string_view text);

nlohmann::json Prune(const nlohmann::json& value, const TreeSpec& spec);

}  // namespace slurmfleet::standin
