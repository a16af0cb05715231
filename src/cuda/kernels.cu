// Kernels of the CUDA executor and their launchers.
//
// Per batch: (1) every thread computes the transition vector of a 64-byte
// segment (all start states at once); (2) a CUB scan composes them; its last
// element, the batch's own vector, goes to the host, which composes batches
// in file order and so learns each batch's true start state (ParPaRaw, VLDB
// 2020, with the host as the top level of the scan); (3) each thread walks
// its segment again from its state and counts row starts, (4) a CUB sum gives
// offsets, (5) a third walk writes the row starts (a segment without quote,
// escape or comment bytes takes bit masks instead of walks: plain_segment.hpp);
// (6) one thread per row runs the shared core (parse_row, field_to_value,
// eval_program) and aggregates into the resident table with integer atomics,
// through per-block shared-memory caches of short keys and of hot groups
// (group_lookup.cuh), or takes the short way of a plan of short keys
// (short_key_rows.cuh).
#include <cub/device/device_scan.cuh>

#include "cuda/agg_words.hpp"
#include "cuda/gpu_plan.hpp"
#include "cuda/group_lookup.cuh"
#include "cuda/plain_segment.hpp"
#include "cuda/row_split.cuh"
#include "cuda/short_key_rows.cuh"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/core/hash.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/core/utf8.hpp"
#include "warpcsv/core/wide.hpp"

