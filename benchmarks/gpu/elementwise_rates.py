#!/usr/bin/env python3
"""Turns gpu_rates.py runs into a machine file's elementwise_throughput lines (machines/SCHEMA.md).

Per kernel and measured GPU it keeps the median time over the runs. The target device's rate
(elements per second) then comes from:
- one measured GPU: its fraction of peak memory bandwidth, carried over to the target's bandwidth;
- two measured GPUs of the same die with different memories (H100 SXM 3.35 TB/s, H200 4.8 TB/s):
  the kernel's time as a straight line in 1 / bandwidth through the two, t = bytes-term / bandwidth +
  a part that does not shrink with bandwidth, read at the target's bandwidth. Inside the measured
  range this is an interpolation; outside it, an extrapolation, and the script says so.
Needs only Python's standard library.

  python3 benchmarks/gpu/elementwise_rates.py results/gpu/h100-sxm results/gpu/h200 --bandwidth 4e12
"""
import argparse
import csv
import glob
import json
import os
import statistics
import sys


def read_gpu(folder):
    """Returns (peak bandwidth in bytes/s, {kernel: (median seconds, elements, bytes per element)})."""
    runs = sorted(glob.glob(os.path.join(folder, "run*")))
    if not runs:
        sys.exit(f"{folder}: no run* folders written by gpu_rates.py")
    bandwidths = set()
    samples = {}
    for run in runs:
        with open(os.path.join(run, "env.json")) as handle:
            bandwidths.add(float(json.load(handle)["peak_memory_bandwidth_gbps_used"]) * 1e9)
        with open(os.path.join(run, "elementwise.csv"), newline="") as handle:
            for row in csv.DictReader(handle):
                samples.setdefault(row["kernel"], []).append(
                    (float(row["seconds"]), int(row["elements"]), int(row["bytes_per_element"])))
    if len(bandwidths) != 1:
        sys.exit(f"{folder}: runs disagree on the peak bandwidth they used: {sorted(bandwidths)}")
    kernels = {}
    for kernel, rows in samples.items():
        if len(rows) != len(runs) or len({(e, b) for _, e, b in rows}) != 1:
            sys.exit(f"{folder}: kernel {kernel} is not one size in every run")
        kernels[kernel] = (statistics.median(t for t, _, _ in rows), rows[0][1], rows[0][2])
    return bandwidths.pop(), kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("gpus", nargs="+", help="one or two folders holding gpu_rates.py runs (run1, run2, ...)")
    parser.add_argument("--bandwidth", type=float, required=True, help="the target device's peak bytes/s")
    args = parser.parse_args()
    if len(args.gpus) > 2:
        sys.exit("give one or two measured GPUs")
    gpus = [read_gpu(folder) for folder in args.gpus]
    if len(gpus) == 2 and gpus[0][0] == gpus[1][0]:
        sys.exit("the two GPUs have the same bandwidth: nothing to interpolate along")
    measured = sorted(bandwidth for bandwidth, _ in gpus)
    if len(gpus) == 2 and not measured[0] <= args.bandwidth <= measured[1]:
        print(f"# warning: {args.bandwidth:.3g} B/s lies outside the measured {measured[0]:.3g}-{measured[1]:.3g}: extrapolated")
    print("  elementwise_throughput:")
    for kernel in gpus[0][1]:
        if kernel == "copy":
            continue  # not an op of the step: the schema has no such kernel
        if len(gpus) == 1:
            bandwidth, kernels = gpus[0]
            seconds, elements, nbytes = kernels[kernel]
            fraction = elements * nbytes / seconds / bandwidth
            rate = fraction * args.bandwidth / nbytes
            how = f"{fraction:.4f} x {args.bandwidth / 1e12:g} TB/s / {nbytes} B"
        else:
            (b1, k1), (b2, k2) = gpus
            t1, elements, nbytes = k1[kernel]
            t2 = k2[kernel][0]
            slope = (t1 - t2) / (1 / b1 - 1 / b2)  # seconds x bytes/s
            fixed = t1 - slope / b1
            seconds = slope / args.bandwidth + fixed
            rate = elements / seconds
            how = (f"{elements * nbytes / seconds / args.bandwidth:.4f} of {args.bandwidth / 1e12:g} TB/s; "
                   f"{elements / t1:.4g} at {b1 / 1e12:g}, {elements / t2:.4g} at {b2 / 1e12:g}")
        entry = f"    {kernel}: {rate:.4g}"
        print(f"{entry:<37} # {how}")  # the column the machine files keep their comments in


if __name__ == "__main__":
    main()
