// Jenkins labels for the stand-in controller (test-only), written from Jenkins core's sources and
// not from slurmfleet's own parser (src/jenkins/label_expression.h), so that a grammar mistake in
// production is not mirrored here and tests can catch it. What each part copies:
//  * lexer (LabelExpressionLexer.g4): `&&` `||` `!` `->` `<->` `(` `)`; blanks are ' ' and '\t'
//    only; an ATOM is a run of anything but & | ! < > ( ) ' " blank, plus '-' when the next
//    character is not '>' (so `linux-x86` is one atom and `a->b` an implication; a line break is
//    part of an atom); a STRINGLITERAL is "..." with \b \t \n \f \r \" \' \\ escapes and no raw
//    CR or LF. Anything else (a lone `&`, a `'`) is an error, as Jenkins' error listener throws.
//  * parser (LabelExpressionParser.g4), loosest first: `<->` (left-assoc), `->` (at most one per
//    level: `a->b->c` is an error), `||`, `&&`, `!` (of a primary only: `!!a` is an error),
//    primaries `( ... )`, ATOM, STRINGLITERAL. The empty text is an error too.
//  * names (LabelExpression, LabelAtom): an operand is parenthesised when its operator binds more
//    loosely than the one it sits under (LabelExpression.paren); the user's own parentheses stay
//    (Paren); an atom is quoted where LabelAtom.escape quotes it.
// Pure values; no I/O, no exceptions.
#pragma once

#include <expected>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace slurmfleet::standin {

// One hudson.model.Label: an atom or an expression over atoms. Immutable; cheap to copy.
class JenkinsLabel {
 public:
  // Label.parseExpression: the label, or why Jenkins' lexer or parser refuses the text (with
  // the 0-based offset). More than 200 nested parentheses are refused as well (Jenkins has no
  // bound; this one keeps the parsing thread's stack safe).
  static std::expected<JenkinsLabel, std::string> Parse(std::string_view text);

  // Jenkins.getLabelAtom: the atom of exactly that name, whatever it holds.
  static JenkinsLabel Atom(std::string name);

  // Label.getName() / toString(), as `why` texts and /label/<x>/api/json show it: `gpu&&linux`,
  // `!a||(b&&c)`. A lone atom is its bare name (`my label`); inside an expression an atom shows
  // as its getExpression() (`"my label"&&gpu`).
  const std::string& Name() const;

  // Label.getExpression(), what `assignedLabel.expression` gives a script: the name, except that
  // a lone atom is escaped as LabelAtom.escape does (`"my label"`).
  const std::string& Expression() const;

  // Label.matches(Collection<LabelAtom>): whether a node carrying exactly `labels` (its self-label
  // included) is in this label. Mode-blind, like Label.contains(Node).
  bool Matches(const std::set<std::string>& labels) const;

  // The Java class of the label: "hudson.model.labels.LabelAtom" or
  // "hudson.model.labels.LabelExpression$And" (Or, Not, Paren, Implies, Iff).
  std::string_view ClassName() const;

  struct Impl;  // public only so that the .cc's helpers can build one

 private:
  explicit JenkinsLabel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;  // never null
};

// Node.canTake's label test: an item with no label (`assigned` empty) is taken only by a NORMAL
// node; a labelled item by any node its label contains, EXCLUSIVE or not.
bool NodeCanTake(const std::optional<JenkinsLabel>& assigned,
                 const std::set<std::string>& node_labels, bool node_exclusive);

// Jenkins.getLabel(text): the text is unquoted (UnquoteLikeJenkins), then parsed; a text that does
// not parse is the atom of that (unquoted) text. Never "no label": the caller decides that.
JenkinsLabel GetLabel(std::string_view text);

// QuotedStringTokenizer.unquote: a text that starts and ends with the same quote (" or ') loses
// both and has its backslash escapes read (\n \r \t \f \b; any other escaped character stands for
// itself); any other text comes back as is. Jenkins misreads `\uWXYZ` (it starts reading the four
// digits at the 'u' and shifts by 24/16/8/0 into a 16-bit char): the result is the character
// (X << 8) + Y, and Z is skipped; the stand-in copies that. std::nullopt where Jenkins would throw
// (a `\u` too close to the end for four characters to be read).
std::optional<std::string> UnquoteLikeJenkins(std::string_view text);

// LabelAtom.escape: the name as QuotedStringTokenizer.quote writes it when Jenkins.checkGoodName
// refuses it or it holds a space, tab, line feed or parenthesis; else the name unchanged.
std::string EscapeAtom(std::string_view name);

// AbstractProject.getAssignedLabelString (the queue's `task.labelExpression`): the user's text if
// it parses, else the text escaped as one atom.
std::string AssignedLabelString(std::string_view text);

}  // namespace slurmfleet::standin