namespace warpcsv {
namespace cuda {

namespace {

constexpr uint32_t kRowsPerGrab = 32 * 8;  // rows a warp of the row kernel takes at a time
static_assert(kSegBytes == kPlainSegmentBytes, "a plain segment is one segment of the scan");

struct TvCompose {
  __device__ __forceinline__ TransitionVector operator()(TransitionVector a, TransitionVector b) const {
    return tv_compose(a, b);
  }
};

// The dialect's class and next-state tables in shared memory.
struct SharedMachine {
  uint8_t cls[256];
  uint8_t next[kNumStates * kNumClasses];
};

__device__ __forceinline__ void load_machine(SharedMachine& m, const Dialect* d) {
  for (int i = threadIdx.x; i < 256; i += blockDim.x) m.cls[i] = d->char_class[i];
  for (int i = threadIdx.x; i < kNumStates * kNumClasses; i += blockDim.x)
    m.next[i] = d->next[i / kNumClasses][i % kNumClasses];
  __syncthreads();
}

// Calls fn(index, byte) for the bytes of segment `seg`, loading 16 bytes at a
// time (the buffer is padded, so whole-segment loads stay in bounds).
template <class Fn>
__device__ __forceinline__ void for_segment_bytes(const char* data, uint64_t n, uint64_t seg,
                                                  Fn&& fn) {
  const uint64_t base = seg * kSegBytes;
  const uint4* p = reinterpret_cast<const uint4*>(data + base);
  const uint64_t len = n - base < kSegBytes ? n - base : kSegBytes;
#pragma unroll
  for (int q = 0; q < kSegBytes / 16; ++q) {
    const uint4 v = p[q];
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const uint32_t i = q * 16 + k;
      if (i < len) fn(base + i, static_cast<uint8_t>(w[k / 4] >> (8 * (k % 4))));
    }
  }
}

// tv[nseg] gets the identity, so an exclusive scan over nseg + 1 elements
// leaves the whole batch's vector in its last element. Only the dialect's
// `States` first states are walked (a delimiter of one byte reaches 7 of 10).
template <int Block, int States>
__global__ __launch_bounds__(Block) void k_segment_tv(const char* data, uint64_t n, uint64_t nseg,
                                                      const Dialect* d, TransitionVector* tv) {
  __shared__ SharedMachine m;
  load_machine(m, d);
  if (blockIdx.x == 0 && threadIdx.x == 0) tv[nseg] = tv_identity();
  const NonPlainBytes special(*d);
  for (uint64_t seg = blockIdx.x * static_cast<uint64_t>(Block) + threadIdx.x; seg < nseg;
       seg += static_cast<uint64_t>(gridDim.x) * Block) {
    uint8_t st[States];
    PlainSegment plain;
    if (States == kOneByteDelimiterStates && plain_segment(data, n, seg, special, plain)) {
      const uint8_t k = m.cls[plain.last];
#pragma unroll
      for (int s = 0; s < States; ++s)
        st[s] = plain_segment_end(plain, static_cast<uint8_t>(s), k,
                                  [&](uint8_t from, uint8_t cls) { return m.next[from * kNumClasses + cls]; });
    } else {
#pragma unroll
      for (int s = 0; s < States; ++s) st[s] = static_cast<uint8_t>(s);
      for_segment_bytes(data, n, seg, [&](uint64_t, uint8_t c) {
        const uint8_t k = m.cls[c];
#pragma unroll
        for (int s = 0; s < States; ++s) st[s] = m.next[st[s] * kNumClasses + k];
      });
    }
    TransitionVector v = tv_identity();
#pragma unroll
    for (int s = 0; s < States; ++s) v = tv_set(v, static_cast<uint8_t>(s), st[s]);
    tv[seg] = v;
  }
}

// Sets census[kCensusOddBytes] when bytes [0, n) hold a NUL or a byte >=
// 0x80: only then do the rows need the exact UTF-8 check (most files are
// ASCII), and census[kCensusNotPlain] when they hold a quote, escape or
// comment byte. Adds the LF and CR bytes of [0, own) to census[kCensusNewlines]:
// the host bounds the batch's new groups by them.
__global__ void k_byte_census(const char* data, uint64_t n, uint64_t own, const Dialect* dialect, uint32_t* census) {
  const int quote = dialect->quote, escape = dialect->escape, comment = dialect->comment;
  bool odd = false, special = false;
  uint32_t newlines = 0;
  const uint64_t words = n / 8;
  const unsigned long long* w = reinterpret_cast<const unsigned long long*>(data);  // 16-byte aligned
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const u64 v = w[i];
    odd |= nul_or_high_bits(v) != 0;
    special |= word_has_byte(v, quote) || word_has_byte(v, escape) || word_has_byte(v, comment);
    if (i * 8 < own) {
      u64 nl = newline_bits(v);
      if (own - i * 8 < 8) nl &= (1ull << (8 * (own - i * 8))) - 1;  // own bytes only
      newlines += __popcll(nl);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (uint64_t i = words * 8; i < n; ++i) {
      const uint8_t c = static_cast<uint8_t>(data[i]);
      odd |= c == 0 || (c & 0x80);
      special |= c == quote || c == escape || c == comment;
      newlines += i < own && (c == '\n' || c == '\r');
    }
  // Each word written once per block: threads that all write the same word
  // wait on each other.
  __shared__ unsigned int block_newlines;
  if (threadIdx.x == 0) block_newlines = 0;
  const bool block_odd = __syncthreads_or(odd), block_special = __syncthreads_or(special);  // whole blocks get here
  for (int d = 16; d > 0; d /= 2) newlines += __shfl_down_sync(0xffffffffu, newlines, d);
  if ((threadIdx.x & 31) == 0 && newlines) atomicAdd(&block_newlines, newlines);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (block_odd) census[kCensusOddBytes] = 1;
    if (block_special) census[kCensusNotPlain] = 1;
    if (block_newlines) atomicAdd(census + kCensusNewlines, block_newlines);
  }
}

// Sets census[kCensusNotPlain] when the bytes of the rows a batch may split
// plainly, [rows[0], rows[total - 1]) (all but its last row), hold a NUL or
// bytes that are not UTF-8; checked only when the census found a NUL or a
// byte >= 0x80. The range is whole rows, and a byte below 0x80 is never
// inside a multibyte sequence, so the text is cut there: each thread checks
// from the first such byte at or after its segment's start to the first at
// or after the next segment's.
__global__ void k_utf8_census(const char* data, const uint32_t* rows, const uint32_t* total_rows, uint64_t nseg,
                              uint32_t* census) {
  const uint32_t total = *total_rows;
  if (census[kCensusOddBytes] == 0 || total < 2) return;
  const uint64_t lo = rows[0], hi = rows[total - 1];
  const unsigned char* u = reinterpret_cast<const unsigned char*>(data);
  bool bad = false;
  for (uint64_t seg = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; seg < nseg;
       seg += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t next_seg = (seg + 1) * kSegBytes;
    if (next_seg <= lo) continue;
    uint64_t begin = seg * kSegBytes;
    if (begin <= lo) {
      begin = lo;
    } else {
      while (begin < hi && begin < next_seg && u[begin] >= 0x80) ++begin;
    }
    if (begin >= hi || begin >= next_seg) continue;
    uint64_t end = next_seg;
    while (end < hi && u[end] >= 0x80) ++end;
    if (end > hi) end = hi;
    uint64_t at;
    bad |= find_byte_issue(data + begin, end - begin, &at) != ByteIssue::None;
  }
  if (bad) census[kCensusNotPlain] = 1;
}

// Walks each segment from its true start state; counts (Write = false) or
// writes (Write = true) the row starts in [0, row_end). A position after a
// terminator starts a row, except the LF of a CRLF (one terminator).
template <int Block, bool Write>
__global__ __launch_bounds__(Block) void k_segment_rows(GpuBatch b, uint64_t nseg, const Dialect* d,
                                                        const TransitionVector* prefix, uint32_t* counts,
                                                        const uint32_t* offsets, uint32_t* rows) {
  __shared__ SharedMachine m;
  load_machine(m, d);
  const NonPlainBytes special(*d);
  for (uint64_t seg = blockIdx.x * static_cast<uint64_t>(Block) + threadIdx.x; seg < nseg;
       seg += static_cast<uint64_t>(gridDim.x) * Block) {
    uint8_t s = tv_get(prefix[seg], b.start_state);
    uint32_t count = 0;
    uint32_t* out = Write ? rows + offsets[seg] : nullptr;
    if (seg == 0 && b.first_is_row && b.row_end > 0) {
      if (Write) out[count] = 0;
      ++count;
    }
    PlainSegment plain;
    if (plain_segment(b.data, b.row_end, seg, special, plain)) {
      const uint64_t base = seg * kSegBytes;
      const u64 starts = plain_segment_row_starts(plain, s, base, b.row_end);
      if (Write)
        for (u64 left = starts; left; left &= left - 1)
          out[count++] = static_cast<uint32_t>(base + __ffsll(static_cast<long long>(left)));
      else
        count += __popcll(starts);
    } else {
      for_segment_bytes(b.data, b.row_end, seg, [&](uint64_t i, uint8_t c) {
        s = m.next[s * kNumClasses + m.cls[c]];
        const uint64_t at = i + 1;
        if (s == kRowStart && at < b.row_end && !(c == '\r' && b.data[at] == '\n')) {
          if (Write) out[count] = static_cast<uint32_t>(at);
          ++count;
        }
      });
    }
    if (!Write) counts[seg] = count;
  }
}

// The next index of a counter that many threads take from: the threads of a
// warp that get here together with the same counter add their count once.
// (Threads at different iterations of a loop can run this together: grouping
// them by the counter's address keeps each group on one counter.)
__device__ __forceinline__ u64 claim_index(u64* counter) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, reinterpret_cast<u64>(counter));
  const unsigned lane = threadIdx.x & 31u;
  const int leader = __ffs(static_cast<int>(peers)) - 1;
  u64 first = 0;
  if (static_cast<int>(lane) == leader) first = atomicAdd(counter, static_cast<u64>(__popc(peers)));
  first = __shfl_sync(peers, first, leader);
  return first + static_cast<u64>(__popc(peers & ((1u << lane) - 1u)));
}

