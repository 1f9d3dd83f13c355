#include "jenkins/label_expression.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace slurmfleet::jenkins {
namespace {

LabelExpression MustParse(std::string_view text) {
  auto parsed = LabelExpression::Parse(text);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error().ToString();
  return parsed ? *parsed : LabelExpression();
}

std::string Normalised(std::string_view text) { return MustParse(text).ToString(); }

bool Eval(std::string_view text, std::set<std::string> labels) {
  return MustParse(text).Matches(labels);
}

std::string ParseError(std::string_view text) {
  auto parsed = LabelExpression::Parse(text);
  EXPECT_FALSE(parsed) << text << " parsed as " << parsed->ToString();
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code, Code::kInvalidInput);
  return parsed.error().message;
}

TEST(LabelExpressionTest, EmptyExpressionMatchesAnything) {
  for (std::string_view text : {"", "   ", "\t \n"}) {
    LabelExpression e = MustParse(text);
    EXPECT_TRUE(e.empty());
    EXPECT_EQ(e.ToString(), "");
    EXPECT_TRUE(e.Matches({}));
    EXPECT_TRUE(e.Matches({"gpu"}));
  }
  EXPECT_TRUE(LabelExpression().empty());
}

TEST(LabelExpressionTest, RealisticAtoms) {
  for (std::string_view atom : {"gpu", "linux-x86_64", "a100.80g", "GPU_2", "x86+avx512",
                                "lab=west", "-leading", "trail-", "a-b-c", "ärger"}) {
    LabelExpression e = MustParse(atom);
    EXPECT_FALSE(e.empty());
    EXPECT_EQ(e.ToString(), atom);
    EXPECT_TRUE(e.Matches({std::string(atom)}));
    EXPECT_FALSE(e.Matches({"other"}));
  }
}

TEST(LabelExpressionTest, NormalisesWhitespaceLikeJenkins) {
  EXPECT_EQ(Normalised("gpu && linux"), "gpu&&linux");
  EXPECT_EQ(Normalised("  gpu&&linux  "), "gpu&&linux");
  EXPECT_EQ(Normalised("a || b && c"), "a||b&&c");
  EXPECT_EQ(Normalised("! a"), "!a");
  EXPECT_EQ(Normalised("a -> b"), "a->b");
  EXPECT_EQ(Normalised("a <-> b"), "a<->b");
  EXPECT_EQ(Normalised("a\t&&\tb"), "a&&b");
}

TEST(LabelExpressionTest, KeepsTheUsersParenthesesLikeJenkinsParen) {
  // Jenkins' LabelExpression.Paren keeps them, so `why` texts show them.
  EXPECT_EQ(Normalised("!a || (b && c)"), "!a||(b&&c)");
  EXPECT_EQ(Normalised("(a || b) && c"), "(a||b)&&c");
  EXPECT_EQ(Normalised("(gpu)"), "(gpu)");
  EXPECT_EQ(Normalised("!(a && b)"), "!(a&&b)");
  EXPECT_EQ(Normalised("((a))"), "((a))");
}

TEST(LabelExpressionTest, ImpliesWithoutSpacesIsAnOperator) {
  // The lexer ends an atom at "->": `a->b` is an implication, `a-b` one atom.
  LabelExpression e = MustParse("a->b");
  EXPECT_EQ(e.ToString(), "a->b");
  EXPECT_TRUE(e.Matches({}));
  EXPECT_FALSE(e.Matches({"a"}));
  EXPECT_TRUE(e.Matches({"a", "b"}));
  EXPECT_TRUE(Eval("a-b", {"a-b"}));
  EXPECT_FALSE(Eval("a-b", {"a", "b"}));
  EXPECT_EQ(Normalised("a<->b"), "a<->b");
}

TEST(LabelExpressionTest, NotBindsTighterThanAnd) {
  EXPECT_TRUE(Eval("!a && b", {"b"}));
  EXPECT_FALSE(Eval("!a && b", {"a", "b"}));
  EXPECT_FALSE(Eval("!a && b", {}));  // would be true as !(a && b)
  EXPECT_TRUE(Eval("!(!a)", {"a"}));
  EXPECT_EQ(Normalised("!(!a)"), "!(!a)");
}

TEST(LabelExpressionTest, RefusesWhatJenkinsGrammarRefuses) {
  // term5 : term6 | NOT term6 and term2 : term3 (IMPLIES term3)? in LabelExpressionParser.g4
  EXPECT_EQ(ParseError("!!a"),
            "label expression '!!a': expected a label after '!' at 1, found '!'");
  EXPECT_EQ(ParseError("a -> b -> c"),
            "label expression 'a -> b -> c': expected no second '->' (Jenkins takes one; write "
            "a->(b->c)) at 7, found '-'");
  EXPECT_TRUE(Eval("a -> (b -> c)", {}));
}

