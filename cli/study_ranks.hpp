// MPI for `weakscale study`: started only when the process was launched by mpirun (Open MPI sets
// OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK), so a plain run never initialises MPI. Gives the
// study its RankGroup: rank, size, and a gather of every rank's results to rank 0.
#pragma once

#include "sim/study/rank_group.hpp"

namespace ws::cli {

// Owns MPI_Init / MPI_Finalize for one command (a class because Finalize must run exactly once).
class StudyMpiSession {
 public:
  StudyMpiSession();
  ~StudyMpiSession();
  StudyMpiSession(const StudyMpiSession&) = delete;
  StudyMpiSession& operator=(const StudyMpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  RankGroup ranks() const;
  // Ends every rank: one rank failing must not leave the others waiting in the gather.
  [[noreturn]] void abort(int exit_code) const;

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ws::cli
