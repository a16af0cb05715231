#include "exec/arg_list.hpp"

#include <algorithm>
#include <cstring>

#include "warpcsv/core/hash.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

ArgList::ArgList(Type t)
    : type_(t),
      form_(t == Type::String ? Form::Strings : Form::Keys),
      narrow_(t == Type::Int || t == Type::Decimal || t == Type::Date || t == Type::Bool) {}

void ArgList::widen() {
  wide_.resize(size());
  for (size_t i = 0; i < size(); ++i) wide_[i] = holistic_value_of_key(key(i), type_).i;
  keys_ = ListArray<uint64_t>();
  narrow_keys_ = ListArray<uint32_t>();
  narrow_ = false;
  form_ = Form::Wide;
}

void ArgList::unnarrow() {
  keys_.resize(narrow_keys_.size());
  for (size_t i = 0; i < narrow_keys_.size(); ++i) keys_[i] = kNarrowBase + narrow_keys_[i];
  narrow_keys_ = ListArray<uint32_t>();
  narrow_ = false;
}

void ArgList::fill_sorted(size_t n, uint32_t** groups, uint64_t** keys) {
  *this = ArgList(type_);
  form_ = Form::Keys;
  narrow_ = false;
  groups_.resize(n);
  keys_.resize(n);
  *groups = groups_.data();
  *keys = keys_.data();
  sorted_ = true;
  next_compaction_ = SIZE_MAX;
}

uint64_t ArgList::hash_of(uint32_t g, const Value& v) const {
  const uint64_t h = hash_mix(g + 0x9e3779b97f4a7c15ull);
  return form_ == Form::Keys ? hash_combine(h, hash_mix(holistic_key(v, type_))) : hash_combine(h, hash_value(v, type_));
}

bool ArgList::equal_at(size_t i, uint32_t g, const Value& v) const {
  if (groups_[i] != g) return false;
  switch (form_) {
    case Form::Keys: return key(i) == holistic_key(v, type_);
    case Form::Wide: return wide_[i] == v.i;
    default: return key_equal(value(i), v, Type::String);
  }
}

void ArgList::rebuild_index(size_t cap) {
  index_.assign(cap, 0);
  for (size_t i = 0; i < size(); ++i) {
    size_t s = hash_of(groups_[i], value(i)) & (cap - 1);
    while (index_[s]) s = (s + 1) & (cap - 1);
    index_[s] = static_cast<uint32_t>(i + 1);
  }
}

void ArgList::add_merged(uint32_t g, const Value& v) {
  if (form_ == Form::Keys && !holistic_key_fits(v, type_)) {  // the hashes of the wide form differ
    widen();
    rebuild_index(index_.size());
  }
  const size_t mask = index_.size() - 1;
  for (size_t s = hash_of(g, v) & mask;; s = (s + 1) & mask) {
    const uint32_t e = index_[s];
    if (e == 0) {
      append(g, v);
      index_[s] = static_cast<uint32_t>(size());
      if (2 * size() > index_.size()) rebuild_index(2 * index_.size());
      return;
    }
    if (equal_at(e - 1, g, v)) {
      ++weights_[e - 1];
      return;
    }
  }
}

bool ArgList::sample_looks_distinct() const {
  constexpr size_t kSample = 1 << 16;
  const size_t n = size();
  if (n <= 4 * kSample) return false;
  // Positions spread over the list (a stride would meet runs of equal values
  // in sorted input, or a period, only at their edges).
  std::vector<size_t> picked(kSample);
  uint64_t state = 0x9e3779b97f4a7c15ull ^ n;
  for (size_t& i : picked) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    i = static_cast<size_t>((static_cast<unsigned __int128>(state >> 16) * n) >> 48);
  }
  constexpr size_t cap = 4 * kSample;
  std::vector<size_t> slot(cap, 0);  // index + 1 of a sampled value; 0 is empty
  size_t distinct = 0;
  for (size_t i : picked)
    for (size_t s = hash_of(groups_[i], value(i)) & (cap - 1);; s = (s + 1) & (cap - 1)) {
      if (slot[s] == 0) {
        slot[s] = i + 1;
        ++distinct;
        break;
      }
      if (equal_at(slot[s] - 1, groups_[i], value(i))) break;
    }
  return distinct * 10 > kSample * 9;
}

