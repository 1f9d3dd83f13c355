#include "jenkins/standin/standin_label.h"

#include <utility>
#include <vector>

namespace slurmfleet::standin {

namespace {

// The label classes of hudson.model.labels, in LabelOperatorPrecedence order (ATOM, NOT, AND,
// OR, IMPLIES, IFF) with Paren last: Paren has ATOM's precedence.
enum class Kind { kAtom, kNot, kAnd, kOr, kImplies, kIff, kParen };

int Precedence(Kind kind) { return kind == Kind::kParen ? 0 : static_cast<int>(kind); }

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

// One step of a label's postfix program: push whether the node has `atom`, or combine the top
// of the stack. Evaluating a flat program keeps matching free of recursion.
struct Step {
  Kind kind = Kind::kAtom;  // never kParen: a parenthesis changes nothing to evaluate
  std::string atom;
};

}  // namespace

struct JenkinsLabel::Impl {
  Kind kind = Kind::kAtom;
  std::string name;
  std::string expression;
  std::vector<Step> program;
};

namespace {

// ---- names (LabelAtom.escape, LabelExpression constructors) ----------------------------------

// Java's String.trim(): every char up to U+0020 goes from both ends.
std::string_view JavaTrim(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && static_cast<unsigned char>(text[begin]) <= 0x20) ++begin;
  while (end > begin && static_cast<unsigned char>(text[end - 1]) <= 0x20) --end;
  return text.substr(begin, end - begin);
}

// Jenkins.checkGoodName, as a yes/no.
bool IsGoodName(std::string_view name) {
  if (name.empty()) return false;
  const std::string_view trimmed = JavaTrim(name);
  if (trimmed == "." || trimmed == "..") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto byte = static_cast<unsigned char>(name[i]);
    // Character.isISOControl: U+0000..U+001F, U+007F..U+009F (the latter as UTF-8: C2 80..C2 9F).
    if (byte < 0x20 || byte == 0x7f) return false;
    if (byte == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(name[i + 1]) <= 0x9f) {
      return false;
    }
    if (std::string_view("?*/\\%!@#$^&|<>[]:;").find(name[i]) != std::string_view::npos) {
      return false;
    }
  }
  // SECURITY-2424 (jenkins.model.Jenkins.nameValidationRejectsTrailingDot, default true).
  return !trimmed.ends_with('.');
}

// QuotedStringTokenizer.quote(String).
std::string JavaQuote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
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
      case '\f':
        out += "\\f";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        out += c;
    }
  }
  out += '"';
  return out;
}

// LabelExpression.paren: an operand keeps its own text unless its operator binds more loosely.
std::string Operand(Kind op, const JenkinsLabel::Impl& operand) {
  if (Precedence(op) < Precedence(operand.kind)) return "(" + operand.expression + ")";
  return operand.expression;
}

JenkinsLabel::Impl AtomImpl(std::string name) {
  JenkinsLabel::Impl atom;
  atom.kind = Kind::kAtom;
  atom.expression = EscapeAtom(name);
  atom.name = std::move(name);
  return atom;
}

// For an expression (not an atom) getExpression() is getName().
JenkinsLabel::Impl ExpressionImpl(Kind kind, std::string name) {
  JenkinsLabel::Impl out;
  out.kind = kind;
  out.expression = name;
  out.name = std::move(name);
  return out;
}

// ---- lexer (LabelExpressionLexer.g4) ---------------------------------------------------------

enum class TokenType { kAnd, kOr, kNot, kImplies, kIff, kOpen, kClose, kAtom, kString, kEnd };

struct Token {
  TokenType type = TokenType::kEnd;
  std::string text;  // kAtom: the atom; kString: the literal, quotes included
  size_t offset = 0;
};

std::string_view Describe(const Token& token) {
  switch (token.type) {
    case TokenType::kAnd:
      return "'&&'";
    case TokenType::kOr:
      return "'||'";
    case TokenType::kNot:
      return "'!'";
    case TokenType::kImplies:
      return "'->'";
    case TokenType::kIff:
      return "'<->'";
    case TokenType::kOpen:
      return "'('";
    case TokenType::kClose:
      return "')'";
    case TokenType::kAtom:
    case TokenType::kString:
      return "a label";
    case TokenType::kEnd:
      return "the end";
  }
  return "?";
}

