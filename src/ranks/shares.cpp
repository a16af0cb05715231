#include "ranks/shares.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "exec/partitioner.hpp"
#include "ranks/ranks.hpp"
#include "ranks/wire.hpp"
#include "runtime/parallel.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

std::vector<InputCut> plan_cuts(const std::vector<SourceExtent>& sources, int ranks, uint64_t min_split_bytes) {
  const size_t nsources = sources.size();
  uint64_t total = 0;
  for (const auto& s : sources) total += s.bytes;
  std::vector<InputCut> cuts{InputCut{0, 0}};
  for (int r = 1; r < ranks; ++r) {
    const uint64_t at = static_cast<uint64_t>(static_cast<unsigned __int128>(total) * static_cast<unsigned>(r) /
                                              static_cast<unsigned>(ranks));
    InputCut cut{nsources, 0};
    uint64_t before = 0;
    for (size_t i = 0; i < nsources; ++i) {
      const SourceExtent& s = sources[i];
      if (at < before + s.bytes) {
        const uint64_t offset = at - before;
        if (offset == 0) cut = InputCut{i, 0};
        else if (!s.splittable || s.bytes < min_split_bytes) cut = InputCut{2 * offset < s.bytes ? i : i + 1, 0};
        else cut = InputCut{i, offset};
        break;
      }
      before += s.bytes;
    }
    // Never before the previous rank's start (a moved cut can go back).
    const InputCut& prev = cuts.back();
    if (cut.source < prev.source || (cut.source == prev.source && cut.offset < prev.offset)) cut = prev;
    cuts.push_back(cut);
  }
  return cuts;
}

uint64_t count_line_ends(const char* p, uint64_t n, int next) {
  uint64_t lines = static_cast<uint64_t>(std::count(p, p + n, '\n'));
  for (const char* cr = static_cast<const char*>(std::memchr(p, '\r', n)); cr;
       cr = static_cast<const char*>(std::memchr(cr + 1, '\r', static_cast<size_t>(p + n - cr - 1)))) {
    const int after = cr + 1 < p + n ? static_cast<unsigned char>(cr[1]) : next;
    if (after != '\n') ++lines;
    if (cr + 1 >= p + n) break;
  }
  return lines;
}

bool find_row_start(const Dialect& d, uint8_t state, bool after_cr, const char* bytes, uint64_t n, bool to_end,
                    RowStartFound* found) {
  uint64_t at = n;  // the row start, or the end of the source
  if (state == kRowStart) {
    // The LF of a CRLF cut in two belongs to the row before.
    if (n == 0) {
      if (!to_end) return false;
      at = 0;
    } else {
      at = after_cr && bytes[0] == '\n' ? 1 : 0;
    }
  } else {
    uint8_t s = state;
    uint64_t i = 0;
    for (; i < n; ++i) {
      s = csv_step(d, s, static_cast<uint8_t>(bytes[i]));
      if (s == kRowStart) break;
    }
    if (i == n) {
      if (!to_end) return false;
      at = n;
    } else {
      at = i + 1;
      if (bytes[i] == '\r') {
        if (at == n && !to_end) return false;  // an LF may follow
        if (at < n && bytes[at] == '\n') ++at;
      }
    }
  }
  if (at < n || to_end) {
    found->distance = at;
    found->lines = count_line_ends(bytes, at, at < n ? static_cast<unsigned char>(bytes[at]) : -1);
    return true;
  }
  return false;
}

namespace {

constexpr uint64_t kSummaryBlock = 8ull << 20;

// Bytes [begin, end) of a source summarised on threads, block by block.
ByteSummary summarise(const InputSource& src, const Dialect& d, uint64_t begin, uint64_t end, int threads) {
  const uint64_t size = src.size_bytes();
  const size_t blocks = static_cast<size_t>((end - begin + kSummaryBlock - 1) / kSummaryBlock);
  std::vector<ByteSummary> parts(blocks);
  parallel_for(blocks, threads, [&](size_t b, int) {
    const uint64_t from = begin + b * kSummaryBlock, to = std::min(end, from + kSummaryBlock);
    const uint64_t want = to - from + (to < size ? 1 : 0);  // the byte after decides a CR at the end
    std::vector<char> buf(want);
    if (src.pread(buf.data(), want, from) != want)
      throw InputError(fmt::format("{}: the file shrank while it was read (truncated by another process?)",
                                   src.name()));
    parts[b].tv = transition_vector(d, buf.data(), to - from);
    parts[b].lines = count_line_ends(buf.data(), to - from, to < size ? static_cast<unsigned char>(buf[to - from]) : -1);
  });
  ByteSummary all{tv_identity(), 0};
  for (const auto& p : parts) {
    all.tv = tv_compose(all.tv, p.tv);
    all.lines += p.lines;
  }
  return all;
}

// A piece of a source between two cut points, summarised by rank (index % ranks).
struct Piece {
  size_t source;
  uint64_t begin, end;
};

struct CutPoint {
  uint64_t row_start = 0;  // the first row start at or after the cut
  uint64_t lines = 0;      // line terminators before it
};

// The row start for a cut at `offset` of `src` whose state there is `state`.
CutPoint row_start_after(const InputSource& src, const Dialect& d, uint64_t offset, uint8_t state,
                         uint64_t lines_before) {
  const uint64_t size = src.size_bytes();
  char before = 0;
  if (offset > 0 && src.pread(&before, 1, offset - 1) != 1)
    throw InputError(fmt::format("{}: the file shrank while it was read", src.name()));
  std::vector<char> bytes;
  for (uint64_t want = 64 << 10;; want *= 2) {
    const uint64_t n = std::min(want, size - offset);
    bytes.resize(n);
    if (src.pread(bytes.data(), n, offset) != n)
      throw InputError(fmt::format("{}: the file shrank while it was read", src.name()));
    RowStartFound found;
    if (find_row_start(d, state, before == '\r', bytes.data(), n, offset + n == size, &found))
      return CutPoint{offset + found.distance, lines_before + found.lines};
  }
}

}  // namespace

