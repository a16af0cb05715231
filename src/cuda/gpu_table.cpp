// One GPU's group table: taken over from the last run, grown ahead of the
// rows in flight, merged with the other GPUs' tables and copied back.
#include "cuda/gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>

#include "cuda/gpu_states.hpp"
#include "cuda/run_counters.hpp"
#include "warpcsv/errors.hpp"
#include "runtime/parallel.hpp"
#include "runtime/stopwatch.hpp"

namespace warpcsv {
namespace cuda {

namespace {

// Batches of new groups a table grows for: the batches that can be queued
// past the last counter snapshot (a ring's worth) and the next two, so that
// ensure_table need not stop the pipeline at every batch.
constexpr uint64_t kTableBatches = kRing + 2;
// A group table (or key arena) grows ahead of its groups up to the larger of
// these; past that only as far as the next batch needs.
constexpr uint64_t kTableBytes = 1ull << 30;
constexpr uint64_t kTableShareOfFree = 2;  // of the GPU's free memory at the time
// Hash slots (4 bytes each) per group a table has room for, at least. The
// row kernels probe the slots for every row, and a sparse slot array makes
// them faster even at low load (docs/performance.md, "GPU group table"). So
// the room follows the rows in flight and stays small, and the slots do not.
constexpr uint64_t kSlotsPerGroup = 16;
// GPU memory a table that may spill leaves free when it grows: room for the
// order of the result at the end and for the driver.
constexpr uint64_t kSpillReserve = 1ull << 30;
// Host bytes of a piece of a spilled table (its keys, words and hashes).
constexpr uint64_t kSpillPieceBytes = 256ull << 20;
// The pinned block a spill during the scan copies through (the run's slots
// are the readers' then).
constexpr uint64_t kSpillBounceBytes = 64ull << 20;

// Arrays being made for a table: freed when the scope ends, by an error too,
// unless handed over (release()). The arena is the owner's when it is kept.
class TableArrays {
 public:
  explicit TableArrays(GpuTable& t, bool owns_arena = true) : t_(t), owns_arena_(owns_arena) {}
  ~TableArrays() {
    if (armed_) free_table_arrays(t_, !owns_arena_);
  }
  TableArrays(const TableArrays&) = delete;
  TableArrays& operator=(const TableArrays&) = delete;
  void release() { armed_ = false; }

