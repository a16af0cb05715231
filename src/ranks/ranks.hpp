// The ranks of a run that mpirun or srun started: every rank reads its share
// of the input (ranks/shares.hpp), and rank 0 gathers the results and writes
// them (ranks/rank_results.hpp). Without a launcher, or in a build without
// MPI, the process is the one rank and nothing here talks to anyone.
//
// Failures end every rank with one exit code and one message. A rank's steps
// are separated by agreements (agree): every rank passes how it stands and
// all learn the first failure in rank order, which is input order. Data is
// exchanged only right after an agreement, so a rank that fails anywhere
// meets the others at their next agreement (main's handler makes it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpcsv/errors.hpp"

namespace warpcsv {

// How a rank stands at an agreement.
struct RankOutcome {
  enum Kind : int32_t { Ok = 0, Failed = 1, Widened = 2 } kind = Ok;
  int32_t code = 0;      // exit code: of the failure, or of a finished run
  bool primary = true;   // a failure of the rank's own, not one that another's caused
  std::string message;   // Failed: what to print; Widened: the widening's record
  int32_t rank = 0;      // set by agree: which rank's outcome this is
};

// A failure the ranks agreed on: every rank ends with it, rank 0 prints it.
struct AgreedFailure : Error {
  AgreedFailure(int code, const std::string& message) : Error(message), code_(code) {}
  int exit_code() const override { return code_; }

 private:
  int code_;
};

// This rank stopped because another failed, whose message is the one printed.
struct OtherRankFailed : Error {
  explicit OtherRankFailed(int rank) : Error("rank " + std::to_string(rank) + " failed") {}
  int exit_code() const override { return kExitResource; }
};

class Ranks {
 public:
  // Starts MPI when a launcher started this process (or WARPCSV_MPI=1);
  // otherwise the process is rank 0 of 1 and MPI is never started.
  static void init(int* argc, char*** argv);
  // Ends MPI (every rank, at the end of main).
  static void finalize();
  // Ends every rank now with `code` (a failure no agreement can reach).
  [[noreturn]] static void abort(int code);

  static int size();
  static int rank();
  static bool many() { return size() > 1; }
  // This rank among those on its host, and how many share the host.
  static int local_rank();
  static int local_size();

  // Every rank passes how it stands; all get the same answer: the failure
  // (or widening) of the lowest rank among primary ones (any one if none is
  // primary), else rank 0's outcome (whose code is the run's).
  static RankOutcome agree(const RankOutcome& mine);
  // An agreement at a step of the run: throws AgreedFailure when a rank
  // failed; returns a widening to apply, or an Ok outcome.
  static RankOutcome checkpoint(const RankOutcome& mine = {});

  // Every rank's bytes, in rank order (only right after an agreement).
  static std::vector<std::string> allgather(const std::string& mine);
  // Sends `out` to rank `to` while receiving what rank `from` sends this one
  // (any size; in pieces under MPI's 2 GiB).
  static std::vector<char> send_receive(int to, const std::vector<char>& out, int from);
  // Point to point, rank 0 with one other rank at a time.
  static void send(int to, int tag, const std::string& bytes);
  // The next message from `from` with any tag; its tag in *tag.
  static std::string receive(int from, int* tag);
};

// Where a launcher's environment says this process is one of several ranks.
bool launched_as_rank();

}  // namespace warpcsv
