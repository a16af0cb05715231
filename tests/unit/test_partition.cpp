// partition_window (exec/partitioner.hpp) on seeded random CSV text at many chunk sizes: the
// row starts found by walking the partitions equal a sequential scan's, and `ready` /
// `consumed` are right when the window does not reach the end of input. The same for the
// fixed-offset batches of cuda/batch_feed.hpp (the CUDA executor's input), from files and
// from streams.
#include <algorithm>
#include <cstdint>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/batch_feed.hpp"
#include "exec/partitioner.hpp"
#include "exec/scan.hpp"
#include "test_files.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "cpu/cpu_windows.hpp"

using namespace warpcsv;

namespace {

auto ignore_fields = [](uint32_t, uint64_t, uint64_t, uint8_t) {};

// Row starts (comment and empty lines included) of bytes [0, n), one row after another.
std::vector<uint64_t> sequential_row_starts(const Dialect& d, const std::string& s) {
  std::vector<uint64_t> starts;
  uint64_t pos = 0;
  while (pos < s.size()) {
    starts.push_back(pos);
    pos = parse_row(d, s.data(), pos, s.size(), true, ignore_fields).next;
  }
  return starts;
}

// Row starts found the way the executor finds them: from each ready partition's first row
// start, row after row while the row starts inside the partition.
std::vector<uint64_t> partitioned_row_starts(const Dialect& d, const Window& w, const PartitionedWindow& pw) {
  std::vector<uint64_t> starts;
  for (size_t j = 0; j < pw.ready; ++j) {
    uint64_t pos = pw.first_row[j];
    if (pos == kNoRow) continue;
    REQUIRE(pos >= pw.begin[j]);
    REQUIRE(pos < pw.end(j));
    while (pos < pw.end(j)) {
      starts.push_back(pos);
      RowResult r = parse_row(d, w.data, pos, w.size, w.at_eof, ignore_fields);
      REQUIRE_FALSE(r.incomplete);  // a ready partition's rows end inside the window
      pos = r.next;
    }
  }
  return starts;
}

// Structured random CSV with every tricky construct the dialect has.
std::string random_text(std::mt19937_64& rng, const Dialect& d, size_t rows) {
  std::string s;
  const char* eols[] = {"\n", "\r\n", "\r"};
  for (size_t r = 0; r < rows; ++r) {
    const int kind = static_cast<int>(rng() % 20);
    if (kind == 0) {
      s += eols[rng() % 3];  // empty line
      continue;
    }
    if (kind == 1 && d.comment >= 0) {
      s += static_cast<char>(d.comment);
      s += "c,\"x";
      s += eols[rng() % 3];
      continue;
    }
    const size_t nf = 1 + rng() % 4;
    for (size_t f = 0; f < nf; ++f) {
      if (f) s += static_cast<char>(d.delimiter);
      const int fk = static_cast<int>(rng() % 6);
      if (fk == 0) continue;  // empty field
      if (fk <= 2) {
        s += "v" + std::to_string(rng() % 1000);
        continue;
      }
      s += static_cast<char>(d.quote);
      const size_t len = rng() % 8;
      for (size_t i = 0; i < len; ++i) {
        const int ck = static_cast<int>(rng() % 9);
        if (ck == 0)
          s += "\n";
        else if (ck == 1)
          s += "\r\n";
        else if (ck == 2)
          s += "\r";
        else if (ck == 3)
          s += static_cast<char>(d.delimiter);
        else if (ck == 4)
          s += std::string(2, static_cast<char>(d.quote));
        else if (ck == 5 && d.escape >= 0) {
          s += static_cast<char>(d.escape);
          s += rng() % 2 ? static_cast<char>(d.quote) : 'n';
        } else if (ck == 6 && d.comment >= 0)
          s += static_cast<char>(d.comment);
        else
          s += static_cast<char>('a' + rng() % 26);
      }
      s += static_cast<char>(d.quote);
    }
    if (r + 1 < rows || rng() % 2) s += eols[rng() % 3];
  }
  return s;
}

}  // namespace

