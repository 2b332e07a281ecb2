// Every MPI call goes through WS_MPI_CHECK: a failing call becomes an MpiError naming the call,
// file and line, so the trainer can report it instead of aborting inside the library.
#pragma once

#include <stdexcept>
#include <string>

namespace ws {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void mpi_check(int code, const char* call, const char* file, int line);

}  // namespace ws

#define WS_MPI_CHECK(call) ::ws::mpi_check((call), #call, __FILE__, __LINE__)
