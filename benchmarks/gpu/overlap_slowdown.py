#!/usr/bin/env python3
"""How much slower a training step's kernels run while a collective's kernel holds part of the GPU.

A GPU collective library (NCCL, RCCL) runs each collective as a kernel of one thread block per
channel that stays resident on its multiprocessors for the whole call: its threads poll flags while
data is on the wire and load, reduce and store chunks when it arrives. A GEMM launched beside it gets
the multiprocessors that are left, and shares memory bandwidth with the chunks it moves. Only one GPU
is lent here, so a real collective cannot run; this script stands in for one with a kernel that does
what such a library's kernel does on the GPU it runs on: `ctas` blocks of 512 threads (NCCL_NTHREADS'
default on recent GPUs, NCCL's environment-variable documentation), one thread polling a flag while
the others wait at a barrier, moving chunks (read two, write one: a reduction step) at a set rate of
memory traffic. It measures each kernel alone and under that stand-in, for several block counts and
rates, and writes seconds and the slowdown.

  python3 benchmarks/gpu/overlap_slowdown.py measure benchmarks/gpu/alps-study-shapes.csv --out F
                                                  # on the GPU: F gets one row per kernel and setting
  python3 benchmarks/gpu/overlap_slowdown.py summarize F [F ...]
                                                  # here: time-weighted slowdown per study point and setting,
                                                  # and over all files at the settings of a step's collectives

What it leaves out: a real collective's traffic through NVLink or the NIC (only the memory traffic it
causes on this GPU is modelled), its L2 footprint beyond its streaming chunks, and power: the stand-in
draws less than a real collective, so a clock drop under load is not reproduced.
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time

# Settings measured: blocks the stand-in keeps resident, and the memory traffic it causes (GB/s of
# HBM reads + writes; 0 = polling only, as a collective waiting on the network; -1 = as fast as it can).
CTAS = (8, 16, 24, 32)
RATES_GBPS = (0, 100, 1000, -1)

PROXY_SOURCE = r"""
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One block per channel. rate_bytes_per_ns > 0: move chunks at that rate per block; 0: poll only;
// < 0: move chunks as fast as the block can. Runs until *stop is set; adds its bytes to *moved.
extern "C" __global__ void __launch_bounds__(512) collective_proxy(
    const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ out,
    long long vecs_per_block, double rate_bytes_per_ns, volatile int* stop,
    unsigned long long* moved, unsigned long long* span) {
  __shared__ int quit;
  const int U = 4;
  const long long chunk = (long long)blockDim.x * U;
  const long long base = (long long)blockIdx.x * vecs_per_block;
  const unsigned long long t0 = now_ns();
  unsigned long long bytes = 0;
  long long offset = 0;
  for (;;) {
    if (rate_bytes_per_ns != 0.0) {
      float4 x[U], y[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const long long i = base + offset + u * blockDim.x + threadIdx.x;
        x[u] = a[i];
        y[u] = b[i];
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const long long i = base + offset + u * blockDim.x + threadIdx.x;
        out[i] = make_float4(x[u].x + y[u].x, x[u].y + y[u].y, x[u].z + y[u].z, x[u].w + y[u].w);
      }
      offset += chunk;
      if (offset + chunk > vecs_per_block) offset = 0;
      bytes += (unsigned long long)chunk * 48ull;
    }
    if (threadIdx.x == 0) {
      int q = *stop;
      if (rate_bytes_per_ns > 0.0) {
        while (!q && (double)(now_ns() - t0) * rate_bytes_per_ns < (double)bytes) q = *stop;
      } else if (rate_bytes_per_ns == 0.0) {
        while (!q && now_ns() - t0 < 10000000000ull) q = *stop;
      }
      quit = q || now_ns() - t0 > 10000000000ull;  // never outlive a lost flag by more than 10 s
    }
    __syncthreads();
    if (quit) break;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(moved, bytes);
    if (blockIdx.x == 0) { span[0] = t0; span[1] = now_ns(); }
  }
}

