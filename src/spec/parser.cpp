// Recursive-descent parser of the pipeline language (README.md, "The pipeline language").
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "spec/ast.hpp"
#include "spec/bind_util.hpp"
#include "spec/lexer.hpp"
#include "warpcsv/core/int128.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace spec {

namespace {

const char* const kStageNames[] = {"filter", "groupby", "agg", "select", "sort", "limit",
                                   "top", "distinct", "join", "dropna", "assert"};
const std::string kStageList = "filter, groupby, agg, select, sort, limit, top, distinct, join, dropna, assert";

// A word from SQL or the shell that does what a stage does (order: sort), or a stage's own name.
const char* stage_for_word(const std::string& low) {
  static const char* const kWords[][2] = {{"where", "filter"}, {"having", "filter"}, {"group", "groupby"},
                                          {"order", "sort"},   {"head", "limit"}};
  for (const auto& w : kWords)
    if (low == w[0]) return w[1];
  for (const char* s : kStageNames)
    if (low == s) return s;
  return nullptr;
}

const char* const kNoFrom =
    "a pipeline names no table: the files come after it, like warpcsv 'select a, b' data.csv";

class Parser {
 public:
  Parser(const std::string& src, std::vector<Token> toks) : src_(src), t_(std::move(toks)) {}

  Pipeline run() {
    Pipeline p;
    p.src = src_;
    if (peek().kind == Tok::End)
      fail(peek(), "expected a stage (" + kStageList + "), found an empty pipeline");
    for (;;) {
      p.stages.push_back(stage());
      if (peek().kind == Tok::End) break;
      if (peek().kind != Tok::Pipe) {
        const Stage& st = p.stages.back();
        std::string what = st.kind == Stage::Filter || st.kind == Stage::Assert ||
                                   st.kind == Stage::Limit
                               ? "'|' or the end of the pipeline"
                               : "',' or '|'";
        fail(peek(), "expected " + what + " after the " + st.keyword + " stage, found " +
                         describe(peek()) + missing_pipe_hint(st));
      }
      advance();
    }
    return p;
  }

 private:
  const Token& peek(int k = 0) const {
    size_t j = i_ + k;
    return j < t_.size() ? t_[j] : t_.back();
  }
  const Token& advance() {
    const Token& t = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }
  std::string prev_text() const { return i_ == 0 ? std::string() : t_[i_ - 1].text; }

  bool is_word(const Token& t, const char* w) const {
    return t.kind == Tok::Ident && to_lower(t.text) == w;
  }

  static std::string describe(const Token& t) {
    if (t.kind == Tok::End) return "the end of the pipeline";
    return "'" + t.text + "'";
  }

  [[noreturn]] void fail(const Token& at, const std::string& detail) {
    throw_at(src_, at.pos, "syntax error", detail);
  }

  // A stage word after stage `st` (SQL's `select a where b > 1`): the text with the '|' it lacks.
  std::string missing_pipe_hint(const Stage& st) const {
    const Token& t = peek();
    if (t.kind != Tok::Ident) return "";
    const std::string low = to_lower(t.text);
    if (low == "from") return std::string("; ") + kNoFrom;
    const char* stage = stage_for_word(low);
    if (!stage) return "";
    const bool by = (low == "group" || low == "order") && is_word(peek(1), "by");
    std::string before = src_.substr(st.pos, t.pos - st.pos);
    while (!before.empty() && std::isspace(static_cast<unsigned char>(before.back()))) before.pop_back();
    const std::string rest = stage_rest(i_ + (by ? 2 : 1));
    const std::string after = std::string(stage) + (rest.empty() ? " ..." : " " + rest);
    if (st.kind == Stage::Agg && std::string(stage) == "groupby")
      return "; groupby comes before agg, joined by '|': " + after + " | " + before;
    return "; stages are joined by '|': " + before + " | " + after;
  }

