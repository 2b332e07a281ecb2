#include "cli/study_ranks.hpp"

#include <mpi.h>

#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace ws::cli {
namespace {

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

// Every MPI call of the study goes through here: a failure names the call.
void mpi_check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("MPI call failed: ") + call + ": " + text);
}
#define WS_STUDY_MPI(call) mpi_check((call), #call)

std::vector<std::string> gather_to_root(const std::string& mine, int rank, int size) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  WS_STUDY_MPI(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  std::partial_sum(lengths.begin(), lengths.end() - 1, offsets.begin() + 1);
  std::string all(rank == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  WS_STUDY_MPI(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                           MPI_COMM_WORLD));
  std::vector<std::string> out;
  if (rank != 0) return out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return out;
}

}  // namespace

StudyMpiSession::StudyMpiSession() {
  if (!launched_by_mpirun()) return;
  int initialized = 0;
  WS_STUDY_MPI(MPI_Initialized(&initialized));
  if (!initialized) WS_STUDY_MPI(MPI_Init(nullptr, nullptr));
  active_ = true;
  WS_STUDY_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  WS_STUDY_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
}

StudyMpiSession::~StudyMpiSession() {
  if (active_) MPI_Finalize();
}

RankGroup StudyMpiSession::ranks() const {
  RankGroup group{rank_, size_, {}};
  if (size_ > 1) {
    const int rank = rank_, size = size_;
    group.gather_to_root = [rank, size](const std::string& mine) { return gather_to_root(mine, rank, size); };
  }
  return group;
}

void StudyMpiSession::abort(int exit_code) const {
  if (active_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace ws::cli
