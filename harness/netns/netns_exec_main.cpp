// weakscale-netns-exec: starts one MPI rank inside its own network namespace.
//
//   mpirun ... weakscale-netns-exec --prefix wsns -- PROGRAM ARGS...
//
// runs PROGRAM in the namespace <prefix><OMPI_COMM_WORLD_RANK> (made by `weakscale validate
// --netns-rate` / `weakscale calibrate --netns-rate`, see netns_cluster.hpp), so the rank's MPI
// traffic leaves through that namespace's veth link instead of shared memory or loopback.
//
// Why a forwarder and not `ip netns exec`: the rank must still reach mpirun's PMIx server, which
// listens on 127.0.0.1 of the original namespace only (the PMIX_SERVER_URI* variables name it);
// inside a fresh namespace that address is the namespace's own loopback. So this process opens a
// listener on the same port of the target namespace's loopback before starting PROGRAM there, and
// relays every connection to the real server. Sockets stay in the namespace that made them, which
// is what makes one process able to bridge the two.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "weakscale-netns-exec: %s\n", what.c_str());
  std::exit(127);
}

std::string errno_text() { return std::strerror(errno); }

// Ports of the tcp4://127.0.0.1:PORT addresses in the PMIX_SERVER_URI* variables.
std::set<int> pmix_server_ports() {
  std::set<int> ports;
  constexpr std::string_view kPrefix = "PMIX_SERVER_URI";
  constexpr std::string_view kLoopback = "tcp4://127.0.0.1:";
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.substr(0, kPrefix.size()) != kPrefix) continue;
    const auto at = entry.find(kLoopback);
    if (at == std::string_view::npos) continue;
    ports.insert(std::atoi(std::string(entry.substr(at + kLoopback.size())).c_str()));
  }
  return ports;
}

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

int listen_on_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket: " + errno_text());
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in a = loopback(port);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0) {
    fail("cannot listen on 127.0.0.1:" + std::to_string(port) + " in the rank's namespace (is its loopback up?): " +
         errno_text());
  }
  return fd;
}

int connect_to_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const sockaddr_in a = loopback(port);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Writes all of `n` bytes; false when the peer is gone.
bool write_all(int fd, const char* data, ssize_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, static_cast<size_t>(n));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= w;
  }
  return true;
}

struct Listener {
  int fd;
  int port;
};

struct Relay {
  int a;  // accepted in the rank's namespace
  int b;  // connected to the PMIx server in ours
};

pid_t child_pid = 0;

void forward_signal(int signal) {
  if (child_pid > 0) ::kill(child_pid, signal);
}

// Copies what is readable on `from` to `to`; false when either side is gone.
bool pump(int from, int to, std::vector<char>& buffer) {
  const ssize_t n = ::read(from, buffer.data(), buffer.size());
  return n > 0 && write_all(to, buffer.data(), n);
}