extern "C" __global__ void set_stop(int* stop) { *stop = 1; }
"""


def load_kernels(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def measure(args):
    import cupy
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

    torch.manual_seed(0)
    module = cupy.RawModule(code=PROXY_SOURCE)
    proxy = module.get_function("collective_proxy")
    set_stop = module.get_function("set_stop")
    props = torch.cuda.get_device_properties(0)
    vecs_per_block = 1 << 20  # 16 MiB per block and buffer: streams from memory, not L2
    blocks_max = max(CTAS)
    a = cupy.random.standard_normal((blocks_max * vecs_per_block * 4,), dtype=cupy.float32)
    b = cupy.random.standard_normal(a.shape, dtype=cupy.float32)
    out = cupy.empty_like(a)
    stop = cupy.zeros(1, dtype=cupy.int32)
    moved = cupy.zeros(1, dtype=cupy.uint64)
    span = cupy.zeros(2, dtype=cupy.uint64)
    comm_stream = cupy.cuda.Stream(non_blocking=True)

    def cupy_view(stream):
        try:
            return cupy.cuda.Stream.from_external(stream)  # CuPy 14: the CUDA stream protocol
        except Exception:
            return cupy.cuda.ExternalStream(stream.cuda_stream)

    def build(row):
        kind = row.get("kind", "gemm") or "gemm"
        if kind == "gemm":
            m, n, k, layout = int(row["m"]), int(row["n"]), int(row["k"]), row["layout"]
            x = torch.randn((k, m) if layout == "tn" else (m, k), dtype=torch.bfloat16, device="cuda")
            w = torch.randn((n, k) if layout == "nt" else (k, n), dtype=torch.bfloat16, device="cuda")
            x_op = x.t() if layout == "tn" else x
            w_op = w.t() if layout == "nt" else w
            c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
            return lambda: torch.matmul(x_op, w_op, out=c)
        raise ValueError(f"unknown kind {kind}")

    def elementwise():
        hidden, rows = 8192, 8192
        x = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
        g = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
        weight = torch.ones(hidden, dtype=torch.bfloat16, device="cuda")
        bias = torch.zeros(hidden, dtype=torch.bfloat16, device="cuda")
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [hidden], weight, bias, 1e-5)
        q, kk, v = (torch.randn((16, 40, 2048, 128), dtype=torch.bfloat16, device="cuda") for _ in range(3))
        return {
            "gelu_forward": lambda: F.gelu(x, approximate="tanh"),
            "layer_norm_forward": lambda: torch.ops.aten.native_layer_norm(x, [hidden], weight, bias, 1e-5),
            "layer_norm_backward": lambda: torch.ops.aten.native_layer_norm_backward(
                g, x, [hidden], mean, rstd, weight, bias, [True, True, True]),
            "softmax_forward": lambda: torch.softmax(x, dim=-1),
            "attention_forward": lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True),
        }

    def capture(fn, target_s=4e-3, max_reps=400):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
            fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        one = start.elapsed_time(end) / 1e3
        reps = max(1, min(max_reps, math.ceil(target_s / max(one, 1e-7))))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(reps):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        return graph, reps

    def replay_seconds(graph, reps, ctas, rate_gbps):
        """Seconds per call of the graph's kernel, with the stand-in resident when ctas > 0."""
        main = torch.cuda.current_stream()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        gbps = float("nan")
        if ctas:
            stop.fill(0)
            moved.fill(0)
            cupy.cuda.Device().synchronize()
            rate = rate_gbps / ctas if rate_gbps > 0 else (0.0 if rate_gbps == 0 else -1.0)  # bytes/ns
            proxy((ctas,), (512,), (a, b, out, cupy.int64(vecs_per_block), cupy.float64(rate), stop,
                                    moved, span), stream=comm_stream)
            time.sleep(0.003)  # the stand-in's blocks are resident before the kernel under test starts
        start.record(main)
        graph.replay()
        end.record(main)
        if ctas:
            set_stop((1,), (1,), (stop,), stream=cupy_view(main))
        torch.cuda.synchronize()
        comm_stream.synchronize()
        if ctas:
            t0, t1 = (int(v) for v in span.get())
            gbps = int(moved.get()[0]) / max(t1 - t0, 1)
        return start.elapsed_time(end) / 1e3 / reps, gbps

    rows = load_kernels(args.kernels)
    tests = []
    for row in rows:
        name = f"{row['point']}:{row['gemm']}"
        tests.append((name, row["point"], "gemm", row["m"], row["n"], row["k"], row["layout"], build(row)))
    for name, fn in elementwise().items():
        tests.append((name, "", "elementwise" if "attention" not in name else "attention", "", "", "", "", fn))

    with open(args.out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["kernel", "point", "kind", "m", "n", "k", "layout", "ctas", "target_gbps",
                         "alone_s", "overlapped_s", "slowdown", "proxy_gbps", "multiprocessors",
                         "alone_before_s", "alone_after_s"])
        begin = time.time()
        for name, point, kind, m, n, k, layout, fn in tests:
            graph, reps = capture(fn)
            # Alone before and after every setting: the clock a long GEMM settles at drifts with the
            # board's power and temperature, so the baseline is the mean of both.
            before = statistics.median(replay_seconds(graph, reps, 0, 0)[0] for _ in range(3))
            settings = []
            for ctas in CTAS:
                for rate in RATES_GBPS:
                    runs = [replay_seconds(graph, reps, ctas, rate) for _ in range(3)]
                    settings.append((ctas, rate, statistics.median(r[0] for r in runs),
                                     statistics.median(r[1] for r in runs)))
            after = statistics.median(replay_seconds(graph, reps, 0, 0)[0] for _ in range(3))
            alone = (before + after) / 2
            for ctas, rate, seconds, gbps in settings:
                writer.writerow([name, point, kind, m, n, k, layout, ctas, rate, f"{alone:.9g}",
                                 f"{seconds:.9g}", f"{seconds / alone - 1:.4f}", f"{gbps:.1f}",
                                 props.multi_processor_count, f"{before:.9g}", f"{after:.9g}"])
            handle.flush()
            del graph
            print(f"{name}: {time.time() - begin:.0f} s", flush=True)


