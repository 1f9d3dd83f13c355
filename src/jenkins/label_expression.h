// Jenkins label expressions, as a job's "Restrict where this project can be run" field or
// Pipeline's node('...') holds them: atoms joined by `&&`, `||`, `!`, `->` (implies), `<->`
// (iff) and parentheses; an atom is a bare word or a "double-quoted" string (needed for atoms
// holding spaces, parentheses or operator characters). Precedence, tightest first: `!`, `&&`,
// `||`, `->`, `<->`; `&&`, `||` and `<->` are left-associative. As in Jenkins' grammar, `!` takes
// an atom or a parenthesis (`!!a` is refused) and `->` is not chained (`a->b->c` is refused).
// Pure values; no I/O.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "base/error.h"

namespace slurmfleet::jenkins {

class LabelExpression {
 public:
  // The empty (or all-blank) text is the "any node" expression: it matches only nodes in NORMAL
  // mode, which Matches() leaves to the caller (see MatchesNode). kInvalidInput with the offset
  // and what was expected ("label expression 'gpu &&': expected a label after '&&' at 6, found
  // the end"). Like Jenkins' lexer, an atom ends at a blank or one of & | ! < > ( ) " ' and at
  // "->", so `a->b` is an implication and `linux-x86_64` one atom.
  static Result<LabelExpression> Parse(std::string_view text);

  // The label Jenkins assigns an item whose label text, as the queue API exports a project's
  // `labelExpression`, is `text` (Jenkins.getLabel): a text wholly in quotes is unquoted first
  // (twice when Jenkins quoted a text that did not parse, which was itself in quotes), and one
  // that then does not parse is a single atom of that text, which only a node carrying exactly
  // that label matches. Never "any node" for a text that is not blank: an agent started for a
  // label Jenkins reads otherwise would never get the item.
  static LabelExpression FromAssigned(std::string_view text);

  // A label as Jenkins writes it out (Label.getExpression(), the label in a `why` text): atoms
  // that need it are quoted already, so `"gpu:a100"&&"os/linux"` is not unquoted whole as
  // FromAssigned would. Jenkins writes nothing unparsable; a text that is, is one atom all the
  // same.
  static LabelExpression FromWritten(std::string_view text);

  // True when the expression holds for a node carrying exactly `labels` (the node's own name
  // included, as Jenkins' self-label). The empty expression matches every label set.
  bool Matches(const std::set<std::string>& labels) const;

  // Jenkins' normalised form, as `why` texts show it: `gpu&&linux`, `!a||(b&&c)`; "" when empty.
  // Blanks go; the user's own parentheses stay (Jenkins' LabelExpression.Paren keeps them, even
  // redundant ones like `(gpu)`); an atom is quoted when Jenkins' LabelAtom.escape would quote it
  // (`"os/linux"`, `"my label"`), so the result parses back to the same expression.
  std::string ToString() const;
  bool empty() const { return root_ == nullptr; }

  struct Node;

 private:
  std::shared_ptr<const Node> root_;  // null: the empty expression; immutable, so shared
};

// Whether a node takes an item: an EXCLUSIVE node only takes items whose expression is non-empty
// and matches; a NORMAL node also takes items with no expression.
bool MatchesNode(const LabelExpression& item, const std::set<std::string>& node_labels,
                 bool node_exclusive);

}  // namespace slurmfleet::jenkins