TEST(LabelExpressionTest, AnAssignedLabelIsReadAsJenkinsGetLabelReadsIt) {
  // unparsable: one atom of the whole text, never "any node"
  for (std::string_view text : {"!!gpu", "a->b->c", "gpu &&", "a)"}) {
    LabelExpression e = LabelExpression::FromAssigned(text);
    EXPECT_FALSE(e.empty()) << text;
    EXPECT_FALSE(e.Matches({"gpu", "a", "b", "c"})) << text;
    EXPECT_TRUE(e.Matches({std::string(text)})) << text;
  }
  // wholly quoted: unquoted first, so the quotes inside make it one atom
  LabelExpression quoted = LabelExpression::FromAssigned(R"("gpu"&&"linux")");
  EXPECT_FALSE(quoted.Matches({"gpu", "linux"}));
  EXPECT_TRUE(quoted.Matches({R"(gpu"&&"linux)"}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("my label")").Matches({"my label"}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"('a\tb')").Matches({"a\tb"}));  // escapes read
  // \u as QuotedStringTokenizer.unquote reads it: from the 'u' on, (d2<<8)+d3, d4 skipped
  EXPECT_TRUE(LabelExpression::FromAssigned(R"('\u0041')").Matches({"\x04"}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("\u00e4\u20ac")").Matches({"\x0e\x0a"}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"('\u00zz')").Matches({std::string(1, '\0')}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("x\u12")").Matches({"x\u0200"}))
      << "the closing quote read as a digit";
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("x\u")").Matches({R"("x\u")"}))
      << "past the end Jenkins throws: the text as it is";
  // a text that did not parse is exported quoted whole (getAssignedLabelString); Jenkins assigns
  // the text as written, unquoted once: 'my label' is the atom `my label`, 'gpu && linux' an And
  LabelExpression written_in_quotes = LabelExpression::FromAssigned(R"("'my label'")");
  EXPECT_TRUE(written_in_quotes.Matches({"my label"}));
  EXPECT_FALSE(written_in_quotes.Matches({"'my label'"}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("'gpu && linux'")").Matches({"gpu", "linux"}));
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("\"gpu linux\"")").Matches({"gpu linux"}));
  // not one quoted atom: unquoted once only, as Jenkins.getLabel does with a text that parsed
  EXPECT_TRUE(LabelExpression::FromAssigned(R"("'a" && "b'")").Matches({R"('a" && "b')"}));
  // a raw line break inside quotes is no string in Jenkins' lexer
  EXPECT_FALSE(LabelExpression::Parse("\"a\nb\"").has_value());
  EXPECT_FALSE(LabelExpression::Parse("\"a\rb\"").has_value());
  // written out by Jenkins: parsed as it is
  EXPECT_TRUE(
      LabelExpression::FromWritten(R"("gpu:a100"&&"os/linux")").Matches({"gpu:a100", "os/linux"}));
  EXPECT_TRUE(LabelExpression::FromWritten("!!gpu").Matches({"!!gpu"}));
  // parsable: as Parse reads it
  EXPECT_TRUE(LabelExpression::FromAssigned("gpu && linux").Matches({"gpu", "linux"}));
  EXPECT_TRUE(LabelExpression::FromAssigned("").empty());
  // a line break is part of an atom, as in Jenkins' lexer
  EXPECT_TRUE(LabelExpression::FromAssigned("gpu\nlinux").Matches({"gpu\nlinux"}));
}

TEST(LabelExpressionTest, AndBindsTighterThanOr) {
  // a || (b && c): true with just a; (a || b) && c would be false.
  EXPECT_TRUE(Eval("a || b && c", {"a"}));
  EXPECT_FALSE(Eval("a || b && c", {"b"}));
  EXPECT_TRUE(Eval("a && b || c", {"c"}));
  EXPECT_FALSE(Eval("a && b || c", {"a"}));
}

TEST(LabelExpressionTest, OrBindsTighterThanImplies) {
  // (a || b) -> c, not a || (b -> c): with {a} the first is false, the second true.
  EXPECT_FALSE(Eval("a || b -> c", {"a"}));
  EXPECT_TRUE(Eval("a || b -> c", {"a", "c"}));
  EXPECT_TRUE(Eval("a -> b || c", {"a", "c"}));
}

TEST(LabelExpressionTest, ImpliesBindsTighterThanIff) {
  // (a -> b) <-> c: with {} that is true <-> false = false; a -> (b <-> c) would be true.
  EXPECT_FALSE(Eval("a -> b <-> c", {}));
  EXPECT_TRUE(Eval("a -> b <-> c", {"c"}));
  // a <-> (b -> c) with {b, c}: false <-> true = false; (a <-> b) -> c would be true.
  EXPECT_FALSE(Eval("a <-> b -> c", {"b", "c"}));
}

TEST(LabelExpressionTest, ImpliesChainsOnlyThroughParentheses) {
  // a -> (b -> c) with {}: true. (a -> b) -> c with {}: true -> false = false.
  EXPECT_TRUE(Eval("a -> (b -> c)", {}));
  EXPECT_FALSE(Eval("(a -> b) -> c", {}));
  EXPECT_EQ(Normalised("a -> (b -> c)"), "a->(b->c)");
}

TEST(LabelExpressionTest, IffIsLeftAssociative) {
  // (a <-> b) <-> c with {a}: false <-> false = true. Iff is associative, so check the tree by
  // mixing with the parenthesised forms.
  EXPECT_TRUE(Eval("a <-> b <-> c", {"a"}));
  EXPECT_EQ(Eval("a <-> b <-> c", {"a"}), Eval("(a <-> b) <-> c", {"a"}));
  EXPECT_FALSE(Eval("a <-> b", {"a"}));
  EXPECT_TRUE(Eval("a <-> b", {}));
  EXPECT_TRUE(Eval("a <-> b", {"a", "b"}));
}

TEST(LabelExpressionTest, AndOrAreLeftAssociativeAndPrintFlat) {
  EXPECT_EQ(Normalised("a && b && c"), "a&&b&&c");
  EXPECT_EQ(Normalised("a || b || c"), "a||b||c");
  EXPECT_TRUE(Eval("a && b && c", {"a", "b", "c"}));
  EXPECT_FALSE(Eval("a && b && c", {"a", "c"}));
  EXPECT_TRUE(Eval("a || b || c", {"c"}));
}

TEST(LabelExpressionTest, ParenthesesOverridePrecedence) {
  EXPECT_FALSE(Eval("(a || b) && c", {"a"}));
  EXPECT_TRUE(Eval("(a || b) && c", {"b", "c"}));
  EXPECT_TRUE(Eval("!(a && b)", {"a"}));
  EXPECT_FALSE(Eval("!(a && b)", {"a", "b"}));
}

TEST(LabelExpressionTest, QuotedAtoms) {
  EXPECT_TRUE(Eval("\"my label\"", {"my label"}));
  EXPECT_EQ(Normalised("\"my label\""), "\"my label\"");
  // Quotes that are not needed go away, as in Jenkins' LabelAtom.escape.
  EXPECT_EQ(Normalised("\"gpu\" && linux"), "gpu&&linux");
  EXPECT_TRUE(Eval("\"a&&b\"", {"a&&b"}));
  EXPECT_FALSE(Eval("\"a&&b\"", {"a", "b"}));
  EXPECT_EQ(Normalised("\"a&&b\"||c"), "\"a&&b\"||c");
  EXPECT_EQ(Normalised("\"(x)\""), "\"(x)\"");
  EXPECT_TRUE(Eval("\"\"", {""}));
  EXPECT_EQ(Normalised("\"\""), "\"\"");
}

TEST(LabelExpressionTest, QuotedAtomEscapes) {
  EXPECT_TRUE(Eval(R"("say \"hi\"")", {"say \"hi\""}));
  EXPECT_TRUE(Eval(R"("back\\slash")", {"back\\slash"}));
  EXPECT_TRUE(Eval(R"("tab\there")", {"tab\there"}));
  EXPECT_TRUE(Eval(R"("it\'s")", {"it's"}));
  EXPECT_TRUE(Eval(R"("\b\f\n\r")", {"\b\f\n\r"}));
  // Re-quoted with the same escapes, so ToString parses back to the same atom.
  for (std::string_view text :
       {R"("say \"hi\"")", R"("back\\slash")", R"("tab\there")", R"("\b\f\n\r")"}) {
    std::string normalised = Normalised(text);
    EXPECT_EQ(normalised, text);
    EXPECT_EQ(Normalised(normalised), normalised);
  }
}

TEST(LabelExpressionTest, QuotesAtomsJenkinsConsidersUnsafe) {
  // `/` and `:` are valid bare in the lexer but fail Jenkins.checkGoodName, so Jenkins quotes them.
  EXPECT_EQ(Normalised("os/linux"), "\"os/linux\"");
  EXPECT_EQ(Normalised("zone:a"), "\"zone:a\"");
  EXPECT_EQ(Normalised("v1."), "\"v1.\"");
  EXPECT_TRUE(Eval("os/linux && zone:a", {"os/linux", "zone:a"}));
}

TEST(LabelExpressionTest, ToStringRoundTrips) {
  for (std::string_view text : {"gpu", "gpu&&linux", "!a||(b&&c)", "a->(b->c)", "a<->b<->c",
                                "(a->b)->c", "!(a||b)&&c", "\"my label\"&&x", "a||b&&!c->d<->e"}) {
    std::string once = Normalised(text);
    EXPECT_EQ(once, text);
    EXPECT_EQ(Normalised(once), once);
  }
}

TEST(LabelExpressionTest, ErrorsNameTheOffsetAndWhatWasExpected) {
  EXPECT_EQ(ParseError("gpu &&"),
            "label expression 'gpu &&': expected a label after '&&' at 6, found the end");
  EXPECT_EQ(ParseError("gpu linux"),
            "label expression 'gpu linux': expected an operator or the end at 4, found 'l'");
  EXPECT_EQ(ParseError("&& gpu"), "label expression '&& gpu': expected a label at 0, found '&'");
  EXPECT_EQ(ParseError("(a && b"),
            "label expression '(a && b': expected ')' for the '(' at 0 at 7, found the end");
  EXPECT_EQ(ParseError("a)"),
            "label expression 'a)': expected an operator or the end at 1, found ')'");
  EXPECT_EQ(ParseError("\"open"),
            "label expression '\"open': expected '\"' for the quote at 0 at 5, found the end");
  EXPECT_EQ(
      ParseError(R"("bad\q")"),
      R"(label expression '"bad\q"': expected one of b t n f r " ' \ after the backslash at 4, found '\')");
  EXPECT_EQ(ParseError("a || !"),
            "label expression 'a || !': expected a label after '!' at 6, found the end");
  EXPECT_EQ(ParseError("a & b"),
            "label expression 'a & b': expected an operator or the end at 2, found '&'");
  EXPECT_EQ(ParseError("()"), "label expression '()': expected a label after '(' at 1, found ')'");
  EXPECT_EQ(ParseError("a 'b'"),
            "label expression 'a 'b'': expected an operator or the end at 2, found '''");
  EXPECT_EQ(ParseError("a->"),
            "label expression 'a->': expected a label after '->' at 3, found the end");
  EXPECT_EQ(ParseError("a<>b"),
            "label expression 'a<>b': expected an operator or the end at 1, found '<'");
}

TEST(LabelExpressionTest, BoundsNestingAndLength) {
  EXPECT_TRUE(LabelExpression::Parse(std::string(100, '(') + "a" + std::string(100, ')')));
  EXPECT_NE(ParseError(std::string(101, '(') + "a" + std::string(101, ')'))
                .find("nested deeper than 100 levels"),
            std::string::npos);
  std::string negations;
  for (int i = 0; i < 101; ++i) negations += "!(";
  EXPECT_NE(ParseError(negations + "a" + std::string(101, ')')).find("nested deeper"),
            std::string::npos);
  // A long flat chain is fine up to the length bound.
  std::string flat = "a";
  while (flat.size() < 4090) flat += "&&a";
  EXPECT_TRUE(MustParse(flat).Matches({"a"}));
  EXPECT_NE(ParseError(flat + "&&a&&a&&a").find("longer than 4096"), std::string::npos);
}

TEST(LabelExpressionTest, SelfLabelMatches) {
  // A node's own name is one of its labels; Matches just looks at the set it is given.
  EXPECT_TRUE(Eval("slurm-gpu-1", {"gpu", "slurm-gpu-1"}));
}

TEST(LabelExpressionTest, MatchesNodeNormalAndExclusive) {
  LabelExpression none;
  LabelExpression gpu = MustParse("gpu");
  LabelExpression not_gpu = MustParse("!gpu");
  const std::set<std::string> gpu_node = {"gpu", "slurm-gpu-1"};
  const std::set<std::string> cpu_node = {"cpu", "slurm-cpu-1"};

  // NORMAL: takes unlabelled items and matching ones.
  EXPECT_TRUE(MatchesNode(none, gpu_node, /*node_exclusive=*/false));
  EXPECT_TRUE(MatchesNode(gpu, gpu_node, false));
  EXPECT_FALSE(MatchesNode(gpu, cpu_node, false));
  // EXCLUSIVE: only items whose expression is non-empty and matches.
  EXPECT_FALSE(MatchesNode(none, gpu_node, /*node_exclusive=*/true));
  EXPECT_TRUE(MatchesNode(gpu, gpu_node, true));
  EXPECT_FALSE(MatchesNode(gpu, cpu_node, true));
  // A negation is non-empty, so an exclusive node takes what it matches.
  EXPECT_TRUE(MatchesNode(not_gpu, cpu_node, true));
  EXPECT_FALSE(MatchesNode(not_gpu, gpu_node, true));
}

}  // namespace
}  // namespace slurmfleet::jenkins
