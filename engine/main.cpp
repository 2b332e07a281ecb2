// weakscale-engine: the MPI training engine's entry point. The engine itself is not built yet;
// this binary exists so the build graph and install layout are final. It prints no numbers.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "weakscale-engine: not built yet (see the engine issue)\n");
  MPI_Finalize();
  return 2;
}
