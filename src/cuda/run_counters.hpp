// What the CUDA executors of this process did, counted where it happens and
// read by cuda_run_info() (cuda/cuda_executor.hpp says what each means).
#pragma once
#include <atomic>
#include <cstdint>

namespace warpcsv {
namespace cuda {

extern std::atomic<uint64_t> g_gpu_scans, g_cpu_plans, g_cpu_reruns, g_stagings_built, g_table_stops,
    g_tables_reused;
extern std::atomic<int> g_slots_in_use, g_slot_capacity;
extern std::atomic<uint64_t> g_table_groups, g_tail_reruns, g_table_spills, g_plain_rows,
    g_key_exchanges, g_text_runs;

}  // namespace cuda
}  // namespace warpcsv
