// Rows that stream out, and the check of a re-read after them (stream_out.hpp).
#include "exec/stream_out.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

namespace {

// What a widening can do to one column of a row: change its value (and so
// what a filter or computed column makes of it), and change its printed text.
struct Fixity {
  bool value = true;
  bool text = true;
};

// Whether a bare column of type `t`, printed as written, prints the same
// text whatever the type it widens to.
bool text_survives_widening(OutputFormat f, Type t) {
  if (f == OutputFormat::Csv || f == OutputFormat::Tsv) return true;
  return t == Type::Date || t == Type::Timestamp || t == Type::String;  // json: strings either way
}

// Whether every slot `p` reads has a value no widening changes.
bool reads_fixed(const Program& p, const std::vector<Fixity>& slots) {
  for (const Instr& in : p.code)
    if (in.op == Op::Column && (in.arg < 0 || static_cast<size_t>(in.arg) >= slots.size() || !slots[in.arg].value))
      return false;
  return true;
}

}  // namespace

bool rows_can_stream(const Plan& plan, const Options& opts, const std::vector<bool>& fixed, bool rereadable) {
  if (plan.scan.aggregate || plan.has_sort || opts.explain) return false;
  if (!opts.output_path.empty() && opts.output_path != "-") return false;  // -o: a file, held as before
  if (opts.format != OutputFormat::Csv && opts.format != OutputFormat::Tsv && opts.format != OutputFormat::Json &&
      opts.format != OutputFormat::Ndjson)
    return false;  // table and markdown align every row at the end
  for (const PostStage& st : plan.post)
    if (st.kind == PostStage::Assert) return false;  // its messages go with the output: held together
  if (!rereadable) return true;  // a widening fails the run: held rows would go out all the same
  // The scan's slots, then each output column through the post stages.
  std::vector<Fixity> slots(plan.scan.used_columns.size());
  for (size_t k = 0; k < slots.size(); ++k) {
    const size_t c = static_cast<size_t>(plan.scan.used_columns[k]);
    slots[k].value = slots[k].text = c < fixed.size() && fixed[c];
  }
  auto column = [&](const Program& p, const OutputColumn& col, const std::vector<Fixity>& in) {
    const int s = p.bare_slot() < static_cast<int>(in.size()) ? p.bare_slot() : -1;
    Fixity f;
    f.value = reads_fixed(p, in);
    f.text = f.value || (s >= 0 && in[static_cast<size_t>(s)].text) ||
             (s >= 0 && col.as_written && text_survives_widening(opts.format, col.type.type));
    return f;
  };
  std::vector<Fixity> row;
  for (size_t c = 0; c < plan.scan.outputs.size() && c < plan.scan_output.size(); ++c)
    row.push_back(column(plan.scan.outputs[c], plan.scan_output[c], slots));
  for (const PostStage& st : plan.post) {
    if (st.kind != PostStage::Select && st.kind != PostStage::Distinct) continue;  // filter, dropna, limit: the same
    std::vector<Fixity> next;
    for (size_t c = 0; c < st.exprs.size() && c < st.output.size(); ++c)
      next.push_back(column(st.exprs[c], st.output[c], row));
    row.swap(next);
  }
  for (const Fixity& f : row)
    if (!f.text) return false;
  return true;
}

std::vector<int> text_only_columns(const Plan& plan, const Options& opts) {
  std::vector<int> text_only;
  if (opts.format != OutputFormat::Csv && opts.format != OutputFormat::Tsv) return text_only;
  if (plan.scan.aggregate || plan.has_sort || !plan.scan.joins.empty()) return text_only;
  for (const PostStage& st : plan.post)
    if (st.kind != PostStage::Limit) return text_only;
  std::vector<bool> read(plan.scan.used_columns.size(), false);  // per slot: read by more than a bare output
  auto mark = [&](const Program& p) {
    for (const Instr& in : p.code)
      if (in.op == Op::Column && in.arg >= 0 && static_cast<size_t>(in.arg) < read.size()) read[in.arg] = true;
  };
  mark(plan.scan.filter);
  for (size_t c = 0; c < plan.scan.outputs.size(); ++c) {
    const Program& p = plan.scan.outputs[c];
    if (p.bare_slot() < 0 || c >= plan.scan_output.size() || !plan.scan_output[c].as_written) mark(p);
  }
  for (size_t k = 0; k < read.size(); ++k)
    if (!read[k]) text_only.push_back(plan.scan.used_columns[k]);
  return text_only;
}