  // The index of the first token from `j` on that is a '|' or the end.
  size_t stage_end(size_t j) const {
    while (j < t_.size() && t_[j].kind != Tok::Pipe && t_[j].kind != Tok::End) ++j;
    return j;
  }

  // The text of tokens [j, the next '|' or the end), or "".
  std::string stage_rest(size_t j) const {
    const size_t k = stage_end(j);
    return k == j ? "" : src_.substr(t_[j].pos, t_[k - 1].end - t_[j].pos);
  }

  // An unknown stage word (the next token is the one after it), with the
  // stage that does what SQL's ORDER BY or the shell's head does.
  std::string unknown_stage(const Token& kw, const std::string& name) const {
    const std::string head = "unknown stage '" + kw.text + "'";
    if (name == "from") return head + "; " + kNoFrom;
    const char* stage = stage_for_word(name);
    if (stage) {
      const size_t from = i_ + (name == "order" && is_word(peek(), "by") ? 1 : 0);
      const std::string rest = stage_rest(from);
      std::string count = "10";  // head -n 5: the first number written
      for (size_t k = from; k < stage_end(from); ++k)
        if (t_[k].kind == Tok::Int) {
          count = t_[k].text;
          break;
        }
      const std::string mean = head + "; did you mean '" + stage + "'? ";
      if (name == "order") return mean + "SQL's ORDER BY is written: sort " + (rest.empty() ? "x desc" : rest);
      if (name == "having")
        return mean + "after agg it keeps groups, as HAVING does: filter " + (rest.empty() ? "n > 1" : rest);
      if (name == "head") return mean + "the first rows are: limit " + count;
    }
    std::string best;
    int bestd = 1 << 30;
    for (const char* s : kStageNames) {
      int d = edit_distance(name, s);
      if (d < bestd) bestd = d, best = s;
    }
    std::string hint = bestd <= 3 ? " (did you mean '" + best + "'?)" : "";
    return head + hint + "; stages are " + kStageList;
  }

  [[noreturn]] void expected(const std::string& what) {
    std::string after = prev_text();
    fail(peek(), "expected " + what + (after.empty() ? "" : " after '" + after + "'") +
                     ", found " + describe(peek()));
  }

