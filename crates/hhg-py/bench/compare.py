#!/usr/bin/env python3
"""Times hhg's Python package against vesin on uniform random points, open and periodic.

For each size it times, best of --reps runs (each a whole call: build, search, outputs):
- ``hhg.NeighborList.compute(points, box, periodic, "ij")``, half list (vesin's interface,
  uint64 ``i`` and ``j``);
- ``hhg.Grid.build`` then ``pairs()`` (the engine's own pair search with uint32 pairs: the
  binding's cost beside the engine is the difference to the Rust figures of hhg-bench);
- ``vesin.NeighborList.compute`` with the same arguments, when vesin is installed.

The points are uniform in a cube of edge ``(n / density)^(1/3)`` with ``density`` points per
unit volume and the cutoff 1 (about 4.19 * density neighbours per point), float64.
"""

import argparse
import time

import numpy as np

import hhg


def best(function, reps):
    """The best wall time of ``reps`` calls, and the last result."""
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--density", type=float, default=8.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    args = parser.parse_args()
    try:
        import vesin
    except ImportError:
        vesin = None
    rng = np.random.default_rng(1)
    print("| n | cell | engine | pairs | time (s) |")
    print("|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        edge = (n / args.density) ** (1 / 3)
        points = rng.uniform(0, edge, (n, 3))
        box = np.eye(3) * edge
        for periodic in (False, True):
            cell = "periodic" if periodic else "open"
            ours = hhg.NeighborList(1.0, False, n_threads=args.threads)
            t, (i, _) = best(lambda: ours.compute(points, box, periodic, "ij"), args.reps)
            print(f"| {n} | {cell} | hhg.NeighborList | {len(i)} | {t:.3f} |", flush=True)
            if not periodic:
                grid = hhg.Grid(1.0)

                def engine():
                    grid.build(points, n_threads=args.threads)
                    return grid.pairs(n_threads=args.threads)

                t, pairs = best(engine, args.reps)
                print(f"| {n} | {cell} | hhg.Grid pairs | {len(pairs)} | {t:.3f} |", flush=True)
            if vesin is not None:
                theirs = vesin.NeighborList(cutoff=1.0, full_list=False, n_threads=args.threads)
                t, (i, _) = best(lambda: theirs.compute(points, box, periodic, "ij"), args.reps)
                print(f"| {n} | {cell} | vesin | {len(i)} | {t:.3f} |", flush=True)


if __name__ == "__main__":
    main()
