#!/usr/bin/env python3
"""Measures what one CUDA GPU achieves on the kernels a training step runs, for machine files.

Writes, under --out:
  gemm.csv        bf16 GEMM C[m x n] = A[m x k] B[k x n] on a log2 grid of shapes (m, n, k each
                  128 ... 32768), in the three layouts a training step uses (forward NN, input
                  gradient NT, weight gradient TN): seconds per GEMM and efficiency = 2mnk / s / peak.
  attention.csv   fused causal attention (torch scaled_dot_product_attention), forward and
                  forward + backward.
  elementwise.csv element-wise kernels (GELU, layer norm, softmax, copy): elements/s and bytes/s.
  env.json        GPU, clocks, power limit, torch / CUDA versions, the command line.

Every GEMM and element-wise timing replays a CUDA graph of back-to-back launches, so it is the
device's time, not Python's launch rate; each figure is the median of three replays. Data are
random normal (zeros run faster on this hardware, which would flatter the figures).

Run on a machine with a GPU and PyTorch (the project itself never needs either):
  python3 benchmarks/gpu/gpu_rates.py --out results/gpu/h100-sxm --peak-tflops 989
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F


def graph_seconds(fn, target_s=2e-3, trials=3, max_reps=200):
    """Median seconds per call of fn, from CUDA-graph replays of back-to-back calls."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as capture wants
        fn()
        fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    one = start.elapsed_time(stop) / 1e3
    reps = max(1, min(max_reps, math.ceil(target_s / max(one, 1e-7))))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / reps)
    del graph
    return statistics.median(times), reps