  Stage stage() {
    const Token& kw = peek();
    if (kw.kind != Tok::Ident) {
      if (kw.kind == Tok::Pipe || kw.kind == Tok::End)
        expected("a stage (" + kStageList + ")");
      fail(kw, "expected a stage name (" + kStageList + "), found " + describe(kw));
    }
    std::string name = to_lower(kw.text);
    Stage st;
    st.pos = kw.pos;
    advance();
    if (name == "group" && is_word(peek(), "by")) {  // tolerate SQL's "group by"
      advance();
      name = "groupby";
    }
    st.keyword = name;
    if (name == "filter" || name == "where") {
      st.kind = Stage::Filter;
      st.keyword = "filter";
      st.items.push_back(plain_item());
    } else if (name == "assert") {
      st.kind = Stage::Assert;
      st.items.push_back(plain_item());
    } else if (name == "groupby") {
      st.kind = Stage::GroupBy;
      named_items(st, false);
    } else if (name == "agg") {
      st.kind = Stage::Agg;
      named_items(st, false);
    } else if (name == "select") {
      st.kind = Stage::Select;
      named_items(st, true);
    } else if (name == "sort") {
      st.kind = Stage::Sort;
      const Token& next = peek(1);
      if (is_word(peek(), "by") && (next.kind == Tok::QIdent || next.kind == Tok::Dollar ||
                                    (next.kind == Tok::Ident && !is_word(next, "asc") && !is_word(next, "desc"))))
        fail(peek(), "write sort without 'by': sort " + stage_rest(i_ + 1));
      sort_items(st);
    } else if (name == "limit") {
      st.kind = Stage::Limit;
      const Token& t = peek();
      if (t.kind != Tok::Int) expected("a row count (like 10)");
      int128 v = 0;
      if (!parse_int128(t.text.data(), static_cast<uint32_t>(t.text.size()), &v) ||
          v > static_cast<int128>(INT64_MAX))
        fail(t, "limit " + t.text + " is too large; the largest is " +
                    std::to_string(INT64_MAX));
      st.limit = static_cast<int64_t>(v);
      advance();
    } else if (name == "top") {
      st.kind = Stage::Top;
      const Token& t = peek();
      int128 v = 0;
      if (t.kind != Tok::Int || !parse_int128(t.text.data(), static_cast<uint32_t>(t.text.size()), &v) || v < 1 ||
          v > (1 << 20))
        fail(t, "top takes a row count from 1 to 1048576 and an order, like top 3 by amount desc; found " +
                    describe(t));
      st.limit = static_cast<int64_t>(v);
      advance();
      if (!is_word(peek(), "by")) expected("'by' and the order, like top " + t.text + " by amount desc");
      advance();
      sort_items(st);
    } else if (name == "join" || ((name == "left" || name == "inner") && is_word(peek(), "join")) ||
               (name == "left" && is_word(peek(), "outer") && is_word(peek(1), "join"))) {
      if (name == "inner") advance();  // SQL's words for the same joins
      if (name == "left" && is_word(peek(), "outer")) advance();
      join_stage(st, name == "left");
    } else if (name == "distinct") {
      st.kind = Stage::Distinct;
      if (peek().kind != Tok::Pipe && peek().kind != Tok::End) named_items(st, true);
    } else if (name == "dropna") {
      st.kind = Stage::DropNa;
      if (peek().kind != Tok::Pipe && peek().kind != Tok::End) {
        for (;;) {
          const Token& t = peek();
          if (t.kind != Tok::Ident && t.kind != Tok::QIdent && t.kind != Tok::Dollar)
            expected("a column name");
          Item it;
          it.pos = t.pos;
          it.expr = primary();
          it.end = peek().pos;
          st.items.push_back(std::move(it));
          if (peek().kind != Tok::Comma) break;
          advance();
        }
      }
    } else {
      fail(kw, unknown_stage(kw, name));
    }
    st.end = peek().pos;
    return st;
  }

  // A whole item's tree may be at most this deep: every later pass over it
  // (binding, lowering, printing) recurses once per level, and a chain of
  // 20,000 '+' overflowed the stack where parentheses were already bounded.
  static constexpr int kMaxTreeDepth = 1000;
  void check_depth(const ExprPtr& root) {
    std::vector<std::pair<const Expr*, int>> todo = {{root.get(), 1}};
    while (!todo.empty()) {
      const auto [e, d] = todo.back();
      todo.pop_back();
      if (d > kMaxTreeDepth)
        throw_at(src_, root->pos, "syntax error", "an expression nested too deeply (more than " + std::to_string(kMaxTreeDepth) +
                               " levels; each operator of a chain such as a or b or c is one); for many "
                               "alternatives write x in (a, b, c), or split it over several stages");
      for (const auto& a : e->args) todo.emplace_back(a.get(), d + 1);
    }
  }

  ExprPtr checked_expr() {
    ExprPtr e = expr();
    check_depth(e);
    return e;
  }

  Item plain_item() {
    Item it;
    it.pos = peek().pos;
    it.expr = checked_expr();
    it.end = it.expr->end;
    return it;
  }

  void named_items(Stage& st, bool allow_star) {
    for (;;) {
      Item it;
      it.pos = peek().pos;
      if (allow_star && peek().kind == Tok::Star) {
        it.end = advance().end;
      } else {
        it.expr = checked_expr();
        it.end = it.expr->end;
        if (is_word(peek(), "as")) {
          advance();
          const Token& t = peek();
          if (t.kind == Tok::Ident || t.kind == Tok::QIdent || t.kind == Tok::Str) {
            it.alias = t.value;
            it.has_alias = true;
            it.end = t.end;
            advance();
          } else {
            expected("a name (use backticks for names with spaces, like `total sales`)");
          }
        }
      }
      st.items.push_back(std::move(it));
      if (peek().kind != Tok::Comma) break;
      advance();
    }
  }