std::vector<RankShare> split_input(const InputSet& in, int threads, uint64_t min_split_bytes) {
  const int nranks = Ranks::size();
  const size_t nsources = in.sources.size();
  std::vector<SourceExtent> extents;
  for (const auto& src : in.sources) {
    if (nranks > 1 && !src->rereadable())
      throw UsageError(fmt::format("{}: standard input and pipes cannot be shared between ranks; with mpirun or "
                                   "srun of more than one rank, name files (on a file system every rank reads)",
                                   src->name()));
    extents.push_back(SourceExtent{src->size_bytes(), src->can_pread()});
  }
  const std::vector<InputCut> cuts = plan_cuts(extents, nranks, min_split_bytes);

  // The cut points inside each source, and the pieces between them.
  std::vector<std::vector<uint64_t>> points(nsources);
  for (const auto& c : cuts)
    if (c.source < nsources && c.offset > 0) points[c.source].push_back(c.offset);
  std::vector<Piece> pieces;
  for (size_t i = 0; i < nsources; ++i) {
    auto& p = points[i];
    p.erase(std::unique(p.begin(), p.end()), p.end());
    uint64_t from = 0;
    for (uint64_t at : p) {
      pieces.push_back(Piece{i, from, at});
      from = at;
    }
  }
  std::string mine;
  for (size_t q = static_cast<size_t>(Ranks::rank()); q < pieces.size(); q += static_cast<size_t>(nranks)) {
    const Piece& p = pieces[q];
    wire::put(mine, q);
    wire::put(mine, summarise(*in.sources[p.source], in.dialect, p.begin, p.end, threads));
  }
  Ranks::checkpoint();
  std::vector<ByteSummary> summaries(pieces.size());
  for (const std::string& theirs : Ranks::allgather(mine))
    for (size_t at = 0; at < theirs.size();) {
      const size_t q = wire::get<size_t>(theirs, &at);
      summaries.at(q) = wire::get<ByteSummary>(theirs, &at);
    }

  // Each cut point's row start, from the composed state before it.
  std::map<std::pair<size_t, uint64_t>, CutPoint> at_cut;
  uint8_t state = kRowStart;
  uint64_t lines = 0;
  for (size_t q = 0; q < pieces.size(); ++q) {
    const Piece& p = pieces[q];
    if (p.begin == 0) state = kRowStart, lines = 0;  // a source starts at a row start
    state = tv_get(summaries[q].tv, state);
    lines += summaries[q].lines;
    at_cut[{p.source, p.end}] = row_start_after(*in.sources[p.source], in.dialect, p.end, state, lines);
  }

  std::vector<RankShare> shares(static_cast<size_t>(nranks), RankShare(nsources));
  for (size_t r = 0; r < shares.size(); ++r) {
    const InputCut start = cuts[r];
    const InputCut stop = r + 1 < cuts.size() ? cuts[r + 1] : InputCut{nsources, 0};
    for (size_t i = 0; i < nsources; ++i) {
      SourceShare& s = shares[r][i];
      const bool before_start = i < start.source, after_stop = i > stop.source || (i == stop.source && stop.offset == 0);
      if (before_start || after_stop) {
        s.whole = false;
        continue;
      }
      if (i == start.source && start.offset > 0) {
        const CutPoint& c = at_cut.at({i, start.offset});
        s.begin = c.row_start;
        s.lines_before = c.lines;
        s.whole = false;
      }
      s.end = extents[i].bytes;
      if (i == stop.source && stop.offset > 0) {
        s.end = at_cut.at({i, stop.offset}).row_start;
        s.whole = false;
      }
    }
  }
  return shares;
}

void keep_share(InputSet& in, const RankShare& share) {
  for (size_t i = 0; i < in.sources.size() && i < share.size(); ++i) {
    const SourceShare& s = share[i];
    if (s.whole) continue;
    if (s.empty()) in.sources[i]->keep_nothing();
    else in.sources[i]->keep_range(s.begin, s.end, s.lines_before);
  }
}

std::string describe_shares(const InputSet& in, const std::vector<RankShare>& shares) {
  std::string text = fmt::format("  ranks: {}, each reading a contiguous share of the input cut at row starts\n",
                                 shares.size());
  for (size_t r = 0; r < shares.size(); ++r) {
    std::string parts;
    for (size_t i = 0; i < shares[r].size(); ++i) {
      const SourceShare& s = shares[r][i];
      if (s.empty()) continue;
      parts += (parts.empty() ? "" : ", ") + in.sources[i]->name() +
               (s.whole ? std::string(" (all of it)") : fmt::format(" bytes [{}, {}) of its data", s.begin, s.end));
    }
    text += fmt::format("    rank {}: {}\n", r, parts.empty() ? "nothing" : parts);
  }
  return text;
}

PartitionNumbers rank_partition_numbers(int rank, int ranks) {
  int bits = 0;  // ranks take the top bits of the 32
  while ((1 << bits) < ranks) ++bits;
  PartitionNumbers n;
  n.count = uint64_t{1} << (32 - bits);
  n.first = static_cast<uint64_t>(rank) * n.count;
  return n;
}

}  // namespace warpcsv