// IDENTIFIER_PART, i.e. what may appear in an ATOM besides a '-' not followed by '>'.
bool IsIdentifierPart(char c) {
  return std::string_view("&|!<>() \t\"'-").find(c) == std::string_view::npos;
}

std::expected<std::vector<Token>, std::string> Lex(std::string_view text) {
  std::vector<Token> tokens;
  size_t pos = 0;
  const auto error = [&](std::string_view what) {
    return std::unexpected("label expression '" + std::string(text) + "': " + std::string(what) +
                           " at " + std::to_string(pos));
  };
  while (pos < text.size()) {
    const char c = text[pos];
    const std::string_view rest = text.substr(pos);
    if (c == ' ' || c == '\t') {  // WS -> skip; no other blank is skipped
      ++pos;
      continue;
    }
    Token token;
    token.offset = pos;
    // The fixed tokens first: none of them can be the start of a longer ATOM.
    static constexpr std::pair<std::string_view, TokenType> kFixed[] = {
        {"<->", TokenType::kIff}, {"->", TokenType::kImplies}, {"&&", TokenType::kAnd},
        {"||", TokenType::kOr},   {"!", TokenType::kNot},      {"(", TokenType::kOpen},
        {")", TokenType::kClose}};
    bool fixed = false;
    for (const auto& [spelling, type] : kFixed) {
      if (rest.starts_with(spelling)) {
        token.type = type;
        pos += spelling.size();
        fixed = true;
        break;
      }
    }
    if (fixed) {
      tokens.push_back(std::move(token));
      continue;
    }
    if (c == '"') {
      // STRINGLITERAL: '"' ('\\' [btnfr"'\\] | ~[\\"\r\n])* '"'
      size_t end = pos + 1;
      while (true) {
        if (end >= text.size()) return error("unterminated quoted label");
        const char d = text[end];
        if (d == '"') break;
        if (d == '\r' || d == '\n') return error("line break inside a quoted label");
        if (d == '\\') {
          if (end + 1 >= text.size() ||
              std::string_view("btnfr\"'\\").find(text[end + 1]) == std::string_view::npos) {
            pos = end;
            return error("invalid escape in a quoted label");
          }
          end += 2;
          continue;
        }
        ++end;
      }
      token.type = TokenType::kString;
      token.text = std::string(text.substr(pos, end + 1 - pos));
      pos = end + 1;
      tokens.push_back(std::move(token));
      continue;
    }
    // ATOM: ({LA(2) != '>'}? '-' | IDENTIFIER_PART)+
    size_t end = pos;
    while (end < text.size()) {
      const char d = text[end];
      const bool dash = d == '-' && (end + 1 >= text.size() || text[end + 1] != '>');
      if (!dash && !IsIdentifierPart(d)) break;
      ++end;
    }
    if (end == pos) return error(std::string("no token starts with '") + c + "'");
    token.type = TokenType::kAtom;
    token.text = std::string(text.substr(pos, end - pos));
    pos = end;
    tokens.push_back(std::move(token));
  }
  tokens.push_back(Token{TokenType::kEnd, "", text.size()});
  return tokens;
}

// ---- parser (LabelExpressionParser.g4) -------------------------------------------------------