  // `[left] join 'FILE' [delimiter D] on KEY [= NAME], ... [as ALIAS]` (the keyword read).
  void join_stage(Stage& st, bool left) {
    st.kind = Stage::Join;
    auto jc = std::make_shared<JoinClause>();
    jc->left = left;
    if (left) {
      advance();
      st.keyword = "left join";
    }
    const char* const kLike = "like join 'customers.csv' on customer_id";
    const Token& f = peek();
    if (f.kind != Tok::Str)
      fail(f, std::string("join takes the lookup file's name in quotes, then its key, ") + kLike + "; found " +
                  describe(f));
    if (f.value.empty()) fail(f, "the lookup file's name is empty");
    jc->file = f.value;
    jc->file_pos = f.pos;
    advance();
    if (is_word(peek(), "delimiter")) {
      advance();
      jc->delimiter = join_delimiter(peek());
      advance();
    }
    if (is_word(peek(), "using")) {  // SQL's USING (k)
      std::string keys = stage_rest(i_ + (peek(1).kind == Tok::LParen ? 2 : 1));
      if (!keys.empty() && keys.back() == ')') keys.pop_back();
      fail(peek(), "write the key after 'on': join '" + jc->file + "' on " + keys);
    }
    if (!is_word(peek(), "on")) expected(std::string("'on' and the key column, ") + kLike);
    advance();
    for (;;) {
      JoinClause::Key k;
      k.row = concat_expr();  // `=` after it names the lookup's column
      if (peek().kind == Tok::Eq) {
        advance();
        const Token& t = peek();
        if (t.kind != Tok::Ident && t.kind != Tok::QIdent)
          expected("the lookup file's column after '=', like on customer = id");
        k.lookup = t.value;
        k.lookup_pos = t.pos;
        advance();
      } else if (k.row->kind == Expr::Name) {
        k.lookup = k.row->name;
        k.lookup_pos = k.row->pos;
        k.same_name = true;
      } else {
        expected("'=' and the lookup file's column after an expression key, like on to_lower(name) = name");
      }
      jc->keys.push_back(std::move(k));
      if (peek().kind != Tok::Comma) break;
      advance();
    }
    if (is_word(peek(), "as")) {
      advance();
      const Token& t = peek();
      if (t.kind != Tok::Ident && t.kind != Tok::QIdent) expected("a name for the lookup file, like as c");
      jc->alias = t.value;
      jc->alias_pos = t.pos;
      advance();
    }
    st.join = std::move(jc);
  }

  // A join's delimiter: tab, comma, semicolon, pipe, space, or one character in quotes.
  char join_delimiter(const Token& t) {
    static const std::pair<const char*, char> kNamed[] = {
        {"tab", '\t'}, {"comma", ','}, {"semicolon", ';'}, {"pipe", '|'}, {"space", ' '}};
    if (t.kind == Tok::Ident)
      for (const auto& [word, c] : kNamed)
        if (to_lower(t.text) == word) return c;
    if (t.kind == Tok::Str && t.value.size() == 1 && t.value[0] != '\n' && t.value[0] != '\r') return t.value[0];
    fail(t, "expected the lookup file's delimiter (tab, comma, semicolon, pipe, space, or one character in "
            "quotes, like delimiter ';'), found " + describe(t));
  }

  void sort_items(Stage& st) {
    for (;;) {
      Item it = plain_item();
      if (is_word(peek(), "desc") || is_word(peek(), "asc")) {
        it.desc = is_word(peek(), "desc");
        it.end = advance().end;
      }
      st.items.push_back(std::move(it));
      if (peek().kind != Tok::Comma) break;
      advance();
    }
  }

