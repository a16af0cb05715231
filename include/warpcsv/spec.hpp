// The pipeline language: parse a spec like
//   filter amount > 0 | groupby customer | agg sum(amount) as total | sort total desc
// and bind it against an input schema into an immutable, typed Plan.
#pragma once
#include <string>
#include <vector>

#include "warpcsv/plan.hpp"

namespace warpcsv {

// Parses and binds a pipeline against the input schema. Throws UsageError for
// syntax errors (with the position marked), unknown columns (with the closest
// names), type errors, unsupported aggregates and misplaced stages.
// checked_columns[c]: the scan parses input column c even when the pipeline
// does not use it, so a value that does not fit its type is a bad row (the
// columns --schema names: a contract, not only a hint).
// null_like[c]: the tokens (NA, -) that made input column c a string where its other values
// are numbers, for the --null fix in the message of a numeric use of it (null_like_tokens).
// lookup_schemas[j]: the columns of the file of the pipeline's j-th join stage (join_files).
using NullLikeTokens = std::vector<std::vector<std::string>>;
using LookupSchemas = std::vector<std::vector<OutputColumn>>;
// distinct_as_groups: a `distinct` that ends the scan may run as groups (all
// of the input first, then its rows in first-occurrence order); false keeps
// it row by row, each row out as it comes (a stream, like standard input).
Plan build_plan(const std::string& pipeline, const std::vector<OutputColumn>& input_schema,
                const std::vector<bool>& checked_columns = {}, const NullLikeTokens& null_like = {},
                const LookupSchemas& lookup_schemas = {}, bool distinct_as_groups = true);

// The files the pipeline's join stages read, in order: the path as written and
// the delimiter given in the stage (0: the input's).
struct JoinFileRef {
  std::string path;
  char delimiter;
};
std::vector<JoinFileRef> join_files(const std::string& pipeline);

// Syntax check only (no schema needed), so a bad spec fails before any input is read.
void check_pipeline_syntax(const std::string& pipeline);

// Human-readable plan for --explain.
std::string explain_plan(const Plan& plan);

}  // namespace warpcsv
