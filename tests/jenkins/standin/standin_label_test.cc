#include "jenkins/standin/standin_label.h"

#include <gtest/gtest.h>

#include <string>

namespace slurmfleet::standin {
namespace {

// The label a text parses to; fails the test (and gives an atom) when it does not parse.
JenkinsLabel Parsed(std::string_view text) {
  auto label = JenkinsLabel::Parse(text);
  EXPECT_TRUE(label) << text << ": " << label.error();
  return label ? *label : JenkinsLabel::Atom("<unparsed>");
}

std::string NameOf(std::string_view text) { return Parsed(text).Name(); }

TEST(StandinLabelTest, PrecedenceFromLoosestIffImpliesOrAndNot) {
  // a||b&&c is a||(b&&c)
  const JenkinsLabel or_of_and = Parsed("a || b && c");
  EXPECT_EQ(or_of_and.ClassName(), "hudson.model.labels.LabelExpression$Or");
  EXPECT_TRUE(or_of_and.Matches({"a"}));
  EXPECT_FALSE(or_of_and.Matches({"b"}));
  EXPECT_TRUE(or_of_and.Matches({"b", "c"}));
  // !a&&b is (!a)&&b
  const JenkinsLabel and_of_not = Parsed("!a && b");
  EXPECT_EQ(and_of_not.ClassName(), "hudson.model.labels.LabelExpression$And");
  EXPECT_TRUE(and_of_not.Matches({"b"}));
  EXPECT_FALSE(and_of_not.Matches({"a", "b"}));
  EXPECT_FALSE(and_of_not.Matches({}));
  // a->b||c is a->(b||c): with a only, (a->b)||c would be false as well, so give c.
  const JenkinsLabel implies_or = Parsed("a -> b || c");
  EXPECT_EQ(implies_or.ClassName(), "hudson.model.labels.LabelExpression$Implies");
  EXPECT_TRUE(implies_or.Matches({"a", "c"}));
  EXPECT_FALSE(implies_or.Matches({"a"}));
  EXPECT_TRUE(implies_or.Matches({}));
  // a<->b->c is a<->(b->c): with nothing, (a<->b)->c would be false.
  const JenkinsLabel iff_implies = Parsed("a <-> b -> c");
  EXPECT_EQ(iff_implies.ClassName(), "hudson.model.labels.LabelExpression$Iff");
  EXPECT_FALSE(iff_implies.Matches({}));
  EXPECT_TRUE(iff_implies.Matches({"a"}));
  EXPECT_FALSE(iff_implies.Matches({"a", "b"}));
  // Parentheses win.
  const JenkinsLabel grouped = Parsed("(a || b) && c");
  EXPECT_FALSE(grouped.Matches({"a"}));
  EXPECT_TRUE(grouped.Matches({"a", "c"}));
}

TEST(StandinLabelTest, ImpliesAndIffTruthTables) {
  const JenkinsLabel implies = Parsed("a->b");
  EXPECT_TRUE(implies.Matches({}));
  EXPECT_TRUE(implies.Matches({"b"}));
  EXPECT_FALSE(implies.Matches({"a"}));
  EXPECT_TRUE(implies.Matches({"a", "b"}));
  const JenkinsLabel iff = Parsed("a<->b");
  EXPECT_TRUE(iff.Matches({}));
  EXPECT_FALSE(iff.Matches({"a"}));
  EXPECT_FALSE(iff.Matches({"b"}));
  EXPECT_TRUE(iff.Matches({"a", "b"}));
  // (a->b)->c and a->(b->c) differ for a=F, b=T, c=F; both written out are accepted.
  EXPECT_FALSE(Parsed("(a->b)->c").Matches({"b"}));
  EXPECT_TRUE(Parsed("a->(b->c)").Matches({"b"}));
}

TEST(StandinLabelTest, RefusesDoubleNegationAndChainedImplication) {
  EXPECT_FALSE(JenkinsLabel::Parse("!!a"));
  EXPECT_FALSE(JenkinsLabel::Parse("! !a"));
  EXPECT_FALSE(JenkinsLabel::Parse("a->b->c"));
  EXPECT_FALSE(JenkinsLabel::Parse("a -> b -> c"));
  EXPECT_FALSE(JenkinsLabel::Parse("a->b||c->d"));
  // What Jenkins takes instead.
  EXPECT_TRUE(JenkinsLabel::Parse("!(!a)"));
  EXPECT_TRUE(JenkinsLabel::Parse("a->(b->c)"));
  EXPECT_TRUE(JenkinsLabel::Parse("a->b<->c->d"));  // one -> on each side of <->
  const auto refused = JenkinsLabel::Parse("!!gpu");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("at 1"), std::string::npos) << refused.error();
}

TEST(StandinLabelTest, RefusesWhatJenkinsLexerOrParserRefuses) {
  for (std::string_view text : {"",
                                "  ",
                                "\t",
                                "a&&",
                                "&&a",
                                "a&b",
                                "a|b",
                                "(a",
                                "a)",
                                "()",
                                "'a'",
                                "a<-b",
                                "a<b",
                                "a>b",
                                "a b",
                                "a \"b\"",
                                "\"open",
                                "\"bad\\qescape\"",
                                "\"line\nbreak\"",
                                "\"cr\rhere\"",
                                "\"trailing\\",
                                "a!b",
                                "a||",
                                "!",
                                "->a"}) {
    EXPECT_FALSE(JenkinsLabel::Parse(text)) << "accepted: " << text;
  }
}

TEST(StandinLabelTest, DashBelongsToAtomsUnlessItStartsAnArrow) {
  EXPECT_EQ(Parsed("linux-x86_64").ClassName(), "hudson.model.labels.LabelAtom");
  EXPECT_EQ(NameOf("linux-x86_64"), "linux-x86_64");
  EXPECT_EQ(NameOf("-a"), "-a");
  EXPECT_EQ(NameOf("a-"), "a-");
  EXPECT_EQ(NameOf("-"), "-");
  EXPECT_FALSE(JenkinsLabel::Parse("a - b"));  // three atoms in a row
  const JenkinsLabel arrow = Parsed("a->b");
  EXPECT_EQ(arrow.ClassName(), "hudson.model.labels.LabelExpression$Implies");
  EXPECT_EQ(arrow.Name(), "a->b");
  // a-->b: the first '-' is not followed by '>', so it belongs to the atom `a-`; `->` follows.
  const JenkinsLabel dash_arrow = Parsed("a-->b");
  EXPECT_EQ(dash_arrow.Name(), "a-->b");
  EXPECT_TRUE(dash_arrow.Matches({}));
  EXPECT_FALSE(dash_arrow.Matches({"a-"}));
  EXPECT_TRUE(dash_arrow.Matches({"a-", "b"}));
  EXPECT_TRUE(Parsed("x-y->z").Matches({"x-y", "z"}));
  EXPECT_FALSE(Parsed("x-y->z").Matches({"x-y"}));
}

TEST(StandinLabelTest, LineBreaksArePartOfUnquotedAtoms) {
  // Jenkins' WS rule skips ' ' and '\t' only.
  const JenkinsLabel atom = Parsed("a\nb");
  EXPECT_EQ(atom.ClassName(), "hudson.model.labels.LabelAtom");
  EXPECT_TRUE(atom.Matches({"a\nb"}));
  EXPECT_EQ(atom.Name(), "a\nb");
  EXPECT_EQ(atom.Expression(), "\"a\\nb\"");
}

TEST(StandinLabelTest, QuotedAtomsWithEscapes) {
  const JenkinsLabel spaced = Parsed("\"my label\" && gpu");
  EXPECT_TRUE(spaced.Matches({"my label", "gpu"}));
  EXPECT_FALSE(spaced.Matches({"my", "label", "gpu"}));
  EXPECT_EQ(spaced.Name(), "\"my label\"&&gpu");

  const JenkinsLabel escaped = Parsed(R"("a\"b\\c\td\'e\nf\rg\fh\bi")");
  const std::string atom = "a\"b\\c\td'e\nf\rg\fh\bi";
  EXPECT_TRUE(escaped.Matches({atom}));
  EXPECT_EQ(escaped.Name(), atom);
  EXPECT_EQ(escaped.Expression(), R"("a\"b\\c\td'e\nf\rg\fh\bi")");

  // Operators and parentheses inside quotes are the atom's.
  const JenkinsLabel operators = Parsed("\"a&&b||(c)\"");
  EXPECT_EQ(operators.ClassName(), "hudson.model.labels.LabelAtom");
  EXPECT_TRUE(operators.Matches({"a&&b||(c)"}));
  EXPECT_FALSE(operators.Matches({"a", "b"}));

  const JenkinsLabel empty = Parsed("\"\"");
  EXPECT_TRUE(empty.Matches({""}));
  EXPECT_EQ(empty.Expression(), "\"\"");
}

TEST(StandinLabelTest, CanonicalNames) {
  EXPECT_EQ(NameOf("gpu && linux"), "gpu&&linux");
  EXPECT_EQ(NameOf(" gpu\t&&\tlinux "), "gpu&&linux");
  EXPECT_EQ(NameOf("!a || (b && c)"), "!a||(b&&c)");
  // The user's parentheses stay, even redundant ones; none are added where precedence suffices.
  EXPECT_EQ(NameOf("(gpu)"), "(gpu)");
  EXPECT_EQ(NameOf("((gpu))"), "((gpu))");
  EXPECT_EQ(NameOf("a || b && c"), "a||b&&c");
  EXPECT_EQ(NameOf("a && (b || c)"), "a&&(b||c)");
  EXPECT_EQ(NameOf("a -> b || c"), "a->b||c");
  EXPECT_EQ(NameOf("a <-> b <-> c"), "a<->b<->c");
  EXPECT_EQ(NameOf("a <-> (b <-> c)"), "a<->(b<->c)");
  EXPECT_EQ(NameOf("! ( a )"), "!(a)");
  // A quoted atom that needs no quotes loses them; one that does keeps (re-escaped) quotes.
  EXPECT_EQ(NameOf("\"gpu\" && linux"), "gpu&&linux");
  EXPECT_EQ(NameOf("\"os/linux\" && \"gpu:a100\""), "\"os/linux\"&&\"gpu:a100\"");
  EXPECT_EQ(NameOf("\"a b\" || ! \"c d\""), "\"a b\"||!\"c d\"");
  // A lone atom: Name() is bare, Expression() escaped; for expressions they are the same.
  const JenkinsLabel lone = Parsed("\"os/linux\"");
  EXPECT_EQ(lone.Name(), "os/linux");
  EXPECT_EQ(lone.Expression(), "\"os/linux\"");
  const JenkinsLabel expression = Parsed("\"os/linux\"&&gpu");
  EXPECT_EQ(expression.Name(), expression.Expression());
}

TEST(StandinLabelTest, ExpressionParsesBackToTheSameName) {
  for (std::string_view text : {"gpu&&linux", "!a||(b&&c)", "\"my label\"&&\"x:y\"", "(a)",
                                "a->(b<->c)", "\"a\\\\b\"||c", "\"tab\\there\""}) {
    const JenkinsLabel first = Parsed(text);
    const JenkinsLabel again = Parsed(first.Expression());
    EXPECT_EQ(again.Name(), first.Name()) << text;
    EXPECT_EQ(again.Expression(), first.Expression()) << text;
  }
}

TEST(StandinLabelTest, AtomsWithQuotesAreWrittenBareAsJenkinsDoes) {
  // LabelAtom.escape quotes only what checkGoodName refuses or what holds " ()\t\n": an atom
  // holding a quote is written bare, and Jenkins' own lexer cannot read that back.
  const JenkinsLabel quote = Parsed(R"("a\"b"||c)");
  EXPECT_TRUE(quote.Matches({"a\"b"}));
  EXPECT_EQ(quote.Name(), "a\"b||c");
  EXPECT_FALSE(JenkinsLabel::Parse(quote.Expression()));
  EXPECT_EQ(Parsed(R"("it's"&&x)").Name(), "it's&&x");
}

TEST(StandinLabelTest, ClassNames) {
  EXPECT_EQ(Parsed("a").ClassName(), "hudson.model.labels.LabelAtom");
  EXPECT_EQ(Parsed("\"a b\"").ClassName(), "hudson.model.labels.LabelAtom");
  EXPECT_EQ(Parsed("(a&&b)").ClassName(), "hudson.model.labels.LabelExpression$Paren");
  EXPECT_EQ(Parsed("!a").ClassName(), "hudson.model.labels.LabelExpression$Not");
  EXPECT_EQ(Parsed("a&&b").ClassName(), "hudson.model.labels.LabelExpression$And");
  EXPECT_EQ(Parsed("a||b").ClassName(), "hudson.model.labels.LabelExpression$Or");
  EXPECT_EQ(Parsed("a->b").ClassName(), "hudson.model.labels.LabelExpression$Implies");
  EXPECT_EQ(Parsed("a<->b").ClassName(), "hudson.model.labels.LabelExpression$Iff");
  EXPECT_EQ(JenkinsLabel::Atom("x&&y").ClassName(), "hudson.model.labels.LabelAtom");
}

TEST(StandinLabelTest, EscapeAtomQuotesWhatLabelAtomEscapeQuotes) {
  EXPECT_EQ(EscapeAtom("gpu"), "gpu");
  EXPECT_EQ(EscapeAtom("linux-x86_64"), "linux-x86_64");
  EXPECT_EQ(EscapeAtom("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(EscapeAtom("a b"), "\"a b\"");
  EXPECT_EQ(EscapeAtom("a(b"), "\"a(b\"");
  EXPECT_EQ(EscapeAtom("x:y"), "\"x:y\"");
  EXPECT_EQ(EscapeAtom("a->b"), "\"a->b\"");
  EXPECT_EQ(EscapeAtom("v1."), "\"v1.\"");
  EXPECT_EQ(EscapeAtom("."), "\".\"");
  EXPECT_EQ(EscapeAtom(""), "\"\"");
  EXPECT_EQ(EscapeAtom("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(EscapeAtom("a\rb"), "\"a\\rb\"");  // a control character
  EXPECT_EQ(EscapeAtom("a\x01"
                       "b"),
            "\"a\x01"
            "b\"");
  EXPECT_EQ(EscapeAtom("a\xC2\x85"
                       "b"),
            "\"a\xC2\x85"
            "b\"");  // U+0085 is an ISO control
  // checkGoodName lets quotes through, so Jenkins writes these bare (and cannot read them back).
  EXPECT_EQ(EscapeAtom("it's"), "it's");
  EXPECT_EQ(EscapeAtom("a\"b"), "a\"b");
}

TEST(StandinLabelTest, MatchesIsModeBlindAndNodeCanTakeIsNot) {
  const JenkinsLabel gpu = Parsed("gpu && !old");
  EXPECT_TRUE(gpu.Matches({"gpu", "slurm-1"}));
  EXPECT_FALSE(gpu.Matches({"gpu", "old"}));
  EXPECT_TRUE(Parsed("slurm-1").Matches({"gpu", "slurm-1"}));  // the self-label

  const std::optional<JenkinsLabel> none;
  const std::optional<JenkinsLabel> some = gpu;
  EXPECT_TRUE(NodeCanTake(none, {"gpu"}, /*node_exclusive=*/false));
  EXPECT_FALSE(NodeCanTake(none, {"gpu"}, /*node_exclusive=*/true));
  EXPECT_TRUE(NodeCanTake(some, {"gpu"}, false));
  EXPECT_TRUE(NodeCanTake(some, {"gpu"}, true));
  EXPECT_FALSE(NodeCanTake(some, {"cpu"}, false));
  EXPECT_FALSE(NodeCanTake(some, {"cpu"}, true));
  // A label every node satisfies is still a label: an EXCLUSIVE node takes it.
  EXPECT_TRUE(NodeCanTake(Parsed("!nothing"), {}, true));
}

TEST(StandinLabelTest, GetLabelUnquotesThenFallsBackToOneAtom) {
  const JenkinsLabel and_label = GetLabel("\"a&&b\"");  // wholly quoted: unquoted, then parsed
  EXPECT_EQ(and_label.ClassName(), "hudson.model.labels.LabelExpression$And");
  EXPECT_EQ(and_label.Name(), "a&&b");
  EXPECT_EQ(GetLabel("'gpu'").Name(), "gpu");

  const JenkinsLabel double_not = GetLabel("!!gpu");
  EXPECT_EQ(double_not.ClassName(), "hudson.model.labels.LabelAtom");
  EXPECT_EQ(double_not.Name(), "!!gpu");
  EXPECT_EQ(double_not.Expression(), "\"!!gpu\"");
  EXPECT_TRUE(double_not.Matches({"!!gpu"}));
  EXPECT_FALSE(double_not.Matches({"gpu"}));

  EXPECT_EQ(GetLabel("'my label'").Name(), "my label");
  EXPECT_EQ(GetLabel("a->b->c").Name(), "a->b->c");
  EXPECT_EQ(GetLabel("gpu && linux").Name(), "gpu&&linux");
}

TEST(StandinLabelTest, UnquoteLikeJenkins) {
  EXPECT_EQ(UnquoteLikeJenkins("gpu"), "gpu");
  EXPECT_EQ(UnquoteLikeJenkins("\"gpu'"), "\"gpu'");
  EXPECT_EQ(UnquoteLikeJenkins("\""), "\"");
  EXPECT_EQ(UnquoteLikeJenkins("\"\""), "");
  EXPECT_EQ(UnquoteLikeJenkins(R"("a\nb\tc\qd\\e\"f")"), "a\nb\tcqd\\e\"f");
  EXPECT_EQ(UnquoteLikeJenkins(R"('x\'y')"), "x'y");
  // Jenkins' \u: the 'u' is read as the first digit and the char cast keeps the last two reads.
  EXPECT_EQ(UnquoteLikeJenkins(R"("\u0041!")"), std::string("\x04!"));
  EXPECT_EQ(UnquoteLikeJenkins(R"("\u1234")"), "\xC8\x83");  // U+0203
  EXPECT_EQ(UnquoteLikeJenkins(R"("\u1")"), std::nullopt);
}

TEST(StandinLabelTest, AssignedLabelStringEscapesWhatDoesNotParse) {
  EXPECT_EQ(AssignedLabelString("gpu && linux"), "gpu && linux");
  EXPECT_EQ(AssignedLabelString("\"my label\""), "\"my label\"");
  EXPECT_EQ(AssignedLabelString("!!gpu"), "\"!!gpu\"");
  EXPECT_EQ(AssignedLabelString("my label"), "\"my label\"");
  EXPECT_EQ(AssignedLabelString("'my label'"), "\"'my label'\"");
  EXPECT_EQ(AssignedLabelString("'gpu'"), "'gpu'");  // good name, no blank: left bare
}

TEST(StandinLabelTest, NestingIsBounded) {
  const auto nested = [](int depth) {
    return std::string(depth, '(') + "a" + std::string(depth, ')');
  };
  EXPECT_TRUE(JenkinsLabel::Parse(nested(200)));
  EXPECT_FALSE(JenkinsLabel::Parse(nested(201)));
}

}  // namespace
}  // namespace slurmfleet::standin