// ---- StreamHash ---------------------------------------------------------------------------

namespace {
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t load64(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
// For a fixed h a bijection of w, for a fixed w one of h: a word that differs
// leaves its lane different whatever follows.
inline uint64_t mix(uint64_t h, uint64_t w) { return rotl(h ^ w, 31) * 0x9e3779b97f4a7c15ull; }
}  // namespace

void StreamHash::block(const unsigned char* p) {
  for (int k = 0; k < 4; ++k) lane_[k] = mix(lane_[k], load64(p + 8 * k));
}

void StreamHash::add(const char* s, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  total_ += n;
  if (nheld_) {
    const size_t k = std::min(n, sizeof held_ - nheld_);
    std::memcpy(held_ + nheld_, p, k);
    nheld_ += k;
    p += k;
    n -= k;
    if (nheld_ < sizeof held_) return;
    block(held_);
    nheld_ = 0;
  }
  for (; n >= 32; p += 32, n -= 32) block(p);
  std::memcpy(held_, p, n);
  nheld_ = n;
}

uint64_t StreamHash::digest() const {
  uint64_t h = total_ * 0xff51afd7ed558ccdull;
  for (uint64_t l : lane_) h = mix(h, l * 0xc2b2ae3d27d4eb4full);
  unsigned char tail[32] = {0};
  std::memcpy(tail, held_, nheld_);
  for (int k = 0; k < 4; ++k) h = mix(h, load64(tail + 8 * k));
  return h ^ (h >> 29);
}

// ---- StreamedOutput -------------------------------------------------------------------------

StreamedOutput::Attempt::Attempt(StreamedOutput& owner, std::FILE* dest) {
  owner.dest_ = dest;
  owner.seen_ = 0;
  owner.again_ = StreamHash();
  owner.differs_ = false;
  cookie_io_functions_t io{};
  io.write = &StreamedOutput::write;
  f_ = fopencookie(&owner, "w", io);
  if (!f_) throw ResourceError("cannot set up the output stream");
  std::setvbuf(f_, nullptr, _IONBF, 0);  // writers buffer 1 MiB themselves
}

StreamedOutput::Attempt::~Attempt() {
  if (f_) std::fclose(f_);
}

// A cookie write returns the bytes taken, 0 on an error (errno set).
ssize_t StreamedOutput::write(void* cookie, const char* buf, size_t n) {
  auto* o = static_cast<StreamedOutput*>(cookie);
  if (interrupted()) {  // a signal: nothing more goes out (main exits 130, 143 or 129)
    errno = EINTR;
    return 0;
  }
  size_t i = 0;
  if (o->seen_ < o->out_) {  // bytes already out: the same ones must come again
    i = static_cast<size_t>(std::min<uint64_t>(n, o->out_ - o->seen_));
    o->again_.add(buf, i);
    o->seen_ += i;
    if (o->seen_ == o->out_ && o->again_.digest() != o->sent_.digest()) o->differs_ = true;
  }
  if (o->differs_ || i == n) return static_cast<ssize_t>(n);  // after a difference nothing more goes out
  const size_t rest = n - i;
  errno = 0;
  if (std::fwrite(buf + i, 1, rest, o->dest_) != rest) return 0;
  if (o->check_) o->sent_.add(buf + i, rest);
  o->out_ += rest;
  o->seen_ += rest;
  return static_cast<ssize_t>(n);
}

void StreamedOutput::restart(const std::string& message) {
  message_ = message;
  if (dest_) std::fflush(dest_);
}

void StreamedOutput::flush() {
  if (interrupted()) throw Interrupted();
  if (differs_) diverged();
  errno = 0;
  if (dest_ && std::fflush(dest_) != 0) {
    if (errno == EPIPE) throw OutputClosed{};
    throw InputError(fmt::format("cannot write the output: {}", std::strerror(errno)));
  }
}

void StreamedOutput::check_complete() const {
  if (differs_ || seen_ < out_) diverged();
}

void StreamedOutput::diverged() const { throw InputError(message_); }

}  // namespace warpcsv