// One rule per grammar rule (term1 .. term6). Each returns the label built so far, as the
// grammar's actions build it; the postfix program is appended as the rules finish, which is
// already postfix order.
class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens)
      : text_(text), tokens_(std::move(tokens)) {}

  std::expected<JenkinsLabel::Impl, std::string> Run() {
    auto label = Term1();
    if (!label) return label;
    if (Peek().type != TokenType::kEnd) return Refuse("an operator or the end");
    label->program = std::move(program_);
    return label;
  }

 private:
  using Result = std::expected<JenkinsLabel::Impl, std::string>;

  // A bound on nested parentheses, so that no text can exhaust the stack of the thread parsing it.
  static constexpr int kMaxNesting = 200;

  // term1: term2 (IFF term2)*
  Result Term1() {
    auto lhs = Term2();
    while (lhs && Accept(TokenType::kIff)) lhs = Combine(Kind::kIff, std::move(*lhs), Term2());
    return lhs;
  }

  // term2: term3 (IMPLIES term3)?   (no chain: (a->b)->c and a->(b->c) differ)
  Result Term2() {
    auto lhs = Term3();
    if (lhs && Accept(TokenType::kImplies))
      return Combine(Kind::kImplies, std::move(*lhs), Term3());
    return lhs;
  }

  // term3: term4 (OR term4)*
  Result Term3() {
    auto lhs = Term4();
    while (lhs && Accept(TokenType::kOr)) lhs = Combine(Kind::kOr, std::move(*lhs), Term4());
    return lhs;
  }

  // term4: term5 (AND term5)*
  Result Term4() {
    auto lhs = Term5();
    while (lhs && Accept(TokenType::kAnd)) lhs = Combine(Kind::kAnd, std::move(*lhs), Term5());
    return lhs;
  }

  // term5: term6 | NOT term6
  Result Term5() {
    if (!Accept(TokenType::kNot)) return Term6();
    auto base = Term6();
    if (!base) return base;
    program_.push_back(Step{Kind::kNot, ""});
    return ExpressionImpl(Kind::kNot, "!" + Operand(Kind::kNot, *base));
  }

  // term6: LPAREN term1 RPAREN | ATOM | STRINGLITERAL
  Result Term6() {
    const Token& token = Peek();
    switch (token.type) {
      case TokenType::kOpen: {
        if (nesting_ == kMaxNesting) {
          return std::unexpected("label expression '" + std::string(text_) + "': more than " +
                                 std::to_string(kMaxNesting) + " nested parentheses at " +
                                 std::to_string(token.offset));
        }
        ++next_;
        ++nesting_;
        auto base = Term1();
        --nesting_;
        if (!base) return base;
        if (!Accept(TokenType::kClose)) return Refuse("')'");
        return ExpressionImpl(Kind::kParen, "(" + base->expression + ")");
      }
      case TokenType::kAtom:
        ++next_;
        program_.push_back(Step{Kind::kAtom, token.text});
        return AtomImpl(token.text);
      case TokenType::kString: {
        ++next_;
        // The grammar's action: LabelAtom.get(QuotedStringTokenizer.unquote(text)). The lexer
        // let through only escapes that unquote reads, so it cannot fail here.
        std::string atom = UnquoteLikeJenkins(token.text).value_or(token.text);
        program_.push_back(Step{Kind::kAtom, atom});
        return AtomImpl(std::move(atom));
      }
      default:
        return Refuse("a label or '('");
    }
  }

  // Label.and/or/implies/iff: new LabelExpression.<Op>(lhs, rhs).
  Result Combine(Kind op, JenkinsLabel::Impl lhs, Result rhs) {
    if (!rhs) return rhs;
    program_.push_back(Step{op, ""});
    return ExpressionImpl(op, Operand(op, lhs) + std::string(OperatorText(op)) + Operand(op, *rhs));
  }

  const Token& Peek() const { return tokens_[next_]; }

  bool Accept(TokenType type) {
    if (Peek().type != type) return false;
    ++next_;
    return true;
  }

  std::unexpected<std::string> Refuse(std::string_view expected) const {
    const Token& found = Peek();
    return std::unexpected("label expression '" + std::string(text_) + "': expected " +
                           std::string(expected) + " at " + std::to_string(found.offset) +
                           ", found " + std::string(Describe(found)));
  }

  std::string_view text_;
  std::vector<Token> tokens_;  // ends with kEnd, which Peek() never moves past
  size_t next_ = 0;
  int nesting_ = 0;
  std::vector<Step> program_;
};