TEST_CASE("partition_window finds every row start at any chunk size") {
  const std::vector<Dialect> dialects = {make_dialect(',', '"', -1, -1), make_dialect(',', '"', '\\', '#'),
                                         make_dialect('\t', '\'', -1, '#')};
  const std::vector<uint64_t> chunks = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64, 100, 1000, 1 << 20};
  std::mt19937_64 rng(2024);
  for (const Dialect& d : dialects) {
    for (int iter = 0; iter < 40; ++iter) {
      const std::string s = random_text(rng, d, 1 + rng() % 60);
      const std::vector<uint64_t> expect = sequential_row_starts(d, s);
      for (uint64_t chunk : chunks) {
        for (int threads : {1, 3}) {
          for (bool fine_tail : {false, true}) {
            INFO("iter " << iter << " chunk " << chunk << " threads " << threads << " fine tail " << fine_tail
                         << " text: " << s);
            Window w{s.data(), s.size(), 0, true};
            PartitionedWindow pw = partition_window(d, w, chunk, threads, fine_tail);
            REQUIRE(pw.ready == pw.begin.size());
            REQUIRE(pw.consumed == s.size());
            REQUIRE(partitioned_row_starts(d, w, pw) == expect);
          }
        }
      }
    }
  }
}

TEST_CASE("partition_window on random bytes agrees with a sequential scan") {
  // Unstructured bytes: stray quotes, text after quotes, unterminated quotes, lone CRs.
  const Dialect d = make_dialect(',', '"', '\\', '#');
  const std::string alphabet = "ab,\"\\#\n\r\n";
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 400; ++iter) {
    std::string s(1 + rng() % 80, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    const std::vector<uint64_t> expect = sequential_row_starts(d, s);
    for (uint64_t chunk : {1, 2, 3, 7, 16, 64}) {
      INFO("chunk " << chunk << " bytes: " << s);
      Window w{s.data(), s.size(), 0, true};
      PartitionedWindow pw = partition_window(d, w, chunk, 2);
      REQUIRE(partitioned_row_starts(d, w, pw) == expect);
    }
  }
}

TEST_CASE("partition_window: ready and consumed when the window is not at EOF") {
  const Dialect d = make_dialect(',', '"', '\\', '#');
  std::mt19937_64 rng(31337);
  for (int iter = 0; iter < 150; ++iter) {
    const std::string s = random_text(rng, d, 2 + rng() % 40);
    const std::vector<uint64_t> all = sequential_row_starts(d, s);
    const std::set<uint64_t> all_set(all.begin(), all.end());
    for (uint64_t chunk : {1, 2, 3, 7, 16, 64}) {
      // Every prefix length is a window whose input goes on.
      for (uint64_t cut = 1; cut <= s.size(); cut += 1 + rng() % 5) {
        INFO("chunk " << chunk << " cut " << cut << " text: " << s);
        Window w{s.data(), cut, 0, false};
        PartitionedWindow pw = partition_window(d, w, chunk, 2);
        REQUIRE(pw.ready <= pw.begin.size());
        if (pw.ready == 0) {
          REQUIRE(pw.consumed == 0);
          continue;
        }
        if (pw.ready == pw.begin.size()) {
          // All of it: the window ends right after a row's LF.
          REQUIRE(pw.consumed == cut);
          REQUIRE(s[cut - 1] == '\n');
          REQUIRE((cut == s.size() || all_set.count(cut) == 1));
        } else {
          // consumed is the start of the first row not processed, so the next window starts there.
          REQUIRE(all_set.count(pw.consumed) == 1);
          REQUIRE(pw.consumed >= pw.begin[pw.ready]);
          REQUIRE(pw.consumed < pw.end(pw.ready));
        }
        std::vector<uint64_t> expect;
        for (uint64_t p : all)
          if (p < pw.consumed) expect.push_back(p);
        REQUIRE(partitioned_row_starts(d, w, pw) == expect);
      }
    }
  }
}