  static std::shared_ptr<Expr> node(Expr::Kind k, int pos, int end) {
    auto e = std::make_shared<Expr>();
    e->kind = k;
    e->pos = pos;
    e->end = end;
    return e;
  }

  ExprPtr binary(BinOp op, ExprPtr a, ExprPtr b) {
    auto e = node(Expr::Binary, a->pos, b->end);
    e->op = op;
    e->args = {std::move(a), std::move(b)};
    return e;
  }

  // Nesting (parentheses, arguments, each not / minus / plus) is bounded so a
  // hostile pipeline is a syntax error, not a stack overflow (found by fuzzing):
  // a level takes a few KiB of stack through parse and bind, more under ASan.
  static constexpr int kMaxNesting = 256;
  int nesting_ = 0;
  struct Nest {
    Parser& p;
    Nest(Parser& parser) : p(parser) {
      if (++p.nesting_ > kMaxNesting)
        p.fail(p.peek(), "an expression nested too deeply (more than " + std::to_string(kMaxNesting - 1) +
                             " levels of parentheses, function calls, not and signs); split it over several "
                             "stages, or use fewer parentheses");
    }
    ~Nest() { --p.nesting_; }
  };

  ExprPtr expr() {
    Nest nest(*this);
    return or_expr();
  }

  ExprPtr or_expr() {
    ExprPtr a = and_expr();
    while (is_word(peek(), "or")) {
      advance();
      a = binary(BinOp::Or, a, and_expr());
    }
    return a;
  }

  ExprPtr and_expr() {
    ExprPtr a = not_expr();
    while (is_word(peek(), "and")) {
      advance();
      a = binary(BinOp::And, a, not_expr());
    }
    return a;
  }

  ExprPtr not_expr() {
    if (is_word(peek(), "not")) {
      Nest nest(*this);
      int pos = advance().pos;
      ExprPtr x = not_expr();
      auto e = node(Expr::Not, pos, x->end);
      e->args = {x};
      return e;
    }
    return cmp_expr();
  }

  static bool cmp_op(Tok k, BinOp* op) {
    switch (k) {
      case Tok::Eq: *op = BinOp::Eq; return true;
      case Tok::Ne: *op = BinOp::Ne; return true;
      case Tok::Lt: *op = BinOp::Lt; return true;
      case Tok::Le: *op = BinOp::Le; return true;
      case Tok::Gt: *op = BinOp::Gt; return true;
      case Tok::Ge: *op = BinOp::Ge; return true;
      default: return false;
    }
  }

  ExprPtr cmp_expr() {
    ExprPtr a = concat_expr();
    BinOp op;
    if (cmp_op(peek().kind, &op)) {
      advance();
      ExprPtr r = binary(op, a, concat_expr());
      BinOp op2;
      if (cmp_op(peek().kind, &op2))
        fail(peek(), "comparisons cannot be chained ('" + peek().text +
                         "' after a comparison); join them with 'and', like a < b and b < c");
      return r;
    }
    if (is_word(peek(), "in") || (is_word(peek(), "not") && is_word(peek(1), "in"))) {
      bool neg = is_word(peek(), "not");
      if (neg) advance();
      advance();
      if (peek().kind != Tok::LParen) expected("'(' and a list of values, like in (1, 2)");
      advance();
      auto e = node(Expr::In, a->pos, a->end);
      e->negated = neg;
      e->args.push_back(a);
      for (;;) {
        e->args.push_back(expr());
        if (peek().kind == Tok::Comma) {
          advance();
          continue;
        }
        if (peek().kind != Tok::RParen) expected("',' or ')'");
        e->end = advance().end;
        break;
      }
      return e;
    }
    const bool not_like = is_word(peek(), "not") && (is_word(peek(1), "like") || is_word(peek(1), "ilike"));
    if (is_word(peek(), "like") || is_word(peek(), "ilike") || not_like) {
      if (not_like) advance();
      const std::string word = to_lower(advance().text);
      ExprPtr pattern = concat_expr();
      auto e = node(Expr::Like, a->pos, pattern->end);
      e->name = word;
      e->negated = not_like;
      e->args = {a, pattern};
      return e;
    }
    const bool not_between = is_word(peek(), "not") && is_word(peek(1), "between");
    if (is_word(peek(), "between") || not_between) {
      if (not_between) advance();
      advance();
      ExprPtr lo = concat_expr();
      if (!is_word(peek(), "and")) expected("'and' and the upper bound, like x between 1 and 10");
      advance();
      ExprPtr hi = concat_expr();
      auto e = node(Expr::Between, a->pos, hi->end);
      e->negated = not_between;
      e->args = {a, lo, hi};
      return e;
    }
    if (is_word(peek(), "is")) {
      advance();
      bool neg = false;
      if (is_word(peek(), "not")) {
        advance();
        neg = true;
      }
      if (!is_word(peek(), "null")) expected("'null'");
      auto e = node(Expr::IsNull, a->pos, advance().end);
      e->negated = neg;
      e->args = {a};
      return e;
    }
    return a;
  }

