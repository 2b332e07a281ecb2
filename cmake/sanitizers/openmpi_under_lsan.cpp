// Linked into every program that calls MPI_Init, only in the sanitizer build (WEAKSCALE_SANITIZE).
//
// Open MPI 4.1 (Debian 12) does not free what its components allocate before they are dlclose()d
// at MPI_Finalize, so LeakSanitizer reports ~120 KB in every MPI process and aborts the run. We
// suppress leaks whose allocation stack passes through Open MPI's libraries, and nothing else: a
// leak in our own code still fails the test. The suppression only matches if the stack reaches
// those libraries, and Open MPI is built without frame pointers: the suppressions need allocation
// stacks from the slow, DWARF-based unwinder. It is these programs' default (below) and no one
// else's: on every malloc it costs 10-100x, which made the simulator's own tests take minutes.

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libmpi.so\n"
         "leak:libmpi_cxx.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libevent\n";
}

extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }
