// The binder's working types and the Binder itself, shared by its two files:
// binder.cpp (names, types, expressions, stages, lowering to programs) and
// bind_functions.cpp (function calls, casts, conditions and aggregates).
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "spec/ast.hpp"
#include "spec/bind_util.hpp"
#include "warpcsv/core/datetime.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/spec.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

struct BNode;
using BPtr = std::shared_ptr<const BNode>;

// A typed expression tree. Column leaves: `arg` is an input column index
// (scan trees) or a row slot (finalize and post trees).
struct BNode {
  Op op = Op::Const;
  ColumnType type;
  ColumnType from;  // operand type: Cast, comparisons, Round, IsNull...
  int32_t arg = 0;
  Value cval = Value::make_null();
  std::string sval;  // String constant
  std::vector<BPtr> kids;
};

// An expression bound so far, with what is needed to retype a null literal and
// to describe it in messages.
struct Bound {
  BPtr node;
  const Expr* src = nullptr;
  bool null_lit = false;
  ColumnType type() const { return node->type; }
};

struct ScopeCol {
  std::string name;
  ColumnType type;
  BPtr expr;
  // What the column holds, so that two columns of one name are ambiguous
  // only when they hold different things (`select k, k` is not).
  std::string origin;
};
using Scope = std::vector<ScopeCol>;

struct Key {
  std::string name;
  std::string canon;
  ColumnType type;
  BPtr expr;  // over input columns
};

struct AggCall {
  AggKind kind;
  BPtr arg0, arg1;
  ColumnType result;
  std::string text;
  std::string argtext;  // holistic: the argument's canonical text
  int64_t q_units = 5;  // quantile's fraction: q_units / 10^q_scale
  int q_scale = 1;
  int key = -1;         // holistic: its argument's index in the scan keys
  int64_t rank = 0;     // NthValue (HolisticSpec)
  bool from_largest = false;
};

inline const char* const kTopUnsupported =
    "aggregate 'top' is not available: an aggregate gives one value per group, and top(x, k) would give k; "
    "for the k largest values of x write: sort x desc | limit k";

inline bool is_comparison(BinOp op) {
  return op == BinOp::Eq || op == BinOp::Ne || op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt ||
         op == BinOp::Ge;
}

inline bool is_holistic(AggKind k) {
  return k == AggKind::CountDistinct || k == AggKind::Median || k == AggKind::Quantile || k == AggKind::NthValue;
}

inline ColumnType ct(Type t, int scale = 0) {
  ColumnType c;
  c.type = t;
  c.scale = static_cast<uint8_t>(t == Type::Decimal ? scale : 0);
  return c;
}

inline BPtr make_node(Op op, ColumnType type, std::vector<BPtr> kids, int32_t arg = 0) {
  auto n = std::make_shared<BNode>();
  n->op = op;
  n->type = type;
  if (!kids.empty()) n->from = kids[0]->type;
  n->kids = std::move(kids);
  n->arg = arg;
  return n;
}

inline BPtr column_leaf(int index, ColumnType type) {
  auto n = std::make_shared<BNode>();
  n->op = Op::Column;
  n->type = type;
  n->from = type;
  n->arg = index;
  return n;
}

inline BPtr const_node(ColumnType type, Value v, std::string s = "") {
  auto n = std::make_shared<BNode>();
  n->op = Op::Const;
  n->type = type;
  n->from = type;
  n->cval = v;
  n->sval = std::move(s);
  return n;
}

// Text of an expression without the parentheses around it, for matching group keys.
inline std::string canon_text(const Expr& e) {
  if (!e.parens) return expr_text(e);
  Expr copy = e;
  copy.parens = false;
  return expr_text(copy);
}

// Output name of a stage item: alias, a bare column's own name, else its text.
inline std::string item_name(const Item& it, const std::string& resolved) {
  if (it.has_alias) return it.alias;
  if (!resolved.empty()) return resolved;
  return canon_text(*it.expr);
}

