#!/usr/bin/env python3
"""Turns gpu_rates.py runs into a machine file's gemm_efficiency grid (machines/SCHEMA.md).

Per shape and layout it keeps the median time over the runs (one run can catch a slow clock or an
unlucky cuBLAS choice on a few-microsecond kernel); per shape the efficiency is that of the three
layouts a training step runs one after the other (forward NN, input gradient NT, weight gradient TN):
3 x 2mnk flops over the sum of the three times, over the peak the runs used.

It also reports how well the simulator's two interpolations (sim/compute/gemm_efficiency.cpp) predict
shapes they were not given: the grid of every other size (128, 512, ..., 32768) predicts the sizes in
between. It prints the fused attention rates too. Needs only Python's standard library.

  python3 benchmarks/gpu/gemm_table.py results/gpu/h100-sxm/run1 results/gpu/h100-sxm/run2 \\
      results/gpu/h100-sxm/run3 --csv results/gpu/h100-sxm/gemm-efficiency.csv --yaml /tmp/table.yaml
"""
import argparse
import csv
import itertools
import json
import math
import os
import statistics
import sys

LAYOUTS = ("nn", "nt", "tn")


def read_run(folder):
    path = os.path.join(folder, "gemm.csv")
    times = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            times[(int(row["m"]), int(row["n"]), int(row["k"]), row["layout"])] = float(row["seconds"])
    with open(os.path.join(folder, "env.json")) as handle:
        peak = float(json.load(handle)["peak_tflops_bf16_used"]) * 1e12
    return times, peak


def idw(table, query):
    total = weighted = 0.0
    for shape, value in table.items():
        d2 = sum((math.log2(a) - math.log2(b)) ** 2 for a, b in zip(shape, query))
        if d2 == 0:
            return value
        total += 1 / d2
        weighted += value / d2
    return weighted / total


def multilinear(axes, table, query):
    corners = []
    for axis, value in zip(axes, query):
        x = min(max(math.log2(value), math.log2(axis[0])), math.log2(axis[-1]))
        i = min(max(j for j, a in enumerate(axis) if math.log2(a) <= x), len(axis) - 2)
        t = (x - math.log2(axis[i])) / (math.log2(axis[i + 1]) - math.log2(axis[i]))
        corners.append(((axis[i], 1 - t), (axis[i + 1], t)))
    value = 0.0
    for choice in itertools.product(*corners):
        weight = math.prod(w for _, w in choice)
        value += weight * table[tuple(a for a, _ in choice)]
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="folders written by gpu_rates.py --out")
    parser.add_argument("--csv", required=True, help="the combined table to write")
    parser.add_argument("--yaml", help="where to write the machine file's gemm_efficiency lines")
    args = parser.parse_args()

    runs = [read_run(folder) for folder in args.runs]
    peaks = {peak for _, peak in runs}
    if len(peaks) != 1:
        sys.exit(f"gemm_table.py: the runs used different peaks {sorted(peaks)}; combine runs of one GPU")
    peak = peaks.pop()
    keys = set(runs[0][0])
    for folder, (times, _) in zip(args.runs, runs):
        if set(times) != keys:
            sys.exit(f"gemm_table.py: {folder}/gemm.csv has other shapes than {args.runs[0]}/gemm.csv")
    median = {key: statistics.median(times[key] for times, _ in runs) for key in keys}
    sizes = sorted({key[0] for key in keys})
    efficiency = {}
    with open(args.csv, "w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["m", "n", "k", "seconds_nn", "seconds_nt", "seconds_tn", "efficiency"])
        for m, n, k in itertools.product(sizes, repeat=3):
            seconds = [median[(m, n, k, layout)] for layout in LAYOUTS]
            efficiency[(m, n, k)] = 3 * 2.0 * m * n * k / sum(seconds) / peak
            out.writerow([m, n, k] + [f"{s:.6g}" for s in seconds] + [f"{efficiency[(m, n, k)]:.4g}"])
    print(f"wrote {args.csv}: {len(efficiency)} shapes, median of {len(runs)} runs per shape and layout")

    if len(runs) > 1:
        spread = sorted(abs(times[key] / median[key] - 1) for times, _ in runs for key in keys)
        print(f"run-to-run: |time / median - 1| median {statistics.median(spread):.3f}, "
              f"95th percentile {spread[int(0.95 * (len(spread) - 1))]:.3f}, largest {spread[-1]:.2f}")
    best = max(efficiency, key=efficiency.get)
    print(f"best shape {best[0]}x{best[1]}x{best[2]}: {efficiency[best]:.3f} of peak")
    large = [e for shape, e in efficiency.items() if min(shape) >= 2048]
    print(f"shapes with m, n, k >= 2048: median {statistics.median(large):.3f}, "
          f"range {min(large):.3f} - {max(large):.3f}")

    coarse = sizes[::2]
    if len(coarse) >= 2:
        table = {shape: e for shape, e in efficiency.items() if all(s in coarse for s in shape)}
        held = [shape for shape in efficiency if shape not in table and efficiency[shape] >= 0.2]
        for name, predict in (("inverse-distance weighting", lambda q: idw(table, q)),
                              ("multilinear grid", lambda q: multilinear([coarse] * 3, table, q))):
            errors = sorted(abs(predict(q) / efficiency[q] - 1) for q in held)
            print(f"every other size predicts the rest ({len(held)} shapes at >= 0.2 of peak), {name}: "
                  f"median {statistics.median(errors):.3f}, 95th percentile {errors[int(0.95 * (len(errors) - 1))]:.3f}")

    attention = {}
    for folder in args.runs:
        with open(os.path.join(folder, "attention.csv"), newline="") as handle:
            for row in csv.DictReader(handle):
                key = (int(row["batch"]), int(row["heads"]), int(row["sequence"]), int(row["head_dim"]))
                attention.setdefault(key, {}).setdefault(row["pass"], []).append(float(row["seconds"]))
    print("fused causal attention (machines/SCHEMA.md fused_attention: achieved / peak on 2 s^2 d forward, "
          "2.5x that backward; backward time = forward+backward - forward, medians over the runs):")
    for (batch, heads, sequence, head_dim), passes in sorted(attention.items()):
        forward = statistics.median(passes["forward"])
        backward = statistics.median(passes["forward+backward"]) - forward
        flops = 2.0 * batch * heads * sequence * sequence * head_dim
        print(f"  sequence {sequence}, head_dim {head_dim}, {batch} x {heads} (sequences x heads) per call: "
              f"forward_efficiency {flops / forward / peak:.3f}, backward_efficiency {2.5 * flops / backward / peak:.3f}")

    if args.yaml:
        with open(args.yaml, "w") as handle:
            for m, n, k in itertools.product(sizes, repeat=3):
                handle.write(f"    - {{m: {m}, n: {n}, k: {k}, efficiency: {efficiency[(m, n, k)]:.4g}}}\n")
        print(f"wrote {args.yaml}")


if __name__ == "__main__":
    main()
