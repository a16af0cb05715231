// Binding of function calls, casts, conditions (case, if) and aggregates:
// the Binder's members that turn a call into a typed tree (see binder.hpp).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "spec/binder.hpp"
#include "spec/bind_util.hpp"
#include "warpcsv/core/eval.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

BPtr Binder::as_text(const Bound& b) {
  if (b.null_lit || b.type().type == Type::String) return coerce(b, ct(Type::String)).node;
  return make_node(Op::ToString, ct(Type::String), {b.node});
}

Bound Binder::date_arithmetic(const Expr& e, Bound a, Bound b) {
  const char* optext = binop_text(e.op);
  const bool sub = e.op == BinOp::Sub;
  if (a.type().type == Type::Date && b.type().type == Type::Date && sub)
    return Bound{make_node(Op::Sub, ct(Type::Int), {a.node, b.node}), &e};
  Bound& date = temporal(a) ? a : b;
  Bound& days = temporal(a) ? b : a;
  if (date.type().type == Type::Timestamp || (sub && &date == &b) || temporal(days) ||
      !(days.null_lit || days.type().type == Type::Int))
    fail(e.args[1]->pos, "type error",
         std::string("cannot ") + (sub ? "subtract " : "add ") + describe(b) + (sub ? " from " : " to ") +
             describe(a) + "; '" + optext +
             "' takes a date and a whole number of days (date + 7, date - 1), or two dates (date - date: "
             "the days between); for other units use datediff('hour', a, b)");
  days = coerce(days, ct(Type::Int));
  return Bound{make_node(sub ? Op::Sub : Op::Add, ct(Type::Date), {a.node, b.node}), &e};
}

ColumnType Binder::unify_all(std::vector<Bound>& xs, const std::vector<int>& pos, const char* what) const {
  Bound acc = xs[0];
  for (size_t k = 1; k < xs.size(); ++k) {
    Bound b = xs[k];
    unify(acc, b, pos[k], what);
    xs[k] = b;
    if (k == 1) xs[0] = acc;
    acc = Bound{const_node(acc.type(), Value::make_null()), acc.src};
  }
  const ColumnType t = acc.type().type == Type::Null ? ct(Type::Int) : acc.type();
  for (auto& x : xs) x = coerce(x, t);
  return t;
}

BPtr Binder::case_node(std::vector<BPtr> conds, std::vector<Bound> values, ColumnType t) {
  std::vector<BPtr> kids;
  for (size_t k = 0; k < conds.size(); ++k) {
    kids.push_back(conds[k]);
    kids.push_back(values[k].node);
  }
  kids.push_back(values.back().node);
  return make_node(Op::JumpUnless, t, std::move(kids));
}

Bound Binder::null_bound(const Expr& e) const {
  Bound b{const_node(ct(Type::Null), Value::make_null()), &e};
  b.null_lit = true;
  return b;
}

Bound Binder::case_expr(const Expr& e, const Ctx& c) {
  size_t k = 0;
  Bound operand;
  if (e.case_operand) operand = bind(*e.args[k++], c);
  const size_t whens_end = e.args.size() - (e.case_else ? 1 : 0);
  std::vector<BPtr> conds;
  std::vector<Bound> values;
  std::vector<int> pos;
  for (; k < whens_end; k += 2) {
    Bound w = bind(*e.args[k], c);
    if (e.case_operand) {
      Bound o = operand;
      unify(o, w, e.args[k]->pos, "compare");
      conds.push_back(make_node(Op::Eq, ct(Type::Bool), {o.node, w.node}));
    } else {
      conds.push_back(need_bool(w, "after 'when'").node);
    }
    values.push_back(bind(*e.args[k + 1], c));
    pos.push_back(e.args[k + 1]->pos);
  }
  values.push_back(e.case_else ? bind(*e.args.back(), c) : null_bound(e));
  pos.push_back(e.case_else ? e.args.back()->pos : e.end);
  const ColumnType t = unify_all(values, pos, "give one case");
  return Bound{case_node(std::move(conds), std::move(values), t), &e};
}