# The settings that stand for the collectives of a study's step: 16-24 blocks (an H100's NCCL
# all-gather launched 24, NVIDIA developer forum thread 337991, 2025; DeepSeek-V3's report, arXiv
# 2412.19437 section 3.2.2, needs 20 SMs to drive InfiniBand and NVLink), memory traffic of an inter-node
# (100 GB/s: 25 GB/s of NIC per GPU, each byte read, reduced and written) or an NVLink collective (1000).
STEP_CTAS = (16, 24)
STEP_RATES_GBPS = (100, 1000)


def time_weighted(path):
    """{(group, ctas, target_gbps): (slowdown, median proxy GB/s)} of one measured CSV; group is the
    study point for GEMMs, else the kind."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    groups = {}
    for row in rows:
        key = (row["point"] or row["kind"], int(row["ctas"]), int(row["target_gbps"]))
        sums = groups.setdefault(key, [0.0, 0.0, []])
        sums[0] += float(row["alone_s"])
        sums[1] += float(row["overlapped_s"])
        sums[2].append(float(row["proxy_gbps"]))
    return {key: (overlapped / alone - 1, statistics.median(gbps)) for key, (alone, overlapped, gbps) in groups.items()}


def summarize(args):
    print("file,group,ctas,target_gbps,time_weighted_slowdown,proxy_gbps_median")
    step = []
    for path in args.measured:
        for (group, ctas, rate), (slowdown, gbps) in sorted(time_weighted(path).items()):
            print(f"{path},{group},{ctas},{rate},{slowdown:.4f},{gbps:.0f}")
            if group not in ("elementwise", "attention") and ctas in STEP_CTAS and rate in STEP_RATES_GBPS:
                step.append(slowdown)
    if step:
        print(f"# study points' GEMMs at {STEP_CTAS} blocks and {STEP_RATES_GBPS} GB/s, {len(step)} values: "
              f"median {statistics.median(step):.3f}, min {min(step):.3f}, max {max(step):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="on the GPU: time each kernel alone and beside the stand-in")
    m.add_argument("kernels", help="CSV with point,gemm,m,n,k,layout (gemm_shapes.py list)")
    m.add_argument("--out", required=True)
    s = sub.add_parser("summarize", help="time-weighted slowdown per study point and setting")
    s.add_argument("measured", nargs="+")
    args = parser.parse_args()
    measure(args) if args.command == "measure" else summarize(args)


if __name__ == "__main__":
    main()