class Binder {
 public:
  Binder(const Pipeline& p, const std::vector<OutputColumn>& input, const NullLikeTokens& null_like,
         const LookupSchemas& lookup_schemas)
      : p_(p), src_(p.src), null_like_(null_like), lookup_schemas_(lookup_schemas) {
    plan_.input = input;
    for (size_t i = 0; i < input.size(); ++i)
      scope_.push_back(ScopeCol{input[i].name, input[i].type,
                                column_leaf(static_cast<int>(i), input[i].type), "$" + std::to_string(i + 1)});
    for (const auto& c : scope_) input_leaves_.push_back(c.expr);
    next_leaf_ = static_cast<int>(input.size());
    collect_names();
  }

  Plan run();

 private:
  // ---- messages -------------------------------------------------------------

  [[noreturn]] void fail(int pos, const std::string& head, const std::string& detail) const;

  std::string describe(const Bound& b) const;

  // ---- name resolution ------------------------------------------------------

  void collect_names_in(const Expr& e);
  void collect_names();

  // Whether `e` is a column of `scope`, or an expression of columns (not a literal, not an unknown name).
  static bool names_columns(const Expr& e, const Scope& scope);

  // "did you mean" the close column names, or the string a bare word compared with a column
  // may be meant as (`day == Sun`).
  std::string unknown_name_hint(const Expr& e, const Scope& scope, const std::vector<std::string>& close) const;

  // A "double-quoted" string where a column is meant (SQL quotes names so): how to write the name.
  void check_quoted_name(const Expr& e, const Scope& scope) const;

  // The fix for a string column used as a number: --null for the tokens (NA, -) that made
  // it a string, else --schema.
  std::string number_fix(const Bound& b) const;

  // The null-like tokens of the input column `b` is (before the scan), or null.
  const std::vector<std::string>* null_like_of(const Bound& b) const;

  // Index of the column `e` (a Name or $N) in `scope`; throws with suggestions.
  int resolve(const Expr& e, const Scope& scope) const;

  // ---- types ----------------------------------------------------------------

  // `b` converted to `t`: a null literal is retyped, anything else gets a Cast.
  static Bound coerce(const Bound& b, ColumnType t);

  static ColumnType numeric_common(ColumnType a, ColumnType b);

  static bool numeric(const Bound& b) { return is_numeric(b.type().type); }

  // Date/Timestamp against a string literal: the literal is read at bind time.
  Bound temporal_literal(const Bound& lit, Bound* col) const;

  static bool is_str_lit(const Bound& b) { return b.src && b.src->kind == Expr::StrLit; }
  static bool temporal(const Bound& b);

  // Brings both operands of a comparison (or coalesce pair) to one type.
  void unify(Bound& a, Bound& b, int pos, const char* what) const;

  Bound need_bool(const Bound& b, const std::string& context) const;

  // ---- expression binding ---------------------------------------------------

  struct Ctx {
    const Scope* scope;
    bool agg_item;    // binding an agg item: leaves are keys and aggregate results
    bool in_agg;      // inside an aggregate's arguments
    const char* stage;
  };

  Bound bind(const Expr& e, const Ctx& c);

  Bound bind_inner(const Expr& e, const Ctx& c);

  // An operand of `||`: a string, or the text of any other value.
  static BPtr as_text(const Bound& b);

  // date + n, n + date, date - n (n days), date - date (days between).
  Bound date_arithmetic(const Expr& e, Bound a, Bound b);

  // The values' common type (the first non-null one's, widened over numerics), each converted to it.
  ColumnType unify_all(std::vector<Bound>& xs, const std::vector<int>& pos, const char* what) const;

  // A case node: (condition, value) pairs and the else value, in kids; it
  // lowers to jumps, so only the chosen value is evaluated.
  static BPtr case_node(std::vector<BPtr> conds, std::vector<Bound> values, ColumnType t);

  Bound null_bound(const Expr& e) const;

  Bound case_expr(const Expr& e, const Ctx& c);

  // A type named in cast(x as TYPE).
  ColumnType cast_type(const Expr& e) const;

  Bound cast_expr(const Expr& e, const Ctx& c);

  Bound binary(const Expr& e, const Ctx& c);

  void arity(const Expr& e, size_t lo, size_t hi, const char* usage) const;