int HexDigit(char c) {  // QuotedStringTokenizer.convertHexDigit: 0 for anything else
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

void AppendUtf8(std::string& out, unsigned code) {  // code < 0x10000
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xe0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

}  // namespace

std::expected<JenkinsLabel, std::string> JenkinsLabel::Parse(std::string_view text) {
  auto tokens = Lex(text);
  if (!tokens) return std::unexpected(std::move(tokens.error()));
  auto impl = Parser(text, std::move(*tokens)).Run();
  if (!impl) return std::unexpected(std::move(impl.error()));
  return JenkinsLabel(std::make_shared<const Impl>(std::move(*impl)));
}

JenkinsLabel JenkinsLabel::Atom(std::string name) {
  Impl impl = AtomImpl(name);
  impl.program.push_back(Step{Kind::kAtom, std::move(name)});
  return JenkinsLabel(std::make_shared<const Impl>(std::move(impl)));
}

const std::string& JenkinsLabel::Name() const { return impl_->name; }

const std::string& JenkinsLabel::Expression() const { return impl_->expression; }

bool JenkinsLabel::Matches(const std::set<std::string>& labels) const {
  std::vector<bool> stack;
  for (const Step& step : impl_->program) {
    if (step.kind == Kind::kAtom) {
      stack.push_back(labels.contains(step.atom));
      continue;
    }
    const bool top = stack.back();
    if (step.kind == Kind::kNot) {
      stack.back() = !top;
      continue;
    }
    stack.pop_back();
    const bool under = stack.back();  // the left operand
    switch (step.kind) {
      case Kind::kAnd:
        stack.back() = under && top;
        break;
      case Kind::kOr:
        stack.back() = under || top;
        break;
      case Kind::kImplies:
        stack.back() = !under || top;
        break;
      case Kind::kIff:
        stack.back() = under == top;
        break;
      default:
        break;
    }
  }
  return stack.back();
}

std::string_view JenkinsLabel::ClassName() const {
  switch (impl_->kind) {
    case Kind::kAtom:
      return "hudson.model.labels.LabelAtom";
    case Kind::kNot:
      return "hudson.model.labels.LabelExpression$Not";
    case Kind::kAnd:
      return "hudson.model.labels.LabelExpression$And";
    case Kind::kOr:
      return "hudson.model.labels.LabelExpression$Or";
    case Kind::kImplies:
      return "hudson.model.labels.LabelExpression$Implies";
    case Kind::kIff:
      return "hudson.model.labels.LabelExpression$Iff";
    case Kind::kParen:
      return "hudson.model.labels.LabelExpression$Paren";
  }
  return "hudson.model.labels.LabelAtom";
}

bool NodeCanTake(const std::optional<JenkinsLabel>& assigned,
                 const std::set<std::string>& node_labels, bool node_exclusive) {
  // Node.canTake: `l != null && !l.contains(this)` refuses; `l == null && EXCLUSIVE` refuses.
  if (!assigned) return !node_exclusive;
  return assigned->Matches(node_labels);
}

JenkinsLabel GetLabel(std::string_view text) {
  // A \u Jenkins would throw on leaves the text as it is (Jenkins fails the lookup altogether).
  const std::string unquoted = UnquoteLikeJenkins(text).value_or(std::string(text));
  if (auto parsed = JenkinsLabel::Parse(unquoted)) return std::move(*parsed);
  return JenkinsLabel::Atom(unquoted);  // "laxly accept it as a single label atom"
}

std::optional<std::string> UnquoteLikeJenkins(std::string_view text) {
  if (text.size() < 2) return std::string(text);
  const char first = text.front();
  if (first != text.back() || (first != '"' && first != '\'')) return std::string(text);
  std::string out;
  bool escape = false;
  // Indices count bytes where Java's count UTF-16 units; they agree on the ASCII that matters.
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (!escape) {
      if (c == '\\') {
        escape = true;
      } else {
        out += c;
      }
      continue;
    }
    escape = false;
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'f':
        out += '\f';
        break;
      case 'b':
        out += '\b';
        break;
      case 'u': {
        // charAt(i++) four times from the 'u' itself, shifted by 24, 16, 8, 0, cast to char:
        // only the third and fourth reads survive, and the loop's own i++ skips one more.
        if (i + 3 >= text.size()) return std::nullopt;  // StringIndexOutOfBoundsException
        AppendUtf8(out,
                   static_cast<unsigned>((HexDigit(text[i + 2]) << 8) + HexDigit(text[i + 3])));
        i += 4;
        break;
      }
      default:
        out += c;
    }
  }
  return out;
}

std::string EscapeAtom(std::string_view name) {
  // LabelAtom.needsEscape: checkGoodName refuses it, or it holds one of " ()\t\n".
  const bool needs = !IsGoodName(name) ||
                     name.find_first_of(std::string_view(" ()\t\n")) != std::string_view::npos;
  return needs ? JavaQuote(name) : std::string(name);
}

std::string AssignedLabelString(std::string_view text) {
  if (JenkinsLabel::Parse(text)) return std::string(text);
  return EscapeAtom(text);  // "must be old label or host name that includes whitespace ..."
}

}  // namespace slurmfleet::standin
