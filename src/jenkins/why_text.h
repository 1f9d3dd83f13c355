// ParseWhy: what a queue item's `why` text (research/jenkins/CONTRACT.md §2.3) says the item waits
// for. The only source of a Pipeline item's label when the account may not run /scriptText, and a
// guess even then: Jenkins names a node instead of the label when the label has one node, and
// drops the label when the controller has no agents at all.
//
// The texts are Jenkins' English messages (ask with Accept-Language: en) quoting names in U+2018
// and U+2019, in UTF-8; plain ASCII apostrophes are accepted in their place. A label expression
// appears in Jenkins' normalised form (`gpu&&linux`). Pure function; no I/O.
#pragma once

#include <string>
#include <string_view>

namespace slurmfleet::jenkins {

struct WhyHint {
  enum class Kind {
    kNone,         // names nothing useful: no agents at all, quiet period, shutting down, unknown
    kLabel,        // `text` is the label expression the item waits for
    kNodeOrLabel,  // "Waiting for next available executor on ‘X’": a node name when the label
                   // has one node, else the label; the caller tells them apart by its node table
    kNode,         // `text` is the one node of the item's label, which is offline
  };
  Kind kind = Kind::kNone;
  std::string text;  // empty for kNone

  bool operator==(const WhyHint&) const = default;
};

// What each text of CONTRACT.md §2.3 gives:
//   "There are no nodes with the label ‘gpu’"          kLabel "gpu"
//   "All nodes of label ‘gpu’ are offline"             kLabel "gpu"
//   "Waiting for next available executor on ‘X’"       kNodeOrLabel "X"
//   "‘slurm-gpu-1’ is offline"                         kNode "slurm-gpu-1"
//   causes joined with "; " (idle executors refused the item): kLabel "gpu" from the first
//     "‘x’ doesn’t have label ‘gpu’" part; kNone when no part names a label (the other parts
//     name nodes that refused, not what the item waits for)
//   "Waiting for next available executor" (no agents at all), "In the quiet period...",
//     "Jenkins is about to shut down", anything else   kNone
WhyHint ParseWhy(std::string_view why);

}  // namespace slurmfleet::jenkins