__device__ __forceinline__ bool is_null_token(const GpuPlan& p, const char* q, uint32_t n) {
  for (int t = 0; t < p.n_null; ++t) {
    const uint32_t b = p.null_offsets[t], e = p.null_offsets[t + 1];
    if (e - b != n) continue;
    bool eq = true;
    for (uint32_t i = 0; i < n && eq; ++i) eq = p.null_bytes[b + i] == q[i];
    if (eq) return true;
  }
  return false;
}

struct Span {
  uint32_t b, e;
  uint8_t flags;
};

// Splits a row of a plain batch (kCensusNotPlain unset, a one-byte delimiter)
// at its delimiters into spans by slot. Returns false for a row that
// parse_row must see: an empty line, or not ncols fields.
__device__ __forceinline__ bool split_plain_row(const char* data, uint32_t pos, uint32_t next, uint8_t delimiter,
                                                int ncols, const int8_t* col_to_slot, Span* spans) {
  const uint32_t fields = split_plain_fields(data, pos, next, delimiter, [&](uint32_t field, uint32_t b, uint32_t e) {
    if (field < static_cast<uint32_t>(ncols)) {
      const int s = col_to_slot[field];
      if (s >= 0) spans[s] = Span{b, e, 0};
    }
  });
  return fields == static_cast<uint32_t>(ncols);
}

// hash_bytes (core/hash.hpp) of bytes in a batch buffer, read a word at a time.
__device__ __forceinline__ u64 hash_batch_bytes(const char* p, uint32_t n) {
  u64 h = kHashBytesSeed ^ (static_cast<u64>(n) * kHashBytesLength);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) h = hash_mix(h ^ batch_word(p + i));
  const u64 tail = i < n ? batch_word(p + i) & low_bytes_mask(n - i) : 0;
  return hash_mix(h ^ tail ^ kHashBytesTail);
}

__device__ uint32_t aggregate_row(const GpuPlan& p, const GpuTable& t, const Value* slots, uint32_t batch_slots,
                                  const BlockCaches& caches);

// Parses, joins, filters and aggregates the row starting at `pos`; `next` is
// the next row's start, or 0 where unknown. Returns the flags it raised;
// counts the row in `rows` as the CPU executor does. A row of a plain batch
// is split at its delimiters; any other, by parse_row.
__device__ uint32_t process_row(const GpuBatch& b, const GpuPlan& p, const Dialect& d,
                                const int8_t* col_to_slot, const GpuTable& t, uint32_t pos, uint32_t next,
                                bool plain, bool odd_bytes, const BlockCaches& caches, uint32_t& rows,
                                uint32_t& plain_rows) {
  Span spans[kMaxSlots];
  const int ncols = p.ncols;
  const bool split = plain && next > pos && split_plain_row(b.data, pos, next, d.delimiter, ncols, col_to_slot, spans);
  bool empty = false;
  if (!split) {
    uint32_t nfields = 0;
    const RowResult r = parse_row(d, b.data, pos, b.n, b.at_eof,
                                  [&](uint32_t i, uint64_t fb, uint64_t fe, uint8_t f) {
                                    if (i < static_cast<uint32_t>(ncols)) {
                                      const int s = col_to_slot[i];
                                      if (s >= 0)
                                        spans[s] = Span{static_cast<uint32_t>(fb),
                                                        static_cast<uint32_t>(fe), f};
                                    }
                                    nfields = i + 1;
                                  });
    if (r.incomplete) return kFlagLongRow;
    const bool multi_column = ncols > 1;
    if (r.comment || (r.empty && multi_column)) return 0;
    ++rows;
    uint64_t odd_at;
    if (odd_bytes && find_byte_issue(b.data + pos, r.next - pos, &odd_at) != ByteIssue::None) return kFlagIssue;
    if (r.error != RowError::None || (nfields != static_cast<uint32_t>(ncols) && !(r.empty && !multi_column)))
      return kFlagIssue;
    empty = r.empty;
  } else {
    ++rows;
    ++plain_rows;
  }

  Value slots[kMaxSlots];
  char unescaped[kUnescapeBytes];
  uint32_t used = 0;
  uint32_t batch_slots = 0;  // bit k: slot k's text lies in the batch buffer
  for (int k = 0; k < p.nslots; ++k) {
    const Span sp = empty ? Span{pos, pos, 0} : spans[k];
    const char* q = b.data + sp.b;
    uint32_t n = sp.e - sp.b;
    if (sp.flags & kFieldEscaped) {
      if (used + n > static_cast<uint32_t>(kUnescapeBytes)) return kFlagUnsupported;
      n = unescape_field(d, q, n, unescaped + used);
      q = unescaped + used;
      used += n;
    } else {
      batch_slots |= 1u << k;
    }
    if (n == 0 || is_null_token(p, q, n)) {
      slots[k] = Value::make_null();
      continue;
    }
    if (!field_to_value(p.slot_types[k], q, n, &slots[k], p.slot_inferred[k])) return kFlagIssue;
  }
  if (p.njoins == 0) return aggregate_row(p, t, slots, batch_slots, caches);
  // Each joined copy of the row; the first that needs the host stops the row.
  char key_scratch[kJoinKeyScratch];
  EvalContext kctx = make_eval_context(key_scratch, kJoinKeyScratch);
  uint32_t flags = 0;
  for_each_joined_row(p.joins, p.njoins, slots, kctx, [&]() {
    flags = aggregate_row(p, t, slots, 0, caches);
    return flags == 0;
  });
  return kctx.status != EvalStatus::Ok ? kFlagIssue : flags;
}