 private:
  GpuTable& t_;
  bool owns_arena_;
  bool armed_ = true;
};

}  // namespace

GpuTable Gpu::table() const {
  GpuTable t = table_;
  t.counters = counters_;
  for (int l = 0; l < kMaxLists; ++l) {
    t.list_groups[l] = list_groups_[l];
    t.list_keys[l] = list_keys_[l];
  }
  t.list_cap = list_cap_;
  return t;
}

void Gpu::adopt_table() {
  if (!st_->table.gcap || st_->table_nkeys != hplan_.nkeys || st_->table_nwords != hplan_.nwords) {
    st_->free_table();
    return;
  }
  // Cleared while the staging still owns it (freed with it if this throws).
  const GpuTable& kept = st_->table;
  WCSV_CUDA_TRY(cudaMemsetAsync(kept.slots, 0, (kept.mask + 1) * 4, compute_));
  launch_init_words(kept, dplan_, hplan_.nwords, 0, kept.gcap, st_->shape, compute_);
  table_ = kept;
  table_.counters = counters_;
  st_->table = GpuTable{};
  ++g_tables_reused;
}

uint64_t Gpu::rows_bound(const Buffer& buf) const {
  const uint64_t by_bytes = buf.read.span.own / std::max<size_t>(1, ncols_);
  return std::min<uint64_t>(by_bytes, uint64_t{buf.summary_host->newlines} + 1);
}

bool Gpu::ensure_table(Buffer& buf) {
  const uint64_t n = buf.read.span.own;
  const uint64_t bound_groups = rows_bound(buf) + 2;
  const uint64_t bound_arena = nstring_keys_ ? static_cast<uint64_t>(nstring_keys_) * 2 * n + 4096 : 0;
  const uint64_t bound_rows = hplan_.nlists ? rows_bound(buf) + 1 : 0;
  if (!refresh_bounds()) return false;
  if (groups_upper_ + bound_groups > table_.gcap || arena_upper_ + bound_arena > table_.arena_cap ||
      lists_upper_ + bound_rows > list_cap_) {
    ++g_table_stops;
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    GpuCounters c;
    WCSV_CUDA_TRY(cudaMemcpy(&c, counters_, sizeof c, cudaMemcpyDeviceToHost));
    if (!unflagged(c)) return false;
    groups_upper_ = c.groups;  // every batch given room has its rows queued, so done now
    groups_known_ = c.groups;
    arena_upper_ = c.arena_used;
    lists_upper_ = most_listed(c);
    const uint64_t per_group = table_bytes_per_group();
    if (spill_ && c.groups > 0 && !room_for(groups_upper_ + bound_groups, arena_upper_ + bound_arena, per_group)) {
      spill_groups(c);
      c.groups = c.arena_used = 0;  // a growth below must not copy the spilled groups back in
      groups_upper_ = arena_upper_ = 0;
    }
    const uint64_t arena_need = std::max(table_.arena_cap, arena_upper_ + bound_arena);
    const uint64_t gcap = grown_size(table_.gcap, groups_upper_, bound_groups,
                                     [&] { return table_room(arena_need) / per_group; });
    if (gcap > table_.gcap) grow_groups(gcap, c.groups);
    const uint64_t arena_cap = grown_size(table_.arena_cap, arena_upper_, bound_arena,
                                          [&] { return table_room(table_.gcap * per_group); });
    if (arena_cap > table_.arena_cap) grow_arena(arena_cap, c.arena_used);
    if (hplan_.nlists) {
      const uint64_t per_value = 12 * static_cast<uint64_t>(hplan_.nlists);
      const uint64_t list_cap =
          grown_size(list_cap_, lists_upper_, bound_rows, [&] { return table_room(0) / per_value; });
      if (list_cap > list_cap_ && !grow_lists(list_cap, c)) return false;
    }
  }
  queued_.groups += bound_groups;
  queued_.arena += bound_arena;
  queued_.rows += bound_rows;
  groups_upper_ += bound_groups;
  arena_upper_ += bound_arena;
  lists_upper_ += bound_rows;
  buf.through = queued_;
  return true;
}

template <class Room>
uint64_t Gpu::grown_size(uint64_t cap, uint64_t upper, uint64_t bound, const Room& room) {
  const uint64_t ahead = upper + kTableBatches * bound;
  if (ahead <= cap) return cap;
  uint64_t want = std::max<uint64_t>(2 * cap, ahead);
  const uint64_t limit = room();
  if (want > limit) want = std::max<uint64_t>(upper + bound, limit);
  return std::max(want, cap);
}

uint64_t free_gpu_bytes() {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return free_b;
}

uint64_t Gpu::table_bytes_per_group() const {
  return 8 + sizeof(Value) * hplan_.nkeys + 8 * hplan_.nwords + 2 * 4 * kSlotsPerGroup;
}

uint64_t Gpu::table_room(uint64_t other_bytes) const {
  const uint64_t room = std::max<uint64_t>(kTableBytes, free_gpu_bytes() / kTableShareOfFree);
  if (!spill_ || !spill_->table_limit()) return room;
  const uint64_t limit = spill_->table_limit();
  return std::min(room, limit > other_bytes ? limit - other_bytes : 0);
}

bool Gpu::room_for(uint64_t groups, uint64_t arena, uint64_t per_group) const {
  const uint64_t gcap = std::max(table_.gcap, groups), arena_cap = std::max(table_.arena_cap, arena);
  if (spill_->table_limit() && gcap * per_group + arena_cap > spill_->table_limit()) return false;
  // Growing copies into new arrays while the old ones are still held.
  const uint64_t new_bytes = (groups > table_.gcap ? groups * per_group : 0) + (arena > table_.arena_cap ? arena : 0);
  return new_bytes == 0 || new_bytes + kSpillReserve <= free_gpu_bytes();
}

Gpu::Bounce Gpu::spill_bounce() {
  if (!spill_bounce_) WCSV_CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&spill_bounce_), kSpillBounceBytes));
  return Bounce{spill_bounce_, kSpillBounceBytes, compute_};
}

void Gpu::spill_groups(const GpuCounters& c) {
  const auto t = std::chrono::steady_clock::now();
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  const uint64_t groups = std::min<uint64_t>(c.groups, table_.gcap);
  const uint64_t per_group = sizeof(Value) * hplan_.nkeys + 8 * hplan_.nwords + 8;
  const uint64_t piece = std::max<uint64_t>(1, kSpillPieceBytes / per_group);
  const Bounce via = spill_bounce();
  for (uint64_t first = 0; first < groups; first += piece) {
    GroupTable part(&spill_->groups().layout());
    copy_back_range(part, first, std::min(piece, groups - first), c.arena_used, spill_->threads(), via);
    spill_->take(part);
  }
  empty_table();
  ++spills;
  ++g_table_spills;
  spill_s += seconds_since(t);
}

