#include "jenkins/label_expression.h"

#include <utility>

namespace slurmfleet::jenkins {

// One node of the parse tree. kParen is a pair of parentheses the user wrote: kept, like Jenkins'
// LabelExpression.Paren, because ToString must print what `why` texts show.
struct LabelExpression::Node {
  enum class Kind { kAtom, kParen, kNot, kAnd, kOr, kImplies, kIff };
  Kind kind = Kind::kAtom;
  std::string atom;                 // kAtom only: the label, unquoted
  std::shared_ptr<const Node> lhs;  // the operand of kParen and kNot
  std::shared_ptr<const Node> rhs;  // binary kinds only
};

namespace {

using Node = LabelExpression::Node;
using NodePtr = std::shared_ptr<const Node>;
using Kind = Node::Kind;

constexpr size_t kMaxLength = 4096;

// Jenkins' lexer skips spaces and tabs only: a line break is part of an atom.
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Jenkins' lexer (LabelExpressionLexer.g4): an atom is a run of anything but these, plus '-' when
// it does not start "->".
bool IsAtomChar(char c) {
  switch (c) {
    case '&':
    case '|':
    case '!':
    case '<':
    case '>':
    case '(':
    case ')':
    case '"':
    case '\'':
      return false;
    default:
      return !IsBlank(c);
  }
}

NodePtr MakeBinary(Kind kind, NodePtr lhs, NodePtr rhs) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->lhs = std::move(lhs);
  node->rhs = std::move(rhs);
  return node;
}

NodePtr MakeUnary(Kind kind, NodePtr operand) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->lhs = std::move(operand);
  return node;
}

// Recursive descent over Jenkins' grammar (LabelExpressionParser.g4), one function per level.
class Parser {
 public:
  static constexpr int kMaxDepth = 100;

  explicit Parser(std::string_view text) : text_(text) {}

  Result<NodePtr> Parse() {
    auto root = ParseIff();
    if (!root) return root;
    SkipBlanks();
    if (pos_ < text_.size()) return Expected("an operator or the end");
    return root;
  }