void ArgList::compact() {
  const size_t n = size();
  // A large list whose sample is nearly all distinct values stays as it
  // is: counting all of its values (a table of twice its size, a cache miss
  // a value) cost a tenth of a run of medians over distinct values. Lists of
  // between a third and a half distinct values are left too; they would not
  // shrink by more than that.
  if (sample_looks_distinct()) {
    next_compaction_ = SIZE_MAX;
    return;
  }
  // Open addressing over the distinct values (index + 1; 0 is empty): first
  // only counted, so that a list which would not halve stays as it is (its
  // values without weights); then kept values move to the front in place
  // (value `kept` is written only after every value before it was read).
  size_t cap = 64;
  while (cap < 2 * n) cap *= 2;
  std::vector<uint32_t> slot(cap, 0);
  size_t distinct = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t s = hash_of(groups_[i], value(i)) & (cap - 1);; s = (s + 1) & (cap - 1)) {
      if (slot[s] == 0) {
        slot[s] = static_cast<uint32_t>(i + 1);
        ++distinct;
        break;
      }
      if (equal_at(slot[s] - 1, groups_[i], value(i))) break;
    }
  next_compaction_ = SIZE_MAX;
  if (distinct * 2 > n) return;
  std::fill(slot.begin(), slot.end(), 0);
  ListArray<uint64_t> w;
  w.resize(distinct);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t wi = weight(i);
    for (size_t s = hash_of(groups_[i], value(i)) & (cap - 1);; s = (s + 1) & (cap - 1)) {
      if (slot[s] == 0) {
        slot[s] = static_cast<uint32_t>(kept + 1);
        groups_[kept] = groups_[i];
        if (form_ == Form::Keys && narrow_) narrow_keys_[kept] = narrow_keys_[i];
        else if (form_ == Form::Keys) keys_[kept] = keys_[i];
        else if (form_ == Form::Wide) wide_[kept] = wide_[i];
        else strs_[kept] = strs_[i];
        w[kept++] = wi;
        break;
      }
      if (equal_at(slot[s] - 1, groups_[i], value(i))) {
        w[slot[s] - 1] += wi;
        break;
      }
    }
  }
  groups_.resize(kept);
  keys_.resize(form_ == Form::Keys && !narrow_ ? kept : 0);
  narrow_keys_.resize(form_ == Form::Keys && narrow_ ? kept : 0);
  wide_.resize(form_ == Form::Wide ? kept : 0);
  strs_.resize(form_ == Form::Strings ? kept : 0);
  weights_ = std::move(w);
  size_t index_cap = 64;
  while (index_cap < 4 * kept) index_cap *= 2;
  rebuild_index(index_cap);
}

void ArgList::keep_top(uint32_t n, bool largest) {
  WCSV_EXPECTS(n >= 1 && n <= kMaxTopKept && size() == 0 && form_ == Form::Keys,
               "a list keeps the top values of its groups from its start, as keys");
  top_n_ = n;
  top_largest_ = largest;
  narrow_ = false;  // list_tops writes keys
}

void ArgList::grow_tops(uint32_t g) {
  const size_t had = top_counts_.size();
  const size_t want = std::max<size_t>({static_cast<size_t>(g) + 1, 2 * had, 1024});
  top_counts_.resize(want);
  std::memset(top_counts_.data() + had, 0, want - had);
  top_keys_.resize(want * top_n_);
}

void ArgList::list_tops() {
  const size_t n = top_n_;
  top_n_ = 0;
  size_t total = size();
  for (size_t g = 0; g < top_counts_.size(); ++g) total += top_counts_[g];
  size_t at = size();
  groups_.resize(total);
  keys_.resize(total);
  for (size_t g = 0; g < top_counts_.size(); ++g)
    for (size_t j = 0; j < top_counts_[g]; ++j, ++at) {
      groups_[at] = static_cast<uint32_t>(g);
      keys_[at] = top_keys_[g * n + j];
    }
  top_keys_ = GrowArray<uint64_t>();
  top_counts_ = GrowArray<uint8_t>();
}

}  // namespace warpcsv