  // `a || b`: binds tighter than comparisons, looser than + and - (as in SQL).
  ExprPtr concat_expr() {
    ExprPtr a = add_expr();
    while (peek().kind == Tok::Concat) {
      advance();
      a = binary(BinOp::Concat, a, add_expr());
    }
    return a;
  }

  ExprPtr add_expr() {
    ExprPtr a = mul_expr();
    for (;;) {
      Tok k = peek().kind;
      if (k != Tok::Plus && k != Tok::Minus) return a;
      advance();
      a = binary(k == Tok::Plus ? BinOp::Add : BinOp::Sub, a, mul_expr());
    }
  }

  ExprPtr mul_expr() {
    ExprPtr a = unary();
    for (;;) {
      Tok k = peek().kind;
      if (k != Tok::Star && k != Tok::Slash && k != Tok::Percent) return a;
      advance();
      BinOp op = k == Tok::Star ? BinOp::Mul : k == Tok::Slash ? BinOp::Div : BinOp::Mod;
      a = binary(op, a, unary());
    }
  }

  ExprPtr unary() {
    if (peek().kind == Tok::Minus) {
      Nest nest(*this);
      int pos = advance().pos;
      ExprPtr x = unary();
      // Fold the sign into a numeric literal: "-5" is one constant.
      if (!x->parens &&
          (x->kind == Expr::IntLit || x->kind == Expr::DecLit || x->kind == Expr::FloatLit) &&
          x->name[0] != '-') {
        auto e = std::make_shared<Expr>(*x);
        e->pos = pos;
        e->ival = -e->ival;
        e->fval = -e->fval;
        e->name = "-" + e->name;
        return e;
      }
      auto e = node(Expr::Neg, pos, x->end);
      e->args = {x};
      return e;
    }
    if (peek().kind == Tok::Plus) {
      Nest nest(*this);
      advance();
      return unary();
    }
    return primary();
  }

