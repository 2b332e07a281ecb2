#!/usr/bin/env python3
"""Fused causal attention rate against the number of (sequence, head) pairs per kernel call, at the
weak-scaling studies' shape (sequence 2048, head size 128, bf16): the studies' layouts run 40-384
pairs per call, gpu_rates.py measures 128-512. Efficiency is on FlashAttention's flop count (forward
2 S^2 d per pair, backward 2.5x that), over --peak-tflops; each figure the median of --repeats
timings of 20 back-to-back calls.
  python3 benchmarks/gpu/attention_calls.py --out results/gpu/h100-sxm/attention-calls.csv
"""
import argparse
import csv
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_rates import loop_seconds  # noqa: E402

# 20 back-to-back calls per timing: from 8 pairs per call up, a call's GPU time exceeds its launch.
REPS = 20

PAIRS = [(1, 8), (1, 16), (4, 10), (4, 14), (4, 24), (8, 16), (8, 24), (8, 48), (16, 32)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--peak-tflops", type=float, default=989.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("attention_calls.py: no CUDA device is visible")
    sequence, head_dim, peak = 2048, 128, args.peak_tflops * 1e12
    with open(args.out, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["batch", "heads", "pairs_per_call", "forward_s", "backward_s",
                      "forward_efficiency", "backward_efficiency"])
        for batch, heads in PAIRS:
            shape = (batch, heads, sequence, head_dim)
            q, k, v = (torch.randn(shape, dtype=torch.bfloat16, device="cuda", requires_grad=True) for _ in range(3))
            grad = torch.randn(shape, dtype=torch.bfloat16, device="cuda")

            def forward():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)

            def forward_backward():
                F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)

            fwd = statistics.median(loop_seconds(forward, REPS) for _ in range(args.repeats))
            both = statistics.median(loop_seconds(forward_backward, REPS) for _ in range(args.repeats))
            flops = 2.0 * batch * heads * sequence * sequence * head_dim
            out.writerow([batch, heads, batch * heads, f"{fwd:.6g}", f"{both - fwd:.6g}",
                          f"{flops / fwd / peak:.4f}", f"{2.5 * flops / (both - fwd) / peak:.4f}"])
            handle.flush()
    print(open(args.out).read(), flush=True)


if __name__ == "__main__":
    main()