 private:
  // iff := implies ('<->' implies)*   (left-associative)
  Result<NodePtr> ParseIff() {
    auto lhs = ParseImplies();
    if (!lhs) return lhs;
    while (Accept("<->")) {
      auto rhs = ParseImplies();
      if (!rhs) return rhs;
      lhs = MakeBinary(Kind::kIff, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  // implies := or ('->' or)?   (Jenkins' grammar takes one: a chain needs parentheses)
  Result<NodePtr> ParseImplies() {
    auto lhs = ParseOr();
    if (!lhs) return lhs;
    if (Accept("->")) {
      auto rhs = ParseOr();
      if (!rhs) return rhs;
      SkipBlanks();
      if (At("->")) return Expected("no second '->' (Jenkins takes one; write a->(b->c))");
      return MakeBinary(Kind::kImplies, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  // or := and ('||' and)*
  Result<NodePtr> ParseOr() {
    auto lhs = ParseAnd();
    if (!lhs) return lhs;
    while (Accept("||")) {
      auto rhs = ParseAnd();
      if (!rhs) return rhs;
      lhs = MakeBinary(Kind::kOr, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  // and := not ('&&' not)*
  Result<NodePtr> ParseAnd() {
    auto lhs = ParseNot();
    if (!lhs) return lhs;
    while (Accept("&&")) {
      auto rhs = ParseNot();
      if (!rhs) return rhs;
      lhs = MakeBinary(Kind::kAnd, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  // not := '!' primary | primary   (Jenkins' grammar: `!!a` needs parentheses, `!(!a)`)
  Result<NodePtr> ParseNot() {
    if (Accept("!")) {
      auto operand = ParsePrimary();
      if (!operand) return operand;
      return MakeUnary(Kind::kNot, std::move(*operand));
    }
    return ParsePrimary();
  }

  // primary := '(' iff ')' | atom | "quoted atom"
  Result<NodePtr> ParsePrimary() {
    SkipBlanks();
    if (Accept("(")) {
      size_t open = pos_ - 1;
      auto inner = Nested([&] { return ParseIff(); });
      if (!inner) return inner;
      if (!Accept(")")) return Expected("')' for the '(' at " + std::to_string(open));
      return MakeUnary(Kind::kParen, std::move(*inner));
    }
    if (pos_ < text_.size() && text_[pos_] == '"') return ParseQuoted();
    size_t start = pos_;
    while (pos_ < text_.size() && (IsAtomChar(text_[pos_]) && !(text_[pos_] == '-' && At("->")))) {
      ++pos_;
    }
    if (pos_ == start) {
      return Expected(last_operator_.empty() ? std::string("a label")
                                             : "a label after '" + last_operator_ + "'");
    }
    auto node = std::make_shared<Node>();
    node->atom = std::string(text_.substr(start, pos_ - start));
    return node;
  }

  // A double-quoted atom with the escapes Jenkins' lexer accepts.
  Result<NodePtr> ParseQuoted() {
    size_t open = pos_++;
    std::string atom;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') {
        auto node = std::make_shared<Node>();
        node->atom = std::move(atom);
        return node;
      }
      if (c == '\n' || c == '\r') {
        --pos_;
        return Expected("'\"' before the line break, for the quote at " + std::to_string(open));
      }
      if (c != '\\') {
        atom += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char escaped = text_[pos_++];
      switch (escaped) {
        case 'b':
          atom += '\b';
          break;
        case 't':
          atom += '\t';
          break;
        case 'n':
          atom += '\n';
          break;
        case 'f':
          atom += '\f';
          break;
        case 'r':
          atom += '\r';
          break;
        case '"':
        case '\'':
        case '\\':
          atom += escaped;
          break;
        default:
          pos_ -= 2;
          return Expected("one of b t n f r \" ' \\ after the backslash");
      }
    }
    pos_ = text_.size();
    return Expected("'\"' for the quote at " + std::to_string(open));
  }

  // Bounds the recursion, so that no expression can exhaust the stack.
  template <typename Parse>
  Result<NodePtr> Nested(Parse parse) {
    if (depth_ == kMaxDepth) {
      return Fail(Code::kInvalidInput, "label expression '" + std::string(text_) +
                                           "': nested deeper than " + std::to_string(kMaxDepth) +
                                           " levels at " + std::to_string(pos_));
    }
    ++depth_;
    auto result = parse();
    --depth_;
    return result;
  }

  void SkipBlanks() {
    while (pos_ < text_.size() && IsBlank(text_[pos_])) ++pos_;
  }

  bool At(std::string_view token) const { return text_.substr(pos_).starts_with(token); }

  bool Accept(std::string_view token) {
    SkipBlanks();
    if (!At(token)) return false;
    pos_ += token.size();
    last_operator_ = std::string(token);
    return true;
  }

  std::unexpected<Error> Expected(const std::string& what) const {
    std::string found = pos_ >= text_.size() ? "the end" : "'" + std::string(1, text_[pos_]) + "'";
    return Fail(Code::kInvalidInput, "label expression '" + std::string(text_) + "': expected " +
                                         what + " at " + std::to_string(pos_) + ", found " + found);
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string last_operator_;  // the operator just read, to say what the missing label follows
  int depth_ = 0;              // parentheses open around pos_
};

// LabelAtom.escape: Jenkins quotes an atom that fails Jenkins.checkGoodName or holds a blank or a
// parenthesis. We also quote what our own lexer could not read back bare.
bool NeedsQuotes(const std::string& atom) {
  if (atom.empty() || atom == "." || atom == ".." || atom.back() == '.') return true;
  for (size_t i = 0; i < atom.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(atom[i]);
    if (c < 0x20 || c == 0x7f) return true;
    if (std::string_view("?*/\\%!@#$^&|<>[]:;()\" '").find(static_cast<char>(c)) !=
        std::string_view::npos) {
      return true;
    }
    if (c == '-' && i + 1 < atom.size() && atom[i + 1] == '>') return true;
  }
  return false;
}

// QuotedStringTokenizer.quote, the inverse of ParseQuoted.
std::string Quote(const std::string& atom) {
  std::string out = "\"";
  for (char c : atom) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string_view OperatorText(Kind kind) {
  switch (kind) {
    case Kind::kAnd:
      return "&&";
    case Kind::kOr:
      return "||";
    case Kind::kImplies:
      return "->";
    case Kind::kIff:
      return "<->";
    default:
      return "";
  }
}

// Precedence of how a node prints: an explicit parenthesis binds like an atom.
int Rank(const Node& node) {
  switch (node.kind) {
    case Kind::kAtom:
    case Kind::kParen:
      return 0;
    case Kind::kNot:
      return 1;
    case Kind::kAnd:
      return 2;
    case Kind::kOr:
      return 3;
    case Kind::kImplies:
      return 4;
    case Kind::kIff:
      return 5;
  }
  return 0;
}

std::string Print(const Node& node);

// LabelExpression.paren: parenthesise an operand that binds more loosely than its operator.
std::string Operand(const Node& op, const Node& operand) {
  std::string text = Print(operand);
  return Rank(operand) > Rank(op) ? "(" + text + ")" : text;
}

std::string Print(const Node& node) {
  switch (node.kind) {
    case Kind::kAtom:
      return NeedsQuotes(node.atom) ? Quote(node.atom) : node.atom;
    case Kind::kParen:
      return "(" + Print(*node.lhs) + ")";
    case Kind::kNot:
      return "!" + Operand(node, *node.lhs);
    default:
      return Operand(node, *node.lhs) + std::string(OperatorText(node.kind)) +
             Operand(node, *node.rhs);
  }
}

bool Evaluate(const Node& node, const std::set<std::string>& labels) {
  switch (node.kind) {
    case Kind::kAtom:
      return labels.contains(node.atom);
    case Kind::kParen:
      return Evaluate(*node.lhs, labels);
    case Kind::kNot:
      return !Evaluate(*node.lhs, labels);
    case Kind::kAnd:
      return Evaluate(*node.lhs, labels) && Evaluate(*node.rhs, labels);
    case Kind::kOr:
      return Evaluate(*node.lhs, labels) || Evaluate(*node.rhs, labels);
    case Kind::kImplies:
      return !Evaluate(*node.lhs, labels) || Evaluate(*node.rhs, labels);
    case Kind::kIff:
      return Evaluate(*node.lhs, labels) == Evaluate(*node.rhs, labels);
  }
  return false;
}

// QuotedStringTokenizer.unquote: a text that starts and ends with the same quote loses both, and
// its backslash escapes are read; any other text is kept as is.
std::string Unquote(std::string_view text) {
  const auto hex = [](char h) -> int {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
  };
  if (text.size() < 2 || text.front() != text.back() ||
      (text.front() != '"' && text.front() != '\''))
    return std::string(text);
  std::string out;
  bool escape = false;
  const std::string_view inner = text.substr(1, text.size() - 2);
  for (size_t i = 0; i < inner.size(); ++i) {
    char c = inner[i];
    if (!escape && c == '\\') {
      escape = true;
      continue;
    }
    if (escape) {
      escape = false;
      switch (c) {
        case 'b':
          c = '\b';
          break;
        case 'f':
          c = '\f';
          break;
        case 'n':
          c = '\n';
          break;
        case 'r':
          c = '\r';
          break;
        case 't':
          c = '\t';
          break;
        case 'u': {
          // As QuotedStringTokenizer.unquote reads it, which predicts what Jenkins assigns: it
          // starts reading the four digits at the 'u' itself, keeps the 16 bits of
          // (u<<24)+(d1<<16)+(d2<<8)+d3 (so (d2<<8)+d3, a non-hex character counting 0) and
          // skips d4: `\u0041` is U+0004, not 'A'. The closing quote may be read as a digit;
          // past it Jenkins throws, and the text is then left as it is.
          if (i + 3 > inner.size()) return std::string(text);
          const auto digit = [&](size_t at) -> unsigned {
            const int d = at < inner.size() ? hex(inner[at]) : 0;
            return d < 0 ? 0 : static_cast<unsigned>(d);
          };
          const unsigned u = (digit(i + 2) << 8) + digit(i + 3);
          i += 4;
          if (u < 0x80) {
            out += static_cast<char>(u);
          } else if (u < 0x800) {
            out += static_cast<char>(0xC0 | (u >> 6));
            out += static_cast<char>(0x80 | (u & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (u >> 12));
            out += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (u & 0x3F));
          }
          continue;
        }
        default:
          break;
      }
    }
    out += c;
  }
  return out;
}

// True when `text` is one double-quoted atom as Jenkins quotes one (QuotedStringTokenizer.quote):
// no quote inside but escaped ones.
bool IsOneQuotedAtom(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return false;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '"') return false;
    if (text[i] == '\\' && ++i + 1 == text.size()) return false;  // it escapes the last quote
  }
  return true;
}

}  // namespace

LabelExpression LabelExpression::FromAssigned(std::string_view text) {
  // Jenkins exports a project's label text as written when it parses, else quoted whole as one
  // atom (AbstractProject.getAssignedLabelString), and assigns the label of the text as written,
  // unquoted once (Jenkins.getLabel). An export in double quotes whose inside does not parse is
  // taken for such a quoting, and the text inside is unquoted in its turn ('my label' exports as
  // "'my label'" and assigns the atom `my label`). A project that wrote "'my label'" itself
  // exports the same text and is assigned `'my label'`: the export cannot tell the two apart, and
  // the first is by far the likelier to have been written.
  std::string written = Unquote(text);
  if (IsOneQuotedAtom(text) && !Parse(written)) return FromWritten(Unquote(written));
  return FromWritten(written);
}

LabelExpression LabelExpression::FromWritten(std::string_view text) {
  if (Result<LabelExpression> parsed = Parse(text)) return std::move(*parsed);
  auto atom = std::make_shared<Node>();
  atom->atom = std::string(text);
  LabelExpression expression;
  expression.root_ = std::move(atom);
  return expression;
}

Result<LabelExpression> LabelExpression::Parse(std::string_view text) {
  LabelExpression expression;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return expression;
  // Real expressions are a few dozen characters; the bound keeps the tree's recursion shallow.
  if (text.size() > kMaxLength) {
    return Fail(Code::kInvalidInput, "label expression of " + std::to_string(text.size()) +
                                         " characters is longer than " +
                                         std::to_string(kMaxLength));
  }
  auto root = Parser(text).Parse();
  if (!root) return std::unexpected(root.error());
  expression.root_ = std::move(*root);
  return expression;
}

bool LabelExpression::Matches(const std::set<std::string>& labels) const {
  return root_ == nullptr || Evaluate(*root_, labels);
}

std::string LabelExpression::ToString() const { return root_ ? Print(*root_) : std::string(); }

bool MatchesNode(const LabelExpression& item, const std::set<std::string>& node_labels,
                 bool node_exclusive) {
  if (item.empty()) return !node_exclusive;
  return item.Matches(node_labels);
}

}  // namespace slurmfleet::jenkins