  ExprPtr literal_number(const Token& t) {
    auto e = node(Expr::IntLit, t.pos, t.end);
    e->name = t.text;
    if (t.kind == Tok::Int) {
      if (!parse_int128(t.text.data(), static_cast<uint32_t>(t.text.size()), &e->ival))
        fail(t, "the number " + t.text + " is too large for an integer (at most 38 digits)");
      return e;
    }
    if (t.kind == Tok::Dec) {
      size_t dot = t.text.find('.');
      std::string digits = t.text.substr(0, dot) + t.text.substr(dot + 1);
      int scale = static_cast<int>(t.text.size() - dot - 1);
      int128 v;
      if (scale <= kMaxDecimalScale && !digits.empty() &&
          parse_int128(digits.data(), static_cast<uint32_t>(digits.size()), &v)) {
        e->kind = Expr::DecLit;
        e->ival = v;
        e->scale = scale;
        return e;
      }
    }
    e->kind = Expr::FloatLit;  // exponent, or too many digits for a decimal
    e->fval = std::strtod(t.text.c_str(), nullptr);
    return e;
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int:
      case Tok::Dec:
      case Tok::Float:
        advance();
        return literal_number(t);
      case Tok::Str: {
        advance();
        auto e = node(Expr::StrLit, t.pos, t.end);
        e->name = t.text;
        e->sval = t.value;
        return e;
      }
      case Tok::QIdent: {
        advance();
        auto e = node(Expr::Name, t.pos, t.end);
        e->name = t.value;
        e->quoted = true;
        return e;
      }
      case Tok::Dollar: {
        advance();
        auto e = node(Expr::Dollar, t.pos, t.end);
        e->name = t.text;
        e->dollar = t.value.size() > 9 ? 1 << 30 : std::atoi(t.value.c_str());
        if (e->dollar < 1) fail(t, "column numbers start at $1, found " + t.text);
        return e;
      }
      case Tok::LParen: {
        advance();
        ExprPtr inner = expr();
        if (peek().kind != Tok::RParen) expected("')'");
        const Token& close = advance();
        auto e = std::make_shared<Expr>(*inner);
        e->parens = true;
        e->pos = t.pos;
        e->end = close.end;
        return e;
      }
      case Tok::Ident:
        return ident();
      default:
        expected("an expression");
    }
  }

  // Whether `case` followed by `next` opens a case expression rather than
  // naming a column called case (`case == 1`, `select case, x`). A sign or
  // `not` may start either (`case - 1`, `case not in (1)`): a case expression
  // has a `when` of its own further on.
  bool starts_case(const Token& next) const {
    switch (next.kind) {
      case Tok::Ident: {
        const std::string w = to_lower(next.text);
        if (w == "null" || w == "true" || w == "false") return true;
        if (w == "not") return when_follows();
        return w == "when" || !(is_reserved(w) || w == "like" || w == "ilike" || w == "between");
      }
      case Tok::Minus:
      case Tok::Plus:
        return when_follows();
      case Tok::QIdent:
      case Tok::Dollar:
      case Tok::Int:
      case Tok::Dec:
      case Tok::Float:
      case Tok::Str:
      case Tok::LParen:
        return true;
      default:
        return false;
    }
  }

  // Whether a `when` comes after the `case` at peek(), outside parentheses
  // and inner case expressions, before the item or stage ends.
  bool when_follows() const {
    int depth = 0, inner = 0;
    for (int k = 1;; ++k) {
      const Token& t = peek(k);
      if (t.kind == Tok::End || t.kind == Tok::Pipe || (depth == 0 && t.kind == Tok::Comma)) return false;
      if (t.kind == Tok::LParen) ++depth;
      if (t.kind == Tok::RParen && --depth < 0) return false;
      if (t.kind != Tok::Ident || depth > 0) continue;
      const std::string w = to_lower(t.text);
      if (w == "case") ++inner;
      else if (w == "end" && inner > 0) --inner;
      else if (w == "when" && inner == 0) return true;
    }
  }

  // case [x] when c then v [when ...] [else e] end
  ExprPtr case_expr() {
    const Token& kw = advance();
    auto e = node(Expr::Case, kw.pos, kw.end);
    if (!is_word(peek(), "when")) {
      e->case_operand = true;
      e->args.push_back(expr());
    }
    if (!is_word(peek(), "when")) expected("'when', like case when x > 0 then 'up' else 'down' end");
    while (is_word(peek(), "when")) {
      advance();
      e->args.push_back(expr());
      if (!is_word(peek(), "then")) expected("'then' and a value");
      advance();
      e->args.push_back(expr());
    }
    if (is_word(peek(), "else")) {
      advance();
      e->case_else = true;
      e->args.push_back(expr());
    }
    if (!is_word(peek(), "end")) expected(e->case_else ? "'end'" : "'when', 'else' or 'end'");
    e->end = advance().end;
    return e;
  }

