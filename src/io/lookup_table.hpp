// Lookup joins' files: read whole before the scan, typed, and indexed by
// their keys (core/lookup.hpp probes the index on the CPU and the GPU).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpcsv/core/lookup.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

// A lookup file's header and fields as text; types inferred from every value.
struct LookupFile {
  std::string path;
  std::vector<OutputColumn> schema;
  std::string text;                    // the fields' bytes, unescaped
  std::vector<uint64_t> field_begin;   // per row and column: offset into text
  std::vector<uint32_t> field_len;
  std::vector<uint64_t> line;          // per row: its line in the file
  size_t rows() const { return schema.empty() ? 0 : field_len.size() / schema.size(); }
};

// Reads the file of a join stage with the input's dialect (`delimiter` in
// place of its delimiter when not 0); its first line names the columns.
// `max_bytes`: the most a lookup may take in memory (a ResourceError past it).
LookupFile read_lookup_file(const std::string& path, char delimiter, const DialectOptions& opts,
                            uint64_t max_bytes);

// The typed rows and key index of one join (JoinSpec: which columns are keys,
// compared as which types, and which columns the joined rows take).
class LookupTable {
 public:
  LookupTable(const LookupFile& file, const JoinSpec& spec, const std::vector<std::string>& null_tokens);
  LookupTable(LookupTable&&) = default;
  const LookupView& view() const { return view_; }
  uint32_t rows() const { return rows_; }
  // The bytes the strings of the cells point into (the file's text).
  const std::string& strings() const { return *strings_; }
  const std::vector<Value>& cells() const { return cells_; }
  const std::vector<uint64_t>& hashes() const { return hashes_; }
  const std::vector<uint32_t>& next() const { return next_; }
  const std::vector<uint32_t>& buckets() const { return buckets_; }
  // The type of each of a row's cells (view().width of them).
  const std::vector<Type>& cell_types() const { return cell_types_; }

 private:
  const std::string* strings_;
  uint32_t rows_ = 0;
  std::vector<Value> cells_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> next_, buckets_;
  std::vector<Type> cell_types_;
  LookupView view_{};
};

// Every join's file read and indexed, in Plan::joins order.
struct LookupTables {
  std::vector<LookupFile> files;
  std::vector<LookupTable> tables;
};

}  // namespace warpcsv