// Filters one row (or joined copy) and aggregates it into the table; returns
// the flags it raised. Bit k of `batch_slots`: slot k's string lies in the
// batch buffer, which can be read a word at a time.
__device__ uint32_t aggregate_row(const GpuPlan& p, const GpuTable& t, const Value* slots, uint32_t batch_slots,
                                  const BlockCaches& caches) {
  char scratch[kRowScratch];
  EvalContext ctx = make_eval_context(scratch, kRowScratch);
  if (p.has_filter) {
    const Value keep = eval_program(p.filter, slots, ctx);
    if (ctx.status != EvalStatus::Ok) return kFlagIssue;
    if (keep.null || keep.i == 0) return 0;
  }
  uint32_t flags = 0;
  // A short key in the batch buffer is looked up by its words (the block's
  // key cache is there when the plan groups by one string column).
  const bool in_batch = caches.key_cap && ((batch_slots >> p.key_direct[0]) & 1u);
  const Value* key = in_batch ? slots + p.key_direct[0] : nullptr;
  int64_t g;
  if (key && !key->null && key->s.len <= kShortKeyBytes) {
    int32_t entry;
    g = short_key_lookup(p, t, caches, batch_key_words(key->s.ptr, key->s.len), *key, entry, flags);
  } else {
    Value keys[kMaxKeys];
    uint64_t h = kGroupKeysSeed;
    uint32_t batch_keys = 0;
    for (int k = 0; k < p.nkeys; ++k) {
      const bool direct = p.key_direct[k] >= 0;
      keys[k] = direct ? slots[p.key_direct[k]] : eval_program(p.keys[k], slots, ctx);
      const bool batch_bytes =
          direct && ((batch_slots >> p.key_direct[k]) & 1u) && p.key_types[k] == Type::String && !keys[k].null;
      batch_keys |= static_cast<uint32_t>(batch_bytes) << k;
      h = hash_combine(h, batch_bytes ? hash_batch_bytes(keys[k].s.ptr, keys[k].s.len)
                                      : hash_value(keys[k], p.key_types[k]));
    }
    if (ctx.status != EvalStatus::Ok) return kFlagIssue;
    g = find_or_insert(t, p, keys, h, batch_keys, flags);
  }
  if (g < 0 || flags) return flags;  // also a group whose key did not fit the arena: the CPU reruns

  u64* words = group_words(caches, t, p.nwords, static_cast<uint64_t>(g));
  const Value none = Value::make_null();
  for (int a = 0; a < p.naggs; ++a) {
    const GpuAgg& ag = p.aggs[a];
    const Value x = ag.arg0_direct >= 0 ? slots[ag.arg0_direct]
                    : ag.arg0_direct == -2 ? none
                                           : eval_program(ag.arg0, slots, ctx);
    const Value y = ag.arg1_direct >= 0 ? slots[ag.arg1_direct]
                    : ag.arg1_direct == -2 ? none
                                           : eval_program(ag.arg1, slots, ctx);
    if (ctx.status != EvalStatus::Ok) return kFlagIssue;
    if (!agg_update_words(ag, words + ag.word, x, y)) return kFlagUnsupported;
  }
  // Holistic arguments: the value and its group go to the argument's list.
  for (int l = 0; l < p.nlists; ++l) {
    const Value v = p.list_direct[l] >= 0 ? slots[p.list_direct[l]] : eval_program(p.lists[l], slots, ctx);
    if (ctx.status != EvalStatus::Ok) return kFlagIssue;
    if (v.null) continue;
    if (!holistic_key_fits(v, p.list_types[l])) return kFlagUnsupported;  // past 64 bits: the CPU's lists hold it
    const u64 at = claim_index(&t.counters->listed[l]);
    if (at >= t.list_cap) return kFlagCapacity;
    t.list_groups[l][at] = static_cast<uint32_t>(g);
    t.list_keys[l][at] = holistic_key(v, p.list_types[l]);
  }
  return 0;
}