  Bound string_arg(const Expr& call, const Expr& a, const Ctx& c);

  // A function's arguments in their common type: the first non-null
  // operand's, widened over numerics (a comparable pair, as in `==`).
  std::pair<std::vector<BPtr>, ColumnType> common_type_args(const Expr& e, const Ctx& c);

  // A function's int argument (a null literal is an int).
  Bound int_arg(const Expr& call, const Expr& a, const Ctx& c);

  // A function's date or timestamp argument (a null literal is a date).
  Bound date_arg(const Expr& call, const Expr& a, const Ctx& c);

  static constexpr std::pair<const char*, DatePart> kDateParts[] = {
      {"year", DatePart::Year},       {"quarter", DatePart::Quarter}, {"month", DatePart::Month},
      {"day", DatePart::Day},         {"hour", DatePart::Hour},       {"minute", DatePart::Minute},
      {"second", DatePart::Second},   {"dow", DatePart::Dow},         {"isodow", DatePart::Isodow},
      {"doy", DatePart::Doy},         {"week", DatePart::Week},       {"epoch", DatePart::Epoch},
      {"date", DatePart::Date}};
  static constexpr std::pair<const char*, DateUnit> kDateUnits[] = {
      {"year", DateUnit::Year}, {"quarter", DateUnit::Quarter}, {"month", DateUnit::Month},
      {"week", DateUnit::Week}, {"day", DateUnit::Day},         {"hour", DateUnit::Hour},
      {"minute", DateUnit::Minute}, {"second", DateUnit::Second}};

  // A unit in quotes, the first argument of date_trunc and datediff.
  DateUnit date_unit(const Expr& call, const Expr& u) const;

  Bound call(const Expr& e, const Ctx& c);

  // quantile's second argument: a decimal literal from 0 to 1, kept exact
  // (0.9 is nine tenths, not the double nearest it).
  void quantile_fraction(const Expr& qe, AggCall* call) const;

  // Binds a holistic aggregate's argument and sets its kind's result type:
  // count_distinct counts; median and quantile interpolate numbers (a float)
  // and pick a value of other types (their own type).
  void holistic_arg(const Expr& e, const Ctx& inner, AggCall* call);

  // An aggregate call in an agg item: binds its arguments over the scan scope
  // and returns the finalize slot of the (deduplicated) aggregate.
  Bound aggregate(const Expr& e);

  // ---- stages ---------------------------------------------------------------

  std::vector<OutputColumn> scope_to_schema() const;

  // After the scan, stages read row slots: the scope becomes one leaf per column.
  void scope_to_slots();

  void finish_scan();

  // Whether a stage after `i` replaces the columns (so unreferenced ones never reach the output).
  bool schema_replaced_after(size_t i) const;
  // Before the scan ends at a sort or a top (whose groupby is stage `from`,
  // else the stage itself): the scope cut to the columns the stages from
  // `from` on name, when a select of expressions replaces the rows' columns
  // before anything else needs them.
  void keep_named_columns(size_t from);

  // Columns checked by dropna: the named ones, else the ones the pipeline uses.
  std::vector<int> dropna_columns(size_t i);

  std::string stage_text(const Stage& st) const;

  // Binds `select` items over the current scope into a new scope.
  Scope select_scope(const Stage& st, std::vector<std::string>* texts);

  PostStage post_stage(PostStage::Kind kind, const Stage& st);

  void stage(size_t i);

  std::string misplaced_agg_reason(size_t i) const;

  // A groupby item bound over the current scope.
  Key group_key(const Item& it);

  // An item of a sort or top stage's order, bound over the current scope.
  Bound order_item(const Item& it, const Stage& st);

  // The order of a sort or top stage (ORDER [asc|desc], ...), bound into ps's exprs.
  void order_items(const Stage& st, PostStage* ps);

  // `top N by ORDER`: after `groupby KEYS`, N rows per group; else the N
  // first rows in that order, as `sort ORDER | limit N` gives them.
  void top_stage(size_t i);

  // The agg stage at `i` (after its groupby's keys_): the scan's, or, after
  // the scan, a post stage of its own (post_agg_stage).
  void agg_stage(size_t i);

