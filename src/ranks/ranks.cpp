#include "ranks/ranks.hpp"

#include "ranks/wire.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <limits>

#ifdef WARPCSV_HAVE_MPI
#include <mpi.h>
#endif

namespace warpcsv {

namespace {

struct World {
  bool started = false;  // MPI_Init was called
  int size = 1, rank = 0;
  int local_size = 1, local_rank = 0;
};
World g_world;

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

std::string encode(const RankOutcome& o) {
  std::string s;
  wire::put(s, o.kind);
  wire::put(s, o.code);
  wire::put(s, o.primary);
  wire::put(s, o.rank);
  wire::put_text(s, o.message);
  return s;
}

RankOutcome decode(const std::string& s) {
  RankOutcome o;
  size_t at = 0;
  o.kind = wire::get<RankOutcome::Kind>(s, &at);
  o.code = wire::get<int32_t>(s, &at);
  o.primary = wire::get<bool>(s, &at);
  o.rank = wire::get<int32_t>(s, &at);
  o.message = wire::get_text(s, &at);
  return o;
}

// How many processes the launcher's environment says it started (0: not said).
[[maybe_unused]] int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    const char* v = std::getenv(name);
    if (v && *v) return std::atoi(v);
  }
  return 0;
}

}  // namespace

bool launched_as_rank() {
  const char* forced = std::getenv("WARPCSV_MPI");
  if (forced && *forced) return std::strcmp(forced, "0") != 0;
  // Open MPI's mpirun, PMIx (srun --mpi=pmix, mpirun of MPICH 4) and PMI-1/2 (srun, hydra).
  return env_set("OMPI_COMM_WORLD_SIZE") || env_set("PMIX_RANK") || env_set("PMI_RANK") || env_set("PMI_SIZE");
}

#ifdef WARPCSV_HAVE_MPI

void Ranks::init(int* argc, char*** argv) {
  // No launcher: no MPI at all (a singleton's start-up costs time and may
  // start a helper daemon; see docs/scaling.md).
  if (!launched_as_rank()) return;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return;
  g_world.started = true;
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
  // A launcher of another MPI starts processes that each see a world of
  // one: every one would read all of the input and write the result.
  const int launched = launcher_size();
  if (launched > 1 && g_world.size == 1) {
    std::fprintf(stderr,
                 "warpcsv: the launcher started %d processes, but this warpcsv's MPI sees each alone (a launcher of "
                 "another MPI than the one it was built with?); use the mpirun of that MPI, or srun --mpi=pmix\n",
                 launched);
    MPI_Finalize();
    std::exit(kExitResource);
  }
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world.rank, MPI_INFO_NULL, &host);
  MPI_Comm_size(host, &g_world.local_size);
  MPI_Comm_rank(host, &g_world.local_rank);
  MPI_Comm_free(&host);
  // Errors in MPI calls come back as codes, which become messages here.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void Ranks::finalize() {
  if (g_world.started) MPI_Finalize();
  g_world.started = false;
}

void Ranks::abort(int code) {
  if (g_world.started) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

namespace {
void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  // The ranks can no longer agree on anything: end them all.
  std::fprintf(stderr, "warpcsv: rank %d: %s failed: %s; the ranks stop\n", g_world.rank, what, text);
  Ranks::abort(kExitResource);
}
}  // namespace

std::vector<std::string> Ranks::allgather(const std::string& mine) {
  if (!g_world.started || g_world.size == 1) return {mine};
  if (mine.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw InternalError("internal error: a rank's share of an exchange is over 2 GiB");
  const int n = g_world.size;
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(n)), at(static_cast<size_t>(n));
  check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  size_t total = 0;
  for (int r = 0; r < n; ++r) {
    at[static_cast<size_t>(r)] = static_cast<int>(total);
    total += static_cast<size_t>(lens[static_cast<size_t>(r)]);
  }
  std::string all(total, '\0');
  check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r)
    out.push_back(all.substr(static_cast<size_t>(at[static_cast<size_t>(r)]), static_cast<size_t>(lens[static_cast<size_t>(r)])));
  return out;
}