// process_row as a call of its own: the short-key rows' loop keeps its
// registers for itself, and only the rows that go the general way pay for it.
__device__ __noinline__ uint32_t process_row_apart(const GpuBatch& b, const GpuPlan& p, const Dialect& d,
                                                   const int8_t* col_to_slot, const GpuTable& t, uint32_t pos,
                                                   uint32_t next, bool plain, bool odd_bytes,
                                                   const BlockCaches& caches, uint32_t& rows, uint32_t& plain_rows) {
  return process_row(b, p, d, col_to_slot, t, pos, next, plain, odd_bytes, caches, rows, plain_rows);
}

// ShortKeys: the plan's rows of plain batches take the short way
// (GpuPlan::short_keys); with `key_states`, the block keeps its short keys'
// states, else those rows update their groups' words.
template <int Block, bool ShortKeys>
__global__ __launch_bounds__(Block) void k_rows(GpuBatch b, const GpuPlan* __restrict__ plan,
                                                GpuTable t, const uint32_t* __restrict__ rows,
                                                const uint32_t* total_rows, const uint32_t* census,
                                                uint32_t* grabbed, uint32_t cache_cap, uint32_t key_cap,
                                                bool key_states, KeyDirEntry* key_dir, uint32_t key_dir_cap,
                                                uint32_t* batch_states) {
  __shared__ Dialect d;
  __shared__ int8_t col_to_slot[kMaxColumns];
  __shared__ ShortKeyAgg short_aggs[kMaxAggs];
  __shared__ unsigned int block_rows, block_plain_rows, block_flags;
  // key_cap key entries, their states when ShortKeys, then cache_cap *
  // nwords state words and cache_cap groups
  extern __shared__ u64 block_cache[];
  const GpuPlan& p = *plan;
  {
    const char* src = reinterpret_cast<const char*>(&p.dialect);
    char* dst = reinterpret_cast<char*>(&d);
    for (int i = threadIdx.x; i < static_cast<int>(sizeof(Dialect)); i += Block) dst[i] = src[i];
    for (int i = threadIdx.x; i < p.ncols; i += Block) col_to_slot[i] = p.col_to_slot[i];
    if (ShortKeys)
      for (int i = threadIdx.x; i < p.naggs; i += Block) short_aggs[i] = p.short_aggs[i];
  }
  const int nwords = p.nwords;
  const int state_words = ShortKeys && key_states ? p.short_key_state_words : 0;
  BlockCaches caches;
  caches.key_cap = key_cap;
  caches.keys = reinterpret_cast<KeyCacheEntry*>(block_cache);
  caches.key_states = state_words ? reinterpret_cast<uint32_t*>(caches.keys + key_cap) : nullptr;
  caches.cap = cache_cap;
  caches.words = block_cache + static_cast<uint64_t>(key_cap) * (sizeof(KeyCacheEntry) / 8) +
                 static_cast<uint64_t>(key_cap) * state_words / 2;
  caches.groups = reinterpret_cast<uint32_t*>(caches.words + static_cast<uint64_t>(cache_cap) * nwords);
  caches.dir_cap = key_dir_cap;
  caches.dir = key_dir;
  caches.batch_states = batch_states;
  for (uint32_t i = threadIdx.x; i < key_cap; i += Block) {
    caches.keys[i].group = 0;
    caches.keys[i].len = kNoEntry;  // a half-written entry never matches
    for (int w = 0; w < kKeyWords; ++w) caches.keys[i].w[w] = 0;
  }
  for (uint32_t i = threadIdx.x; i < cache_cap; i += Block) caches.groups[i] = 0;
  for (uint32_t i = threadIdx.x; i < cache_cap * nwords; i += Block) caches.words[i] = p.init_words[i % nwords];
  if (threadIdx.x == 0) {
    block_rows = 0;
    block_plain_rows = 0;
    block_flags = 0;
  }
  __syncthreads();
  if (ShortKeys && state_words) {  // the states start from short_aggs, which the barrier above published
    for (uint32_t i = threadIdx.x; i < key_cap; i += Block) {
      uint32_t* st = caches.key_states + i * state_words;
      st[kShortKeyRowsWord] = 0;
      for (int a = 0; a < p.naggs; ++a) short_key_init(short_aggs[a], st);
    }
    __syncthreads();
  }

  const uint32_t total = *total_rows;
  const bool odd_bytes = census[kCensusOddBytes] != 0;
  const bool plain = census[kCensusNotPlain] == 0 && d.delimiter_len == 1;
  const bool short_rows = ShortKeys && plain;
  uint32_t flags = 0, nrows = 0, nplain = 0;
  // Each warp takes kRowsPerGrab rows at a time, so the warps with the
  // costlier rows do not hold the others' blocks up at the end.
  const uint32_t lane = threadIdx.x & 31u;
  for (;;) {
    uint32_t first = 0;
    if (lane == 0) first = atomicAdd(grabbed, kRowsPerGrab);
    first = __shfl_sync(0xffffffffu, first, 0);
    if (first >= total) break;
    for (uint32_t r = first + lane; r < first + kRowsPerGrab && r < total; r += 32) {
      const uint32_t next = r + 1 < total ? rows[r + 1] : 0;
      if (short_rows && short_key_row(b, p, short_aggs, d.delimiter, col_to_slot, t, rows[r], next, caches, flags)) {
        ++nrows;
        ++nplain;
        continue;
      }
      flags |= ShortKeys ? process_row_apart(b, p, d, col_to_slot, t, rows[r], next, plain, odd_bytes, caches, nrows,
                                             nplain)
                         : process_row(b, p, d, col_to_slot, t, rows[r], next, plain, odd_bytes, caches, nrows, nplain);
    }
  }
  // One shared-memory add per warp (whole warps get here).
  for (int w = 16; w > 0; w /= 2) {
    nrows += __shfl_down_sync(0xffffffffu, nrows, w);
    nplain += __shfl_down_sync(0xffffffffu, nplain, w);
    flags |= __shfl_down_sync(0xffffffffu, flags, w);
  }
  if (lane == 0) {
    if (nrows) atomicAdd(&block_rows, nrows);
    if (nplain) atomicAdd(&block_plain_rows, nplain);
    if (flags) atomicOr(&block_flags, flags);
  }
  __syncthreads();

  if (ShortKeys && state_words) fold_short_keys(p, short_aggs, t, caches);
  for (uint32_t c = threadIdx.x; c < cache_cap; c += Block) {
    const uint32_t k = caches.groups[c];
    if (k == 0) continue;
    const u64* src = caches.words + static_cast<uint64_t>(c) * nwords;
    u64* dst = t.words + static_cast<uint64_t>(k - 1) * nwords;
    for (int a = 0; a < p.naggs; ++a) agg_merge_words(p.aggs[a], dst + p.aggs[a].word, src + p.aggs[a].word);
  }
  if (threadIdx.x == 0) {
    if (block_rows) atomicAdd(&t.counters->rows, static_cast<u64>(block_rows));
    if (block_plain_rows) atomicAdd(&t.counters->plain_rows, static_cast<u64>(block_plain_rows));
    if (block_flags) atomicOr(&t.counters->flags, block_flags);
  }
}