ColumnType Binder::cast_type(const Expr& e) const {
  const std::string name = e.sval.substr(0, e.sval.find('('));
  const bool digits = e.sval.find('(') != std::string::npos;
  static const std::pair<const char*, Type> kNames[] = {
      {"int", Type::Int},         {"integer", Type::Int},     {"bigint", Type::Int},
      {"float", Type::Float},     {"double", Type::Float},    {"real", Type::Float},
      {"decimal", Type::Decimal}, {"numeric", Type::Decimal}, {"string", Type::String},
      {"varchar", Type::String},  {"text", Type::String},     {"bool", Type::Bool},
      {"boolean", Type::Bool},    {"date", Type::Date},       {"timestamp", Type::Timestamp},
      {"datetime", Type::Timestamp}};
  for (const auto& [n, t] : kNames) {
    if (name != n) continue;
    if (t == Type::Decimal && (!digits || e.scale > kMaxDecimalScale))
      fail(e.pos, "usage error",
           "cast to decimal needs its digits after the point, from 0 to " + std::to_string(kMaxDecimalScale) +
               ", like " + e.name + "(x as decimal(2)); found '" + e.sval + "'");
    if (t != Type::Decimal && digits)
      fail(e.pos, "usage error", "the type " + name + " takes no digits; found '" + e.sval + "'");
    return ct(t, e.scale);
  }
  fail(e.pos, "usage error",
       "unknown type '" + e.sval + "' in " + e.name + "; types are int, float, decimal(S), string, bool, date and "
                                                         "timestamp");
}

Bound Binder::cast_expr(const Expr& e, const Ctx& c) {
  const ColumnType to = cast_type(e);
  Bound x = bind(*e.args[0], c);
  const int32_t flag = e.name == "try_cast" ? kCastTry : 0;
  const ColumnType from = x.type();
  if (x.null_lit || from == to) return Bound{coerce(x, to).node, &e};
  if (from.type == Type::String) return Bound{make_node(Op::ParseAs, to, {x.node}, flag), &e};
  if (to.type == Type::String) return Bound{make_node(Op::ToString, to, {x.node}), &e};
  const bool numbers = (numeric(x) || from.type == Type::Bool) && (is_numeric(to.type) || to.type == Type::Bool);
  const bool dates = temporal(x) && (to.type == Type::Date || to.type == Type::Timestamp);
  if (!numbers && !dates)
    fail(e.args[0]->pos, "type error",
         "cannot cast " + describe(x) + " to " + e.sval +
             "; numbers and booleans cast to each other, dates and timestamps to each other, anything to and "
             "from string (for a date's number use epoch(t) or year(t))");
  return Bound{make_node(Op::Cast, to, {x.node}, flag), &e};
}