TEST_CASE("partition_window: inline boundary cases") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  SECTION("CRLF split across partitions is one terminator") {
    const std::string s = "a\r\nb\r\nc";
    for (uint64_t chunk = 1; chunk <= s.size(); ++chunk) {
      Window w{s.data(), s.size(), 0, true};
      PartitionedWindow pw = partition_window(d, w, chunk, 1);
      CHECK(partitioned_row_starts(d, w, pw) == std::vector<uint64_t>{0, 3, 6});
    }
  }
  SECTION("a newline inside quotes is not a row start") {
    const std::string s = "\"x\ny\",1\n\"\"\"\n\",2\n";
    for (uint64_t chunk = 1; chunk <= s.size(); ++chunk) {
      Window w{s.data(), s.size(), 0, true};
      PartitionedWindow pw = partition_window(d, w, chunk, 1);
      CHECK(partitioned_row_starts(d, w, pw) == std::vector<uint64_t>{0, 8});
    }
  }
  SECTION("one row larger than the window: nothing ready") {
    const std::string s = "\"abc\ndef\nghi";
    Window w{s.data(), s.size(), 0, false};
    PartitionedWindow pw = partition_window(d, w, 2, 1);
    CHECK(pw.ready == 0);
    CHECK(pw.consumed == 0);
  }
  SECTION("empty window") {
    Window w{"", 0, 0, true};
    PartitionedWindow pw = partition_window(d, w, 4, 1);
    CHECK(pw.begin.empty());
    CHECK(pw.ready == 0);
  }
}

// ---- fixed-offset batches (cuda/batch_feed.hpp), as the CUDA executor reads them ----------

namespace {

// One batch as BatchFeed filled it.
struct FedBatch {
  BatchSpan span;
  std::string buf;
};

// Every batch of `src`, read one after another into buffers of the feed's size.
std::vector<FedBatch> feed_all(InputSource& src, uint64_t batch, uint64_t tail, PiecePool& pool) {
  BatchFeed feed(src, batch, tail, pool);
  std::vector<FedBatch> out;
  for (;;) {
    FedBatch b;
    b.buf.assign(feed.buffer_bytes(), '\0');
    if (!feed.next(&b.buf[0], b.span)) break;
    REQUIRE(b.span.own > 0);
    REQUIRE(out.size() <= src.size_bytes() + (1 << 16));  // no endless feed
    out.push_back(std::move(b));
  }
  return out;
}

// Row starts of every batch, found the way the kernels find them: each batch
// walks only its own bytes from the start state the chain gives it.
std::vector<uint64_t> batch_row_starts(const Dialect& d, const std::vector<FedBatch>& batches,
                                       std::mt19937_64& rng) {
  StateChain chain(kRowStart);
  std::vector<size_t> order(batches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);  // vectors arrive in any order
  for (size_t i : order) {
    const FedBatch& b = batches[i];
    chain.publish(b.span.index, tv_of_bytes(d, b.buf.data() + kBatchLead, b.span.own));
  }
  std::vector<uint64_t> starts;
  for (const FedBatch& b : batches) {
    const uint8_t state = chain.wait_state(b.span.index);
    const char* own = b.buf.data() + kBatchLead;
    if (batch_starts_row(b.span, state)) starts.push_back(b.span.from);
    uint8_t s = state;
    for (uint64_t i = 0; i < b.span.own; ++i) {
      s = csv_step(d, s, static_cast<uint8_t>(own[i]));
      const uint64_t at = i + 1;
      if (s == kRowStart && at < b.span.own && !(own[i] == '\r' && own[at] == '\n')) starts.push_back(b.span.from + at);
    }
  }
  return starts;
}

}  // namespace