// After a batch's rows: its states of groups folded into their words, and
// fresh again (or, with `fold` false, every state made fresh).
__global__ void k_fold_batch_states(const GpuPlan* __restrict__ plan, GpuTable t, uint32_t* states, bool fold) {
  fold_batch_states(*plan, t, states, fold);
}

// Merges another GPU's table (its arrays copied here) into t: each source
// group is found or inserted by its keys, then its words are folded in with
// the same merge the block caches use.
__global__ void k_merge_table(GpuTable t, const GpuPlan* __restrict__ plan, GpuTable src, uint64_t count) {
  const GpuPlan& p = *plan;
  uint32_t flags = 0;
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < count;
       j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    Value keys[kMaxKeys];
    for (int k = 0; k < p.nkeys; ++k) {
      keys[k] = src.keys[j * p.nkeys + k];
      if (!keys[k].null && p.key_types[k] == Type::String)
        keys[k].s.ptr = src.arena + reinterpret_cast<uintptr_t>(keys[k].s.ptr);
    }
    const int64_t g = find_or_insert(t, p, keys, src.hashes[j], 0, flags);
    if (g < 0) continue;
    u64* dst = t.words + static_cast<uint64_t>(g) * p.nwords;
    const u64* from = src.words + j * p.nwords;
    for (int a = 0; a < p.naggs; ++a) agg_merge_words(p.aggs[a], dst + p.aggs[a].word, from + p.aggs[a].word);
  }
  if (flags) atomicOr(&t.counters->flags, flags);
}

__global__ void k_init_words(u64* words, const GpuPlan* plan, int nwords, uint64_t from, uint64_t to) {
  const uint64_t n = (to - from) * nwords;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    words[from * nwords + i] = plan->init_words[i % nwords];
}

__global__ void k_rehash(GpuTable t, uint64_t count) {
  for (uint64_t g = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; g < count;
       g += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t slot = t.hashes[g] & t.mask;
    while (atomicCAS(t.slots + slot, 0u, static_cast<uint32_t>(g + 1)) != 0) slot = (slot + 1) & t.mask;
  }
}

}  // namespace

size_t scan_temp_bytes(uint64_t nseg) {
  size_t a = 0, b = 0;
  const int n = static_cast<int>(nseg);
  WCSV_CUDA_TRY(cub::DeviceScan::ExclusiveScan(nullptr, a, static_cast<const TransitionVector*>(nullptr),
                                               static_cast<TransitionVector*>(nullptr), TvCompose(),
                                               tv_identity(), n + 1));
  WCSV_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, b, static_cast<const uint32_t*>(nullptr),
                                              static_cast<uint32_t*>(nullptr), n));
  return a > b ? a : b;
}