// Relays until the child exits; returns its exit status in shell form.
int relay_until_exit(const std::vector<Listener>& listeners) {
  std::vector<Relay> relays;
  std::vector<char> buffer(1 << 16);
  for (;;) {
    int status = 0;
    if (::waitpid(child_pid, &status, WNOHANG) == child_pid) {
      for (const auto& r : relays) {
        ::close(r.a);
        ::close(r.b);
      }
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::vector<pollfd> fds;
    for (const auto& l : listeners) fds.push_back({l.fd, POLLIN, 0});
    for (const auto& r : relays) {
      fds.push_back({r.a, POLLIN, 0});
      fds.push_back({r.b, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
    constexpr short kReadable = POLLIN | POLLHUP | POLLERR;
    std::vector<Relay> open;
    for (std::size_t r = 0; r < relays.size(); ++r) {
      const pollfd& a = fds[listeners.size() + 2 * r];
      const pollfd& b = fds[listeners.size() + 2 * r + 1];
      bool alive = (a.revents & kReadable) == 0 || pump(relays[r].a, relays[r].b, buffer);
      alive = alive && ((b.revents & kReadable) == 0 || pump(relays[r].b, relays[r].a, buffer));
      if (alive) {
        open.push_back(relays[r]);
      } else {
        ::close(relays[r].a);
        ::close(relays[r].b);
      }
    }
    for (std::size_t i = 0; i < listeners.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      const int a = ::accept4(listeners[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (a < 0) continue;
      const int b = connect_to_loopback(listeners[i].port);
      if (b < 0) {
        ::close(a);
        continue;
      }
      open.push_back({a, b});
    }
    relays = std::move(open);
  }
}

// Runs argv (searched on a fixed PATH) with its output discarded, and waits for it.
void run_quietly(std::vector<std::string> argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::setenv("PATH", "/usr/sbin:/sbin:/usr/bin:/bin", 1);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
}

// --reap PREFIX RANKS: started by ShapedNetwork (netns_cluster.cpp) with a socket on stdin and in a
// process group of its own. The process that made the namespaces sends one byte once it has removed
// them; if the socket closes without it, that process died (SIGTERM, Ctrl-C, SIGKILL, a crash) and
// this one removes the namespaces and the bridge in its place.
int reap(const std::string& prefix, int ranks) {
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::signal(signal, SIG_IGN);
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(STDIN_FILENO, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) return 0;
  for (int i = 0; i < ranks; ++i) run_quietly({"ip", "netns", "del", prefix + std::to_string(i)});
  run_quietly({"ip", "link", "del", prefix + "br"});
  return 0;
}

// A name prefix as ShapedNetwork makes them: letters and digits (nothing a command could misread).
bool plain_name(const std::string& text) {
  if (text.empty() || text.size() > 10) return false;
  for (const char c : text) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "--reap") {
    const int ranks = argc == 4 ? std::atoi(argv[3]) : 0;
    if (argc != 4 || !plain_name(argv[2]) || ranks < 1 || ranks > 250) {
      fail("usage: weakscale-netns-exec --reap NAME_PREFIX RANKS (a prefix of up to 10 letters and digits, 1 to "
           "250 ranks)");
    }
    return reap(argv[2], ranks);
  }
  std::string prefix;
  int first = 1;
  for (; first < argc; ++first) {
    const std::string_view arg(argv[first]);
    if (arg == "--") {
      ++first;
      break;
    }
    if (arg == "--prefix" && first + 1 < argc) {
      prefix = argv[++first];
    } else {
      fail("usage: weakscale-netns-exec --prefix NAME_PREFIX -- PROGRAM [ARGS...] (unknown argument '" +
           std::string(arg) + "')");
    }
  }
  if (prefix.empty() || first >= argc) fail("usage: weakscale-netns-exec --prefix NAME_PREFIX -- PROGRAM [ARGS...]");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank == nullptr) fail("OMPI_COMM_WORLD_RANK is not set: start this under Open MPI's mpirun");
  const std::string name = prefix + rank;
  const std::string path = "/var/run/netns/" + name;

  const int ours = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int theirs = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ours < 0) fail("cannot open /proc/self/ns/net: " + errno_text());
  if (theirs < 0) fail("no network namespace " + name + " (" + path + "): " + errno_text());

  if (::setns(theirs, CLONE_NEWNET) != 0) fail("setns into " + name + " (needs CAP_SYS_ADMIN): " + errno_text());
  std::vector<Listener> listeners;
  for (const int port : pmix_server_ports()) listeners.push_back({listen_on_loopback(port), port});
  if (::setns(ours, CLONE_NEWNET) != 0) fail("setns back: " + errno_text());

  child_pid = ::fork();
  if (child_pid < 0) fail("fork: " + errno_text());
  if (child_pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the relay: the rank could not reach PMIx
    if (::setns(theirs, CLONE_NEWNET) != 0) fail("setns into " + name + ": " + errno_text());
    ::execvp(argv[first], argv + first);
    fail(std::string("cannot run ") + argv[first] + ": " + errno_text());
  }
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::signal(signal, forward_signal);
  return relay_until_exit(listeners);
}