// The CPU executor's windows give every thread partitions, stay bounded, and
// keep at least 8 partitions of a chunk the user chose.
TEST_CASE("CPU windows: several partitions per thread, bounded, default chunks shrink with threads") {
  CHECK(default_cpu_chunk(1) == 16ull << 20);
  CHECK(default_cpu_chunk(2) == 16ull << 20);
  CHECK(default_cpu_chunk(16) == 2ull << 20);
  CHECK(default_cpu_chunk(512) == 1ull << 20);
  for (int threads : {1, 2, 3, 8, 16, 32, 64, 128, 512}) {
    INFO("threads " << threads);
    const uint64_t chunk = default_cpu_chunk(threads);
    const uint64_t parts = cpu_window_bytes(chunk, threads) / chunk;
    CHECK(parts >= std::min<uint64_t>(4 * threads, 2 * kCpuWindowBytes / chunk));
    CHECK(parts >= 8);
    CHECK(cpu_window_bytes(chunk, threads) <= 2 * kCpuWindowBytes);
    // A chunk the user chose: at least 8 of them, or at least 1 MiB.
    for (uint64_t user : {uint64_t{7}, uint64_t{4096}, uint64_t{64} << 20, uint64_t{1} << 30}) {
      const uint64_t w = cpu_window_bytes(user, threads);
      CHECK(w >= 8 * user);
      CHECK(w >= (1u << 20));
      CHECK(w <= std::max({2 * kCpuWindowBytes, 8 * user, uint64_t{1} << 20}));
    }
  }
}

TEST_CASE("fixed-offset batches: composed vectors give every row start, from files and streams") {
  const Dialect d = make_dialect(',', '"', '\\', '#');
  DialectOptions opts;
  opts.escape = '\\';
  opts.comment = '#';
  testing::TempDir dir;
  PiecePool pool(2);
  std::mt19937_64 rng(77);
  for (int iter = 0; iter < 60; ++iter) {
    const std::string data = random_text(rng, d, 1 + rng() % 50);
    const std::string path = dir.file("t" + std::to_string(iter) + ".csv");
    testing::write_file(path, "h1,h2\n" + data);
    const std::string gz = path + ".gz";
    testing::write_file(gz, testing::gzip("h1,h2\n" + data));
    const std::vector<uint64_t> expect = sequential_row_starts(d, data);
    for (uint64_t batch : {1, 2, 3, 7, 16, 64, 1000}) {
      for (const std::string& p : {path, gz}) {
        INFO("iter " << iter << " batch " << batch << " " << p << " text: " << data);
        InputSource src(p, opts, d);
        REQUIRE(src.can_pread() == (p == path));
        const uint64_t tail = 1 + rng() % 40;
        const std::vector<FedBatch> batches = feed_all(src, batch, tail, pool);
        // The batches tile the data; each buffer holds the byte before it and its tail.
        uint64_t at = 0;
        for (size_t i = 0; i < batches.size(); ++i) {
          const BatchSpan& s = batches[i].span;
          REQUIRE(s.index == i);
          REQUIRE(s.from == at);
          REQUIRE(s.own == std::min<uint64_t>(batch, data.size() - at));
          REQUIRE(s.n == std::min<uint64_t>(s.own + tail, data.size() - at));
          REQUIRE(s.at_eof == (at + s.n == data.size()));
          REQUIRE(batches[i].buf.substr(kBatchLead, s.n) == data.substr(at, s.n));
          REQUIRE(s.has_prev == (at > 0));
          if (at > 0) REQUIRE(batches[i].buf[kBatchLead - 1] == data[at - 1]);
          at += s.own;
        }
        REQUIRE(at == data.size());
        REQUIRE(batch_row_starts(d, batches, rng) == expect);
      }
    }
  }
}

