#include "engine/comm/mpi_check.hpp"

#include <mpi.h>

#include <fmt/format.h>

namespace ws {

void mpi_check(int code, const char* call, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw MpiError(fmt::format("{}:{}: {} failed: {}", file, line, call, std::string(text, length)));
}

}  // namespace ws
