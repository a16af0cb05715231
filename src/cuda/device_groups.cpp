#include "cuda/device_groups.hpp"

#include <chrono>
#include <cstring>

#include "cuda/gpu_states.hpp"
#include "cuda/result_text.hpp"
#include "cuda/run_counters.hpp"
#include "runtime/stopwatch.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace cuda {

DeviceGroups::DeviceGroups(const DeviceTable& t, const GroupLayout& layout, size_t run_rows)
    : t_(t), layout_(layout), run_rows_(std::max<size_t>(1, run_rows)) {
  for (size_t k = 0; k < layout.key_types.size(); ++k)
    if (layout.key_types[k] == Type::String) string_keys_ |= 1u << k;
}

std::unique_ptr<DeviceGroups> DeviceGroups::order(const DeviceTable& t, const GroupLayout& layout,
                                                  size_t run_rows) {
  if (t.groups >= (1ull << 32)) return nullptr;  // the permutation holds 32-bit groups
  std::unique_ptr<DeviceGroups> g(new DeviceGroups(t, layout, run_rows));
  WCSV_CUDA_TRY(cudaSetDevice(t.device));
  const auto t0 = std::chrono::steady_clock::now();
  if (!g->allocate_order()) return nullptr;
  g->sort();
  if (!g->allocate_runs()) return nullptr;
  g->order_s_ = seconds_since(t0);
  return g;
}

bool DeviceGroups::allocate_order() {
  const uint64_t n = t_.groups;
  temp_bytes_ = order_temp_bytes(n);
  return try_device_alloc(&perm_[0], n * 4) && try_device_alloc(&perm_[1], n * 4) && try_device_alloc(&digits_[0], (n + 1) * 8) &&
         try_device_alloc(&digits_[1], (n + 1) * 8) && try_device_alloc(&span_, 16) && try_device_alloc(&temp_, temp_bytes_);
}

// One stable pass per varying digit, least significant first: the last
// key's digits first; within a key its value's digits (a string's length,
// then its 8-byte words from the last), then whether it is null (nulls last).
void DeviceGroups::sort() {
  const OrderArrays o{{perm_[0], perm_[1]}, {digits_[0], digits_[1]}, span_, temp_, temp_bytes_, t_.groups};
  launch_identity(o, t_.shape, t_.stream);
  unsigned long long span[2];
  int key = 0;
  auto measure = [&](Digit d, int word) {
    launch_digits(t_.table, t_.nkeys, key, d, word, o, cur_, t_.shape, t_.stream);
    WCSV_CUDA_TRY(cudaMemcpyAsync(span, span_, sizeof span, cudaMemcpyDeviceToHost, t_.stream));
    WCSV_CUDA_TRY(cudaStreamSynchronize(t_.stream));
  };
  auto pass = [&](Digit d, int word) {
    measure(d, word);
    if (span[1] > span[0]) cur_ = launch_sort_digits(o, cur_, digit_bits(span[1] - span[0]), t_.shape, t_.stream);
  };
  for (key = t_.nkeys; key-- > 0;) {
    switch (layout_.key_types[static_cast<size_t>(key)]) {
      case Type::Null: break;
      case Type::String: {
        pass(Digit::Length, 0);  // equal padded words: the shorter string first
        const int words = static_cast<int>((span[1] + 7) / 8);
        for (int w = words; w-- > 0;) pass(Digit::StringWord, w);
        break;
      }
      case Type::Float: pass(Digit::Float, 0); break;
      default:
        measure(Digit::IntWide, 0);
        if (span[1]) {
          pass(Digit::IntLow, 0);
          pass(Digit::IntHighFlip, 0);
        } else {
          pass(Digit::IntLowFlip, 0);
        }
    }
    pass(Digit::Null, 0);
  }
  WCSV_CUDA_TRY(cudaStreamSynchronize(t_.stream));
}