void Gpu::empty_table() {
  WCSV_CUDA_TRY(cudaMemsetAsync(table_.slots, 0, (table_.mask + 1) * 4, compute_));
  launch_init_words(table_, dplan_, hplan_.nwords, 0, table_.gcap, st_->shape, compute_);
  static_assert(offsetof(GpuCounters, groups) == 0 && offsetof(GpuCounters, arena_used) == 8,
                "the group and arena counters lead GpuCounters");
  WCSV_CUDA_TRY(cudaMemsetAsync(counters_, 0, 16, compute_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  groups_known_ = 0;
  // Snapshots taken before count the groups spilled.
  for (Snapshot& sn : snaps_) sn.seq = ~0ull;
}

bool Gpu::refresh_bounds() {
  for (uint64_t back = 1; back <= kRing && back <= seq_; ++back) {
    const uint64_t s = seq_ - back;
    const Snapshot& sn = snaps_[s % kRing];
    if (sn.seq != s) continue;
    const cudaError_t q = cudaEventQuery(st_->snap_done[s % kRing]);
    if (q == cudaErrorNotReady) continue;
    WCSV_CUDA_TRY(q);
    const GpuCounters& c = st_->snap_host[s % kRing];
    if (!unflagged(c)) return false;
    groups_known_ = c.groups;
    groups_upper_ = std::min<uint64_t>(groups_upper_, c.groups + (queued_.groups - sn.through.groups));
    arena_upper_ = std::min<uint64_t>(arena_upper_, c.arena_used + (queued_.arena - sn.through.arena));
    lists_upper_ = std::min<uint64_t>(lists_upper_, most_listed(c) + (queued_.rows - sn.through.rows));
    return true;
  }
  return true;
}

void Gpu::grow_groups(uint64_t gcap, uint64_t groups) {
  const auto t_grow = std::chrono::steady_clock::now();
  if (gcap > 0xfff00000ull) gcap = 0xfff00000ull;
  const uint64_t count = std::min(groups, table_.gcap);  // never past the old arrays
  const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
  uint64_t nslots = 64;
  while (nslots < kSlotsPerGroup * gcap) nslots *= 2;
  GpuTable t = table_;  // new arrays, the same arena
  clear_table_arrays(t);
  TableArrays new_arrays(t, /*owns_arena=*/false);
  WCSV_CUDA_TRY(cudaMalloc(&t.slots, nslots * 4));
  WCSV_CUDA_TRY(cudaMalloc(&t.hashes, gcap * 8));
  WCSV_CUDA_TRY(cudaMalloc(&t.keys, std::max<uint64_t>(1, gcap * nkeys) * sizeof(Value)));
  WCSV_CUDA_TRY(cudaMalloc(&t.words, gcap * nwords * 8));
  t.mask = nslots - 1;
  t.gcap = gcap;
  if (count) {
    WCSV_CUDA_TRY(cudaMemcpyAsync(t.hashes, table_.hashes, count * 8, cudaMemcpyDeviceToDevice, compute_));
    if (nkeys)
      WCSV_CUDA_TRY(cudaMemcpyAsync(t.keys, table_.keys, count * nkeys * sizeof(Value),
                                    cudaMemcpyDeviceToDevice, compute_));
    WCSV_CUDA_TRY(cudaMemcpyAsync(t.words, table_.words, count * nwords * 8, cudaMemcpyDeviceToDevice, compute_));
  }
  WCSV_CUDA_TRY(cudaMemsetAsync(t.slots, 0, nslots * 4, compute_));
  t.counters = counters_;
  launch_init_words(t, dplan_, nwords, count, gcap, st_->shape, compute_);
  launch_rehash(t, count, st_->shape, compute_);
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  free_table_arrays(table_, /*keep_arena=*/true);
  new_arrays.release();
  table_ = t;
  grow_s += seconds_since(t_grow);
}

void Gpu::grow_arena(uint64_t cap, uint64_t used_now) {
  const auto t_grow = std::chrono::steady_clock::now();
  char* a = nullptr;
  WCSV_CUDA_TRY(cudaMalloc(&a, cap + kArenaReadPad));
  const uint64_t used = std::min(used_now, table_.arena_cap);  // never past the old arena
  try {
    if (used) WCSV_CUDA_TRY(cudaMemcpyAsync(a, table_.arena, used, cudaMemcpyDeviceToDevice, compute_));
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  } catch (...) {
    cudaFree(a);
    throw;
  }
  cudaFree(table_.arena);
  table_.arena = a;
  table_.arena_cap = cap;
  grow_s += seconds_since(t_grow);
}

bool Gpu::absorb(Gpu& other, GpuCounters& mine, const GpuCounters& theirs) {
  const uint64_t count = std::min<uint64_t>(theirs.groups, other.table_.gcap);
  if (count == 0) return true;
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  const uint64_t have = std::min<uint64_t>(mine.groups, table_.gcap);
  if (have + count > table_.gcap) grow_groups(have + count, have);
  if (mine.arena_used + theirs.arena_used > table_.arena_cap)
    grow_arena(mine.arena_used + theirs.arena_used + 4096, mine.arena_used);
  merge_slice(GroupSlice::view(other.id_, other.table_, count, theirs.arena_used));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  WCSV_CUDA_TRY(cudaMemcpy(&mine, counters_, sizeof mine, cudaMemcpyDeviceToHost));
  mine.rows += theirs.rows;
  return mine.flags == 0;
}

void Gpu::merge_slice(const GroupSlice& s) {
  if (s.count == 0) return;
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  if (s.device == id_) {
    launch_merge_table(table(), dplan_, s.arrays, s.count, st_->shape, compute_);
    return;
  }
  int can = 0;  // NVLink / PCIe peer access makes the copies direct
  if (cudaDeviceCanAccessPeer(&can, id_, s.device) == cudaSuccess && can) {
    const cudaError_t e = cudaDeviceEnablePeerAccess(s.device, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) WCSV_CUDA_TRY(e);
    (void)cudaGetLastError();
  }
  const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
  GpuTable src{};  // the slice, copied here
  const TableArrays src_arrays(src);
  WCSV_CUDA_TRY(cudaMalloc(&src.hashes, s.count * 8));
  WCSV_CUDA_TRY(cudaMalloc(&src.keys, std::max<uint64_t>(1, s.count * nkeys) * sizeof(Value)));
  WCSV_CUDA_TRY(cudaMalloc(&src.words, s.count * nwords * 8));
  WCSV_CUDA_TRY(cudaMalloc(&src.arena, std::max<uint64_t>(1, s.arena_bytes)));
  auto peer = [&](void* dst, const void* from, uint64_t n) {
    if (n) WCSV_CUDA_TRY(cudaMemcpyPeerAsync(dst, id_, from, s.device, n, compute_));
  };
  peer(src.hashes, s.arrays.hashes, s.count * 8);
  peer(src.keys, s.arrays.keys, s.count * nkeys * sizeof(Value));
  peer(src.words, s.arrays.words, s.count * nwords * 8);
  peer(src.arena, s.arrays.arena, s.arena_bytes);
  launch_merge_table(table(), dplan_, src, s.count, st_->shape, compute_);
  // The copy is freed when this returns: the merge must be done by then.
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
}

uint64_t Gpu::growth_bytes(uint64_t groups, uint64_t arena) const {
  return (groups > table_.gcap ? groups * table_bytes_per_group() : 0) +
         (arena > table_.arena_cap ? arena + 4096 : 0);
}

void Gpu::copy_back(GroupTable& out, const GpuCounters& c, int threads) {
  WCSV_EXPECTS(out.size() == 0, "GPU table copied back into a table with groups");
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  const uint64_t groups = std::min<uint64_t>(c.groups, table_.gcap);
  if (groups == 0) return;
  copy_back_range(out, 0, groups, c.arena_used, threads, slots_bounce());
  // The GPU hashed the keys with GroupTable's function; the index uses them.
  std::vector<Value> first(static_cast<size_t>(hplan_.nkeys) + 1);
  out.keys_of(0, first.data());
  WCSV_EXPECTS(out.hash_of(0) == out.hash_keys(first.data()), "GPU and host group hashes differ");
}

void Gpu::copy_back_range(GroupTable& out, uint64_t first, uint64_t count, uint64_t arena_used, int threads,
                          const Bounce& via) {
  const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
  UninitVector<Value> keys(count * static_cast<uint64_t>(nkeys));  // filled by the copies below
  UninitVector<uint64_t> words(count * static_cast<uint64_t>(nwords)), hashes(count);
  download(keys.data(), table_.keys + first * nkeys, keys.size() * sizeof(Value), threads, via);
  download(words.data(), table_.words + first * nwords, words.size() * 8, threads, via);
  download(hashes.data(), table_.hashes + first, count * 8, threads, via);
  // The groups' strings: the arena bytes from the first to the last they
  // use (groups take arena bytes roughly in their order, so a piece's are
  // near one another).
  const GroupLayout& layout = out.layout();
  auto is_string = [&](int k) { return layout.key_types[static_cast<size_t>(k)] == Type::String; };
  uint64_t lo = arena_used, hi = 0;
  for (int k = 0; k < nkeys; ++k) {
    if (!is_string(k)) continue;
    for (uint64_t g = 0; g < count; ++g) {
      const Value& v = keys[g * nkeys + k];
      if (v.null || v.s.len == 0) continue;
      const uint64_t at = reinterpret_cast<uintptr_t>(v.s.ptr);
      lo = std::min(lo, at);
      hi = std::max(hi, at + v.s.len);
    }
  }
  if (hi <= lo) lo = hi = 0;
  std::unique_ptr<char[]> arena(new char[std::max<uint64_t>(1, hi - lo)]);
  download(arena.get(), table_.arena + lo, hi - lo, threads, via);
  const char* strings = arena.get();
  out.append_distinct(count, hashes.data(), std::move(arena), threads, [&](size_t g, Value* k, char* state) {
    for (int i = 0; i < nkeys; ++i) {
      k[i] = keys[g * nkeys + i];
      if (!k[i].null && is_string(i))
        k[i].s.ptr = k[i].s.len ? strings + (reinterpret_cast<uintptr_t>(k[i].s.ptr) - lo) : strings;
    }
    const u64* w = reinterpret_cast<const u64*>(words.data()) + g * nwords;  // copied in, read as the GPU wrote them
    for (size_t a = 0; a < layout.aggs.size(); ++a)
      if (!state_from_words(layout.aggs[a], w + hplan_.aggs[a].word, state))
        throw InternalError("aggregate without a GPU form reached the GPU");
  });
}

std::unique_ptr<DeviceGroups> Gpu::ordered_groups(const GpuCounters& c, const GroupLayout& layout, size_t run_rows) {
  DeviceTable t;
  t.device = id_;
  t.table = table_;
  t.groups = std::min<uint64_t>(c.groups, table_.gcap);
  t.nkeys = hplan_.nkeys;
  t.nwords = hplan_.nwords;
  for (size_t a = 0; a < layout.aggs.size(); ++a) t.agg_words.push_back(hplan_.aggs[a].word);
  t.shape = st_->shape;
  t.stream = compute_;
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  return DeviceGroups::order(t, layout, run_rows);
}

void Gpu::download(void* dst, const void* src, uint64_t bytes, int threads, const Bounce& via) {
  if (bytes == 0) return;
  constexpr uint64_t kPiece = 1ull << 20;
  const uint64_t half = std::max<uint64_t>(kPiece, via.bytes / 2 / kPiece * kPiece);
  char* const pinned[2] = {via.data, via.data + half};
  const cudaEvent_t* filled = st_->download_filled;
  const uint64_t rounds = (bytes + half - 1) / half;
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));  // the table's last kernels are done
  auto start_round = [&](uint64_t r) {
    const uint64_t at = r * half;
    WCSV_CUDA_TRY(cudaMemcpyAsync(pinned[r % 2], static_cast<const char*>(src) + at, std::min(half, bytes - at),
                                  cudaMemcpyDeviceToHost, via.stream));
    WCSV_CUDA_TRY(cudaEventRecord(filled[r % 2], via.stream));
  };
  start_round(0);
  for (uint64_t r = 0; r < rounds; ++r) {
    WCSV_CUDA_TRY(cudaEventSynchronize(filled[r % 2]));
    if (r + 1 < rounds) start_round(r + 1);  // into the other half, copied out in round r - 1
    const uint64_t n = std::min(half, bytes - r * half);
    const uint64_t pieces = (n + kPiece - 1) / kPiece;
    const int workers = static_cast<int>(std::min<uint64_t>(threads, pieces));
    char* out = static_cast<char*>(dst) + r * half;
    parallel_for(pieces, workers, [&](size_t i, int) {
      const uint64_t at = i * kPiece;
      std::memcpy(out + at, pinned[r % 2] + at, std::min(kPiece, n - at));
    });
  }
}

}  // namespace cuda
}  // namespace warpcsv