std::vector<char> Ranks::send_receive(int to, const std::vector<char>& out, int from) {
  constexpr int kSizeTag = 10, kBytesTag = 11;
  constexpr uint64_t kPiece = 1ull << 30;
  uint64_t n_out = out.size(), n_in = 0;
  check(MPI_Sendrecv(&n_out, 1, MPI_UINT64_T, to, kSizeTag, &n_in, 1, MPI_UINT64_T, from, kSizeTag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  std::vector<char> in(n_in);
  // Pieces in order (messages of one pair and tag do not overtake), each
  // side posting as many as its size says.
  std::vector<MPI_Request> pending;
  for (uint64_t at = 0; at < n_in; at += kPiece) {
    pending.emplace_back();
    check(MPI_Irecv(in.data() + at, static_cast<int>(std::min(kPiece, n_in - at)), MPI_CHAR, from, kBytesTag,
                    MPI_COMM_WORLD, &pending.back()),
          "MPI_Irecv");
  }
  for (uint64_t at = 0; at < n_out; at += kPiece) {
    pending.emplace_back();
    check(MPI_Isend(out.data() + at, static_cast<int>(std::min(kPiece, n_out - at)), MPI_CHAR, to, kBytesTag,
                    MPI_COMM_WORLD, &pending.back()),
          "MPI_Isend");
  }
  check(MPI_Waitall(static_cast<int>(pending.size()), pending.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  return in;
}

void Ranks::send(int to, int tag, const std::string& bytes) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw InternalError("internal error: a message between ranks is over 2 GiB");
  check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD), "MPI_Send");
}

std::string Ranks::receive(int from, int* tag) {
  MPI_Status st;
  check(MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Probe");
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  std::string bytes(static_cast<size_t>(n), '\0');
  check(MPI_Recv(bytes.data(), n, MPI_CHAR, from, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  *tag = st.MPI_TAG;
  return bytes;
}

#else  // a build without MPI: one rank

void Ranks::init(int*, char***) {}
void Ranks::finalize() {}
void Ranks::abort(int code) { std::_Exit(code); }
std::vector<std::string> Ranks::allgather(const std::string& mine) { return {mine}; }
std::vector<char> Ranks::send_receive(int, const std::vector<char>& out, int) { return out; }
void Ranks::send(int, int, const std::string&) { throw InternalError("internal error: a send without ranks"); }
std::string Ranks::receive(int, int*) { throw InternalError("internal error: a receive without ranks"); }

#endif

int Ranks::size() { return g_world.size; }
int Ranks::rank() { return g_world.rank; }
int Ranks::local_rank() { return g_world.local_rank; }
int Ranks::local_size() { return g_world.local_size; }

RankOutcome Ranks::agree(const RankOutcome& mine) {
  if (g_world.size == 1) return mine;
  RankOutcome me = mine;
  me.rank = g_world.rank;
  std::vector<RankOutcome> outcomes;
  for (const auto& bytes : allgather(encode(me))) outcomes.push_back(decode(bytes));
  auto failed = [](const RankOutcome& o) { return o.kind != RankOutcome::Ok; };
  auto first = std::find_if(outcomes.begin(), outcomes.end(), [&](const RankOutcome& o) { return failed(o) && o.primary; });
  if (first == outcomes.end()) first = std::find_if(outcomes.begin(), outcomes.end(), failed);
  return first == outcomes.end() ? outcomes.front() : *first;
}

RankOutcome Ranks::checkpoint(const RankOutcome& mine) {
  const RankOutcome agreed = agree(mine);
  if (agreed.kind == RankOutcome::Failed) throw AgreedFailure(agreed.code, agreed.message);
  return agreed;
}

}  // namespace warpcsv