bool DeviceGroups::allocate_runs() {
  const uint64_t n = t_.groups;
  offsets_ = digits_[1 - cur_];  // free now: the last pass left its digits in digits_[cur_]
  if (string_keys_) {
    launch_string_offsets(t_.table, t_.nkeys, string_keys_, perm_[cur_], n, offsets_, temp_, temp_bytes_, t_.shape,
                          t_.stream);
    // The string bytes at each run's start (every run_rows_-th offset) and the end.
    const uint64_t runs = (n + run_rows_ - 1) / run_rows_;
    std::vector<unsigned long long>& at = run_string_at_;
    at.assign(runs + 1, 0);
    WCSV_CUDA_TRY(cudaMemcpy2DAsync(at.data(), 8, offsets_, run_rows_ * 8, 8, runs, cudaMemcpyDeviceToHost,
                                    t_.stream));
    WCSV_CUDA_TRY(cudaMemcpyAsync(&at[runs], offsets_ + n, 8, cudaMemcpyDeviceToHost, t_.stream));
    WCSV_CUDA_TRY(cudaStreamSynchronize(t_.stream));
    for (uint64_t r = 0; r < runs; ++r) arena_cap_ = std::max<uint64_t>(arena_cap_, at[r + 1] - at[r]);
  } else {
    WCSV_CUDA_TRY(cudaMemsetAsync(offsets_, 0, (n + 1) * 8, t_.stream));
  }
  cudaFree(digits_[cur_]);
  digits_[cur_] = nullptr;
  cudaFree(perm_[1 - cur_]);
  perm_[1 - cur_] = nullptr;
  const uint64_t rows = std::min<uint64_t>(run_rows_, n);
  const uint64_t key_bytes = rows * t_.nkeys * sizeof(Value), word_bytes = rows * t_.nwords * 8;
  if (!try_device_alloc(&dev_.keys, key_bytes) || !try_device_alloc(&dev_.words, word_bytes) ||
      !try_device_alloc(&dev_.arena, arena_cap_))
    return false;
  for (GroupGather& h : host_)
    if (!try_pinned_alloc(&h.keys, key_bytes) || !try_pinned_alloc(&h.words, word_bytes) ||
        !try_pinned_alloc(&h.arena, arena_cap_))
      return false;
  for (cudaEvent_t& e : copied_) WCSV_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return true;
}

void DeviceGroups::enqueue(uint64_t begin, int buf) {
  const uint64_t count = std::min<uint64_t>(run_rows_, t_.groups - begin);
  launch_gather_groups(t_.table, t_.nkeys, t_.nwords, string_keys_, perm_[cur_], offsets_, begin, count, dev_,
                       t_.shape, t_.stream);
  const uint64_t run = begin / run_rows_;
  const uint64_t arena_bytes = string_keys_ ? run_string_at_[run + 1] - run_string_at_[run] : 0;
  const uint64_t key_bytes = count * t_.nkeys * sizeof(Value), word_bytes = count * t_.nwords * 8;
  GroupGather& h = host_[buf];
  WCSV_CUDA_TRY(cudaMemcpyAsync(h.keys, dev_.keys, key_bytes, cudaMemcpyDeviceToHost, t_.stream));
  WCSV_CUDA_TRY(cudaMemcpyAsync(h.words, dev_.words, word_bytes, cudaMemcpyDeviceToHost, t_.stream));
  if (arena_bytes)
    WCSV_CUDA_TRY(cudaMemcpyAsync(h.arena, dev_.arena, arena_bytes, cudaMemcpyDeviceToHost, t_.stream));
  WCSV_CUDA_TRY(cudaEventRecord(copied_[buf], t_.stream));
  copied_bytes_ += key_bytes + word_bytes + arena_bytes;
  queued_count_[buf] = count;
  queued_[buf] = true;
}

GroupRun DeviceGroups::next() {
  if (at_ >= t_.groups) return GroupRun{};
  WCSV_CUDA_TRY(cudaSetDevice(t_.device));
  auto t0 = std::chrono::steady_clock::now();
  if (!queued_[buf_]) enqueue(at_, buf_);
  WCSV_CUDA_TRY(cudaEventSynchronize(copied_[buf_]));
  queued_[buf_] = false;
  const uint64_t count = queued_count_[buf_];
  // The next run is gathered and copied into the other buffers meanwhile.
  if (at_ + count < t_.groups) enqueue(at_ + count, 1 - buf_);
  wait_s_ += seconds_since(t0);
  const GroupGather& h = host_[buf_];
  const size_t nkeys = static_cast<size_t>(t_.nkeys), nwords = static_cast<size_t>(t_.nwords);
  GroupRun run;
  run.n = count;
  run.keys = KeyRows{reinterpret_cast<const char*>(h.keys), nkeys * sizeof(Value)};
  run.string_base = h.arena;
  // The core's state structs are made from the GPU words as each row is finalized.
  run.fill_state = [this, words = h.words, nwords](size_t r, char* block) {
    const u64* w = words + r * nwords;
    for (size_t a = 0; a < layout_.aggs.size(); ++a) {
      agg_init(layout_.aggs[a], block);
      if (!state_from_words(layout_.aggs[a], w + t_.agg_words[a], block))
        throw InternalError("aggregate without a GPU form reached the GPU");
    }
  };
  at_ += count;
  buf_ = 1 - buf_;
  return run;
}

bool DeviceGroups::start_text(const Plan& plan, const GroupLayout& layout, DelimitedText text) {
  auto t = std::make_unique<TextLayout>();
  if (!make_text_layout(plan, layout, t_.agg_words.data(), text, t.get())) return false;
  WCSV_CUDA_TRY(cudaSetDevice(t_.device));
  const uint64_t rows = std::min<uint64_t>(run_rows_, t_.groups);
  text_cap_ = std::max<uint64_t>(1, text_bound(*t, rows, string_keys_ ? arena_cap_ : 0));
  if (!try_device_alloc(&text_offsets_, (rows + 1) * 8) || !try_device_alloc(&text_failure_, 8) ||
      !try_device_alloc(&text_dev_, text_cap_))
    return false;
  if (!try_pinned_alloc(&text_host_[0], text_cap_) || !try_pinned_alloc(&text_host_[1], text_cap_) ||
      !try_pinned_alloc(&text_totals_, 16))
    return false;
  WCSV_CUDA_TRY(cudaEventCreateWithFlags(&text_made_, cudaEventDisableTiming));
  text_ = std::move(t);
  plan_ = &plan;
  return true;
}

