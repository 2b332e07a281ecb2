#!/usr/bin/env python3
"""Checks gpu_rates.py's GEMM timing method on a few large shapes: CUDA-graph replay (as the sweep
times) against plain back-to-back launches timed with events, cold and after a minute of load.
  python3 benchmarks/gpu/timing_check.py
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_rates import graph_seconds, loop_seconds  # noqa: E402

SHAPES = [(2048, 2048, 8192), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384), (8192, 8192, 2048)]


def measure(label):
    for m, n, k in SHAPES:
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
        c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        fn = lambda: torch.matmul(a, b, out=c)  # noqa: E731
        flops = 2.0 * m * n * k
        plain = loop_seconds(fn, 10)
        graph, reps = graph_seconds(fn)
        print(f"{label}: {m}x{n}x{k} NN plain {flops / plain / 1e12:.0f} TF/s, graph ({reps} per replay) "
              f"{flops / graph / 1e12:.0f} TF/s", flush=True)


measure("cold")
a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
c = torch.empty_like(a)
end = time.time() + 45
while time.time() < end:
    for _ in range(50):
        torch.matmul(a, a, out=c)
    torch.cuda.synchronize()
measure("after 45 s of 8192^3 products")
