// run_pipeline: options -> inputs -> schema -> plan -> scan -> post -> output.
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "cuda/group_text.hpp"
#include "exec/device.hpp"
#include "exec/group_table.hpp"
#include "exec/holistic.hpp"
#include "exec/post.hpp"
#include "exec/scan.hpp"
#include "exec/stream_out.hpp"
#include "exec/lookup_table.hpp"
#include "io/row_issue.hpp"
#include "output/output_file.hpp"
#include "ranks/group_exchange.hpp"
#include "ranks/rank_results.hpp"
#include "ranks/rank_setup.hpp"
#include "ranks/ranks.hpp"
#include "ranks/shares.hpp"
#include "result/group_rows.hpp"
#include "result/sorted_parts.hpp"
#include "result/spill.hpp"
#include "runtime/trace.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/output.hpp"
#include "warpcsv/run.hpp"
#include "warpcsv/signals.hpp"
#include "warpcsv/spec.hpp"
#include "runtime/stopwatch.hpp"
#include "cpu/cpu_windows.hpp"

namespace warpcsv {

namespace {

constexpr uint64_t kMaxChunk = 1ull << 30;  // order keys hold a row index in 32 bits

// A notice on stderr: best effort (a full or closed stderr changes no exit code).
void note_stderr(const std::string& text) { std::fputs(text.c_str(), stderr); }

// --profile: where the time went, per stage and device, on stderr.
void print_profile(const ScanStats& stats, const std::vector<StageTiming>& driver_stages, double total) {
  std::vector<StageTiming> all = driver_stages;
  all.insert(all.end(), stats.stages.begin(), stats.stages.end());
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  note_stderr(fmt::format("profile: {} rows, {} bytes of CSV, {} partitions of {} bytes, {:.3f} s in all, peak host RSS {:.1f} MiB\n",
             stats.rows, stats.bytes, stats.partitions, stats.chunk_size, total, ru.ru_maxrss / 1024.0));
  size_t width = 22;  // the stage column fits the longest name
  for (const auto& s : all) width = std::max(width, s.stage.size());
  note_stderr(fmt::format("  {:<{}} {:<7} {:>9} {:>14} {:>9} {:>12}\n", "stage", width, "device", "seconds", "bytes", "GB/s",
             "peak dev MiB"));
  for (const auto& s : all) {
    const double gbs = s.seconds > 0 && s.bytes ? s.bytes / s.seconds / 1e9 : 0.0;
    note_stderr(fmt::format("  {:<{}} {:<7} {:>9.4f} {:>14} {:>9.2f} {:>12.1f}\n", s.stage, width, s.device, s.seconds,
               s.bytes, gbs, s.peak_device_bytes / 1048576.0));
  }
}

std::string describe_partitioning(const InputSet& in, uint64_t chunk, int threads, const DevicePlan& devices,
                                  const Options& opts, uint64_t longest_sampled_row) {
  std::string s = fmt::format("partitioning: {} byte chunks, executor {}, {} host threads\n", chunk, devices.name(),
                              threads);
  s += "  devices: " + devices.why + "\n";
  if (devices.try_gpus) {
    s += fmt::format("  on the GPUs: batches of {} bytes at fixed offsets, read in 2 MiB pieces that go on to the GPU "
                     "as each is read, with a tail of {} bytes after each for its last row ({} x the longest "
                     "sampled row, {} bytes); each batch's start state from the composed transition vectors of the "
                     "batches before it\n",
                     opts.chunk_size ? chunk : kGpuBatchBytes, gpu_batch_tail(longest_sampled_row), kGpuRowSlack,
                     longest_sampled_row);
    s += "  on " + describe_run_gpus(devices) + "; GPU code: " + built_gpu_code().describe() + "\n";
  }
  for (const auto& src : in.sources) s += fmt::format("  input {}\n", src->name());
  return s;
}

// --explain: how the aggregate result is ordered, finalized and written.
std::string describe_result(const Plan& plan, const DevicePlan& devices, const Options& opts, int threads) {
  if (!plan.scan.aggregate) return {};
  const size_t run = result_run_rows(opts);
  const GroupBudgets budgets = group_budgets(opts.memory_limit, host_memory_bytes());
  const std::string folded =
      groups_may_stay(plan)
          ? fmt::format("the threads' tables fold in {} parts by hash, each into the largest of its kind; past {} MiB "
                        "(half the memory limit) the parts spill to files in {} (compressed once they are large), "
                        "and each is aggregated and sorted alone after the scan, the sorted parts merged in "
                        "key ranges on {} threads as they are written; ",
                        thread_table_parts(threads), budgets.folded >> 20, spill_directory(), threads)
          : "";
  const std::string host = folded + fmt::format(
      "ordered on the host (a radix sort of packed key codes when the keys fit 128 bits, else by comparing), then "
      "finalized and formatted on {} threads {} groups at a time, each run written while the next is made",
      threads, run);
  if (!devices.try_gpus || !groups_may_stay(plan)) return "  groups: " + host + "\n";
  const std::string gpu_room = opts.gpu_memory_limit ? fmt::format("{} MiB (--gpu-memory-limit)", opts.gpu_memory_limit >> 20)
                                                     : std::string("the GPU's free memory");
  const GroupLayout layout = GroupLayout::from_plan(plan);
  const std::vector<int> no_words(layout.aggs.size(), 0);
  cuda::TextLayout text;
  const bool delimited = opts.format == OutputFormat::Csv || opts.format == OutputFormat::Tsv;
  const std::string back =
      delimited && cuda::make_text_layout(plan, layout, no_words.data(), DelimitedText{}, &text)
          ? fmt::format("They are finalized and formatted there {} at a time, and only the text comes back, into "
                        "pinned memory, written while the next run is made",
                        run)
          : fmt::format("They come back {} at a time into pinned memory, the next run copied while this one is "
                        "finalized and formatted on {} threads",
                        run, threads);
  return fmt::format("  groups: they stay on the GPU, ordered there (a radix sort of each key's digits); with "
                     "several GPUs each takes one range of the key order (bounds from a sample of every GPU's "
                     "keys), merges every GPU's groups of that range and orders them, and the ranges are written "
                     "in turn. {}; a GPU's table that would outgrow {} spills its "
                     "groups to the host in {} parts by hash, files in {}, each aggregated and sorted alone after "
                     "the scan and merged in key ranges; groups that came back to the host (a scan handed to the "
                     "CPU) are {}\n",
                     back, gpu_room, kGpuSpillParts, spill_directory(), host);
}

// Binds the pipeline. Columns the sample held no value for (a header-only
// file, an all-null column; the input's or a lookup file's) have no evidence
// for any type: if the pipeline does not bind with them as strings, the first
// other type that binds wins. The columns --schema names (`checked`) are
// parsed even when unused.
Plan bind_plan(const std::string& pipeline, std::vector<OutputColumn> schema, const std::vector<bool>& unobserved,
               const std::vector<bool>& checked, LookupColumns lookups, bool distinct_as_groups,
               const NullLikeTokens& null_like = {}) {
  try {
    return build_plan(pipeline, schema, checked, null_like, lookups.schemas, distinct_as_groups);
  } catch (const UsageError&) {
    auto any = [](const std::vector<bool>& u) { return std::find(u.begin(), u.end(), true) != u.end(); };
    if (!any(unobserved) && std::none_of(lookups.unobserved.begin(), lookups.unobserved.end(), any)) throw;
    for (Type t : {Type::Int, Type::Float, Type::Date, Type::Timestamp, Type::Bool}) {
      for (size_t c = 0; c < schema.size(); ++c)
        if (unobserved[c]) schema[c].type = ColumnType{t, 0};
      for (size_t j = 0; j < lookups.schemas.size() && j < lookups.unobserved.size(); ++j)
        for (size_t c = 0; c < lookups.schemas[j].size() && c < lookups.unobserved[j].size(); ++c)
          if (lookups.unobserved[j][c]) lookups.schemas[j][c].type = ColumnType{t, 0};
      try {
        return build_plan(pipeline, schema, checked, null_like, lookups.schemas, distinct_as_groups);
      } catch (const UsageError&) {
      }
    }
    throw;
  }
}

// A bind error's reason alone, for a message of another's: its first line
// without the "type error at position N: " before it (and the pipeline and
// caret after it).
std::string reason_of_plan_error(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  const size_t at = line.find(" at position ");
  const size_t colon = at == std::string::npos ? std::string::npos : line.find(": ", at);
  return colon == std::string::npos ? line : line.substr(colon + 2);
}

// A header read as one column that holds tabs, ';' or '|': the -d the file needs, or "".
std::string delimiter_hint(const Options& opts, const std::vector<OutputColumn>& schema) {
  if (schema.size() != 1 || opts.dialect.delimiter_auto || opts.dialect.delimiter != ",") return "";
  const std::string& header = schema[0].name;
  const std::pair<char, const char*> kOthers[] = {{'\t', "tabs; read it with -d tab"},
                                                  {';', "';'; read it with -d ';'"},
                                                  {'|', "'|'; read it with -d '|'"}};
  const auto* most = std::max_element(std::begin(kOthers), std::end(kOthers), [&](const auto& a, const auto& b) {
    return std::count(header.begin(), header.end(), a.first) < std::count(header.begin(), header.end(), b.first);
  });
  if (header.find(most->first) == std::string::npos) return "";
  return std::string("\n  hint: the header line is one column: it has no ',' but has ") + most->second +
         " (or -d auto to detect the delimiter)";
}

// Binds the pipeline; a failure says what in the input may be behind it. An
// input without a header or rows has no columns: a pipeline that names one is
// not wrong, the input is empty (a cron job's day without data), exit 3.
Plan bind_or_report_empty_input(const std::string& pipeline, const std::vector<OutputColumn>& schema,
                                const std::vector<bool>& unobserved, const std::vector<bool>& checked,
                                const LookupColumns& lookups, InputSet& in, const Options& opts) {
  try {
    return bind_plan(pipeline, schema, unobserved, checked, lookups, in.rereadable());
  } catch (const UsageError& e) {
    const std::string message = e.what();
    if (schema.empty() && message.find("no column named") != std::string::npos) {
      const std::string names = in.sources.size() == 1 ? in.sources.front()->name() : "every input";
      const std::string what = opts.dialect.skip_lines > 0
                                   ? fmt::format("has no line left after --skip {} (no header line and no rows)",
                                                 opts.dialect.skip_lines)
                                   : "is empty (no header line and no rows)";
      throw InputError(names + ": the input " + what + ", so the pipeline's columns do not exist; to get an empty "
                       "result instead, name the columns with --names (and their types with --schema)");
    }
    const std::string hint = message.rfind("unknown column", 0) == 0 ? delimiter_hint(opts, schema) : "";
    if (!hint.empty()) throw UsageError(message + hint);
    // Columns of numbers that NA or '-' made strings: bound again, the message names them.
    const NullLikeTokens null_like = null_like_tokens(in, opts, schema);
    if (std::any_of(null_like.begin(), null_like.end(), [](const auto& t) { return !t.empty(); }))
      bind_plan(pipeline, schema, unobserved, checked, lookups, in.rereadable(), null_like);
    // A column of numbers that one text value made a string: where that value is.
    for (size_t c = 0; c < schema.size(); ++c) {
      if (schema[c].type.type != Type::String || checked[c] ||
          message.find("string column '" + schema[c].name + "'") == std::string::npos)
        continue;
      const std::optional<SampledText> t = text_among_numbers(in, opts, c);
      if (!t) continue;
      throw UsageError(fmt::format("{}\n  hint: column '{}' is read as text for '{}' at {}:{}:{} among its numbers; "
                                   "fix that value, or read the column with --schema '{}:{}' and skip such rows "
                                   "with --bad-rows skip",
                                   message, schema[c].name, t->text, t->source, t->line, t->column, schema[c].name,
                                   schema_type_name(t->numbers)));
    }
    throw;
  }
}

}  // namespace

bool run_started_gpu() { return gpu_probe_started(); }

int run_pipeline(const Options& opts) { return run_pipeline(opts, plan_devices(opts)); }

int run_process_pipeline(const Options& opts) {
  assign_rank_gpus();
  const Options& mine = Ranks::rank() == 0 ? opts : options_of_other_rank(opts);
  const DevicePlan devices = plan_devices(mine);
  limit_visible_gpus(devices);
  return run_pipeline(mine, devices);
}

int run_pipeline(const Options& opts, const DevicePlan& devices) {
  const auto t_start = std::chrono::steady_clock::now();
  new_run();  // signals stop this run (an earlier run in this process may have published)
  std::vector<StageTiming> driver_stages;
  check_pipeline_syntax(opts.pipeline);
  check_output_paths(opts);
  // --trace: the run's partitions, batches and stages, written when it ends (also when it fails).
  std::shared_ptr<trace::Tracer> tracer;
  if (opts.trace_path == "-") throw UsageError("--trace -: the trace is written to a file; give its name");
  if (!opts.trace_path.empty()) {
    tracer = std::make_shared<trace::Tracer>(opts.trace_path, t_start);
    tracer->name_this_thread("main");
  }
  const trace::SetCurrent current_tracer(tracer);
  const trace::WriteOnExit write_trace(tracer.get());
  start_gpu_probe(devices);
  const int threads = host_threads(opts);
  if (opts.threads > threads && !opts.quiet)
    note_stderr(fmt::format("warpcsv: note: --threads {} is more than this machine uses (8 per core, at least 64); "
                            "using {}\n",
                            opts.threads, threads));
  uint64_t chunk = opts.chunk_size ? opts.chunk_size : default_cpu_chunk(threads);
  if (chunk > kMaxChunk)
    throw UsageError(fmt::format("--chunk-size: found {} bytes; expected at most 1G (a partition numbers its rows "
                                 "in 32 bits), such as 64M",
                                 chunk));

  InputSet in = InputSet::open(opts);
  std::vector<bool> unobserved;
  uint64_t longest_sampled_row = 0;
  std::vector<OutputColumn> inferred = infer_schema(in, opts, threads, &unobserved, &longest_sampled_row);
  driver_stages.push_back(StageTiming{"open+infer", "cpu", seconds_since(t_start), 0, 0});
  if (tracer) tracer->host("open+infer", "stage", t_start);
  std::vector<bool> from_schema(inferred.size(), false);
  if (!opts.schema.empty())
    for (const auto& o : parse_schema_option(opts.schema))
      for (size_t c = 0; c < inferred.size(); ++c)
        if (inferred[c].name == o.name) from_schema[c] = true;
  // Ranks (mpirun, srun): each scans its share of the input; rank 0 writes.
  const bool ranks = Ranks::many(), first_rank = Ranks::rank() == 0;
  std::vector<RankShare> shares;
  if (ranks) {
    const auto t_split = std::chrono::steady_clock::now();
    shares = split_input(in, threads, kRankMinSplitChunks * chunk);
    keep_share(in, shares[static_cast<size_t>(Ranks::rank())]);
    driver_stages.push_back(StageTiming{"ranks: split the input", "cpu", seconds_since(t_split), 0, 0});
  }
  // The join stages' files: opened and typed before the plan is bound (their columns are names it resolves).
  LookupFiles lookup_files(opts, threads);
  std::map<int, ColumnType> widened;
  StreamedOutput streamed(in.rereadable());  // rows that went out as they came, in every attempt

  std::string read_as_text;  // for --explain: "a (int), d (date)", the columns only printed
  for (int attempt = 0;; ++attempt) {
    std::vector<OutputColumn> schema = inferred;
    for (const auto& [c, t] : widened) schema[static_cast<size_t>(c)].type = t;
    const LookupColumns lookup_columns = lookup_files.columns();
    const Plan plan = [&] {
      try {
        return bind_or_report_empty_input(opts.pipeline, schema, unobserved, from_schema, lookup_columns, in, opts);
      } catch (const UsageError&) {
        lookup_files.check_rows_if_unobserved();
        throw;
      }
    }();
    // Columns only printed as written are read as text: bound again with them so.
    bool as_text = false;
    for (int c : text_only_columns(plan, opts)) {
      OutputColumn& col = inferred[static_cast<size_t>(c)];
      if (col.type.type == Type::String || from_schema[static_cast<size_t>(c)] || widened.count(c)) continue;
      read_as_text += (read_as_text.empty() ? "" : ", ") + col.name + " (" + schema_type_name(col.type) + ")";
      col.type = ColumnType{Type::String, 0};
      unobserved[static_cast<size_t>(c)] = false;
      as_text = true;
    }
    if (as_text) continue;
    if (!opts.explain && !lookup_files.empty()) {
      const auto t_lookups = std::chrono::steady_clock::now();
      if (!lookup_files.load(plan)) continue;  // a lookup column widened: bind again
      driver_stages.push_back(StageTiming{"read lookup files", "cpu", seconds_since(t_lookups), 0, 0});
    }
    const LookupTables& lookups = lookup_files.tables();
    std::unique_ptr<ScanExecutor> exec = make_executor(devices, in);
    if (opts.explain) {
      std::string text = explain_plan(plan);
      if (!read_as_text.empty()) text += "  read as text, as they are only printed: " + read_as_text + "\n";
      text += describe_partitioning(in, chunk, threads, devices, opts, longest_sampled_row) +
              describe_result(plan, devices, opts, threads);
      if (ranks) text += describe_shares(in, shares) + describe_rank_results(plan);
      if (first_rank) std::fwrite(text.data(), 1, text.size(), stdout);
      return kExitOk;
    }
    ScanSettings settings;
    settings.plan = &plan;
    settings.opts = &opts;
    settings.type_from_schema = from_schema;
    settings.chunk_size = chunk;
    settings.threads = threads;
    settings.longest_sampled_row = longest_sampled_row;
    settings.tracer = tracer.get();
    settings.lookups = &lookups;
    if (ranks) {
      const PartitionNumbers numbers = rank_partition_numbers(Ranks::rank(), Ranks::size());
      settings.first_partition = numbers.first;
      settings.partition_count = numbers.count;
    }
    const GroupBudgets budgets = group_budgets(opts.memory_limit, host_memory_bytes());
    settings.thread_tables_budget = opts.thread_tables_budget ? opts.thread_tables_budget : budgets.thread_tables;
    // Ranks hand their groups to rank 0 from their tables: none spill.
    settings.groups_budget = ranks ? 0 : budgets.folded;
    uint64_t total_bytes = 0;
    for (const auto& src : in.sources) total_bytes += src->size_bytes();
    Progress progress(opts.progress, total_bytes);
    settings.progress = &progress;

    OutputFile out(opts.output_path);
    Rejects rejects(opts.rejects_path);
    // Rows whose text no later value can change go out as they come, to
    // stdout past the hold (exec/stream_out.hpp); a re-read after them is
    // checked against them.
    std::vector<bool> fixed_types(from_schema);
    for (size_t c = 0; c < fixed_types.size() && c < plan.input.size(); ++c)
      fixed_types[c] = fixed_types[c] || plan.input[c].type.type == Type::String;
    settings.stream_rows =
        first_rank && (streamed.started() || rows_can_stream(plan, opts, fixed_types, in.rereadable()));
    std::optional<StreamedOutput::Attempt> streaming;
    if (settings.stream_rows) streaming.emplace(streamed, stdout);
    std::unique_ptr<RowWriter> writer =
        make_writer(opts.format, streaming ? streaming->file() : out.file(), opts.output_header);
    auto note = [&](const std::string& text) { out.note(text); };  // assert messages go with the output
    ScanStats stats;
    stats.chunk_size = chunk;
    const auto t_scan = std::chrono::steady_clock::now();
    std::unique_ptr<PostPipeline> post;
    std::unique_ptr<GroupLayout> layout;
    std::unique_ptr<GroupTable> groups;
    HolisticGroups holistic;
    // Ranks exchange groups only: holistic arguments are keys of the groups there.
    if (!plan.holistic.empty() && !opts.holistic_by_groups && !ranks) settings.holistic = &holistic;
    if (plan.scan.aggregate) {
      layout = std::make_unique<GroupLayout>(GroupLayout::from_plan(plan));
      groups = std::make_unique<GroupTable>(layout.get());
    }
    // The aggregate result, written group run by group run.
    double finalize_s = 0;  // within post+output
    auto write_result = [&](OrderedGroups& ordered, const GroupLayout& group_layout) {
      post = std::make_unique<PostPipeline>(plan, *writer, threads, note, &lookups, ordered.by_first_row() ? 1 : 0);
      ResultTimes times;
      write_groups(plan, group_layout, ordered, *post, threads, &times);
      finalize_s = times.finalize_s;
    };
    // Groups that stay on a GPU come from there in output order and are
    // written before the scan returns (the GPU is let go after).
    bool device_wrote = false;
    double device_result_s = 0;
    const std::function<void(OrderedGroups&)> device_result = [&](OrderedGroups& ordered) {
      const auto t0 = std::chrono::steady_clock::now();
      write_result(ordered, *layout);
      device_wrote = true;
      device_result_s = seconds_since(t0);
    };
    if (groups_may_stay(plan) && !ranks) settings.device_result = &device_result;
    // A rank other than 0 keeps its rows and issues for rank 0.
    std::optional<RankOutbox> outbox;
    if (!first_rank) outbox.emplace(plan.scan_output);
    bool rows_wanted = true;  // no limit was reached
    try {
      auto on_skip = [&](const RowIssue& i) {
        if (outbox) outbox->add_issue(i);
        else rejects.add(i);
      };
      // The scan of this rank's share; with ranks, a widening any of them
      // met is agreed on and applied by all (the first in input order).
      auto scan_share = [&](GroupTable* into, const RowBatchSink& sink) {
        RankOutcome scanned;
        try {
          exec->scan(in, settings, into, sink, on_skip, stats);
        } catch (const TypeWidening& tw) {
          if (!ranks) throw;
          scanned = RankOutcome{RankOutcome::Widened, 0, true, encode_widening(tw)};
        }
        if (ranks) {
          const RankOutcome agreed = Ranks::checkpoint(scanned);
          if (agreed.kind == RankOutcome::Widened) throw decode_widening(agreed.message);
        }
      };
      if (plan.scan.aggregate) {
        scan_share(groups.get(), RowBatchSink());
      } else {
        post = std::make_unique<PostPipeline>(plan, *writer, threads, note, &lookups);
        scan_share(nullptr, [&](Table& t, size_t begin, size_t end) {
          if (outbox) {
            outbox->add_rows(t, begin, end);
            return true;
          }
          if (!post->take_rows(t, begin, end)) return rows_wanted = false;
          if (streaming) {  // out at once
            writer->flush_rows();
            streamed.flush();
          }
          return true;
        });
      }
    } catch (const TypeWidening& tw) {
      const OutputColumn& col = schema[static_cast<size_t>(tw.column)];
      // As the plan read it: a column without values in the sample may have been bound as another type.
      const ColumnType read_as =
          static_cast<size_t>(tw.column) < plan.input.size() ? plan.input[static_cast<size_t>(tw.column)].type : col.type;
      const ColumnType wider = widen_for(read_as, tw.text.data(), static_cast<uint32_t>(tw.text.size()));
      const std::string shown = printable_text(tw.text.data(), tw.text.size());  // a field of megabytes, cut
      const std::string fix = fmt::format("--schema '{}:{}'", col.name, schema_type_name(wider));
      if (!in.rereadable() || out.released() || attempt > 16)
        throw InputError(fmt::format("{}:{}:{}: column '{}' was read as {} from the first rows, but this row has "
                                     "'{}'; run again with {}",
                                     tw.where.source, tw.where.line, tw.where.column, col.name,
                                     schema_type_name(read_as), shown, fix));
      widened[tw.column] = wider;
      unobserved[static_cast<size_t>(tw.column)] = false;  // a value was seen now
      try {
        std::vector<OutputColumn> next = inferred;
        for (const auto& [c, t] : widened) next[static_cast<size_t>(c)].type = t;
        bind_plan(opts.pipeline, next, unobserved, from_schema, lookup_files.columns(), in.rereadable());
      } catch (const UsageError& e) {
        throw InputError(fmt::format("{}:{}:{}: column '{}' was read as {} from the first rows, but this row has "
                                     "'{}', and the pipeline cannot use it as {}: {}. Fix the value, or skip such "
                                     "rows with --bad-rows skip {}",
                                     tw.where.source, tw.where.line, tw.where.column, col.name,
                                     schema_type_name(read_as), shown, schema_type_name(wider),
                                     reason_of_plan_error(e.what()),
                                     fmt::format("--schema '{}:{}'", col.name, schema_type_name(read_as))));
      }
      if (!opts.quiet)
        note_stderr(fmt::format("warpcsv: note: column '{}' widened from {} to {} ('{}' at {}:{}); reading again\n",
                   col.name, schema_type_name(read_as),
                   schema_type_name(wider) + (wider == read_as ? " with a zone (printed with Z)" : ""), shown,
                   tw.where.source, tw.where.line));
      if (streamed.started()) {  // rows went out: the next reading writes them again first, checked
        std::string all;
        for (const auto& [c, t] : widened)
          all += (all.empty() ? "" : ",") + schema[static_cast<size_t>(c)].name + ":" + schema_type_name(t);
        streamed.restart(fmt::format("{}:{}:{}: column '{}' was read as {} from the first rows, but this row has "
                                     "'{}', and the rows before it, which went out as they came, print otherwise "
                                     "when read as {}; run again with --schema '{}'",
                                     tw.where.source, tw.where.line, tw.where.column, col.name,
                                     schema_type_name(read_as), shown, schema_type_name(wider), all));
      }
      in = InputSet::open(opts);
      if (ranks) keep_share(in, shares[static_cast<size_t>(Ranks::rank())]);
      out.discard();
      continue;
    }
    progress.finish();
    if (tracer)
      tracer->host("scan", "stage", t_scan,
                   {{"bytes", int64_t(stats.bytes)}, {"partitions", int64_t(stats.partitions)}});
    driver_stages.push_back(StageTiming{"scan", stats.executor.empty() ? devices.name() : stats.executor,
                                        seconds_since(t_scan) - device_result_s, stats.bytes, 0});
    if (ranks) {
      // Groups by keys go by hash: each rank merges and sorts its range of
      // them, and rank 0 merges the sorted ranges as it writes. Rows, bad
      // rows and other groups go to rank 0 in rank order.
      const auto t_ranks = std::chrono::steady_clock::now();
      add_rank_stats(stats, driver_stages.back().seconds, driver_stages);
      std::optional<RankPart> part;
      std::vector<std::vector<char>> part_records;  // its groups, sorted, as records
      if (groups_may_stay(plan)) {
        part.emplace(exchange_groups(*groups, plan, threads, result_run_rows(opts)));
        part_records = sorted_records(*part, threads);
        driver_stages.push_back(StageTiming{"ranks: exchange, merge and sort groups", "cpu", seconds_since(t_ranks), 0, 0});
      }
      if (outbox) {
        outbox->serve(part ? nullptr : groups.get(), part ? &part_records : nullptr);
        return kExitOk;
      }
      const auto t_gather = std::chrono::steady_clock::now();
      RankInbox inbox(plan.scan_output, layout.get());
      std::vector<std::unique_ptr<SpillFile>> sorted_parts;
      if (part) {  // rank 0's own range, as the others' come: in a file
        sorted_parts.push_back(std::make_unique<SpillFile>(spill_directory()));
        for (auto& s : part_records) {
          sorted_parts.back()->append(s.data(), s.size());
          std::vector<char>().swap(s);
        }
      }
      for (int r = 1; r < Ranks::size() && rows_wanted; ++r) {
        std::unique_ptr<SpillFile> sorted = part ? std::make_unique<SpillFile>(spill_directory()) : nullptr;
        rows_wanted = inbox.take(
            r, [&](const Value* row) { return post->push(row); }, [&](const RowIssue& i) { rejects.add(i); },
            part ? nullptr : groups.get(), sorted.get());
        if (sorted) sorted_parts.push_back(std::move(sorted));
        if (streaming) {
          writer->flush_rows();
          streamed.flush();
        }
      }
      driver_stages.push_back(StageTiming{"ranks: gather results", "cpu", seconds_since(t_gather), 0, 0});
      if (part) {
        const size_t all_groups = part->all_groups;
        part.reset();
        const auto t_write = std::chrono::steady_clock::now();
        std::unique_ptr<OrderedGroups> ordered =
            merge_sorted_records(*layout, std::move(sorted_parts), all_groups, result_run_rows(opts), threads);
        write_result(*ordered, *layout);
        device_wrote = true;  // written: counted in post+output
        device_result_s = seconds_since(t_write);
      }
    }
    auto t_out = std::chrono::steady_clock::now();
    if (plan.scan.aggregate && !device_wrote) {
      if (holistic.from_lists) finish_holistic_lists(plan, holistic, threads);
      else if (!plan.holistic.empty()) holistic = regroup_holistic(plan, *groups, threads);
      const GroupTable& final_groups = plan.holistic.empty() ? *groups : *holistic.groups;
      if (plan.holistic.empty()) groups->ensure_group_without_keys();
      SortedHostGroups ordered(plan, {&final_groups}, holistic.values.data(), threads, result_run_rows(opts),
                               sorts_by_first_row(plan));
      driver_stages.push_back(StageTiming{"result: sort", "cpu", seconds_since(t_out), 0, 0});
      if (tracer) tracer->host("result: sort", "stage", t_out, {{"groups", int64_t(ordered.size())}});
      t_out = std::chrono::steady_clock::now();
      write_result(ordered, final_groups.layout());
    }
    if (plan.scan.aggregate) driver_stages.push_back(StageTiming{"result: finalize+format", "cpu", finalize_s, 0, 0});
    if (interrupted()) throw Interrupted();  // no result after Ctrl-C
    post->finish();
    if (streaming) streamed.check_complete();
    if (interrupted()) throw Interrupted();
    rejects.close();
    out.close();
    driver_stages.push_back(
        StageTiming{"post+output", "cpu", seconds_since(t_out) + device_result_s - finalize_s, 0, 0});
    if (tracer) {
      tracer->host("post+output", "stage", t_out);
      tracer->write();  // a trace that cannot be written fails the run (exit 3), as -o does
    }
    // -o and --rejects replace their files only now, once the run succeeded
    // (after a failed assert the old ones stay, as after any error); a
    // signal from here on comes too late to change the result or exit code.
    if (interrupted()) throw Interrupted();
    if (!post->assert_failed()) {
      if (!begin_publish()) throw Interrupted();
      rejects.commit();
      out.commit();
    }
    if (opts.profile) print_profile(stats, driver_stages, seconds_since(t_start));
    if (stats.padded && !opts.quiet)
      note_stderr(fmt::format("warpcsv: padded {} row{} short of fields with nulls{}\n", stats.padded,
                              stats.padded == 1 ? "" : "s",
                              opts.rejects_path.empty() ? "" : " (listed in " + opts.rejects_path + ")"));
    if (stats.skipped && !opts.quiet)
      note_stderr(fmt::format("warpcsv: skipped {} bad row{}{}\n", stats.skipped, stats.skipped == 1 ? "" : "s",
                 opts.rejects_path.empty() ? " (list them with --rejects FILE)" : " (listed in " + opts.rejects_path + ")"));
    return post->assert_failed() ? kExitAssert : kExitOk;
  }
}

}  // namespace warpcsv
