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

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

#ifdef WEAKSCALE_MPI_ONLY_UNDER_MPIRUN
// These run before ASan has mapped its shadow memory: instrumented loads would fault.
#define WEAKSCALE_BEFORE_ASAN __attribute__((no_sanitize("address", "undefined")))

WEAKSCALE_BEFORE_ASAN bool starts_with(const char* entry, const char* end, const char* prefix) {
  for (; *prefix != '\0'; ++entry, ++prefix) {
    if (entry == end || *entry != *prefix) return false;
  }
  return true;
}

// Whether the environment holds what mpirun gives its ranks (as cli/study_ranks.cpp's
// launched_by_mpirun() reads it). ASan asks for its options before libc has set up `environ` and
// before its own interceptors work, so this reads /proc/self/environ with raw system calls; when it
// cannot tell, it answers yes (the slow unwinder: slow, never a false leak report). Plain loops, no
// libc string functions: ASan intercepts those.
WEAKSCALE_BEFORE_ASAN bool launched_by_mpirun() {
  static char environment[1 << 17];
  const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  long size = 0;
  for (;;) {
    const long got = syscall(SYS_read, fd, environment + size, sizeof environment - static_cast<unsigned long>(size));
    if (got <= 0) break;
    size += got;
    if (size == static_cast<long>(sizeof environment)) break;
  }
  syscall(SYS_close, fd);
  if (size == static_cast<long>(sizeof environment)) return true;  // larger than we read
  const char* const end = environment + size;
  for (const char* entry = environment; entry < end;) {
    if (starts_with(entry, end, "OMPI_COMM_WORLD_SIZE=") || starts_with(entry, end, "PMIX_RANK=") ||
        starts_with(entry, end, "PMI_RANK="))
      return true;
    while (entry < end && *entry != '\0') ++entry;
    ++entry;
  }
  return false;
}
#endif

}  // namespace

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
  if (!launched_by_mpirun()) return "";
#endif
  return "fast_unwind_on_malloc=0";
}