GpuShape gpu_shape(int device) {
  GpuShape g;
  cudaDeviceProp p;
  WCSV_CUDA_TRY(cudaGetDeviceProperties(&p, device));
  g.sms = p.multiProcessorCount;
  // Row blocks are launched two per SM (every GPU since Turing holds two of
  // 512 threads), and their group caches share the SM's shared memory.
  g.row_blocks_per_sm = p.maxThreadsPerMultiProcessor >= 2 * kRowBlock ? 2 : 1;
  // The caches share what the SM's shared memory leaves each block past its
  // static part, a third each at most: short keys (up to kKeyCacheBytes),
  // their states (up to kKeyStateBytes), then hot groups (up to
  // kCacheBytes). Past the 48 KiB a launch gets without asking, the kernel
  // must opt in; where it cannot, the group cache keeps to that.
  cudaFuncAttributes a, a_short;
  WCSV_CUDA_TRY(cudaFuncGetAttributes(&a, k_rows<kRowBlock, false>));
  WCSV_CUDA_TRY(cudaFuncGetAttributes(&a_short, k_rows<kRowBlock, true>));
  if (a_short.sharedSizeBytes > a.sharedSizeBytes) a.sharedSizeBytes = a_short.sharedSizeBytes;
  const size_t per_block = p.sharedMemPerMultiprocessor / g.row_blocks_per_sm - p.reservedSharedMemPerBlock;
  const size_t optin = per_block < p.sharedMemPerBlockOptin ? per_block : p.sharedMemPerBlockOptin;
  const size_t room = optin > a.sharedSizeBytes ? optin - a.sharedSizeBytes : 0;
  const size_t keys = room / 3 < kKeyCacheBytes ? room / 3 : kKeyCacheBytes;
  const size_t states = room / 3 < kKeyStateBytes ? room / 3 : kKeyStateBytes;
  const size_t groups = room - keys - states < kCacheBytes ? room - keys - states : kCacheBytes;
  const int dynamic = static_cast<int>(groups + keys + states);
  if (cudaFuncSetAttribute(k_rows<kRowBlock, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic) ==
          cudaSuccess &&
      cudaFuncSetAttribute(k_rows<kRowBlock, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic) ==
          cudaSuccess) {
    g.cache_bytes = static_cast<uint32_t>(groups);
    g.key_cache_bytes = static_cast<uint32_t>(keys);
    g.key_state_bytes = static_cast<uint32_t>(states);
  } else {
    const size_t plain = p.sharedMemPerBlock > a.sharedSizeBytes ? p.sharedMemPerBlock - a.sharedSizeBytes : 0;
    g.cache_bytes = static_cast<uint32_t>(plain < kCacheBytes ? plain : kCacheBytes);
    g.key_cache_bytes = 0;
  }
  (void)cudaGetLastError();
  return g;
}

bool kernels_load_on(int device) {
  cudaFuncAttributes a;
  const bool ok = cudaSetDevice(device) == cudaSuccess && cudaFuncGetAttributes(&a, k_rehash) == cudaSuccess;
  (void)cudaGetLastError();
  return ok;
}

void launch_batch_vector(const GpuBatch& b, const GpuPlan* plan, const GpuPlan& host_plan, const BatchVectors& v,
                         GpuScratch& s,
                         const GpuShape& shape, cudaStream_t stream) {
  const int sms = shape.sms;
  const uint64_t nseg = segments_of(b.row_end);
  WCSV_EXPECTS(nseg + 1 <= s.seg_cap && nseg > 0, "GPU batch larger than its work arrays");
  const unsigned grid = grid_for(nseg, kScanBlock, sms);
  if (host_plan.dialect.delimiter_len == 1)
    k_segment_tv<kScanBlock, kOneByteDelimiterStates>
        <<<grid, kScanBlock, 0, stream>>>(b.data, b.row_end, nseg, &plan->dialect, v.tv);
  else
    k_segment_tv<kScanBlock, kNumStates><<<grid, kScanBlock, 0, stream>>>(b.data, b.row_end, nseg, &plan->dialect, v.tv);
  WCSV_CUDA_TRY(cudaGetLastError());
  size_t bytes = s.cub_bytes;
  WCSV_CUDA_TRY(cub::DeviceScan::ExclusiveScan(s.cub_temp, bytes, v.tv, v.prefix, TvCompose(),
                                               tv_identity(), static_cast<int>(nseg + 1), stream));
  WCSV_CUDA_TRY(cudaMemsetAsync(v.census, 0, kCensusWords * sizeof(uint32_t), stream));
  k_byte_census<<<grid_for(b.n / 8 + 1, 256, sms), 256, 0, stream>>>(b.data, b.n, b.row_end, &plan->dialect,
                                                                      v.census);
  WCSV_CUDA_TRY(cudaGetLastError());
}

