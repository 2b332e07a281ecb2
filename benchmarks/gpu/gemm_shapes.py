#!/usr/bin/env python3
"""Times the bf16 GEMMs a study point's training step runs, shape by shape, so the machine file's
interpolated grid can be checked against shapes it was not measured at.

  python3 benchmarks/gpu/gemm_shapes.py list > shapes.csv          # here: the Alps study's shapes
  python3 benchmarks/gpu/gemm_shapes.py time shapes.csv --out F    # on the GPU: F gets seconds per GEMM
  python3 benchmarks/gpu/gemm_shapes.py compare F results/gpu/h100-sxm/gemm-efficiency.csv
                                                  # here: F against the grid as the simulator interpolates it

`list` writes, for three points of benchmarks/studies/alps-weak-scaling.yaml with their chosen layouts
(results/alps-weak-scaling.csv), every FC layer's forward product (NN, m x n_local x k_local), input
gradient (NT, m x k_local x n_local) and weight-gradient row tile (TN, k_local/4 x n_local x m), and the
LM head's three, as workload/step_schedule.cpp lists them.
"""
import argparse
import csv
import os
import sys

VOCABULARY, SEQUENCE = 50304, 2048
# point: (devices, model hidden size, data, x, y, z) of the study's chosen layouts
POINTS = {"512 10B": (512, 5120, 64, 1, 4, 2), "1024 20B": (1024, 7168, 128, 1, 4, 2),
          "8192 160B": (8192, 12288, 128, 4, 2, 8)}


def shapes():
    rows = []
    for point, (devices, h, data, gx, gy, gz) in POINTS.items():
        m = devices // (data * gz) * SEQUENCE  # one sequence per device per step
        for name, k, n, transposed in (("qkv", h, 3 * h, False), ("proj", h, h, True),
                                       ("up", h, 4 * h, False), ("down", 4 * h, h, True)):
            k_local = k // (gy if transposed else gx)
            n_local = n // (gx if transposed else gy)
            rows.append((point, name + ".forward", m, n_local, k_local, "nn"))
            rows.append((point, name + ".dx", m, k_local, n_local, "nt"))
            rows.append((point, name + ".dw_tile", k_local // 4, n_local, m, "tn"))
        width = h // gx
        rows.append((point, "lm_head.forward", m, VOCABULARY, width, "nn"))
        rows.append((point, "lm_head.dx", m, width, VOCABULARY, "nt"))
        rows.append((point, "lm_head.dw", VOCABULARY, width, m, "tn"))
    return rows


def time_shapes(path, out_path):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_rates import graph_seconds
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    with open(out_path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["point", "gemm", "m", "n", "k", "layout", "seconds", "tflops"])
        for row in rows:
            m, n, k, layout = int(row["m"]), int(row["n"]), int(row["k"]), row["layout"]
            a = torch.randn((k, m) if layout == "tn" else (m, k), dtype=torch.bfloat16, device="cuda")
            b = torch.randn((n, k) if layout == "nt" else (k, n), dtype=torch.bfloat16, device="cuda")
            a_op = a.t() if layout == "tn" else a
            b_op = b.t() if layout == "nt" else b
            c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
            times = sorted(graph_seconds(lambda: torch.matmul(a_op, b_op, out=c))[0] for _ in range(3))
            seconds = times[1]
            out.writerow([row["point"], row["gemm"], m, n, k, layout, f"{seconds:.6g}",
                          f"{2.0 * m * n * k / seconds / 1e12:.1f}"])
            del a, b, c
    print(open(out_path).read())


def compare(timed_path, grid_path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import statistics
    from gemm_table import multilinear
    with open(grid_path, newline="") as handle:
        grid = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["efficiency"]) for r in csv.DictReader(handle)}
    sizes = sorted({shape[0] for shape in grid})
    peak = 989e12
    errors, measured_s, predicted_s = [], 0.0, 0.0
    with open(timed_path, newline="") as handle:
        for row in csv.DictReader(handle):
            m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
            flops = 2.0 * m * n * k
            measured = float(row["seconds"])
            predicted = flops / (multilinear([sizes] * 3, grid, (m, n, k)) * peak)
            errors.append(predicted / measured - 1)
            measured_s += measured
            predicted_s += predicted
            print(f"{row['point']:>10} {row['gemm']:<16} {m:>6} x {n:>6} x {k:>6} {row['layout']}: measured "
                  f"{flops / measured / peak:.3f} of peak, grid {flops / predicted / peak:.3f}, time {errors[-1]:+.1%}")
    magnitudes = sorted(abs(e) for e in errors)
    print(f"{len(errors)} GEMMs: |grid time / measured - 1| median {statistics.median(magnitudes):.3f}, "
          f"largest {magnitudes[-1]:.3f}; all of them together: grid time / measured {predicted_s / measured_s:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    timing = sub.add_parser("time")
    timing.add_argument("shapes")
    timing.add_argument("--out", required=True)
    check = sub.add_parser("compare")
    check.add_argument("timed")
    check.add_argument("grid")
    args = parser.parse_args()
    if args.command == "list":
        out = csv.writer(sys.stdout)
        out.writerow(["point", "gemm", "m", "n", "k", "layout"])
        for row in shapes():
            out.writerow(row)
    elif args.command == "time":
        time_shapes(args.shapes, args.out)
    else:
        compare(args.timed, args.grid)


if __name__ == "__main__":
    main()
