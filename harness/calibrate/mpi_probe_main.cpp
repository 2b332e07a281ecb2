// weakscale-calibrate-mpi: the MPI half of `weakscale calibrate`, started by it under mpirun.
// Times a ping-pong between ranks 0 and 1 and MPI_Iallreduce (in place) / MPI_Ireduce_scatter_block
// / MPI_Iallgather + MPI_Wait (the engine's calls) over all ranks at message sizes 1 B .. 64 MiB (x4
// steps), and rank 0 writes the
// best per-call times as JSON (schema: harness/calibrate/mpi_probe.hpp) to the file given by --out.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/comm/mpi_check.hpp"
#include "base/output_file.hpp"
#include "workload/collective_op.hpp"

namespace {

struct ProbeArgs {
  std::string out;
  bool quick = false;
};

struct Plan {
  double largest_bytes = 64.0 * 1024 * 1024;
  int batches = 15;  // timed batches per size after one warm-up batch; the best one is reported
};

// The best batch, not the median: ranks busy-poll, so on a host shared with other work a rank that
// loses its core stalls the whole batch; interference only ever adds time. Short batches (about
// 1 MiB moved, at most 1000 calls) make an undisturbed batch likely. Quick runs move 1 MiB per
// batch too: over a tbf-shaped link (--netns-rate) the bucket's 64 KiB burst refills between
// batches, and a batch of one 64 KiB message rode it at full speed, so the best batch was the
// burst, not the link (a quick calibration under load once fitted 25x the shaped rate).
double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

int calls_per_batch(double bytes, bool quick) {
  const double target = 1024.0 * 1024;
  return std::clamp(static_cast<int>(target / std::max(bytes, 1024.0)), 1, quick ? 20 : 1000);
}

std::vector<double> sizes(const Plan& plan) {
  std::vector<double> out;
  for (double b = 1; b <= plan.largest_bytes; b *= 4) out.push_back(b);
  return out;
}

// One-way time of a message between ranks 0 and 1: half a round trip.
nlohmann::json ping_pong(const Plan& plan, int rank, bool quick) {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<char> buffer(static_cast<std::size_t>(plan.largest_bytes), 1);
  for (double bytes : sizes(plan)) {
    const int count = static_cast<int>(bytes);
    const int calls = calls_per_batch(bytes, quick);
    std::vector<double> per_call;
    for (int batch = 0; batch <= plan.batches; ++batch) {  // batch 0 warms up
      WS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double start = MPI_Wtime();
      for (int i = 0; i < calls && rank < 2; ++i) {
        if (rank == 0) {
          WS_MPI_CHECK(MPI_Send(buffer.data(), count, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
          WS_MPI_CHECK(MPI_Recv(buffer.data(), count, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
          WS_MPI_CHECK(MPI_Recv(buffer.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
          WS_MPI_CHECK(MPI_Send(buffer.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
        }
      }
      if (batch > 0) per_call.push_back((MPI_Wtime() - start) / calls / 2.0);
    }
    rows.push_back({{"bytes", bytes}, {"seconds", best(per_call)}});
  }
  return rows;
}

// Per-call time of one collective, the slowest rank's, in the best batch. `full_bytes`
// is the whole buffer (fp32 elements): all-reduce's buffer, reduce-scatter's input, all-gather's
// output.
nlohmann::json time_collective(ws::CollectiveOp op, const Plan& plan, int ranks, bool quick) {
  nlohmann::json rows = nlohmann::json::array();
  const auto largest = static_cast<std::size_t>(plan.largest_bytes / sizeof(float));
  std::vector<float> send(largest, 1.0f), receive(largest, 0.0f);
  double previous_bytes = 0;
  for (double bytes : sizes(plan)) {
    // At least one element per rank, so the smallest sizes round up to ranks x 4 B (once).
    const int per_rank = std::max(1, static_cast<int>(bytes / sizeof(float)) / ranks);
    const int full = per_rank * ranks;
    const double full_bytes = static_cast<double>(full) * sizeof(float);
    if (full_bytes > plan.largest_bytes || full_bytes == previous_bytes) continue;
    previous_bytes = full_bytes;
    const int calls = calls_per_batch(full_bytes, quick);
    std::vector<double> per_call;
    for (int batch = 0; batch <= plan.batches; ++batch) {
      WS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double start = MPI_Wtime();
      for (int i = 0; i < calls; ++i) {
        // The engine's calls (engine/comm/communicator.cpp): non-blocking, the all-reduce in place.
        // Open MPI picks other algorithms for these than for the blocking calls.
        MPI_Request request = MPI_REQUEST_NULL;
        switch (op) {
          case ws::CollectiveOp::all_reduce:
            WS_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, receive.data(), full, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request));
            break;
          case ws::CollectiveOp::reduce_scatter:
            WS_MPI_CHECK(MPI_Ireduce_scatter_block(send.data(), receive.data(), per_rank, MPI_FLOAT, MPI_SUM,
                                                   MPI_COMM_WORLD, &request));
            break;
          case ws::CollectiveOp::all_gather:
            WS_MPI_CHECK(MPI_Iallgather(send.data(), per_rank, MPI_FLOAT, receive.data(), per_rank, MPI_FLOAT,
                                        MPI_COMM_WORLD, &request));
            break;
        }
        WS_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      }
      const double mine = (MPI_Wtime() - start) / calls;
      double slowest = 0;
      WS_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
      if (batch > 0) per_call.push_back(slowest);
    }
    rows.push_back({{"full_bytes", full_bytes}, {"seconds", best(per_call)}});
  }
  return rows;
}

int run(const ProbeArgs& args) {
  int rank = 0, ranks = 0;
  WS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  WS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  if (ranks < 2) {
    if (rank == 0) std::cerr << "weakscale-calibrate-mpi: needs at least 2 ranks, got " << ranks << "\n";
    return 2;
  }
  Plan plan;
  if (args.quick) {
    plan.largest_bytes = 1024.0 * 1024;
    plan.batches = 3;
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  WS_MPI_CHECK(MPI_Get_library_version(version, &length));
  std::string library(version, static_cast<std::size_t>(length));
  library = library.substr(0, library.find_first_of("\n,"));

  nlohmann::json result;
  result["library"] = library;
  result["ranks"] = ranks;
  result["batches"] = plan.batches;
  result["ping_pong"] = ping_pong(plan, rank, args.quick);
  result["all_reduce"] = time_collective(ws::CollectiveOp::all_reduce, plan, ranks, args.quick);
  result["reduce_scatter"] = time_collective(ws::CollectiveOp::reduce_scatter, plan, ranks, args.quick);
  result["all_gather"] = time_collective(ws::CollectiveOp::all_gather, plan, ranks, args.quick);
  if (rank == 0) {
    try {
      ws::write_file_atomically(args.out, result.dump() + "\n");
    } catch (const ws::OutputError& e) {
      std::cerr << "weakscale-calibrate-mpi: " << e.what() << "\n";
      return 4;  // weakscale's exit code for an output that could not be written
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ProbeArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      args.quick = true;
    } else if (a == "--out" && i + 1 < argc) {
      args.out = argv[++i];
    } else {
      std::cerr << "usage: weakscale-calibrate-mpi --out FILE [--quick]\n";
      return 2;
    }
  }
  if (args.out.empty()) {
    std::cerr << "usage: weakscale-calibrate-mpi --out FILE [--quick]\n";
    return 2;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int code = 0;
  try {
    code = run(args);
  } catch (const std::exception& e) {
    std::cerr << "weakscale-calibrate-mpi: " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  // Open MPI does not free its components' memory at MPI_Finalize. Leaving without atexit handlers
  // keeps LeakSanitizer (CI's sanitizer build) from reporting that as a leak of ours; this
  // process owns nothing else by then.
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(code);
}