namespace {
// A host buffer filled the way a GPU's is: each piece is written into a
// per-call scratch "slot" first and moved to its place after; the pieces'
// ranges and threads are recorded.
class SlotBuffer : public BatchDestination {
 public:
  explicit SlotBuffer(uint64_t bytes) : buf(bytes, '\0') {}
  void put(uint64_t at, uint64_t len, const std::function<void(char*)>& fill) override {
    std::string slot(len, '\0');
    fill(&slot[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a copy's time: the helpers get pieces too
    std::memcpy(&buf[at], slot.data(), len);
    std::lock_guard<std::mutex> l(m);
    pieces.emplace_back(at, len);
    threads.insert(std::this_thread::get_id());
  }
  std::string buf;
  std::mutex m;
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  std::set<std::thread::id> threads;
};
}  // namespace

TEST_CASE("BatchFeed: batches read ahead, piece by piece on several threads, tile the file") {
  testing::TempDir dir;
  std::mt19937_64 rng(5);
  // Three batches of several pieces each, and a CRLF split at the first batch boundary.
  const uint64_t batch = 3 * kReadPiece + 12345, tail = 1000;
  std::string data(2 * batch + kReadPiece + 77, 'x');
  for (char& c : data) c = "ab,\n\r\""[rng() % 6];
  data[batch - 1] = '\r';
  data[batch] = '\n';
  data[2 * batch - 1] = 'x';
  data[2 * batch] = '\n';
  const std::string path = dir.file("big.csv");
  testing::write_file(path, "h1,h2\n" + data);  // the header is not the source's data
  DialectOptions opts;
  const Dialect d = make_dialect(',', '"', -1, -1);
  InputSource src(path, opts, d);
  REQUIRE(src.can_pread());
  PiecePool pool(3);
  BatchFeed feed(src, batch, tail, pool);
  // All batches are started before the first is waited for.
  std::vector<std::unique_ptr<SlotBuffer>> bufs;
  std::vector<BatchRead> reads(4);
  size_t started = 0;
  for (; started < reads.size(); ++started) {
    bufs.push_back(std::make_unique<SlotBuffer>(feed.buffer_bytes()));
    if (!feed.start(reads[started], *bufs.back())) break;
  }
  for (size_t i = 0; i < started; ++i) feed.wait(reads[i]);  // all, before a failed check can end the test
  REQUIRE(started == 3);
  REQUIRE(feed.exhausted());
  std::set<std::thread::id> threads;
  for (size_t i = 0; i < started; ++i) {
    const BatchSpan& s = reads[i].span;
    SlotBuffer& b = *bufs[i];
    INFO("batch " << i);
    REQUIRE(s.index == i);
    REQUIRE(s.from == i * batch);
    REQUIRE(s.own == std::min<uint64_t>(batch, data.size() - s.from));
    REQUIRE(s.n == std::min<uint64_t>(s.own + tail, data.size() - s.from));
    const uint64_t lead = std::min<uint64_t>(kBatchLead, s.from);
    REQUIRE(b.buf.substr(kBatchLead - lead, lead + s.n) == data.substr(s.from - lead, lead + s.n));
    // The pieces tile the bytes read, none larger than a slot.
    std::sort(b.pieces.begin(), b.pieces.end());
    uint64_t at = kBatchLead - lead;
    for (const auto& piece : b.pieces) {
      REQUIRE(piece.first == at);
      REQUIRE(piece.second <= kReadPiece);
      at += piece.second;
    }
    REQUIRE(at == kBatchLead + s.n);
    CHECK(s.splits_crlf == (i == 1));  // batch 1 starts with the LF of a CRLF; batch 2 with a plain LF
    CHECK(batch_starts_row(s, kRowStart) == (i != 1));
    threads.insert(b.threads.begin(), b.threads.end());
  }
  CHECK(threads.size() > 1);  // the helpers read too
}

TEST_CASE("PiecePool: jobs posted together finish in any wait order; a piece's error reaches its waiter") {
  PiecePool pool(2);
  std::vector<std::atomic<int>> hits(300);
  auto count = [&](uint64_t base) {
    return [&hits, base](uint64_t i) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      ++hits[base + i];
    };
  };
  PiecePool::Ticket a = pool.post(100, count(0));
  PiecePool::Ticket b = pool.post(100, count(100));
  PiecePool::Ticket bad = pool.post(100, [&](uint64_t i) {
    ++hits[200 + i];
    if (i == 37) throw std::runtime_error("piece 37");
  });
  pool.wait(b);
  for (size_t i = 100; i < 200; ++i) REQUIRE(hits[i] == 1);
  CHECK_THROWS_WITH(pool.wait(bad), "piece 37");
  for (size_t i = 200; i < 300; ++i) REQUIRE(hits[i] == 1);  // the other pieces still ran, once
  pool.wait(a);
  for (size_t i = 0; i < 100; ++i) REQUIRE(hits[i] == 1);
  // With no helpers a job runs when it is posted.
  PiecePool alone(0);
  int n = 0;
  PiecePool::Ticket t = alone.post(5, [&](uint64_t) { ++n; });
  CHECK(n == 5);
  alone.wait(t);
}

TEST_CASE("PiecePool: each pool borrows the process's kept threads and gives them back") {
  // A pool per scan: after the first, later ones make no threads.
  auto scan = [] {
    PiecePool pool(6);
    std::atomic<int> pieces{0};
    pool.wait(pool.post(64, [&](uint64_t) { ++pieces; }));
    return pieces.load();
  };
  CHECK(scan() == 64);
  const int made = WorkerPool::shared().threads();
  for (int i = 0; i < 20; ++i) REQUIRE(scan() == 64);
  CHECK(WorkerPool::shared().threads() == made);
}

TEST_CASE("StateChain: a waiting batch wakes when the vectors before it arrive, or on abort") {
  StateChain chain(kRowStart);
  const Dialect d = make_dialect(',', '"', -1, -1);
  std::thread waiter([&] { CHECK(chain.wait_state(2) == kQuoted); });
  chain.publish(1, tv_of_bytes(d, "\"x", 2));  // batch 1 opens a quote
  chain.publish(0, tv_of_bytes(d, "a,b\n", 4));
  waiter.join();
  CHECK(chain.wait_state(1) == kRowStart);
  std::thread stuck([&] { CHECK_THROWS_AS(chain.wait_state(5), StateChain::Aborted); });
  chain.abort();
  stuck.join();
}

TEST_CASE("StateChain: a waiter's poll runs while it waits and its error ends the wait") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  SECTION("the vectors arrive: the state, whatever the poll did meanwhile") {
    StateChain chain(kRowStart);
    std::atomic<int> polls{0};
    std::thread waiter([&] { CHECK(chain.wait_state(1, [&] { ++polls; }) == kQuoted); });
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    chain.publish(0, tv_of_bytes(d, "a,\"b", 4));  // batch 0 leaves a quote open
    waiter.join();
    CHECK(polls >= 1);  // it waited more than 50 ms
  }
  SECTION("no vector ever comes (a failed device): the poll's exception, not a hang") {
    StateChain chain(kRowStart);
    struct DeviceFailed {};
    int polls = 0;
    CHECK_THROWS_AS(chain.wait_state(3,
                                     [&] {
                                       if (++polls == 2) throw DeviceFailed{};
                                     }),
                    DeviceFailed);
    CHECK(polls == 2);
  }
}