void DeviceGroups::enqueue_text(uint64_t begin) {
  const uint64_t count = std::min<uint64_t>(run_rows_, t_.groups - begin);
  launch_gather_groups(t_.table, t_.nkeys, t_.nwords, string_keys_, perm_[cur_], offsets_, begin, count, dev_,
                       t_.shape, t_.stream);
  launch_text_offsets(*text_, dev_, t_.nwords, count, text_offsets_, text_failure_, temp_, temp_bytes_, t_.shape,
                      t_.stream);
  launch_write_text(*text_, dev_, t_.nwords, count, text_offsets_, text_dev_, t_.shape, t_.stream);
  WCSV_CUDA_TRY(cudaMemcpyAsync(text_totals_, text_offsets_ + count, 8, cudaMemcpyDeviceToHost, t_.stream));
  WCSV_CUDA_TRY(cudaMemcpyAsync(text_totals_ + 1, text_failure_, 8, cudaMemcpyDeviceToHost, t_.stream));
  WCSV_CUDA_TRY(cudaEventRecord(text_made_, t_.stream));
  text_count_ = count;
  text_queued_ = true;
}

TextRun DeviceGroups::next_text() {
  if (at_ >= t_.groups) return TextRun{};
  WCSV_CUDA_TRY(cudaSetDevice(t_.device));
  const auto t0 = std::chrono::steady_clock::now();
  if (!text_queued_) enqueue_text(at_);
  WCSV_CUDA_TRY(cudaEventSynchronize(text_made_));
  text_queued_ = false;
  const uint64_t count = text_count_, bytes = text_totals_[0], failure = text_totals_[1];
  if (failure != kNoTextFailure) throw_group_failure(*plan_, layout_, true, static_cast<int>(failure & 0xff));
  if (bytes > text_cap_) throw InternalError("a run's text outgrew its bound");
  char* host = text_host_[buf_];
  WCSV_CUDA_TRY(cudaMemcpyAsync(host, text_dev_, bytes, cudaMemcpyDeviceToHost, t_.stream));
  WCSV_CUDA_TRY(cudaEventRecord(copied_[0], t_.stream));
  // The next run is made meanwhile (after the copy, on the same stream).
  if (at_ + count < t_.groups) enqueue_text(at_ + count);
  WCSV_CUDA_TRY(cudaEventSynchronize(copied_[0]));
  wait_s_ += seconds_since(t0);
  copied_bytes_ += bytes;
  ++text_runs_;
  ++g_text_runs;
  at_ += count;
  buf_ = 1 - buf_;
  return TextRun{host, bytes, count};
}

void DeviceGroups::add_stages(std::vector<StageTiming>& stages) const {
  const std::string dev = "gpu" + std::to_string(t_.device);
  stages.push_back(StageTiming{"result: order groups", dev, order_s_, 0, 0});
  stages.push_back(
      StageTiming{text_runs_ ? "result: format runs, copy text" : "result: wait for runs", dev, wait_s_, copied_bytes_, 0});
}

void DeviceGroups::free_all() noexcept {
  cudaSetDevice(t_.device);
  cudaStreamSynchronize(t_.stream);
  for (void* p : {static_cast<void*>(perm_[0]), static_cast<void*>(perm_[1]), static_cast<void*>(digits_[0]),
                  static_cast<void*>(digits_[1]), static_cast<void*>(span_), static_cast<void*>(temp_),
                  static_cast<void*>(dev_.keys), static_cast<void*>(dev_.words), static_cast<void*>(dev_.arena)})
    cudaFree(p);
  for (GroupGather& h : host_) {
    cudaFreeHost(h.keys);
    cudaFreeHost(h.words);
    cudaFreeHost(h.arena);
  }
  for (void* p : {static_cast<void*>(text_offsets_), static_cast<void*>(text_failure_), static_cast<void*>(text_dev_)})
    cudaFree(p);
  for (void* p : {static_cast<void*>(text_host_[0]), static_cast<void*>(text_host_[1]), static_cast<void*>(text_totals_)})
    cudaFreeHost(p);
  for (cudaEvent_t e : copied_)
    if (e) cudaEventDestroy(e);
  if (text_made_) cudaEventDestroy(text_made_);
  (void)cudaGetLastError();
}

DeviceGroups::~DeviceGroups() { free_all(); }

}  // namespace cuda
}  // namespace warpcsv
