// Linked into every program that calls MPI_Init, only in the sanitizer build (WEAKSCALE_SANITIZE).
//
// Open MPI 4.1 (Debian 12) does not free what its components allocate before they are dlclose()d
// at MPI_Finalize, so LeakSanitizer reports ~120 KB in every MPI process and aborts the run. We
// suppress leaks whose allocation stack passes through Open MPI's libraries, and nothing else: a
// leak in our own code still fails the test. The suppression only matches if the stack reaches
// those libraries, and Open MPI is built without frame pointers: the suppressions need allocation
// stacks from the slow, DWARF-based unwinder. It is these programs' default (below) and no one
// else's: on every malloc it costs 10-100x, which made the simulator's own tests take minutes.
//
// WEAKSCALE_MPI_ONLY_UNDER_MPIRUN (the `weakscale` command): the program calls MPI_Init only when
// mpirun started it (cli/study_ranks.cpp), so only then does it pay for the slow unwinder. Its
// serial studies allocate on every event; under the slow unwinder the sanitizer build's study
// tests ran 20-65x slower than the normal build's (CI at 1a57ca9: 799 s against 24 s).

#include <cstdlib>

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libmpi.so\n"
         "leak:libmpi_cxx.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libevent\n";
}

extern "C" const char* __asan_default_options() {
#ifdef WEAKSCALE_MPI_ONLY_UNDER_MPIRUN
  // The environment mpirun gives its ranks, as cli/study_ranks.cpp's launched_by_mpirun() reads it.
  const bool under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ||
                            std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr;
  if (!under_mpirun) return "";
#endif
  return "fast_unwind_on_malloc=0";
}