TEST_CASE("partition_window over cuts scanned one by one, in any order, is the one call's") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  std::string s;
  for (int r = 0; s.size() < 6000; ++r)
    s += r % 3 ? "row" + std::to_string(r) + ",x\n" : "\"quoted, with a\nline end " + std::to_string(r) + "\",\xc3\xa9\n";
  s += "\xff,bad\n";
  const Window w{s.data(), s.size(), 0, true};
  for (uint64_t chunk : {4, 100, 333}) {
    for (int threads : {1, 4}) {
      INFO("chunk " << chunk << " threads " << threads);
      const PartitionedWindow whole = partition_window(d, w, chunk, threads, true);
      WindowCuts cuts = cut_window(w.offset, w.size, chunk, threads, true);
      REQUIRE(cuts.begin == whole.begin);
      for (size_t j = cuts.begin.size(); j-- > 0;) scan_cut(d, w.data, cuts, j);
      const PartitionedWindow parts = partition_window(d, w, std::move(cuts), threads);
      CHECK(parts.begin == whole.begin);
      CHECK(parts.state == whole.state);
      CHECK(parts.first_row == whole.first_row);
      CHECK(parts.maybe_bad_text == whole.maybe_bad_text);
      CHECK(std::count(parts.maybe_bad_text.begin(), parts.maybe_bad_text.end(), 1) > 0);  // the \xff
      CHECK(parts.ready == whole.ready);
      CHECK(parts.consumed == whole.consumed);
    }
  }
}