def loop_seconds(fn, reps):
    """Seconds per call of reps back-to-back Python launches between two events, after 3 warm-up
    calls: the queue stays full when a call's GPU time exceeds Python's launch time."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / 1e3 / reps


def event_seconds(fn, trials=5):
    """Median seconds per call of fn launched from Python (for calls long enough to hide launches)."""
    fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(trials):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def environment(args):
    props = torch.cuda.get_device_properties(0)
    env = {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "device": props.name,
        "multiprocessors": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "peak_tflops_bf16_used": args.peak_tflops,
        "peak_memory_bandwidth_gbps_used": args.peak_memory_gbps,
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem,clocks.sm,temperature.gpu",
             "--format=csv"], capture_output=True, text=True, timeout=30).stdout
    except Exception as error:  # the figures do not depend on it; say why it is missing
        env["nvidia_smi"] = f"not read: {error}"
    return env


def gemm_sweep(args, out_dir, deadline):
    sizes = [2 ** e for e in range(args.min_log2, args.max_log2 + 1)]
    largest = sizes[-1] * sizes[-1]
    pool_a = torch.randn(largest, dtype=torch.bfloat16, device="cuda")
    pool_b = torch.randn(largest, dtype=torch.bfloat16, device="cuda")
    pool_c = torch.empty(largest, dtype=torch.bfloat16, device="cuda")
    peak = args.peak_tflops * 1e12
    # Warm-up outside the sweep: cuBLAS's first call creates its handle and workspace, and the first
    # heavy products raise the clocks; either would otherwise land on the first shapes timed.
    warm = pool_c[: 4096 * 4096].view(4096, 4096)
    for _ in range(20):
        torch.matmul(pool_a[: 4096 * 4096].view(4096, 4096), pool_b[: 4096 * 4096].view(4096, 4096).t(), out=warm)
    for a, b in ((pool_a[:16384].view(128, 128), pool_b[:16384].view(128, 128)),
                 (pool_a[:16384].view(128, 128).t(), pool_b[:16384].view(128, 128).t())):
        graph_seconds(lambda a=a, b=b: torch.matmul(a, b, out=pool_c[:16384].view(128, 128)))
    torch.cuda.synchronize()
    path = os.path.join(out_dir, "gemm.csv")
    done = 0
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["m", "n", "k", "layout", "seconds", "tflops", "efficiency", "reps"])
        for m in sizes:
            for n in sizes:
                for k in sizes:
                    if time.time() > deadline:
                        print(f"gemm: time budget reached after {done} shapes", flush=True)
                        return
                    c = pool_c[: m * n].view(m, n)
                    layouts = {
                        "nn": (pool_a[: m * k].view(m, k), pool_b[: k * n].view(k, n)),
                        "nt": (pool_a[: m * k].view(m, k), pool_b[: n * k].view(n, k).t()),
                        "tn": (pool_a[: k * m].view(k, m).t(), pool_b[: k * n].view(k, n)),
                    }
                    for layout, (a, b) in layouts.items():
                        seconds, reps = graph_seconds(lambda a=a, b=b: torch.matmul(a, b, out=c))
                        tflops = 2.0 * m * n * k / seconds / 1e12
                        out.writerow([m, n, k, layout, f"{seconds:.9g}", f"{tflops:.4f}",
                                      f"{tflops * 1e12 / peak:.5f}", reps])
                    done += 1
            handle.flush()
            print(f"gemm: m={m} done ({done} shapes, {time.time() - START:.0f} s)", flush=True)
    del pool_a, pool_b, pool_c
    torch.cuda.empty_cache()


def attention_sweep(args, out_dir):
    path = os.path.join(out_dir, "attention.csv")
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["batch", "heads", "sequence", "head_dim", "pass", "seconds",
                      "flops_causal", "tflops_causal", "backend"])
        for sequence in (1024, 2048, 4096):
            for head_dim in (64, 128):
                for heads in (8, 32):
                    batch = max(1, 32768 // sequence)  # 32 k tokens per call
                    shape = (batch, heads, sequence, head_dim)
                    q, k, v = (torch.randn(shape, dtype=torch.bfloat16, device="cuda", requires_grad=True)
                               for _ in range(3))
                    grad = torch.randn(shape, dtype=torch.bfloat16, device="cuda")
                    # Causal attention does half of the 4 b h s^2 d flops of QK^T and PV; backward 2.5x.
                    forward_flops = 2.0 * batch * heads * sequence * sequence * head_dim
                    backend = "flash" if torch.backends.cuda.flash_sdp_enabled() else "default"

                    def forward():
                        with torch.no_grad():
                            F.scaled_dot_product_attention(q, k, v, is_causal=True)

                    def forward_backward():
                        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                        y.backward(grad)

                    for name, fn, flops in (("forward", forward, forward_flops),
                                            ("forward+backward", forward_backward, 3.5 * forward_flops)):
                        seconds = event_seconds(fn)
                        out.writerow([batch, heads, sequence, head_dim, name, f"{seconds:.9g}",
                                      f"{flops:.6g}", f"{flops / seconds / 1e12:.4f}", backend])
                    del q, k, v, grad
                    handle.flush()
    print(f"attention: done ({time.time() - START:.0f} s)", flush=True)


def elementwise_sweep(args, out_dir):
    path = os.path.join(out_dir, "elementwise.csv")
    hidden = 8192
    rows = 8192
    elements = rows * hidden
    x = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
    g = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    weight = torch.ones(hidden, dtype=torch.bfloat16, device="cuda")
    bias = torch.zeros(hidden, dtype=torch.bfloat16, device="cuda")
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [hidden], weight, bias, 1e-5)
    soft = torch.softmax(x, dim=-1)
    element_bytes = x.element_size()
    kernels = {
        # name: (function, bytes moved per element at the least: reads + writes)
        "copy": (lambda: y.copy_(x), 2),
        "gelu_forward": (lambda: F.gelu(x, approximate="tanh"), 2),
        "gelu_backward": (lambda: torch.ops.aten.gelu_backward(g, x, approximate="tanh"), 3),
        "layer_norm_forward": (lambda: torch.ops.aten.native_layer_norm(x, [hidden], weight, bias, 1e-5), 2),
        "layer_norm_backward": (lambda: torch.ops.aten.native_layer_norm_backward(
            g, x, [hidden], mean, rstd, weight, bias, [True, True, True]), 3),
        "softmax_forward": (lambda: torch.softmax(x, dim=-1), 2),
        "softmax_backward": (lambda: torch.ops.aten._softmax_backward_data(g, soft, -1, torch.bfloat16), 3),
    }
    peak = args.peak_memory_gbps * 1e9
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["kernel", "elements", "dtype", "seconds", "elements_per_s", "bytes_per_element",
                      "gbps", "fraction_of_peak_bandwidth"])
        for name, (fn, per_element) in kernels.items():
            try:
                seconds, _ = graph_seconds(fn, target_s=5e-3, max_reps=50)
            except Exception as error:  # record the failure, keep the other figures
                out.writerow([name, elements, "bf16", f"failed: {error}", "", per_element, "", ""])
                continue
            moved = per_element * element_bytes * elements
            out.writerow([name, elements, "bf16", f"{seconds:.9g}", f"{elements / seconds:.6g}", per_element * element_bytes,
                          f"{moved / seconds / 1e9:.2f}", f"{moved / seconds / peak:.4f}"])
    print(f"elementwise: done ({time.time() - START:.0f} s)", flush=True)


START = time.time()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for the CSVs and env.json")
    parser.add_argument("--peak-tflops", type=float, default=989.0,
                        help="dense bf16 peak of the GPU in TFLOP/s (H100 SXM and H200: 989)")
    parser.add_argument("--peak-memory-gbps", type=float, default=3350.0,
                        help="HBM peak in GB/s (H100 SXM 80 GB: 3350; H200: 4800)")
    parser.add_argument("--min-log2", type=int, default=7)
    parser.add_argument("--max-log2", type=int, default=15)
    parser.add_argument("--gemm-budget-s", type=float, default=360.0,
                        help="stop the GEMM sweep after this many seconds and keep what it has")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_rates.py: no CUDA device is visible; run it on a machine with a GPU")
    if args.min_log2 < 0 or args.max_log2 < args.min_log2:
        sys.exit("gpu_rates.py: --min-log2 and --max-log2 must satisfy 0 <= min <= max")
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    with open(os.path.join(args.out, "env.json"), "w") as handle:
        json.dump(environment(args), handle, indent=2)
    for section in (lambda: gemm_sweep(args, args.out, START + args.gemm_budget_s),
                    lambda: attention_sweep(args, args.out),
                    lambda: elementwise_sweep(args, args.out)):
        try:
            section()
        except Exception:  # keep the other sections' figures; the log says what broke
            traceback.print_exc()
        torch.cuda.empty_cache()
    env = environment(args)
    env["wall_s"] = round(time.time() - START, 1)
    with open(os.path.join(args.out, "env.json"), "w") as handle:
        json.dump(env, handle, indent=2)
    print(f"done in {env['wall_s']} s", flush=True)


if __name__ == "__main__":
    main()