  // cast(x as type) and try_cast(x as type); decimal takes its digits: decimal(2).
  ExprPtr cast_expr(const std::string& name) {
    const Token& kw = advance();
    advance();  // (
    auto e = node(Expr::Cast, kw.pos, kw.end);
    e->name = name;
    e->args.push_back(expr());
    if (!is_word(peek(), "as")) expected("'as' and a type, like " + name + "(x as int)");
    advance();
    const Token& ty = peek();
    if (ty.kind != Tok::Ident) expected("a type: int, float, decimal(S), string, bool, date or timestamp");
    e->sval = to_lower(advance().text);
    if (peek().kind == Tok::LParen) {
      advance();
      // decimal(S) or SQL's decimal(P, S): the last number is the digits after the point
      for (int numbers = 1;; ++numbers) {
        const Token& d = peek();
        if (d.kind != Tok::Int || d.text.size() > 2) expected("the digits after the point, like decimal(2)");
        e->scale = std::atoi(advance().text.c_str());
        if (peek().kind != Tok::Comma || numbers == 2) break;
        advance();
      }
      if (peek().kind != Tok::RParen) expected("')'");
      advance();
      e->sval += "(" + std::to_string(e->scale) + ")";
    }
    if (peek().kind != Tok::RParen) expected("')'");
    e->end = advance().end;
    return e;
  }

  ExprPtr ident() {
    const Token& t = peek();
    std::string low = to_lower(t.text);
    if (low == "true" || low == "false") {
      advance();
      auto e = node(Expr::BoolLit, t.pos, t.end);
      e->name = low;
      e->ival = low == "true";
      return e;
    }
    if (low == "null") {
      advance();
      auto e = node(Expr::NullLit, t.pos, t.end);
      e->name = "null";
      return e;
    }
    if (low == "case" && starts_case(peek(1))) return case_expr();
    if ((low == "cast" || low == "try_cast") && peek(1).kind == Tok::LParen) return cast_expr(low);
    if (peek(1).kind == Tok::LParen) {
      advance();
      advance();
      auto e = node(Expr::Call, t.pos, t.end);
      e->name = low;
      if (is_word(peek(), "distinct") && peek(1).kind != Tok::Comma && peek(1).kind != Tok::RParen) {
        const std::string x = peek(1).kind == Tok::Ident || peek(1).kind == Tok::QIdent ? peek(1).text : "x";
        fail(peek(), low == "count" ? "count(distinct " + x + ") is written count_distinct(" + x + ")"
                                    : "'distinct' is not available in " + low + "(); count_distinct(" + x +
                                          ") counts distinct values");
      }
      if (peek().kind == Tok::Star && peek(1).kind == Tok::RParen) {
        const Token& s = advance();
        e->args.push_back(node(Expr::Star, s.pos, s.end));
      } else if (peek().kind != Tok::RParen) {
        for (;;) {
          e->args.push_back(expr());
          if (peek().kind != Tok::Comma) break;
          advance();
        }
      }
      if (peek().kind != Tok::RParen) expected("',' or ')'");
      e->end = advance().end;
      return e;
    }
    if (is_reserved(low)) expected("an expression");
    advance();
    auto e = node(Expr::Name, t.pos, t.end);
    e->name = t.text;
    return e;
  }

  const std::string& src_;
  std::vector<Token> t_;
  size_t i_ = 0;
};

}  // namespace

Pipeline parse_pipeline(const std::string& src) {
  Parser p(src, lex_pipeline(src));
  return p.run();
}

bool is_aggregate_name(const std::string& n) {
  static const char* const kAggs[] = {"count", "sum",   "min",   "max",          "mean",
                                      "avg",   "var",   "std",   "first",        "last",
                                      "corr",  "count_distinct", "median", "quantile", "top",
                                      "count_if"};
  for (const char* a : kAggs)
    if (n == a) return true;
  return false;
}

}  // namespace spec
}  // namespace warpcsv