  // An agg after the scan aggregates the rows that reach it: a PostStage::Agg
  // whose plan groups by `key_exprs` (over the row's slots) and finalizes as
  // the scan's agg does.
  void post_agg_stage(size_t i, const std::vector<BPtr>& key_exprs, const std::vector<std::string>& key_texts,
                      std::vector<OutputColumn> grouped, std::vector<Program> finalize, const Scope& out);
  // `groupby KEYS | top N by O | select ...` whose select reads only key
  // columns and O's: binds it as an aggregate scan (the N first values of O
  // in each group, holistic NthValue, and its row count) and an Unfold post
  // stage, and returns true; false, with nothing bound, where it does not fit.
  bool top_in_scan(size_t i);
  // `distinct` that ends the scan (its columns already the scope): binds it
  // as an aggregate scan keyed by those columns, its groups then sorted by
  // their first rows, and returns true; false, with nothing bound, where the
  // row-by-row distinct is kept.
  bool distinct_in_scan(size_t i);

  // `[left] join FILE on KEYS`: before the scan ends, the lookup's columns
  // are leaves past the input's (scan_joins_); after it, a post stage.
  void join_stage(const Stage& st);

  // The type a join key is compared in: the row key's and the lookup column's common type.
  ColumnType join_key_type(const Bound& row, const OutputColumn& lookup, const JoinClause& jc,
                           const JoinClause::Key& key) const;

  // ---- lowering to programs -------------------------------------------------

  static void collect_inputs(const BNode& n, std::set<int>* out);

  // Emits postfix code; returns the stack depth the subtree needs.
  static int emit(const BNode& n, const std::vector<int>& slot_of, Program* p);

  // A case node (case_node) as jumps: each condition jumps past its value
  // unless it holds; each value jumps to the end.
  static int emit_case(const BNode& n, const std::vector<int>& slot_of, Program* p);

  Program lower(const BPtr& n, const std::string& text, const std::vector<int>& slot_of) const;

  Program lower_post(const BPtr& n, const std::string& text) const;

  void lower_scan();

  // `aggs` into target's scan.aggs and holistic, and where each one's value
  // is (agg_sources); their programs read slot_of's slots (empty: row slots).
  // With holistic aggregates, a count() weighs their arguments (holistic_weight).
  void lower_aggs(const std::vector<AggCall>& aggs, const std::vector<int>& slot_of, Plan* target) const;

  const Pipeline& p_;
  const std::string& src_;
  const NullLikeTokens& null_like_;
  const LookupSchemas& lookup_schemas_;
  // A join before the scan ends: its lookup columns are column leaves
  // first_leaf + c (past the input's columns).
  struct BoundJoin {
    int join;
    std::vector<BPtr> keys;
    std::vector<std::string> key_texts;
    int first_leaf;
    int ncols;
  };
  std::vector<BoundJoin> scan_joins_;
  int next_leaf_ = 0;  // the next free leaf index past the input's columns and the joins' so far
  std::vector<BPtr> input_leaves_;  // the scope's leaf of each input column
  std::map<const Expr*, const Expr*> comparands_;  // a bare name in a comparison -> the other side
  Plan plan_;
  Scope scope_;
  bool post_ = false;
  std::set<std::string> used_names_;
  std::vector<BPtr> scan_filters_;
  std::vector<std::string> scan_filter_texts_;
  std::vector<Key> keys_;  // the groupby/agg being bound (keys_ and aggs_)
  std::vector<BPtr> scan_keys_;
  std::vector<std::string> scan_key_texts_;
  int select_stages_ = 0;  // select stages bound so far: a computed column's origin names its stage
  std::vector<AggCall> aggs_;
  std::vector<AggCall> scan_aggs_;  // the scan's agg stage's, once bound
  std::vector<BPtr> scan_outputs_;
  std::vector<std::string> scan_output_texts_;

 public:
  std::vector<bool> checked_;  // input columns the scan parses even when unused (build_plan)
  bool distinct_as_groups_ = true;  // build_plan's distinct_as_groups
};

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
