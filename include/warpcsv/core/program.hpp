// The expression program: typed postfix bytecode, built by the binder and
// evaluated per row by core/eval.hpp on the CPU and the GPU alike.
#pragma once
#include <cstdint>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

enum class Op : uint8_t {
  Column,      // push slot `arg` of the current row
  Const,       // push constant `arg` of the pool
  Cast,        // convert top from (from_type, from_scale) to (type, scale); arg: kCastTry or 0
  Neg,
  Not,
  Add,
  Sub,
  Mul,
  Div,  // always Float result; x / 0 is null
  Mod,  // Int or Decimal; x % 0 is null
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,  // three-valued logic, like SQL
  Or,
  IsNull,
  IsNotNull,
  Lower,
  Upper,
  Len,  // bytes
  Abs,
  Round,  // arg = digits (may be negative)
  Contains,
  StartsWith,
  EndsWith,
  Coalesce,  // arg = number of operands
  DatePart,  // arg = DatePart (core/datetime.hpp) of a Date or Timestamp (from_type)
  DateTrunc,  // arg = DateUnit; the result has the operand's type
  Substr,     // arg = operands: 2 (string, start) or 3 (string, start, length); bytes, as DuckDB's
  Trim,       // arg = kTrimLeft | kTrimRight: spaces off one or both ends
  SplitPart,  // string, separator, n: the n-th piece (1-based; negative from the end)
  Greatest,   // arg = operands: the greatest that is not null (null if all are)
  Least,      // arg = operands: the least that is not null
  NullIf,     // a, b: null where a equals b, else a
  Like,       // string, pattern (% any run, _ one character); arg 1: ASCII case folded (ilike)
  Concat,     // two strings joined
  Replace,    // string, from, to: every `from` replaced, left to right
  Strftime,   // date or timestamp (from_type), format string (checked by the binder)
  DateDiff,   // arg = DateUnit; two dates or two timestamps (from_type): boundaries from the first to the second
  ToString,   // the text of a value of from_type, as the output prints it
  ParseAs,    // a string read as `type` (spaces around it ignored); arg 1: null when it does not read (try_cast)
  JumpUnless, // pops a condition; unless it is true, continues at instruction `arg`
  Jump,       // continues at instruction `arg`
  FileName,   // the name of the file the row was read from (EvalContext::file; null where none is known)
};

constexpr int32_t kTrimLeft = 1, kTrimRight = 2;
// Cast's and ParseAs's arg: a value that does not convert is null (try_cast), not a failed row.
constexpr int32_t kCastTry = 1;

// One instruction. `type`/`scale` give the result type; for Cast and the
// comparison ops `from_type`/`from_scale` give the operand type (both operands
// of a binary op are already cast to one type by the binder).
// `wide`: int arithmetic (Add, Sub, Mul, Neg, Abs, Round, Cast to Int) over a
// value that may pass 64 bits (a `sum` of ints, exact in 128 bits) is checked
// against the 128-bit range; all other int arithmetic against the 64-bit one.
// The binder sets it (mark_wide_ints); a result out of range is an overflow.
struct Instr {
  Op op;
  Type type;
  uint8_t scale;
  Type from_type;
  uint8_t from_scale;
  int32_t arg;
  uint8_t wide = 0;
};

constexpr int kMaxProgramStack = 32;

// A program as flat arrays so it can be copied to a device as it is.
// String constants point into `strings` by offset: Value.s.ptr holds the
// offset until the evaluator resolves it against the pool base.
struct ProgramView {
  const Instr* code;
  int32_t length;
  const Value* consts;
  const char* strings;
};

// Evaluation outcome for one row; errors are data-dependent and reported by
// the executor with the row's file:line.
enum class EvalStatus : uint8_t { Ok, IntegerOverflow, ScratchFull, DecimalOverflow, CastFailed, DateOutOfRange };

}  // namespace warpcsv