void launch_batch_rows(const GpuBatch& b, const GpuPlan* plan, const GpuPlan& host_plan,
                       const BatchVectors& v, const GpuTable& t, GpuScratch& s, const GpuShape& shape,
                       uint64_t groups_known, cudaStream_t stream) {
  const int sms = shape.sms;
  const uint64_t nseg = segments_of(b.row_end);
  if (nseg == 0) return;
  WCSV_EXPECTS(nseg + 1 <= s.seg_cap && b.row_end <= s.row_cap, "GPU batch larger than its work arrays");
  const Dialect* d = &plan->dialect;
  const unsigned grid = grid_for(nseg, kScanBlock, sms);
  k_segment_rows<kScanBlock, false>
      <<<grid, kScanBlock, 0, stream>>>(b, nseg, d, v.prefix, s.counts, nullptr, nullptr);
  WCSV_CUDA_TRY(cudaGetLastError());
  WCSV_CUDA_TRY(cudaMemsetAsync(s.offsets, 0, sizeof(uint32_t), stream));
  size_t bytes = s.cub_bytes;
  WCSV_CUDA_TRY(cub::DeviceScan::InclusiveSum(s.cub_temp, bytes, s.counts, s.offsets + 1,
                                              static_cast<int>(nseg), stream));
  k_segment_rows<kScanBlock, true>
      <<<grid, kScanBlock, 0, stream>>>(b, nseg, d, v.prefix, nullptr, s.offsets, s.rows);
  WCSV_CUDA_TRY(cudaGetLastError());
  k_utf8_census<<<grid, kScanBlock, 0, stream>>>(b.data, s.rows, s.offsets + nseg, nseg, v.census);
  WCSV_CUDA_TRY(cudaGetLastError());

  // The key cache, when the plan groups by one string column. Rows of a plan
  // of short keys take the short way. With few groups (most of them in each
  // block's cache) the blocks keep their keys' states beside the keys, where
  // they fit; with more, a block's state would take few rows and cost a fold
  // each, so the rows update their groups' states for the batch in the GPU's
  // memory. Past the directory's reach the rows go the general way.
  const bool one_string_key =
      host_plan.nkeys == 1 && host_plan.key_direct[0] >= 0 && host_plan.key_types[0] == Type::String;
  uint32_t key_cap = one_string_key ? 1024 : 0;
  while (key_cap && key_cap * sizeof(KeyCacheEntry) > shape.key_cache_bytes) key_cap >>= 1;
  if (key_cap < 64) key_cap = 0;
  // Only a block that keeps its keys' states has fewer keys for them.
  const uint32_t per_state = static_cast<uint32_t>(host_plan.short_key_state_words) * 4;
  uint32_t short_cap = host_plan.short_keys ? key_cap : 0;
  while (short_cap && short_cap * per_state > shape.key_state_bytes) short_cap >>= 1;
  const bool key_states = short_cap >= 64 && groups_known <= short_cap / 2;
  if (key_states) key_cap = short_cap;
  const uint32_t key_dir_cap = key_cap && groups_known <= kKeyDirMaxGroups ? kKeyDirEntries : 0;
  const bool short_rows = key_states || (host_plan.short_keys && key_dir_cap);
  // Without block states most short keys would miss the block's key cache
  // and pay its probes before the directory's: the rows skip it.
  if (short_rows && !key_states) key_cap = 0;
  // Those states are folded into the groups' words after the batch.
  uint32_t* batch_states = short_rows ? s.batch_states : nullptr;
  // The shared-memory group cache: as many groups as fit, a power of two.
  const uint32_t per_group = static_cast<uint32_t>(host_plan.nwords) * 8 + 4;
  uint32_t cache_cap = 1024;
  while (cache_cap && cache_cap * per_group > shape.cache_bytes) cache_cap >>= 1;
  if (cache_cap < 16) cache_cap = 0;
  if (key_dir_cap) WCSV_CUDA_TRY(cudaMemsetAsync(s.key_dir, 0xff, key_dir_cap * sizeof(KeyDirEntry), stream));
  const size_t shmem = static_cast<size_t>(cache_cap) * per_group + key_cap * sizeof(KeyCacheEntry) +
                       (key_states ? key_cap * per_state : 0);
  const unsigned row_grid = static_cast<unsigned>(sms * shape.row_blocks_per_sm);
  WCSV_CUDA_TRY(cudaMemsetAsync(s.grabbed, 0, sizeof(uint32_t), stream));
  if (short_rows)
    k_rows<kRowBlock, true><<<row_grid, kRowBlock, shmem, stream>>>(b, plan, t, s.rows, s.offsets + nseg, v.census,
                                                                    s.grabbed, cache_cap, key_cap, key_states,
                                                                    s.key_dir, key_dir_cap, batch_states);
  else
    k_rows<kRowBlock, false><<<row_grid, kRowBlock, shmem, stream>>>(b, plan, t, s.rows, s.offsets + nseg, v.census,
                                                                     s.grabbed, cache_cap, key_cap, false,
                                                                     s.key_dir, key_dir_cap, nullptr);
  WCSV_CUDA_TRY(cudaGetLastError());
  if (batch_states) {
    k_fold_batch_states<<<grid_for(kBatchStateGroups, 256, sms), 256, 0, stream>>>(plan, t, batch_states, true);
    WCSV_CUDA_TRY(cudaGetLastError());
  }
}

void launch_reset_batch_states(const GpuPlan* plan, const GpuPlan& host_plan, GpuScratch& s, const GpuShape& shape,
                               cudaStream_t stream) {
  if (!host_plan.short_keys) return;
  WCSV_EXPECTS(host_plan.short_key_state_words <= kMaxShortStateWords, "short-key state past its words");
  k_fold_batch_states<<<grid_for(kBatchStateGroups, 256, shape.sms), 256, 0, stream>>>(plan, GpuTable{},
                                                                                      s.batch_states, false);
  WCSV_CUDA_TRY(cudaGetLastError());
}

void launch_init_words(const GpuTable& t, const GpuPlan* plan, int nwords, uint64_t from, uint64_t to,
                       const GpuShape& shape, cudaStream_t stream) {
  if (to <= from) return;
  k_init_words<<<grid_for((to - from) * nwords, 256, shape.sms), 256, 0, stream>>>(t.words, plan, nwords, from, to);
  WCSV_CUDA_TRY(cudaGetLastError());
}

void launch_merge_table(const GpuTable& t, const GpuPlan* plan, const GpuTable& src, uint64_t count,
                        const GpuShape& shape, cudaStream_t stream) {
  if (count == 0) return;
  k_merge_table<<<grid_for(count, 256, shape.sms), 256, 0, stream>>>(t, plan, src, count);
  WCSV_CUDA_TRY(cudaGetLastError());
}

void launch_rehash(const GpuTable& t, uint64_t count, const GpuShape& shape, cudaStream_t stream) {
  if (count == 0) return;
  k_rehash<<<grid_for(count, 256, shape.sms), 256, 0, stream>>>(t, count);
  WCSV_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda
}  // namespace warpcsv
