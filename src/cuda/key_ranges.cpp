// Several GPUs' group tables exchanged by key range (key_ranges.hpp): the
// slices, the bounds, each GPU's part (Gpu::sample_keys, slice_by_range,
// take_slices) and the exchange that runs them on a thread per GPU.
#include "cuda/key_ranges.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

#include "cuda/gpu.hpp"
#include "cuda/result_order.hpp"
#include "result/order.hpp"
#include "runtime/parallel.hpp"
#include "runtime/stopwatch.hpp"

namespace warpcsv {
namespace cuda {

namespace {

// Keys sampled from all tables together for the bounds: enough that each
// range holds its share of the groups within a few percent.
constexpr uint64_t kSampledKeys = 1 << 14;
// Device bytes the ordering of a range takes a group (permutation and digits,
// two buffers each), and besides, for its runs and CUB's storage.
constexpr uint64_t kOrderBytesPerGroup = 24;
constexpr uint64_t kOrderBytes = 256ull << 20;
// Left free on each GPU after the exchange, as when a table grows.
constexpr uint64_t kExchangeReserve = 1ull << 30;

// Device arrays freed on `device` when the scope ends.
class ScopedArrays {
 public:
  explicit ScopedArrays(int device) : device_(device) {}
  ~ScopedArrays() {
    cudaSetDevice(device_);
    for (void* p : held_) cudaFree(p);
    (void)cudaGetLastError();
  }
  ScopedArrays(const ScopedArrays&) = delete;
  ScopedArrays& operator=(const ScopedArrays&) = delete;
  template <class T>
  bool alloc(T** p, uint64_t bytes) {
    if (!try_device_alloc(p, bytes)) return false;
    held_.push_back(*p);
    return true;
  }

