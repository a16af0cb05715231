// The binder: resolves names and types of a parsed pipeline against the input
// schema and lowers it to the Plan's typed postfix programs.
//
// Expressions are first bound to typed trees (BNode) whose leaves are input
// columns (scan stages) or row slots (finalize and post stages). A `select`
// before the scan ends just renames trees, so later stages inline them and every
// scan program reads input slots only; the used input columns are collected at
// the end and numbered as slots.
#include "spec/binder.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include "spec/ast.hpp"
#include "spec/bind_util.hpp"
#include "spec/output_columns.hpp"
#include "spec/wide_ints.hpp"
#include "warpcsv/core/datetime.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/parse.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/spec.hpp"

namespace warpcsv {
namespace spec {
namespace {
using binding::canon_text;
using binding::kTopUnsupported;

// Why an agg stage at `i` cannot run there (a sort, limit or assert before the scan's agg).
std::string misplaced_agg_reason(const Pipeline& p, size_t i) {
  for (size_t k = 0; k < i; ++k) {
    const Stage& s = p.stages[k];
    // A later agg aggregates rows after the scan, whatever stages came between.
    if (s.kind == Stage::Agg) return "";
    if (s.kind == Stage::Sort || s.kind == Stage::Limit || s.kind == Stage::Assert || s.kind == Stage::Top ||
        s.kind == Stage::Distinct)
      return "aggregation after '" + s.keyword + "' is not supported";
  }
  return "";
}

// `agg_columns`: the items of an earlier agg (their text, and their column's
// name: the alias, else the text), which an aggregate written again outside
// an agg most likely means.
using AggColumns = std::vector<std::pair<std::string, std::string>>;
void check_calls(const Pipeline& p, const Expr& e, const Stage& st, bool inside_agg, const AggColumns& agg_columns) {
  bool agg_here = false;
  if (e.kind == Expr::Call) {
    const std::string& f = e.name;
    if (f == "top") throw_at(p.src, e.pos, "unsupported", kTopUnsupported);
    if (is_aggregate_name(f)) {
      if (inside_agg)
        throw_at(p.src, e.pos, "usage error",
                 "aggregate '" + f + "' inside another aggregate; aggregates cannot be nested");
      if (st.kind != Stage::Agg) {
        const std::string text = canon_text(e);
        const auto made = std::find_if(agg_columns.begin(), agg_columns.end(),
                                       [&](const auto& c) { return c.first == text; });
        const std::string fix = made == agg_columns.end() ? "; write it as: agg " + text
                                : made->second == text
                                    ? "; the agg's column of that name is written in backquotes: `" + text + "`"
                                    : "; the agg's column for it is named " + quote_name(made->second);
        throw_at(p.src, e.pos, "usage error",
                 "aggregate '" + f + "' is only allowed in an agg stage (not in " + st.keyword + ")" + fix);
      }
      agg_here = true;
    }
  }
  for (const auto& a : e.args) check_calls(p, *a, st, inside_agg || agg_here, agg_columns);
}

// Checks that need no schema: stage order and where aggregates may appear.
void check_structure(const Pipeline& p) {
  AggColumns agg_columns;  // of the latest agg
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& st = p.stages[i];
    if (st.kind == Stage::GroupBy &&
        (i + 1 >= p.stages.size() || (p.stages[i + 1].kind != Stage::Agg && p.stages[i + 1].kind != Stage::Top))) {
      int pos = i + 1 < p.stages.size() ? p.stages[i + 1].pos : st.end;
      throw_at(p.src, pos, "usage error",
               "groupby must be followed by agg or top, like: groupby " +
                   canon_text(*st.items[0].expr) + " | agg count()");
    }
    if (st.kind == Stage::GroupBy || st.kind == Stage::Agg) {
      std::string why = misplaced_agg_reason(p, i);
      if (!why.empty())
        throw_at(p.src, st.pos, "usage error",
                 why + (st.kind == Stage::GroupBy ? "; move groupby/agg before it"
                                                  : "; move agg before it"));
    }
    for (const auto& it : st.items)
      if (it.expr) check_calls(p, *it.expr, st, false, agg_columns);
    if (st.kind == Stage::Agg) {
      agg_columns.clear();
      for (const auto& it : st.items)
        if (it.expr) agg_columns.emplace_back(canon_text(*it.expr), it.has_alias ? it.alias : canon_text(*it.expr));
    }
  }
}

}  // namespace

namespace binding {

Plan Binder::run() {
  const auto& st = p_.stages;
  for (size_t i = 0; i < st.size(); ++i) stage(i);
  if (!post_) finish_scan();
  lower_scan();
  plan_.output = scope_to_schema();
  return std::move(plan_);
}

Bound Binder::coerce(const Bound& b, ColumnType t) {
  if (b.type() == t) return b;
  Bound r = b;
  if (b.null_lit) {
    r.node = const_node(t, Value::make_null());
    return r;
  }
  if (b.node->op == Op::Const && b.type().type != Type::String) {
    // Fold the cast of a constant now rather than once per row.
    Instr in{Op::Cast, t.type, t.scale, b.type().type, b.type().scale, 0};
    EvalContext ctx = make_eval_context(nullptr, 0);
    Value v = detail::cast_value(in, b.node->cval, ctx);
    if (ctx.status == EvalStatus::Ok) {
      r.node = const_node(t, v);
      return r;
    }
  }
  auto n = std::make_shared<BNode>();
  n->op = Op::Cast;
  n->type = t;
  n->from = b.type();
  n->kids = {b.node};
  r.node = n;
  return r;
}

ColumnType Binder::numeric_common(ColumnType a, ColumnType b) {
  if (a.type == Type::Float || b.type == Type::Float) return ct(Type::Float);
  if (a.type == Type::Decimal || b.type == Type::Decimal)
    return ct(Type::Decimal, std::max(a.type == Type::Decimal ? a.scale : 0,
                                      b.type == Type::Decimal ? b.scale : 0));
  return ct(Type::Int);
}

Bound Binder::temporal_literal(const Bound& lit, Bound* col) const {
  const std::string& s = lit.src->sval;
  int64_t days = 0, micros = 0;
  auto n = static_cast<uint32_t>(s.size());
  if (col->type().type == Type::Date) {
    if (parse_date(s.data(), n, &days)) return Bound{const_node(ct(Type::Date), Value::of_int(days)), lit.src};
    if (parse_timestamp(s.data(), n, &micros)) {
      *col = coerce(*col, ct(Type::Timestamp));
      return Bound{const_node(ct(Type::Timestamp), Value::of_int(micros)), lit.src};
    }
    fail(lit.src->pos, "type error",
         "cannot read " + expr_text(*lit.src) + " as a date for " + describe(*col) +
             "; write dates as \"YYYY-MM-DD\", like \"2024-01-31\"");
  }
  if (parse_timestamp(s.data(), n, &micros))
    return Bound{const_node(ct(Type::Timestamp), Value::of_int(micros)), lit.src};
  if (parse_date(s.data(), n, &days))
    return Bound{const_node(ct(Type::Timestamp), Value::of_int(int128(days) * 86400000000LL)),
                 lit.src};
  fail(lit.src->pos, "type error",
       "cannot read " + expr_text(*lit.src) + " as a timestamp for " + describe(*col) +
           "; write timestamps as \"YYYY-MM-DD HH:MM:SS\", like \"2024-01-31 08:00:00\"");
}

bool Binder::temporal(const Bound& b) {
  return b.type().type == Type::Date || b.type().type == Type::Timestamp;
}

void Binder::unify(Bound& a, Bound& b, int pos, const char* what) const {
  if (a.null_lit && b.null_lit) {
    a = coerce(a, ct(Type::Int));
    b = coerce(b, ct(Type::Int));
    return;
  }
  if (a.null_lit) {
    a = coerce(a, b.type());
    return;
  }
  if (b.null_lit) {
    b = coerce(b, a.type());
    return;
  }
  if (numeric(a) && numeric(b)) {
    ColumnType t = numeric_common(a.type(), b.type());
    a = coerce(a, t);
    b = coerce(b, t);
    return;
  }
  if (a.type() == b.type()) return;
  if (temporal(a) && is_str_lit(b)) {
    b = temporal_literal(b, &a);
    if (a.type() != b.type()) b = coerce(b, a.type());
    return;
  }
  if (temporal(b) && is_str_lit(a)) {
    a = temporal_literal(a, &b);
    if (a.type() != b.type()) a = coerce(a, b.type());
    return;
  }
  if (temporal(a) && temporal(b)) {
    a = coerce(a, ct(Type::Timestamp));
    b = coerce(b, ct(Type::Timestamp));
    return;
  }
  std::string hint;
  if (numeric(b) && null_like_of(a))
    hint = number_fix(a);
  else if (numeric(a) && null_like_of(b))
    hint = number_fix(b);
  else if (a.type().type == Type::String && numeric(b) && b.src && b.src->kind != Expr::Name)
    hint = "; to compare as text, quote the number: \"" + b.src->name + "\"";
  else if (b.type().type == Type::String && numeric(a) && a.src && a.src->kind != Expr::Name)
    hint = "; to compare as text, quote the number: \"" + a.src->name + "\"";
  else if (is_str_lit(b) && numeric(a))
    hint = "; write numbers without quotes, or give the column a type with --schema";
  else
    hint = "; both sides must be numbers, strings, booleans or dates";
  fail(pos, "type error",
       std::string("cannot ") + what + " " + describe(a) + " with " + describe(b) + hint);
}

Bound Binder::need_bool(const Bound& b, const std::string& context) const {
  if (b.null_lit) return coerce(b, ct(Type::Bool));
  if (b.type().type == Type::Bool) return b;
  std::string hint = numeric(b) ? " (for example " + canon_text(*b.src) + " != 0)"
                     : b.type().type == Type::String
                         ? " (for example " + canon_text(*b.src) + " == \"yes\")"
                         : "";
  fail(b.src->pos, "type error",
       "expected a true/false condition " + context + ", found " + describe(b) +
           "; compare it with something" + hint);
}

Bound Binder::bind(const Expr& e, const Ctx& c) {
  Bound b = bind_inner(e, c);
  b.src = &e;
  return b;
}

Bound Binder::bind_inner(const Expr& e, const Ctx& c) {
  if (c.agg_item && e.kind != Expr::IntLit && e.kind != Expr::DecLit &&
      e.kind != Expr::FloatLit && e.kind != Expr::StrLit && e.kind != Expr::BoolLit &&
      e.kind != Expr::NullLit) {
    // Group keys may be referenced by name or by the same expression text.
    std::string canon = canon_text(e);
    for (size_t k = 0; k < keys_.size(); ++k) {
      bool by_name = (e.kind == Expr::Name && (keys_[k].name == e.name ||
                                               to_lower(keys_[k].name) == to_lower(e.name)));
      if (by_name || keys_[k].canon == canon)
        return Bound{column_leaf(static_cast<int>(k), keys_[k].type), &e};
    }
  }
  switch (e.kind) {
    case Expr::Name:
    case Expr::Dollar: {
      if (c.agg_item) {
        const Scope& s = *c.scope;
        int i = resolve(e, s);
        // A $N or a differently spelled name may still denote a key.
        for (size_t k = 0; k < keys_.size(); ++k)
          if (keys_[k].name == s[i].name)
            return Bound{column_leaf(static_cast<int>(k), keys_[k].type), &e};
        std::string n = expr_text(e);
        fail(e.pos, "usage error",
             "column " + n + " in agg is neither a group key nor inside an aggregate; use "
             "an aggregate like first(" + n + ") or max(" + n + "), or add it to groupby");
      }
      int i = resolve(e, *c.scope);
      return Bound{(*c.scope)[i].expr, &e};
    }
    case Expr::IntLit:
      return Bound{const_node(ct(Type::Int), Value::of_int(e.ival)), &e};
    case Expr::DecLit:
      return Bound{const_node(ct(Type::Decimal, e.scale), Value::of_int(e.ival)), &e};
    case Expr::FloatLit:
      return Bound{const_node(ct(Type::Float), Value::of_float(e.fval)), &e};
    case Expr::StrLit:
      return Bound{const_node(ct(Type::String), Value::of_str(nullptr, 0), e.sval), &e};
    case Expr::BoolLit:
      return Bound{const_node(ct(Type::Bool), Value::of_int(e.ival)), &e};
    case Expr::NullLit:
      return null_bound(e);
    case Expr::Star:
      fail(e.pos, "syntax error", "'*' is only allowed in count(*) and select *");
    case Expr::Neg: {
      Bound x = bind(*e.args[0], c);
      if (x.null_lit) x = coerce(x, ct(Type::Int));
      if (!numeric(x))
        fail(e.pos, "type error", "cannot negate " + describe(x) + "; '-' needs a number");
      return Bound{make_node(Op::Neg, x.type(), {x.node}), &e};
    }
    case Expr::Not: {
      Bound x = need_bool(bind(*e.args[0], c), "after 'not'");
      return Bound{make_node(Op::Not, ct(Type::Bool), {x.node}), &e};
    }
    case Expr::Binary:
      return binary(e, c);
    case Expr::In: {
      Bound x = bind(*e.args[0], c);
      BPtr acc;
      for (size_t k = 1; k < e.args.size(); ++k) {
        Bound a = x, v = bind(*e.args[k], c);
        unify(a, v, e.args[k]->pos, "compare");
        auto eq = make_node(Op::Eq, ct(Type::Bool), {a.node, v.node});
        acc = acc ? make_node(Op::Or, ct(Type::Bool), {acc, eq}) : eq;
      }
      if (e.negated) acc = make_node(Op::Not, ct(Type::Bool), {acc});
      return Bound{acc, &e};
    }
    case Expr::IsNull: {
      Bound x = bind(*e.args[0], c);
      return Bound{make_node(e.negated ? Op::IsNotNull : Op::IsNull, ct(Type::Bool), {x.node}),
                   &e};
    }
    case Expr::Like: {  // like(s, pattern) as a function reads its messages
      BPtr m = make_node(Op::Like, ct(Type::Bool),
                         {string_arg(e, *e.args[0], c).node, string_arg(e, *e.args[1], c).node},
                         e.name == "ilike" ? 1 : 0);
      if (e.negated) m = make_node(Op::Not, ct(Type::Bool), {m});
      return Bound{m, &e};
    }
    case Expr::Call:
      return call(e, c);
    case Expr::Between: {
      Bound x = bind(*e.args[0], c), lo = bind(*e.args[1], c), hi = bind(*e.args[2], c), x2 = x;
      unify(x, lo, e.args[1]->pos, "compare");
      unify(x2, hi, e.args[2]->pos, "compare");
      BPtr m = make_node(Op::And, ct(Type::Bool),
                         {make_node(Op::Ge, ct(Type::Bool), {x.node, lo.node}),
                          make_node(Op::Le, ct(Type::Bool), {x2.node, hi.node})});
      if (e.negated) m = make_node(Op::Not, ct(Type::Bool), {m});
      return Bound{m, &e};
    }
    case Expr::Case:
      return case_expr(e, c);
    case Expr::Cast:
      return cast_expr(e, c);
  }
  fail(e.pos, "internal error", "unknown expression kind");
}

Bound Binder::binary(const Expr& e, const Ctx& c) {
  Bound a = bind(*e.args[0], c), b = bind(*e.args[1], c);
  const char* optext = binop_text(e.op);
  switch (e.op) {
    case BinOp::And:
    case BinOp::Or: {
      std::string ctx = std::string("around '") + optext + "'";
      a = need_bool(a, ctx);
      b = need_bool(b, ctx);
      return Bound{make_node(e.op == BinOp::And ? Op::And : Op::Or, ct(Type::Bool),
                             {a.node, b.node}),
                   &e};
    }
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge: {
      unify(a, b, e.args[1]->pos, "compare");
      static const Op kOps[] = {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge};
      Op op = kOps[static_cast<int>(e.op) - static_cast<int>(BinOp::Eq)];
      return Bound{make_node(op, ct(Type::Bool), {a.node, b.node}), &e};
    }
    case BinOp::Concat:
      return Bound{make_node(Op::Concat, ct(Type::String), {as_text(a), as_text(b)}), &e};
    default:
      break;
  }
  if ((e.op == BinOp::Add || e.op == BinOp::Sub) && (temporal(a) || temporal(b))) return date_arithmetic(e, a, b);
  // Arithmetic.
  if (a.null_lit && b.null_lit) {
    a = coerce(a, ct(Type::Int));
    b = coerce(b, ct(Type::Int));
  } else if (a.null_lit) {
    a = coerce(a, numeric(b) ? b.type() : ct(Type::Int));
  } else if (b.null_lit) {
    b = coerce(b, numeric(a) ? a.type() : ct(Type::Int));
  }
  for (const Bound* x : {&a, &b})
    if (!numeric(*x))
      fail(x->src->pos, "type error",
           std::string("'") + optext + "' needs numbers, found " + describe(*x) + number_fix(*x));
  ColumnType ta = a.type(), tb = b.type();
  ColumnType rt;
  Op op = Op::Add;
  switch (e.op) {
    case BinOp::Add:
    case BinOp::Sub:
      op = e.op == BinOp::Add ? Op::Add : Op::Sub;
      rt = numeric_common(ta, tb);
      a = coerce(a, rt);
      b = coerce(b, rt);
      break;
    case BinOp::Mul:
      op = Op::Mul;
      if (ta.type == Type::Float || tb.type == Type::Float) {
        rt = ct(Type::Float);
      } else if (ta.type == Type::Int && tb.type == Type::Int) {
        rt = ct(Type::Int);
      } else {
        // Scales add; past the widest decimal the product is a float.
        int s = (ta.type == Type::Decimal ? ta.scale : 0) + (tb.type == Type::Decimal ? tb.scale : 0);
        rt = s <= kMaxDecimalScale ? ct(Type::Decimal, s) : ct(Type::Float);
      }
      if (rt.type == Type::Float) {
        a = coerce(a, rt);
        b = coerce(b, rt);
      }
      break;
    case BinOp::Div:
      op = Op::Div;
      rt = ct(Type::Float);
      a = coerce(a, rt);
      b = coerce(b, rt);
      break;
    default:  // Mod
      op = Op::Mod;
      rt = numeric_common(ta, tb);
      a = coerce(a, rt);
      b = coerce(b, rt);
      break;
  }
  return Bound{make_node(op, rt, {a.node, b.node}), &e};
}

std::vector<OutputColumn> Binder::scope_to_schema() const {
  std::vector<OutputColumn> out;
  for (const auto& c : scope_) out.push_back(OutputColumn{c.name, c.type});
  return out;
}

void Binder::scope_to_slots() {
  for (size_t i = 0; i < scope_.size(); ++i)
    scope_[i].expr = column_leaf(static_cast<int>(i), scope_[i].type);
}

void Binder::finish_scan() {
  for (const auto& c : scope_) scan_outputs_.push_back(c.expr);
  scan_output_texts_.clear();
  for (const auto& c : scope_) scan_output_texts_.push_back(c.name);
  plan_.scan_output = scope_to_schema();
  post_ = true;
  scope_to_slots();
}

bool Binder::schema_replaced_after(size_t i) const {
  for (size_t k = i + 1; k < p_.stages.size(); ++k) {
    const Stage& s = p_.stages[k];
    if (s.kind == Stage::Agg) return true;
    if (s.kind == Stage::Select) {
      bool only_star = true;
      for (const auto& it : s.items) only_star = only_star && !it.expr;
      if (!only_star) return true;
    }
  }
  return false;
}

std::vector<int> Binder::dropna_columns(size_t i) {
  const Stage& st = p_.stages[i];
  std::vector<int> cols;
  if (!st.items.empty()) {
    for (const auto& it : st.items) cols.push_back(resolve(*it.expr, scope_));
    return cols;
  }
  bool all = !schema_replaced_after(i);
  for (size_t k = 0; k < scope_.size(); ++k)
    if (all || used_names_.count(to_lower(scope_[k].name))) cols.push_back(static_cast<int>(k));
  return cols;
}

std::string Binder::stage_text(const Stage& st) const {
  size_t end = static_cast<size_t>(st.end);
  std::string t = src_.substr(st.pos, end - st.pos);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  return t;
}

Scope Binder::select_scope(const Stage& st, std::vector<std::string>* texts) {
  ++select_stages_;
  Scope out;
  Ctx c{&scope_, false, false, "select"};
  for (const auto& it : st.items) {
    if (!it.expr) {
      for (const auto& col : scope_) {
        out.push_back(col);
        texts->push_back(quote_name(col.name));
      }
      continue;
    }
    if (!it.has_alias) check_quoted_name(*it.expr, scope_);
    Bound b = bind(*it.expr, c);
    if (b.null_lit) b = coerce(b, ct(Type::String));
    // A computed column's text means what its names meant in this stage.
    std::string resolved, origin = "select " + std::to_string(select_stages_) + " " + canon_text(*it.expr);
    if (it.expr->kind == Expr::Name || it.expr->kind == Expr::Dollar) {
      const ScopeCol& col = scope_[resolve(*it.expr, scope_)];
      resolved = col.name;
      origin = col.origin;
    }
    out.push_back(ScopeCol{item_name(it, resolved), b.type(), b.node, origin});
    texts->push_back(canon_text(*it.expr));
  }
  return out;
}

PostStage Binder::post_stage(PostStage::Kind kind, const Stage& st) {
  PostStage ps;
  ps.kind = kind;
  ps.text = stage_text(st);
  return ps;
}

void Binder::stage(size_t i) {
  const Stage& st = p_.stages[i];
  const char* kw = st.keyword.c_str();
  switch (st.kind) {
    case Stage::Filter:
    case Stage::Assert: {
      bool is_filter = st.kind == Stage::Filter;
      if (!is_filter && !post_) finish_scan();
      Ctx c{&scope_, false, false, kw};
      Bound b = need_bool(bind(*st.items[0].expr, c), std::string("in ") + kw);
      if (!post_) {
        scan_filters_.push_back(b.node);
        scan_filter_texts_.push_back(canon_text(*st.items[0].expr));
        return;
      }
      PostStage ps = post_stage(is_filter ? PostStage::Filter : PostStage::Assert, st);
      ps.exprs.push_back(lower_post(b.node, canon_text(*st.items[0].expr)));
      ps.output = scope_to_schema();
      plan_.post.push_back(std::move(ps));
      return;
    }
    case Stage::Select: {
      std::vector<std::string> texts;
      Scope next = select_scope(st, &texts);
      if (!post_) {
        scope_ = std::move(next);
        return;
      }
      PostStage ps = post_stage(PostStage::Select, st);
      for (size_t k = 0; k < next.size(); ++k) ps.exprs.push_back(lower_post(next[k].expr, texts[k]));
      scope_ = std::move(next);
      ps.output = scope_to_schema();
      scope_to_slots();
      plan_.post.push_back(std::move(ps));
      return;
    }
    case Stage::DropNa: {
      std::vector<int> cols = dropna_columns(i);
      if (!post_) {
        for (int k : cols) {
          scan_filters_.push_back(
              make_node(Op::IsNotNull, ct(Type::Bool), {scope_[k].expr}));
          scan_filter_texts_.push_back(quote_name(scope_[k].name) + " is not null");
        }
        return;
      }
      PostStage ps = post_stage(PostStage::DropNa, st);
      ps.columns = cols;
      ps.output = scope_to_schema();
      plan_.post.push_back(std::move(ps));
      return;
    }
    case Stage::Sort: {
      if (!post_) {
        keep_named_columns(i);
        finish_scan();
      }
      PostStage ps = post_stage(PostStage::Sort, st);
      order_items(st, &ps);
      ps.output = scope_to_schema();
      plan_.post.push_back(std::move(ps));
      plan_.has_sort = true;
      return;
    }
    case Stage::Top:
      top_stage(i);
      return;
    case Stage::Distinct: {
      std::vector<std::string> texts;
      bool selected = false;
      if (!post_) {  // the listed columns first, as a select: the scan outputs only them
        if (!st.items.empty()) scope_ = select_scope(st, &texts);
        selected = !st.items.empty();
        if (distinct_in_scan(i)) return;
        finish_scan();
      }
      PostStage ps = post_stage(PostStage::Distinct, st);
      Scope next = st.items.empty() || selected ? scope_ : select_scope(st, &texts);
      for (size_t k = 0; k < next.size(); ++k)
        ps.exprs.push_back(lower_post(next[k].expr, k < texts.size() ? texts[k] : next[k].name));
      scope_ = std::move(next);
      ps.output = scope_to_schema();
      scope_to_slots();
      plan_.post.push_back(std::move(ps));
      return;
    }
    case Stage::Limit: {
      if (!post_) finish_scan();
      PostStage ps = post_stage(PostStage::Limit, st);
      ps.limit = st.limit;
      ps.output = scope_to_schema();
      plan_.post.push_back(std::move(ps));
      return;
    }
    case Stage::GroupBy: {
      if (i + 1 < p_.stages.size() && p_.stages[i + 1].kind == Stage::Top) return;  // the top stage's groups
      if (i + 1 >= p_.stages.size() || p_.stages[i + 1].kind != Stage::Agg) {
        int pos = i + 1 < p_.stages.size() ? p_.stages[i + 1].pos : st.end;
        fail(pos, "usage error",
             "groupby must be followed by agg or top, like: groupby " +
                 canon_text(*st.items[0].expr) + " | agg count()");
      }
      if (post_ && !plan_.scan.aggregate)
        fail(st.pos, "usage error", misplaced_agg_reason(i) + "; move groupby/agg before it");
      for (const auto& it : st.items) keys_.push_back(group_key(it));
      return;
    }
    case Stage::Agg: {
      if (post_ && !plan_.scan.aggregate) fail(st.pos, "usage error", misplaced_agg_reason(i) + "; move agg before it");
      agg_stage(i);
      return;
    }
    case Stage::Join:
      join_stage(st);
      return;
  }
}

void Binder::order_items(const Stage& st, PostStage* ps) {
  for (const auto& it : st.items) {
    ps->exprs.push_back(lower_post(order_item(it, st).node, canon_text(*it.expr)));
    ps->descending.push_back(it.desc);
  }
}

void Binder::top_stage(size_t i) {
  const Stage& st = p_.stages[i];
  if (top_in_scan(i)) return;
  const bool grouped = i > 0 && p_.stages[i - 1].kind == Stage::GroupBy;
  if (!post_) {
    keep_named_columns(grouped ? i - 1 : i);
    finish_scan();
  }
  PostStage ps = post_stage(grouped ? PostStage::Top : PostStage::Sort, st);
  if (grouped) {
    for (const auto& it : p_.stages[i - 1].items) {
      const Key k = group_key(it);
      ps.exprs.push_back(lower_post(k.expr, k.canon));
    }
    ps.group_keys = ps.exprs.size();
    ps.limit = st.limit;
  }
  order_items(st, &ps);
  ps.output = scope_to_schema();
  plan_.post.push_back(std::move(ps));
  plan_.has_sort = true;
  if (grouped) return;
  PostStage limit = post_stage(PostStage::Limit, st);
  limit.text.clear();  // explained by the sort stage's text, "top N by ..."
  limit.limit = st.limit;
  limit.output = scope_to_schema();
  plan_.post.push_back(std::move(limit));
}

void Binder::agg_stage(size_t i) {
  const Stage& st = p_.stages[i];
  Ctx c{&scope_, true, false, "agg"};
  std::vector<std::pair<std::string, BPtr>> items;
  std::vector<std::string> texts, origins;
  std::vector<ColumnType> types;
  for (const auto& it : st.items) {
    Bound b = bind(*it.expr, c);
    if (b.null_lit) b = coerce(b, ct(Type::String));
    std::string resolved;
    if (it.expr->kind == Expr::Name) {
      for (const auto& k : keys_)
        if (to_lower(k.name) == to_lower(it.expr->name)) resolved = k.name;
    }
    items.emplace_back(item_name(it, resolved), b.node);
    texts.push_back(canon_text(*it.expr));
    std::string origin = "agg " + texts.back();
    for (const auto& k : keys_)
      if (k.name == resolved || k.canon == texts.back()) origin = "key " + k.canon;  // the key itself
    origins.push_back(origin);
    types.push_back(b.type());
  }
  std::vector<BPtr> key_exprs;
  std::vector<std::string> key_texts;
  for (const auto& k : keys_) {
    key_exprs.push_back(k.expr);
    key_texts.push_back(k.canon);
  }
  // Holistic arguments follow the keys (one key per distinct argument;
  // an argument that is a key is that key).
  for (auto& a : aggs_) {
    if (!is_holistic(a.kind)) continue;
    size_t k = 0;
    while (k < key_texts.size() && key_texts[k] != a.argtext) ++k;
    if (k == key_texts.size()) {
      key_exprs.push_back(a.arg0);
      key_texts.push_back(a.argtext);
    }
    a.key = static_cast<int>(k);
  }
  std::vector<OutputColumn> grouped;  // the row finalize reads: keys, then aggregates
  for (const auto& k : keys_) grouped.push_back(OutputColumn{k.name, k.type});
  for (const auto& a : aggs_) grouped.push_back(OutputColumn{a.text, a.result});
  std::vector<Program> finalize;
  Scope out;
  for (const auto& k : keys_) out.push_back(ScopeCol{k.name, k.type, nullptr, "key " + k.canon});
  for (size_t k = 0; k < items.size(); ++k) {
    finalize.push_back(lower_post(items[k].second, texts[k]));
    out.push_back(ScopeCol{items[k].first, types[k], nullptr, origins[k]});
  }
  if (post_) {
    post_agg_stage(i, key_exprs, key_texts, std::move(grouped), std::move(finalize), out);
  } else {
    plan_.scan.aggregate = true;
    scan_keys_ = std::move(key_exprs);
    scan_key_texts_ = std::move(key_texts);
    plan_.scan_output = std::move(grouped);
    plan_.finalize = std::move(finalize);
    plan_.group_keys = keys_.size();
    scan_aggs_ = std::move(aggs_);
  }
  keys_.clear();  // a later groupby/agg binds its own
  aggs_.clear();
  scope_ = std::move(out);
  if (!post_) plan_.finalized_output = scope_to_schema();
  scope_to_slots();
  post_ = true;
}

void Binder::post_agg_stage(size_t i, const std::vector<BPtr>& key_exprs, const std::vector<std::string>& key_texts,
                            std::vector<OutputColumn> grouped, std::vector<Program> finalize, const Scope& out) {
  auto sub = std::make_shared<Plan>();
  sub->input = scope_to_schema();
  for (size_t k = 0; k < scope_.size(); ++k) {
    sub->scan.used_columns.push_back(static_cast<int>(k));
    sub->scan.slot_types.push_back(scope_[k].type);
  }
  sub->scan.aggregate = true;
  for (size_t k = 0; k < key_exprs.size(); ++k) sub->scan.keys.push_back(lower_post(key_exprs[k], key_texts[k]));
  sub->group_keys = keys_.size();
  lower_aggs(aggs_, {}, sub.get());
  sub->scan_output = std::move(grouped);
  sub->finalize = std::move(finalize);
  for (const auto& c : out) sub->finalized_output.push_back(OutputColumn{c.name, c.type});
  sub->output = sub->finalized_output;
  const bool grouped_by = i > 0 && p_.stages[i - 1].kind == Stage::GroupBy;
  PostStage ps = post_stage(PostStage::Agg, p_.stages[grouped_by ? i - 1 : i]);
  if (grouped_by) ps.text += " | " + stage_text(p_.stages[i]);
  ps.output = sub->finalized_output;
  ps.agg = std::move(sub);
  plan_.post.push_back(std::move(ps));
}

std::string Binder::misplaced_agg_reason(size_t i) const {
  std::string why = spec::misplaced_agg_reason(p_, i);
  return why.empty() ? "aggregation is not allowed here" : why;
}

}  // namespace binding
}  // namespace spec

Plan build_plan(const std::string& pipeline, const std::vector<OutputColumn>& input_schema,
                const std::vector<bool>& checked_columns, const NullLikeTokens& null_like,
                const LookupSchemas& lookup_schemas, bool distinct_as_groups) {
  spec::Pipeline p = spec::parse_pipeline(pipeline);
  spec::check_structure(p);
  spec::binding::Binder b(p, input_schema, null_like, lookup_schemas);
  b.checked_ = checked_columns;
  b.distinct_as_groups_ = distinct_as_groups;
  Plan plan = b.run();
  spec::mark_wide_ints(plan);
  spec::finish_output_columns(plan);
  return plan;
}

std::vector<JoinFileRef> join_files(const std::string& pipeline) {
  std::vector<JoinFileRef> files;
  for (const spec::Stage& st : spec::parse_pipeline(pipeline).stages)
    if (st.kind == spec::Stage::Join) files.push_back(JoinFileRef{st.join->file, st.join->delimiter});
  return files;
}

void check_pipeline_syntax(const std::string& pipeline) {
  spec::check_structure(spec::parse_pipeline(pipeline));
}

}  // namespace warpcsv
