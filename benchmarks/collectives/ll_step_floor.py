#!/usr/bin/env python3
"""How well can any latency + bandwidth price of a ring step fit the published rows that run fast steps?

Reads benchmarks/collectives/published.csv (the published bus bandwidths, not the simulator's output) and,
for one machine and library, turns every multi-node ring all-gather / reduce-scatter row into the time of
one ring step: a member's share, bytes / devices, over the row's busbw (nccl-tests' busbw of these two
ops is exactly that share per step time).

Rows whose step is at least --simple-from bytes run the library's bandwidth protocol (Simple); the
fastest of their steps is a floor no Simple step goes below. Rows whose steps are faster than that floor
therefore ran another protocol (RCCL's LL). The script prints them and the minimax fit of one line,
step time = latency + bytes / bandwidth, to all of them at once (in sample): the smallest worst
|predicted / published busbw - 1| that any such line reaches. A model that prices a protocol's steps by
such a line cannot do better on these rows, whichever rows it assigns to the protocol, and held out it
does worse. It also lists step sizes that appear both among the fast rows and above the Simple floor:
there a protocol chosen by the step's size alone is wrong for one of them.

Usage: python3 benchmarks/collectives/ll_step_floor.py [published.csv] [--machine frontier] [--library rccl]
"""

import argparse
import csv
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(text):
    value, unit = text.split()
    if unit not in UNITS:
        sys.exit(f"published.csv: size '{text}': unit must be one of {', '.join(UNITS)}")
    return int(float(value) * UNITS[unit])


def step_rows(path, machine, library):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = []
    for r in csv.DictReader(lines):
        if r["machine"] != machine or r["library"] != library:
            continue
        if r["op"] not in ("all-gather", "reduce-scatter") or int(r["nodes"]) < 2:
            continue
        total = parse_bytes(r["bytes"])
        devices = int(r["devices"])
        busbw = float(r["busbw_gbps"])
        step = total / devices
        rows.append({"op": r["op"], "nodes": int(r["nodes"]), "bytes": total, "step": step,
                     "step_us": step / (busbw * 1e3)})
    return rows


def worst_error(points, latency_us, us_per_kib):
    # predicted busbw / published - 1 = published step time / predicted step time - 1
    return max(abs(t / (latency_us + k * us_per_kib) - 1) for k, t in points)


def minimax_line(rows):
    """Smallest worst error over latency >= 0 and time per KiB >= 0 (grid, then refined around the best)."""
    points = [(r["step"] / 1024, r["step_us"]) for r in rows]  # (KiB, us) per row
    best = (float("inf"), 0.0, 0.0)
    top = max(t for _, t in points)
    slope_top = max(t / k for k, t in points)
    lat_step, slope_step = top / 400, slope_top / 400
    lat_lo, slope_lo = 0.0, 0.0
    for _ in range(4):
        for i in range(401):
            lat = lat_lo + i * lat_step
            for j in range(401):
                slope = slope_lo + j * slope_step
                if lat <= 0 and slope <= 0:
                    continue
                e = worst_error(points, lat, slope)
                if e < best[0]:
                    best = (e, lat, slope)
        lat_lo, slope_lo = max(0.0, best[1] - 5 * lat_step), max(0.0, best[2] - 5 * slope_step)
        lat_step, slope_step = lat_step / 40, slope_step / 40
    return best


def kib(n):
    return f"{n / 1024:g} KiB"


def size(n):
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else kib(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("published", nargs="?", default="benchmarks/collectives/published.csv")
    ap.add_argument("--machine", default="frontier")
    ap.add_argument("--library", default="rccl")
    ap.add_argument("--simple-from", type=int, default=128 * 1024,
                    help="steps of at least this many bytes are taken to run Simple (default 131072)")
    a = ap.parse_args()
    rows = step_rows(a.published, a.machine, a.library)
    simple = [r for r in rows if r["step"] >= a.simple_from]
    if not simple:
        sys.exit(f"{a.published}: no {a.machine} {a.library} ring rows with steps of {a.simple_from} B or more")
    floor = min(r["step_us"] for r in simple)
    fast = sorted((r for r in rows if r["step_us"] < floor), key=lambda r: (r["step"], r["nodes"], r["op"]))
    slow = [r for r in rows if r["step_us"] >= floor]
    print(f"{a.machine} {a.library}: {len(rows)} multi-node ring rows; the fastest step of {kib(a.simple_from)} "
          f"or more takes {floor:.1f} us (Simple's floor)")
    print(f"{len(fast)} rows step faster than that (another protocol):")
    print("  op              nodes      call      step   step us")
    for r in fast:
        print(f"  {r['op']:<15} {r['nodes']:>5}  {size(r['bytes']):>8}  {kib(r['step']):>8}  {r['step_us']:8.1f}")
    if len(fast) >= 2:
        e, lat, slope = minimax_line(fast)
        print(f"best single line over them (in sample): {lat:.2f} us + {slope:.4f} us per KiB "
              f"({1.024 / slope if slope > 0 else float('inf'):.2f} GB/s): worst |busbw error| {100 * e:.1f} %")
    both = sorted({r["step"] for r in fast} & {r["step"] for r in slow})
    for s in both:
        f = [r["step_us"] for r in fast if r["step"] == s]
        sl = [r for r in slow if r["step"] == s]
        where = ", ".join(f"{r['op']} {r['nodes']} nodes {size(r['bytes'])} {r['step_us']:.1f} us" for r in sl)
        print(f"{kib(s)} steps run fast ({', '.join(f'{t:.1f}' for t in f)} us) and at Simple's pace ({where})")


if __name__ == "__main__":
    main()
