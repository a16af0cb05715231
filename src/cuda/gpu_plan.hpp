// Plain structs shared by the CUDA host glue (cuda_executor.cpp, gpu*.cpp,
// staging.cpp) and the kernels (kernels.cu): the plan as the device reads it,
// the resident group table, one batch of input bytes, and the launchers.
// Kernels stay private.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/agg_words.hpp"
#include "cuda/short_key_state.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/dialect.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/core/program.hpp"
#include "warpcsv/errors.hpp"

// Checks a CUDA runtime call (or the last kernel launch); failures become a
// ResourceError (exit 4) that says what happened on which GPU and what to do,
// with the call and its source line kept as the error's detail.
#define WCSV_CUDA_TRY(call)                                                      \
  do {                                                                           \
    const cudaError_t wcsv_err_ = (call);                                        \
    if (wcsv_err_ != cudaSuccess) ::warpcsv::cuda::throw_gpu_error(wcsv_err_, #call, __FILE__, __LINE__); \
  } while (0)

namespace warpcsv {
namespace cuda {

[[noreturn]] void throw_gpu_error(cudaError_t err, const char* call, const char* file, int line);

// A cudaMalloc that may fail for want of memory: false, with the error
// cleared and *p null, so the caller can take another way.
template <class T>
bool try_device_alloc(T** p, uint64_t bytes) {
  if (cudaMalloc(reinterpret_cast<void**>(p), bytes ? bytes : 1) == cudaSuccess) return true;
  (void)cudaGetLastError();
  *p = nullptr;
  return false;
}

// The same for pinned host memory (cudaMallocHost).
template <class T>
bool try_pinned_alloc(T** p, uint64_t bytes) {
  if (cudaMallocHost(reinterpret_cast<void**>(p), bytes ? bytes : 1) == cudaSuccess) return true;
  (void)cudaGetLastError();
  *p = nullptr;
  return false;
}

// Tuning values, in one place.
constexpr int kMaxSlots = 32;          // input columns a plan may read on the GPU
constexpr int kMaxKeys = 8;            // group keys
constexpr int kMaxAggs = 16;           // aggregates
constexpr int kMaxLists = 4;           // holistic arguments listed per row (one GPU)
constexpr int kMaxWords = 128;         // 64-bit state words per group
constexpr int kMaxColumns = 4096;      // input columns (column -> slot map in shared memory)
constexpr int kSegBytes = 64;          // bytes per thread in the row-boundary scan
constexpr int kScanBlock = 256;        // threads per block of the segment kernels
constexpr int kRowBlock = 512;         // threads per block of the row kernel
constexpr int kRowScratch = 256;       // evaluator scratch per thread (lower/upper)
constexpr int kUnescapeBytes = 512;    // unescaped field bytes per row
constexpr int kJoinKeyScratch = 64;    // evaluator scratch per thread for join keys (lower(name))
// Joins whose tables take more (on every GPU) run on the CPU: the group
// table and the batches need the GPU's memory too.
constexpr uint64_t kMaxGpuLookupBytes = 8ull << 30;
constexpr uint32_t kCacheBytes = 32 * 1024;  // shared-memory group cache per row block, at most
constexpr uint32_t kKeyCacheBytes = 32 * 1024;  // shared-memory cache of short keys per row block, at most
constexpr uint32_t kKeyStateBytes = 32 * 1024;  // the short keys' 32-bit states per row block, at most
constexpr uint64_t kArenaReadPad = 16;  // bytes readable past the key arena's end (word-wise compares)

// Short string keys, up to kKeyWords * 8 bytes, are found by their words:
// in a row block's shared-memory cache, then in the GPU's directory of short
// keys (group_lookup.cuh), an entry of 32 bytes each.
constexpr int kKeyWords = 3;
struct KeyDirEntry {
  unsigned long long w[kKeyWords];  // the key's bytes, zero past its length
  uint32_t len;
  uint32_t group;
};
constexpr uint32_t kKeyDirEntries = 64 * 1024;  // a power of two; 2 MiB a GPU
// Past this many groups most short keys would miss the directory, and a
// miss costs a round trip before the table's probe: the rows skip it.
constexpr uint64_t kKeyDirMaxGroups = kKeyDirEntries / 2;
// A batch's 32-bit states of short keys' groups in the GPU's memory, by group
// (short_key_state.hpp), for the groups below this; the rows of groups past
// it update their words.
constexpr uint32_t kBatchStateGroups = 64 * 1024;
constexpr int kMaxShortStateWords = 2 + 2 * kMaxAggs;  // a row count and a spare, two an aggregate

// Set by kernels when a batch needs the host path: a bad row or value, an
// expression error (reported exactly by the CPU executor), or a GPU limit.
enum GpuFlag : uint32_t {
  kFlagIssue = 1,
  kFlagUnsupported = 2,  // unescaped text or scratch over its cap, internal mismatch
  kFlagCapacity = 4,     // group table or key arena full
  kFlagLongRow = 8,      // a row ran past the batch's tail (a longer tail may do)
};

// The scan plan as the device reads it (programs point into device memory).
struct GpuPlan {
  Dialect dialect;
  int32_t ncols;
  int32_t nslots;
  int32_t nkeys;
  int32_t naggs;
  int32_t nwords;
  int32_t n_null;
  int8_t col_to_slot[kMaxColumns];  // -1: column not read
  ColumnType slot_types[kMaxSlots];
  bool slot_inferred[kMaxSlots];  // type inferred (not --schema): "007" is no number
  bool has_filter;
  ProgramView filter;
  ProgramView keys[kMaxKeys];
  int8_t key_direct[kMaxKeys];
  Type key_types[kMaxKeys];
  GpuAgg aggs[kMaxAggs];
  unsigned long long init_words[kMaxWords];  // a fresh group's state words (agg_init_words)
  const char* null_bytes;          // --null tokens, concatenated
  const uint32_t* null_offsets;    // n_null + 1 offsets
  // Holistic arguments (one GPU, numbers only): each row's non-null values,
  // with its group, go to the table's lists as holistic keys (core/agg.hpp).
  int32_t nlists;
  ProgramView lists[kMaxLists];
  int8_t list_direct[kMaxLists];
  Type list_types[kMaxLists];
  // Lookup joins: tables and key programs in device memory; their slots follow the input's.
  int32_t njoins;
  JoinView joins[kMaxScanJoins];
  // Set when rows of a plain batch may take the short way
  // (short_key_rows.cuh): the plan reads two columns, groups by one, a
  // string, and its aggregates are count, min, max, sum and mean of the
  // other, an int or decimal; no filter, join or list.
  bool short_keys;
  int32_t value_slot;             // the column aggregated
  int32_t short_key_state_words;  // 32-bit words of an entry's state, even (short_key_state.hpp)
  ShortKeyAgg short_aggs[kMaxAggs];
};

// Counters the kernels update; one per GPU.
struct GpuCounters {
  unsigned long long groups;
  unsigned long long arena_used;
  unsigned long long rows;
  unsigned long long plain_rows;  // rows split at their delimiters (split_plain_row), of `rows`
  unsigned int flags;
  unsigned int pad;
  unsigned long long listed[kMaxLists];  // values in each holistic list
};

// The resident group table: open addressing over `slots` (group + 1, 0 empty),
// dense per-group arrays of hash, keys and state words. String keys hold an
// offset into `arena` in StrRef::ptr, so the arena can grow by copying.
struct GpuTable {
  uint32_t* slots;
  uint64_t mask;
  uint64_t* hashes;
  Value* keys;
  unsigned long long* words;
  uint64_t gcap;
  char* arena;
  uint64_t arena_cap;
  GpuCounters* counters;
  // The plan's holistic lists: value i of list l has group list_groups[l][i]
  // and key list_keys[l][i]; list_cap values each.
  uint32_t* list_groups[kMaxLists];
  unsigned long long* list_keys[kMaxLists];
  uint64_t list_cap;
};

// One batch: a contiguous run of input bytes. Its own bytes are [0, row_end):
// rows starting there are processed; bytes [row_end, n) only finish the last
// row. data[-1] is readable (the byte before the batch, or padding).
struct GpuBatch {
  const char* data;
  uint64_t n;
  uint64_t row_end;
  uint8_t start_state;  // known only after earlier batches' vectors are composed
  bool first_is_row;    // byte 0 starts a row
  bool at_eof;          // input ends at data[n]
};

// Segments of `bytes` bytes (the last one may be short).
inline uint64_t segments_of(uint64_t bytes) { return (bytes + kSegBytes - 1) / kSegBytes; }

// Per batch: each 64-byte segment's transition vector and the exclusive scan
// of them; prefix[nseg] is the vector of the batch's own bytes.
struct BatchVectors {
  TransitionVector* tv;      // nseg + 1
  TransitionVector* prefix;  // nseg + 1
  uint32_t* census;  // kCensusWords words
};

// The words of a batch's census.
enum CensusWord : int {
  kCensusOddBytes = 0,  // set when the buffer holds a NUL or a byte >= 0x80
  kCensusNewlines = 1,  // the LF and CR bytes of the batch's own bytes (newline_bits)
  // Set when a row's fields may not be just the runs between delimiters: the
  // buffer holds a quote, escape or comment byte, or its own bytes hold a NUL
  // or bytes that are not UTF-8. Unset, rows take the plain split.
  kCensusNotPlain = 2,
  kCensusWords = 3,
};

// Work arrays of one GPU for the row phase, sized for the largest batch.
struct GpuScratch {
  uint32_t* counts;    // per segment: row starts
  uint32_t* offsets;   // nseg + 1: exclusive prefix of counts
  uint32_t* rows;      // row start positions
  uint32_t* grabbed;   // rows the row kernel's warps have taken so far
  KeyDirEntry* key_dir;  // kKeyDirEntries, filled again before each batch that uses it
  // room for kBatchStateGroups states of the plan's short_key_state_words
  // (at most kMaxShortStateWords), fresh between batches
  // (launch_reset_batch_states, then each batch's fold)
  uint32_t* batch_states;
  void* cub_temp;
  size_t cub_bytes;
  uint64_t seg_cap;    // segments + 1 the arrays hold
  uint64_t row_cap;    // own bytes of a batch
};

// What the launches are sized by on one GPU, read from its properties: grids
// cover its SMs, and the row blocks' group cache fits the shared memory that
// the blocks resident on an SM share.
struct GpuShape {
  int sms = 1;                       // streaming multiprocessors
  int row_blocks_per_sm = 1;         // row kernel blocks launched per SM
  uint32_t cache_bytes = kCacheBytes;  // shared-memory group cache per row block
  uint32_t key_cache_bytes = 0;        // shared-memory cache of short keys per row block
  uint32_t key_state_bytes = 0;        // and the short keys' states
};
GpuShape gpu_shape(int device);

// Blocks of `block` threads for a grid-stride loop over `items`: enough to
// cover them, at most 16 a streaming multiprocessor.
inline unsigned grid_for(uint64_t items, int block, int sms) {
  const uint64_t want = (items + block - 1) / block;
  const uint64_t cap = static_cast<uint64_t>(sms) * 16;
  return static_cast<unsigned>(want < 1 ? 1 : (want < cap ? want : cap));
}

// Whether this binary's kernels load on `device` (false: it holds no code the
// GPU runs, cudaErrorNoKernelImageForDevice). Creates the device's context.
bool kernels_load_on(int device);

// Bytes of CUB temporary storage the scans need for `nseg` segments.
size_t scan_temp_bytes(uint64_t nseg);

// Phase 1 of a batch, on `stream`: the segment vectors and their scan (the
// batch's start state is not needed). `plan` is device memory, `host_plan`
// its host copy.
void launch_batch_vector(const GpuBatch& b, const GpuPlan* plan, const GpuPlan& host_plan, const BatchVectors& v,
                         GpuScratch& s,
                         const GpuShape& shape, cudaStream_t stream);

// Phase 2, once b.start_state and b.first_is_row are known: row starts, then
// parse, filter and aggregate every row into the table. `groups_known`: the
// table's groups as far as the host knows; with few, the rows may look their
// short keys up in s.key_dir, and row blocks keep their short keys' states.
void launch_batch_rows(const GpuBatch& b, const GpuPlan* plan, const GpuPlan& host_plan,
                       const BatchVectors& v, const GpuTable& t, GpuScratch& s, const GpuShape& shape,
                       uint64_t groups_known, cudaStream_t stream);

// Sets every group's batch state (GpuScratch::batch_states) to the plan's
// fresh state, for a plan of short keys; before its first batch.
void launch_reset_batch_states(const GpuPlan* plan, const GpuPlan& host_plan, GpuScratch& s, const GpuShape& shape,
                               cudaStream_t stream);

// Sets words [from, to) groups of state to the plan's initial values.
void launch_init_words(const GpuTable& t, const GpuPlan* plan, int nwords, uint64_t from,
                       uint64_t to, const GpuShape& shape, cudaStream_t stream);

// Merges groups [0, count) of `src` (arrays in this GPU's memory; string keys
// as offsets into src.arena) into t. Sets kFlagCapacity when t is too small.
void launch_merge_table(const GpuTable& t, const GpuPlan* plan, const GpuTable& src, uint64_t count,
                        const GpuShape& shape, cudaStream_t stream);

// Re-inserts groups [0, count) into a cleared slot array (after growth).
void launch_rehash(const GpuTable& t, uint64_t count, const GpuShape& shape, cudaStream_t stream);

// A holistic list to sort: n (group, key) pairs in groups[0] and keys[0],
// room for as many in groups[1] and keys[1].
struct ListSort {
  uint32_t* groups[2];
  unsigned long long* keys[2];
  uint64_t n;
  int group_bits;  // groups are below 2^group_bits
};
// Bytes of CUB temporary storage launch_sort_list needs.
size_t list_sort_temp_bytes(const ListSort& l);
// Sorts the pairs by group, then key (a radix sort by key, then a stable one
// by group); returns where the sorted groups and keys are (either buffer).
void launch_sort_list(const ListSort& l, void* temp, size_t temp_bytes, uint32_t** groups,
                      unsigned long long** keys, cudaStream_t stream);

}  // namespace cuda
}  // namespace warpcsv