 private:
  int device_;
  std::vector<void*> held_;
};

}  // namespace

GroupSlice GroupSlice::view(int device, const GpuTable& arrays, uint64_t count, uint64_t arena_bytes) {
  GroupSlice s;
  s.device = device;
  s.arrays.hashes = arrays.hashes;
  s.arrays.keys = arrays.keys;
  s.arrays.words = arrays.words;
  s.arrays.arena = arrays.arena;
  s.count = count;
  s.arena_bytes = arena_bytes;
  return s;
}

bool GroupSlice::allocate(int dev, uint64_t n, int nkeys, int nwords, uint64_t arena) {
  release();
  device = dev;
  count = n;
  arena_bytes = arena;
  owned_ = true;
  WCSV_CUDA_TRY(cudaSetDevice(dev));
  if (try_device_alloc(&arrays.hashes, n * 8) &&
      try_device_alloc(&arrays.keys, std::max<uint64_t>(1, n * static_cast<uint64_t>(nkeys)) * sizeof(Value)) &&
      try_device_alloc(&arrays.words, n * static_cast<uint64_t>(nwords) * 8) && try_device_alloc(&arrays.arena, arena))
    return true;
  release();
  return false;
}

GroupSlice& GroupSlice::operator=(GroupSlice&& o) noexcept {
  if (this != &o) {
    release();
    device = o.device;
    arrays = o.arrays;
    count = o.count;
    arena_bytes = o.arena_bytes;
    owned_ = o.owned_;
    o.owned_ = false;
    o.arrays = GpuTable{};
    o.count = o.arena_bytes = 0;
  }
  return *this;
}

void GroupSlice::release() noexcept {
  if (owned_) {
    cudaSetDevice(device);
    for (void* p : {static_cast<void*>(arrays.hashes), static_cast<void*>(arrays.keys),
                    static_cast<void*>(arrays.words), static_cast<void*>(arrays.arena)})
      cudaFree(p);
    (void)cudaGetLastError();
  }
  owned_ = false;
  arrays = GpuTable{};
}

KeySample choose_key_bounds(const std::vector<KeySample>& samples, const std::vector<Type>& key_types,
                            size_t ranges) {
  const size_t nkeys = key_types.size();
  // Every sampled row with its string keys as host pointers, to sort as the result is sorted.
  std::vector<Value> rows;
  for (const KeySample& s : samples) {
    const size_t at = rows.size();
    rows.insert(rows.end(), s.keys.begin(), s.keys.end());
    for (size_t i = at; i < rows.size(); ++i) {
      Value& v = rows[i];
      if (!v.null && key_types[(i - at) % nkeys] == Type::String)
        v.s.ptr = s.arena.data() + reinterpret_cast<uintptr_t>(v.s.ptr);
    }
  }
  KeySample bounds;
  const size_t n = nkeys ? rows.size() / nkeys : 0;
  if (n == 0 || ranges < 2) return bounds;
  const std::vector<uint32_t> order =
      sort_order(n, KeyRows{reinterpret_cast<const char*>(rows.data()), nkeys * sizeof(Value)}, key_types,
                 std::vector<bool>(nkeys, false), 1, SortMethod::Comparing);
  for (size_t r = 1; r < ranges; ++r) {
    const Value* row = rows.data() + static_cast<size_t>(order[r * n / ranges]) * nkeys;
    for (size_t k = 0; k < nkeys; ++k) {
      Value v = row[k];
      if (!v.null && key_types[k] == Type::String) {
        const size_t at = bounds.arena.size();
        bounds.arena.insert(bounds.arena.end(), v.s.ptr, v.s.ptr + v.s.len);
        v.s.ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(at));
      }
      bounds.keys.push_back(v);
    }
  }
  return bounds;
}

bool Gpu::sample_keys(const GpuCounters& c, uint64_t want, KeySample& s) {
  const uint64_t n = std::min<uint64_t>(c.groups, table_.gcap);
  const uint64_t take = std::min(n, want);
  if (take == 0) return true;
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  std::vector<uint32_t> picked(take);
  for (uint64_t i = 0; i < take; ++i) picked[i] = static_cast<uint32_t>(i * n / take);
  const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
  uint32_t string_keys = 0;
  for (int k = 0; k < nkeys; ++k)
    if (hplan_.key_types[k] == Type::String) string_keys |= 1u << k;
  const size_t temp_bytes = order_temp_bytes(take);
  ScopedArrays dev(id_);
  uint32_t* perm = nullptr;
  unsigned long long* offsets = nullptr;
  void* temp = nullptr;
  GroupGather out{};
  if (!dev.alloc(&perm, take * 4) || !dev.alloc(&offsets, (take + 1) * 8) || !dev.alloc(&temp, temp_bytes) ||
      !dev.alloc(&out.keys, take * nkeys * sizeof(Value)) || !dev.alloc(&out.words, take * nwords * 8))
    return false;
  WCSV_CUDA_TRY(cudaMemcpy(perm, picked.data(), take * 4, cudaMemcpyHostToDevice));
  const GpuTable t = table();
  launch_string_offsets(t, nkeys, string_keys, perm, take, offsets, temp, temp_bytes, st_->shape, compute_);
  unsigned long long arena_bytes = 0;
  WCSV_CUDA_TRY(cudaMemcpyAsync(&arena_bytes, offsets + take, 8, cudaMemcpyDeviceToHost, compute_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  if (!dev.alloc(&out.arena, arena_bytes)) return false;
  launch_gather_groups(t, nkeys, nwords, string_keys, perm, offsets, 0, take, out, st_->shape, compute_);
  s.keys.resize(take * static_cast<uint64_t>(nkeys));
  s.arena.resize(arena_bytes);
  WCSV_CUDA_TRY(cudaMemcpyAsync(s.keys.data(), out.keys, s.keys.size() * sizeof(Value), cudaMemcpyDeviceToHost,
                                compute_));
  if (arena_bytes)
    WCSV_CUDA_TRY(cudaMemcpyAsync(s.arena.data(), out.arena, arena_bytes, cudaMemcpyDeviceToHost, compute_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  return true;
}

std::vector<GroupSlice> Gpu::slice_by_range(const GpuCounters& c, const KeySample& bounds) {
  const uint64_t n = std::min<uint64_t>(c.groups, table_.gcap);
  const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
  const int nbounds = nkeys ? static_cast<int>(bounds.keys.size() / static_cast<size_t>(nkeys)) : 0;
  std::vector<GroupSlice> slices(static_cast<size_t>(nbounds) + 1);
  if (n == 0) return slices;
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  uint32_t string_keys = 0;
  KeyBounds kb{};
  kb.count = nbounds;
  kb.nkeys = nkeys;
  for (int k = 0; k < nkeys; ++k) {
    kb.types[k] = hplan_.key_types[k];
    if (kb.types[k] == Type::String) string_keys |= 1u << k;
  }
  ScopedArrays dev(id_);
  Value* bound_keys = nullptr;
  char* bound_arena = nullptr;
  unsigned long long* counts = nullptr;
  OrderArrays o{};
  o.n = n;
  o.temp_bytes = order_temp_bytes(n);
  if (!dev.alloc(&bound_keys, bounds.keys.size() * sizeof(Value)) || !dev.alloc(&bound_arena, bounds.arena.size()) ||
      !dev.alloc(&counts, (static_cast<uint64_t>(nbounds) + 1) * 8) || !dev.alloc(&o.perm[0], n * 4) ||
      !dev.alloc(&o.perm[1], n * 4) || !dev.alloc(&o.digits[0], (n + 1) * 8) ||
      !dev.alloc(&o.digits[1], (n + 1) * 8) || !dev.alloc(&o.span, 16) || !dev.alloc(&o.temp, o.temp_bytes))
    return {};
  if (!bounds.keys.empty())
    WCSV_CUDA_TRY(cudaMemcpy(bound_keys, bounds.keys.data(), bounds.keys.size() * sizeof(Value),
                             cudaMemcpyHostToDevice));
  if (!bounds.arena.empty())
    WCSV_CUDA_TRY(cudaMemcpy(bound_arena, bounds.arena.data(), bounds.arena.size(), cudaMemcpyHostToDevice));
  kb.keys = bound_keys;
  kb.arena = bound_arena;
  // Each group's range, then the groups in range order (a stable radix sort
  // of the identity by range), then the string bytes before each of them.
  const GpuTable t = table();
  launch_identity(o, st_->shape, compute_);
  launch_key_ranges(t, kb, o, counts, st_->shape, compute_);
  const int cur = launch_sort_digits(o, 0, std::max(1, digit_bits(static_cast<uint64_t>(nbounds))), st_->shape,
                                     compute_);
  unsigned long long* offsets = o.digits[1 - cur];
  launch_string_offsets(t, nkeys, string_keys, o.perm[cur], n, offsets, o.temp, o.temp_bytes, st_->shape, compute_);
  std::vector<unsigned long long> in_range(static_cast<size_t>(nbounds) + 1), string_at(in_range.size() + 1);
  WCSV_CUDA_TRY(cudaMemcpyAsync(in_range.data(), counts, in_range.size() * 8, cudaMemcpyDeviceToHost, compute_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  std::vector<uint64_t> begin(in_range.size() + 1, 0);
  for (size_t r = 0; r < in_range.size(); ++r) begin[r + 1] = begin[r] + in_range[r];
  for (size_t r = 0; r < begin.size(); ++r)
    WCSV_CUDA_TRY(cudaMemcpyAsync(&string_at[r], offsets + begin[r], 8, cudaMemcpyDeviceToHost, compute_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  for (size_t r = 0; r < slices.size(); ++r) {
    const uint64_t count = begin[r + 1] - begin[r];
    if (count == 0) continue;
    GroupSlice& s = slices[r];
    if (!s.allocate(id_, count, nkeys, nwords, string_at[r + 1] - string_at[r])) return {};
    const GroupGather out{s.arrays.keys, s.arrays.words, s.arrays.arena, s.arrays.hashes};
    launch_gather_groups(t, nkeys, nwords, string_keys, o.perm[cur], offsets, begin[r], count, out, st_->shape,
                         compute_);
  }
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  return slices;
}

bool Gpu::take_slices(const std::vector<const GroupSlice*>& slices, GpuCounters& mine) {
  uint64_t groups = 0, arena = 0;
  for (const GroupSlice* s : slices) {
    groups += s->count;
    arena += s->arena_bytes;
  }
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  if (table_.gcap) empty_table();
  if (groups > table_.gcap) grow_groups(groups, 0);
  if (arena > table_.arena_cap) grow_arena(arena + 4096, 0);
  for (const GroupSlice* s : slices) merge_slice(*s);
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  WCSV_CUDA_TRY(cudaMemcpy(&mine, counters_, sizeof mine, cudaMemcpyDeviceToHost));
  return mine.flags == 0;
}

KeyRangeExchange exchange_key_ranges(const std::vector<std::unique_ptr<Gpu>>& gpus, std::vector<GpuCounters>& counters,
                                     const std::vector<Type>& key_types) {
  KeyRangeExchange ex;
  const size_t n = gpus.size();
  if (n < 2 || n > kMaxKeyRanges || key_types.empty()) return ex;
  uint64_t all = 0;
  std::vector<uint64_t> held(n);
  for (size_t g = 0; g < n; ++g) {
    held[g] = std::min<uint64_t>(counters[g].groups, gpus[g]->table_groups());
    if (held[g] >= (1ull << 32)) return ex;  // the permutations hold 32-bit groups
    all += held[g];
  }
  if (all == 0) return ex;
  std::vector<double> split_s(n), take_s(n);
  std::vector<uint64_t> taken_bytes(n);

  // The bounds, from a sample of each table as large as its share of the groups.
  std::vector<KeySample> samples(n);
  std::vector<char> sampled(n);
  on_threads(n, [&](size_t g) {
    const auto t = std::chrono::steady_clock::now();
    sampled[g] = gpus[g]->sample_keys(counters[g], (kSampledKeys * held[g] + all - 1) / all, samples[g]);
    split_s[g] = seconds_since(t);
  });
  for (char ok : sampled)
    if (!ok) return ex;
  const auto t_bounds = std::chrono::steady_clock::now();
  const KeySample bounds = choose_key_bounds(samples, key_types, n);
  const double bounds_s = seconds_since(t_bounds);

  // Each table in slices by range; a table without room for them keeps
  // every table as it is.
  std::vector<std::vector<GroupSlice>> slices(n);
  on_threads(n, [&](size_t g) {
    const auto t = std::chrono::steady_clock::now();
    slices[g] = gpus[g]->slice_by_range(counters[g], bounds);
    split_s[g] += seconds_since(t);
  });
  for (size_t g = 0; g < n; ++g)
    if (slices[g].size() != n) return ex;

  // Each GPU's range must fit, and be ordered after, with the copies of
  // other GPUs' slices; workers that share a GPU share its free memory.
  const int nkeys = static_cast<int>(key_types.size());
  std::map<int, uint64_t> need;  // device bytes by GPU
  for (size_t r = 0; r < n; ++r) {
    uint64_t groups = 0, arena = 0, copied = 0;
    for (size_t g = 0; g < n; ++g) {
      const GroupSlice& s = slices[g][r];
      groups += s.count;
      arena += s.arena_bytes;
      if (s.count && s.device != gpus[r]->id()) copied = std::max(copied, s.bytes(nkeys, gpus[r]->words_per_group()));
    }
    if (!gpus[r]->has_room(groups, arena)) return ex;
    need[gpus[r]->id()] += gpus[r]->growth_bytes(groups, arena) + copied + kOrderBytesPerGroup * groups + kOrderBytes;
  }
  for (const auto& [device, bytes] : need) {
    WCSV_CUDA_TRY(cudaSetDevice(device));
    if (bytes + kExchangeReserve > free_gpu_bytes()) return ex;
  }

  // Each GPU empties its table and merges every slice of its range.
  ex.exchanged = true;
  std::vector<uint32_t> flags(n);
  on_threads(n, [&](size_t r) {
    const auto t = std::chrono::steady_clock::now();
    std::vector<const GroupSlice*> mine;
    for (size_t g = 0; g < n; ++g) {
      const GroupSlice& s = slices[g][r];
      if (s.count == 0) continue;
      mine.push_back(&s);
      if (s.device != gpus[r]->id()) taken_bytes[r] += s.bytes(nkeys, gpus[r]->words_per_group());
    }
    if (!gpus[r]->take_slices(mine, counters[r])) flags[r] = counters[r].flags;
    take_s[r] = seconds_since(t);
  });
  slices.clear();
  for (uint32_t f : flags) ex.flags |= f;
  ex.stages.push_back(StageTiming{"result: key range bounds", "cpu", bounds_s, 0, 0});
  for (size_t g = 0; g < n; ++g) {
    const std::string dev = "gpu" + std::to_string(gpus[g]->id());
    ex.stages.push_back(StageTiming{"result: split groups by key range", dev, split_s[g], 0, 0});
    ex.stages.push_back(StageTiming{"result: merge its key range", dev, take_s[g], taken_bytes[g], 0});
  }
  return ex;
}

}  // namespace cuda
}  // namespace warpcsv
