#include "ranks/group_exchange.hpp"

#include <cstring>

#include "ranks/ranks.hpp"
#include "ranks/wire.hpp"
#include "runtime/parallel.hpp"

namespace warpcsv {

namespace {

constexpr size_t kMergeParts = 64;

// What one rank sends another: the segments of whole records that its
// threads wrote, each segment's length first, so the receiver's threads can
// walk them apart.
std::vector<char> pack_segments(const std::vector<std::vector<char>*>& segments) {
  size_t total = 8 + 8 * segments.size();
  for (const auto* s : segments) total += s->size();
  std::vector<char> out(total);
  uint64_t n = segments.size();
  std::memcpy(out.data(), &n, 8);
  size_t at = 8 + 8 * segments.size();
  for (size_t i = 0; i < segments.size(); ++i) {
    const uint64_t len = segments[i]->size();
    std::memcpy(out.data() + 8 + 8 * i, &len, 8);
    std::memcpy(out.data() + at, segments[i]->data(), len);
    at += len;
  }
  return out;
}

void unpack_segments(const std::vector<char>& in, std::vector<std::pair<const char*, size_t>>& into) {
  if (in.size() < 8) throw InternalError("internal error: an exchange of groups cut short");
  uint64_t n = 0;
  std::memcpy(&n, in.data(), 8);
  size_t at = 8 + 8 * n;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    std::memcpy(&len, in.data() + 8 + 8 * i, 8);
    if (at + len > in.size()) throw InternalError("internal error: an exchange of groups cut short");
    into.emplace_back(in.data() + at, len);
    at += len;
  }
}

}  // namespace

GroupTable merge_group_records(const GroupLayout& layout, const std::vector<std::pair<const char*, size_t>>& inputs,
                               int threads) {
  const GroupRecords records(layout);
  // Where each input's records are, by part of the hash.
  std::vector<std::vector<std::vector<uint64_t>>> at(inputs.size(), std::vector<std::vector<uint64_t>>(kMergeParts));
  parallel_for(inputs.size(), threads, [&](size_t i, int) {
    AlignedBlock block(records.block_bytes());
    const auto [p, n] = inputs[i];
    uint64_t hash = 0;
    for (size_t off = 0; off < n;) {
      const size_t len = records.read_record(p + off, n - off, &hash, block.get());
      at[i][hash_part(hash, kMergeParts)].push_back(off);
      off += len;
    }
  });
  // Each part merged alone, then appended: parts share no group.
  std::vector<GroupTable> parts;
  parts.reserve(kMergeParts);
  for (size_t p = 0; p < kMergeParts; ++p) parts.emplace_back(&layout);
  parallel_for(kMergeParts, threads, [&](size_t part, int) {
    AlignedBlock block(records.block_bytes());
    uint64_t hash = 0;
    size_t most = 0;  // groups the part can have: no growing on the way
    for (size_t i = 0; i < inputs.size(); ++i) most += at[i][part].size();
    parts[part].reserve(most);
    for (size_t i = 0; i < inputs.size(); ++i)
      for (uint64_t off : at[i][part]) {
        records.read_record(inputs[i].first + off, inputs[i].second - off, &hash, block.get());
        parts[part].merge_block(hash, block.get());
      }
  });
  GroupTable all(&layout);
  all.append_disjoint(parts, threads);
  return all;
}

RankPart exchange_groups(GroupTable& mine, const Plan& plan, int threads, size_t run_rows) {
  const size_t nranks = static_cast<size_t>(Ranks::size()), me = static_cast<size_t>(Ranks::rank());
  const GroupLayout& layout = mine.layout();
  const GroupRecords records(layout);
  // Each thread writes its range of groups as records, one buffer per owner.
  const size_t n = mine.size(), ranges = std::max<size_t>(1, range_parts(n, threads));
  std::vector<std::vector<std::vector<char>>> by_owner(ranges, std::vector<std::vector<char>>(nranks));
  parallel_for(ranges, threads, [&](size_t p, int) {
    auto& out = by_owner[p];
    for (size_t g = n * p / ranges; g < n * (p + 1) / ranges; ++g)
      records.append(mine, g, out[rank_of_hash(mine.hash_of(g), nranks)]);
  });
  std::vector<std::vector<char>> payload(nranks);
  for (size_t q = 0; q < nranks; ++q) {
    std::vector<std::vector<char>*> segments;
    for (auto& r : by_owner) segments.push_back(&r[q]);
    payload[q] = pack_segments(segments);
    for (auto& r : by_owner) std::vector<char>().swap(r[q]);
  }
  mine = GroupTable(&layout);
  Ranks::checkpoint();
  // Pairwise, rank me + s sent to as rank me - s is received from: every
  // pair once, none waiting on another.
  std::vector<std::vector<char>> received(nranks);
  received[me] = std::move(payload[me]);
  for (size_t s = 1; s < nranks; ++s) {
    const size_t to = (me + s) % nranks, from = (me + nranks - s) % nranks;
    received[from] = Ranks::send_receive(static_cast<int>(to), payload[to], static_cast<int>(from));
    std::vector<char>().swap(payload[to]);
  }
  RankPart part;
  std::vector<std::pair<const char*, size_t>> inputs;
  for (const auto& r : received) unpack_segments(r, inputs);
  part.groups = std::make_unique<GroupTable>(merge_group_records(layout, inputs, threads));
  received.clear();
  part.groups->drop_index();
  part.ordered = std::make_unique<SortedHostGroups>(plan, std::vector<const GroupTable*>{part.groups.get()}, nullptr,
                                                    threads, run_rows);
  Ranks::checkpoint();
  std::string held;
  wire::put(held, static_cast<uint64_t>(part.groups->size()));
  for (const std::string& theirs : Ranks::allgather(held)) {
    size_t at = 0;
    part.all_groups += wire::get<uint64_t>(theirs, &at);
  }
  return part;
}

std::vector<std::vector<char>> sorted_records(RankPart& part, int threads) {
  std::vector<uint32_t> order;
  order.reserve(part.groups->size());
  for (GroupRun run = part.ordered->next(); run.n; run = part.ordered->next())
    for (size_t r = 0; r < run.n; ++r) order.push_back(static_cast<uint32_t>(run.group(r)));
  const GroupRecords records(part.groups->layout());
  const size_t n = order.size(), ranges = std::max<size_t>(1, range_parts(n, threads));
  std::vector<std::vector<char>> segments(ranges);
  parallel_for(ranges, threads, [&](size_t p, int) {
    for (size_t i = n * p / ranges; i < n * (p + 1) / ranges; ++i) records.append(*part.groups, order[i], segments[p]);
  });
  part.ordered.reset();
  part.groups.reset();
  return segments;
}

}  // namespace warpcsv