TEST_CASE("partition_window with a fine tail: full chunks, then the last threads' chunks in quarters") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  std::string s;
  for (int r = 0; s.size() < 5000; ++r) s += "row" + std::to_string(r) + ",x\n";
  Window w{s.data(), s.size(), 0, true};
  for (uint64_t chunk : {4, 64, 100, 333}) {
    for (int threads : {1, 2, 5}) {
      INFO("chunk " << chunk << " threads " << threads);
      const PartitionedWindow plain = partition_window(d, w, chunk, threads);
      const PartitionedWindow fine = partition_window(d, w, chunk, threads, true);
      const uint64_t tail_from = s.size() - static_cast<uint64_t>(threads) * chunk;
      uint64_t small = 0;
      for (size_t j = 0; j < fine.begin.size(); ++j) {
        const uint64_t size = fine.end(j) - fine.begin[j];
        if (fine.begin[j] < tail_from) {
          REQUIRE(fine.begin[j] == plain.begin[j]);
          REQUIRE(size == std::min(chunk, tail_from - fine.begin[j]));
        } else {
          REQUIRE(size <= chunk / 4);
          ++small;
        }
      }
      CHECK(small >= static_cast<uint64_t>(4 * threads));
      REQUIRE(partitioned_row_starts(d, w, fine) == partitioned_row_starts(d, w, plain));
    }
  }
  // A window of two chunks per thread or fewer keeps its chunks.
  const PartitionedWindow few = partition_window(d, w, 1000, 3, true);
  CHECK(few.begin == partition_window(d, w, 1000, 3).begin);
}

TEST_CASE("InputSource::map_ahead: the next window mapped ahead holds the file's bytes; any other asked for still does") {
  testing::TempDir dir;
  std::mt19937_64 rng(11);
  std::string data(3 << 20, 'x');
  for (char& c : data) c = static_cast<char>('a' + rng() % 26);
  const std::string path = dir.file("windows.csv");
  testing::write_file(path, "h\n" + data);
  DialectOptions opts;
  const Dialect d = make_dialect(',', '"', -1, -1);
  InputSource src(path, opts, d);
  auto same = [&](const Window& w, uint64_t from, uint64_t want) {
    REQUIRE(w.offset == from);
    REQUIRE(w.size == std::min<uint64_t>(want, data.size() - from));
    REQUIRE(std::memcmp(w.data, data.data() + from, w.size) == 0);
    REQUIRE(w.at_eof == (from + w.size == data.size()));
  };
  uint64_t from = 0;
  // Windows one after another, each mapped ahead while the one before is read (at odd offsets).
  for (uint64_t want : {uint64_t{100000}, uint64_t{777777}, uint64_t{1} << 20, uint64_t{5} << 20}) {
    const Window w = src.window(from, want);
    same(w, from, want);
    const uint64_t next = from + w.size / 2 + 3;
    REQUIRE(src.map_ahead(next, want) == std::min<uint64_t>(want, data.size() - next));
    CHECK(w.data[0] == data[from]);  // the current window stays mapped meanwhile
    if (want == (uint64_t{1} << 20)) {  // looked at before it is asked for: the same bytes, then the same window
      const Window ahead = src.window_ahead();
      same(ahead, next, want);
      CHECK(src.window_ahead().data == ahead.data);
      CHECK(w.data[0] == data[from]);
      CHECK(src.window(next, want).data == ahead.data);
      REQUIRE(src.map_ahead(next + 1, want) > 0);
      CHECK(src.window(next + 1, 100).size == 100);  // other bytes than the mapping ahead: still right
      same(src.window(next, want), next, want);
    }
    from = next;
  }
  // Asked for other bytes than were mapped ahead, or for none after all.
  src.map_ahead(from + 10, 4096);
  same(src.window(from, 8192), from, 8192);
  src.map_ahead(from + 10, 4096);
  src.done();
  same(src.window(0, 65536), 0, 65536);
  CHECK(src.map_ahead(data.size(), 100) == 0);  // past the end: nothing
  CHECK(src.window_ahead().data == nullptr);
  same(src.window(data.size() - 5, 100), data.size() - 5, 100);
}