void Binder::arity(const Expr& e, size_t lo, size_t hi, const char* usage) const {
  size_t n = e.args.size();
  if (n == 1 && e.args[0]->kind == Expr::Star && e.name != "count")
    fail(e.args[0]->pos, "syntax error",
         "'*' is only allowed in count(*); write " + std::string(usage));
  if (n < lo || n > hi)
    fail(e.pos, "usage error",
         e.name + "() takes " +
             (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
             " argument" + (lo == hi && hi == 1 ? "" : "s") + ", found " + std::to_string(n) +
             "; write " + usage);
}

Bound Binder::string_arg(const Expr& call, const Expr& a, const Ctx& c) {
  Bound b = bind(a, c);
  if (b.null_lit) return coerce(b, ct(Type::String));
  if (b.type().type != Type::String)
    fail(a.pos, "type error",
         call.name + "() needs a string, found " + describe(b));
  return b;
}

std::pair<std::vector<BPtr>, ColumnType> Binder::common_type_args(const Expr& e, const Ctx& c) {
  std::vector<Bound> xs;
  std::vector<int> pos;
  for (const auto& a : e.args) {
    xs.push_back(bind(*a, c));
    pos.push_back(a->pos);
  }
  const ColumnType t = unify_all(xs, pos, e.name.c_str());
  std::vector<BPtr> kids;
  for (auto& x : xs) kids.push_back(x.node);
  return {std::move(kids), t};
}

Bound Binder::int_arg(const Expr& call, const Expr& a, const Ctx& c) {
  Bound b = bind(a, c);
  if (b.null_lit) b = coerce(b, ct(Type::Int));
  if (b.type().type != Type::Int)
    fail(a.pos, "type error", call.name + "() needs an int, found " + describe(b));
  return b;
}

Bound Binder::date_arg(const Expr& call, const Expr& a, const Ctx& c) {
  Bound b = bind(a, c);
  if (b.null_lit) b = coerce(b, ct(Type::Date));
  if (b.type().type != Type::Date && b.type().type != Type::Timestamp)
    fail(a.pos, "type error", call.name + "() needs a date or timestamp, found " + describe(b));
  return b;
}

DateUnit Binder::date_unit(const Expr& call, const Expr& u) const {
  const auto unit = std::find_if(std::begin(kDateUnits), std::end(kDateUnits), [&](const auto& du) {
    return u.kind == Expr::StrLit && to_lower(u.sval) == du.first;
  });
  if (unit == std::end(kDateUnits))
    fail(u.pos, "usage error",
         call.name + "()'s first argument is a unit in quotes: 'year', 'quarter', 'month', 'week', 'day', "
                     "'hour', 'minute' or 'second'; found '" + canon_text(u) + "'");
  return unit->second;
}

Bound Binder::call(const Expr& e, const Ctx& c) {
  const std::string& f = e.name;
  if (f == "top") fail(e.pos, "unsupported", kTopUnsupported);
  if (is_aggregate_name(f)) {
    if (c.in_agg)
      fail(e.pos, "usage error",
           "aggregate '" + f + "' inside another aggregate; aggregates cannot be nested");
    if (!c.agg_item)
      fail(e.pos, "usage error",
           "aggregate '" + f + "' is only allowed in an agg stage (not in " + c.stage +
               "); write it as: agg " + canon_text(e));
    return aggregate(e);
  }
  if (f == "lower" || f == "upper") {
    arity(e, 1, 1, (f + "(name)").c_str());
    Bound x = string_arg(e, *e.args[0], c);
    return Bound{make_node(f == "lower" ? Op::Lower : Op::Upper, ct(Type::String), {x.node}),
                 &e};
  }
  if (f == "len") {
    arity(e, 1, 1, "len(name)");
    Bound x = string_arg(e, *e.args[0], c);
    return Bound{make_node(Op::Len, ct(Type::Int), {x.node}), &e};
  }
  if (f == "abs") {
    arity(e, 1, 1, "abs(x)");
    Bound x = bind(*e.args[0], c);
    if (x.null_lit) x = coerce(x, ct(Type::Int));
    if (!numeric(x)) fail(e.args[0]->pos, "type error", "abs() needs a number, found " + describe(x));
    return Bound{make_node(Op::Abs, x.type(), {x.node}), &e};
  }
  if (f == "round") {
    arity(e, 1, 2, "round(x) or round(x, digits)");
    Bound x = bind(*e.args[0], c);
    if (x.null_lit) x = coerce(x, ct(Type::Int));
    if (!numeric(x))
      fail(e.args[0]->pos, "type error", "round() needs a number, found " + describe(x));
    int d = 0;
    if (e.args.size() == 2) {
      const Expr& de = *e.args[1];
      if (de.kind != Expr::IntLit || de.ival > 38 || de.ival < -38)
        fail(de.pos, "usage error",
             "round() digits must be a whole number from -38 to 38, like round(x, 2); found '" +
                 canon_text(de) + "'");
      d = static_cast<int>(de.ival);
    }
    ColumnType t = x.type();
    ColumnType rt = t;
    if (t.type == Type::Decimal) rt = ct(Type::Decimal, std::max(0, std::min<int>(d, t.scale)));
    return Bound{make_node(Op::Round, rt, {x.node}, d), &e};
  }
  if (f == "contains" || f == "starts_with" || f == "ends_with") {
    arity(e, 2, 2, (f + "(name, \"text\")").c_str());
    Bound a = string_arg(e, *e.args[0], c), b = string_arg(e, *e.args[1], c);
    Op op = f == "contains" ? Op::Contains : f == "starts_with" ? Op::StartsWith : Op::EndsWith;
    return Bound{make_node(op, ct(Type::Bool), {a.node, b.node}), &e};
  }
  if (f == "substr") {
    arity(e, 2, 3, "substr(s, start) or substr(s, start, length)");
    std::vector<BPtr> kids = {string_arg(e, *e.args[0], c).node};
    for (size_t k = 1; k < e.args.size(); ++k) kids.push_back(int_arg(e, *e.args[k], c).node);
    const auto n = static_cast<int32_t>(kids.size());
    return Bound{make_node(Op::Substr, ct(Type::String), std::move(kids), n), &e};
  }
  if (f == "trim" || f == "ltrim" || f == "rtrim") {
    arity(e, 1, 1, (f + "(s)").c_str());
    const int32_t sides = f == "ltrim" ? kTrimLeft : f == "rtrim" ? kTrimRight : kTrimLeft | kTrimRight;
    return Bound{make_node(Op::Trim, ct(Type::String), {string_arg(e, *e.args[0], c).node}, sides), &e};
  }
  if (f == "split_part") {
    arity(e, 3, 3, "split_part(s, separator, n)");
    return Bound{make_node(Op::SplitPart, ct(Type::String),
                           {string_arg(e, *e.args[0], c).node, string_arg(e, *e.args[1], c).node,
                            int_arg(e, *e.args[2], c).node}),
                 &e};
  }
  for (const auto& [name, part] : kDateParts) {
    if (f != name) continue;
    arity(e, 1, 1, (f + "(t)").c_str());
    const Bound x = date_arg(e, *e.args[0], c);
    const Type t = x.type().type;
    if (part == DatePart::Date && t == Type::Date) return Bound{x.node, &e};
    const ColumnType rt = part == DatePart::Date                             ? ct(Type::Date)
                          : part == DatePart::Epoch && t == Type::Timestamp ? ct(Type::Float)
                                                                            : ct(Type::Int);
    return Bound{make_node(Op::DatePart, rt, {x.node}, static_cast<int32_t>(part)), &e};
  }
  if (f == "date_trunc") {
    arity(e, 2, 2, "date_trunc('month', t)");
    const DateUnit unit = date_unit(e, *e.args[0]);
    const Bound x = date_arg(e, *e.args[1], c);
    return Bound{make_node(Op::DateTrunc, x.type(), {x.node}, static_cast<int32_t>(unit)), &e};
  }
  if (f == "coalesce" || f == "greatest" || f == "least") {
    arity(e, 1, 64, (f + "(a, b, ...)").c_str());
    const Op op = f == "coalesce" ? Op::Coalesce : f == "greatest" ? Op::Greatest : Op::Least;
    auto [kids, t] = common_type_args(e, c);
    const auto n = static_cast<int32_t>(kids.size());
    return Bound{make_node(op, t, std::move(kids), n), &e};
  }
  if (f == "nullif") {
    arity(e, 2, 2, "nullif(a, b)");
    auto [kids, t] = common_type_args(e, c);
    return Bound{make_node(Op::NullIf, t, std::move(kids)), &e};
  }
  if (f == "if") {
    arity(e, 3, 3, "if(condition, then, else)");
    BPtr cond = need_bool(bind(*e.args[0], c), "as if()'s first argument").node;
    std::vector<Bound> values = {bind(*e.args[1], c), bind(*e.args[2], c)};
    const ColumnType t = unify_all(values, {e.args[1]->pos, e.args[2]->pos}, "give one if()");
    return Bound{case_node({cond}, std::move(values), t), &e};
  }
  if (f == "filename") {
    arity(e, 0, 0, "filename()");
    if (post_)
      fail(e.pos, "usage error",
           "filename() names the file a row was read from, so it is known only before agg, sort, limit, top and "
           "distinct; select it as a column before them, like: select *, filename() as file | ...");
    return Bound{make_node(Op::FileName, ct(Type::String), {}), &e};
  }
  if (f == "replace") {
    arity(e, 3, 3, "replace(s, from, to)");
    return Bound{make_node(Op::Replace, ct(Type::String),
                           {string_arg(e, *e.args[0], c).node, string_arg(e, *e.args[1], c).node,
                            string_arg(e, *e.args[2], c).node}),
                 &e};
  }
  if (f == "strftime") {
    arity(e, 2, 2, "strftime(t, '%Y-%m')");
    const Bound x = date_arg(e, *e.args[0], c);
    const Expr& fe = *e.args[1];
    uint32_t bad_at = 0;
    if (fe.kind != Expr::StrLit)
      fail(fe.pos, "usage error", "strftime()'s format is a string in quotes, like strftime(t, '%Y-%m')");
    if (!strftime_format_ok(fe.sval.data(), static_cast<uint32_t>(fe.sval.size()), &bad_at))
      fail(fe.pos, "usage error",
           "strftime() format '" + fe.sval + "' has '" + fe.sval.substr(bad_at, 2) +
               "' at byte " + std::to_string(bad_at + 1) +
               "; it knows %Y %m %d %H %M %S %j %a %A %b %B %F %T and %% (write %% for a percent sign)");
    return Bound{make_node(Op::Strftime, ct(Type::String), {x.node, bind(fe, c).node}), &e};
  }
  if (f == "datediff" || f == "date_diff") {
    arity(e, 3, 3, (f + "('day', start, end)").c_str());
    const DateUnit unit = date_unit(e, *e.args[0]);
    std::vector<Bound> xs = {date_arg(e, *e.args[1], c), date_arg(e, *e.args[2], c)};
    unify_all(xs, {e.args[1]->pos, e.args[2]->pos}, "compare");
    return Bound{make_node(Op::DateDiff, ct(Type::Int), {xs[0].node, xs[1].node}, static_cast<int32_t>(unit)),
                 &e};
  }
  static const std::vector<std::string> kFuncs = {
      "lower", "upper", "len", "abs", "round", "contains", "starts_with", "ends_with", "coalesce", "greatest",
      "least", "nullif", "if", "substr", "replace", "filename",
      "trim", "ltrim", "rtrim", "split_part", "year",
      "quarter", "month", "day", "hour", "minute", "second", "dow", "isodow", "doy", "week", "epoch", "date",
      "date_trunc", "strftime", "datediff", "date_diff", "count", "count_if", "sum", "min", "max", "mean", "avg",
      "var", "std", "first", "last", "corr", "count_distinct", "median", "quantile"};
  std::vector<std::string> close = closest_names(f, kFuncs, 2);
  fail(e.pos, "unknown function",
       "no function named '" + f + "'" +
           (close.empty() ? "" : "; did you mean " + join_quoted(close, 2, " or ") + "?") +
           " (functions: lower upper len abs round contains starts_with ends_with coalesce greatest least nullif "
           "if substr replace trim ltrim rtrim split_part year quarter month day hour minute second dow isodow doy "
           "week epoch date date_trunc strftime datediff filename; cast(x as type), try_cast(x as type); "
           "aggregates in agg: count count_if sum min max mean var std first last corr count_distinct median "
           "quantile)");
}

void Binder::quantile_fraction(const Expr& qe, AggCall* call) const {
  const int128 one = qe.kind == Expr::DecLit ? pow10_i128(qe.scale) : 1;
  if ((qe.kind != Expr::IntLit && qe.kind != Expr::DecLit) || qe.scale > 18 || qe.ival < 0 || qe.ival > one)
    fail(qe.pos, "usage error",
         "quantile()'s second argument must be a decimal number from 0 to 1 with at most 18 digits after "
         "the point, like quantile(x, 0.9); found '" + canon_text(qe) + "'");
  call->q_units = static_cast<int64_t>(qe.ival);
  call->q_scale = qe.kind == Expr::DecLit ? qe.scale : 0;
}

void Binder::holistic_arg(const Expr& e, const Ctx& inner, AggCall* call) {
  Bound x = bind(*e.args[0], inner);
  if (x.null_lit)
    fail(e.args[0]->pos, "type error", e.name + "(null) has no type; aggregate a column or an expression");
  call->arg0 = x.node;
  call->argtext = canon_text(*e.args[0]);
  if (e.name == "quantile") call->kind = AggKind::Quantile;
  const bool continuous = numeric(x) || x.type().type == Type::Bool;
  call->result = call->kind == AggKind::CountDistinct ? ct(Type::Int) : continuous ? ct(Type::Float) : x.type();
}

Bound Binder::aggregate(const Expr& e) {
  std::string f = e.name == "avg" ? "mean" : e.name;
  for (const auto& a : e.args) check_quoted_name(*a, scope_);
  Ctx inner{&scope_, false, true, "agg"};
  AggCall call;
  std::string argtext;
  if (f == "count") {
    bool star = e.args.empty() || (e.args.size() == 1 && e.args[0]->kind == Expr::Star);
    if (star) {
      call.kind = AggKind::CountStar;
    } else {
      arity(e, 0, 1, "count() or count(x)");
      call.kind = AggKind::Count;
      call.arg0 = bind(*e.args[0], inner).node;
      argtext = canon_text(*e.args[0]);
    }
    call.result = ct(Type::Int);
  } else if (f == "count_if") {
    arity(e, 1, 1, "count_if(condition)");
    // The rows where the condition holds: count() of a value that is null elsewhere.
    BPtr cond = need_bool(bind(*e.args[0], inner), "in count_if()").node;
    call.kind = AggKind::Count;
    call.arg0 = case_node({cond}, {Bound{const_node(ct(Type::Bool), Value::of_int(1))}, null_bound(e)},
                          ct(Type::Bool));
    call.result = ct(Type::Int);
    argtext = canon_text(*e.args[0]);
  } else if (f == "corr") {
    arity(e, 2, 2, "corr(x, y)");
    Bound x = bind(*e.args[0], inner), y = bind(*e.args[1], inner);
    for (const Bound* b : {&x, &y})
      if (!numeric(*b) && b->type().type != Type::Bool)
        fail(b->src->pos, "type error", "corr() needs numbers, found " + describe(*b) + number_fix(*b));
    call.kind = AggKind::Corr;
    call.arg0 = x.node;
    call.arg1 = y.node;
    call.result = ct(Type::Float);
    argtext = canon_text(*e.args[0]) + ", " + canon_text(*e.args[1]);
  } else if (f == "quantile") {
    arity(e, 2, 2, "quantile(x, q) with q from 0 to 1, like quantile(x, 0.9)");
    quantile_fraction(*e.args[1], &call);
    holistic_arg(e, inner, &call);
    argtext = call.argtext + ", " + canon_text(*e.args[1]);
  } else if (f == "count_distinct" || f == "median") {
    arity(e, 1, 1, (f + "(x)").c_str());
    call.kind = f == "median" ? AggKind::Median : AggKind::CountDistinct;
    holistic_arg(e, inner, &call);
    argtext = call.argtext;
  } else {
    arity(e, 1, 1, (e.name + "(x)").c_str());
    Bound x = bind(*e.args[0], inner);
    if (x.null_lit)
      fail(e.args[0]->pos, "type error",
           e.name + "(null) has no type; aggregate a column or an expression");
    Type t = x.type().type;
    argtext = canon_text(*e.args[0]);
    call.arg0 = x.node;
    if (f == "sum") {
      call.kind = AggKind::Sum;
      if (t == Type::Int || t == Type::Bool)
        call.result = ct(Type::Int);
      else if (t == Type::Decimal || t == Type::Float)
        call.result = x.type();
      else
        fail(e.args[0]->pos, "type error",
             "sum() needs numbers, found " + describe(x) + number_fix(x));
    } else if (f == "mean" || f == "var" || f == "std") {
      call.kind = f == "mean" ? AggKind::Mean : f == "var" ? AggKind::Var : AggKind::Std;
      if (!numeric(x) && t != Type::Bool)
        fail(e.args[0]->pos, "type error", e.name + "() needs numbers, found " + describe(x) + number_fix(x));
      call.result = ct(Type::Float);
    } else {
      call.kind = f == "min"     ? AggKind::Min
                  : f == "max"   ? AggKind::Max
                  : f == "first" ? AggKind::First
                                 : AggKind::Last;
      call.result = x.type();
    }
  }
  call.text = f + "(" + argtext + ")";
  size_t j = 0;
  while (j < aggs_.size() && aggs_[j].text != call.text) ++j;
  if (j == aggs_.size()) aggs_.push_back(call);
  return Bound{column_leaf(static_cast<int>(keys_.size() + j), aggs_[j].result), &e};
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
