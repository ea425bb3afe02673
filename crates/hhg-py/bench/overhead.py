#!/usr/bin/env python3
"""The binding's cost: hhg's Python calls against the same Rust calls, alternated in one run.

On a loaded machine wall times drift by tens of percent within minutes, so each round times
the Python calls (best of --reps each) and then runs the Rust probe
(``crates/hhg-core/examples/images_probe.rs``, best of --reps each) on the same points,
and the ratios are taken within a round, of wall times and of CPU times over all threads
(``/proc/self/task/*/schedstat``; on a machine loaded by other work the wall time mostly
measures the share of the cores the process got, the CPU time the work). The calls compared, on uniform points of density 8
in a cube, cutoff 1, float64, all cores:

- ``hhg.Grid(1).build(points)`` + ``pairs()`` (uint32 pairs) against ``Grid::build`` +
  ``Grid::pairs`` with the pairs taken out each call;
- ``hhg.NeighborList(1, False).compute(points, box, False, "ij")`` (uint64 ``i``, ``j``)
  against ``Grid::build`` + ``Grid::pair_columns`` into new vectors each call;
- ``hhg.NeighborList(1, False).compute(points, box, True, "ij")`` against
  ``AllImagesSearch::build`` + ``AllImagesSearch::pair_columns`` (uint64 columns, grid
  order) with the columns taken out each call, what the binding runs.

The Rust side hands its outputs over every call as the binding must (numpy owns them), so
both sides pay for new memory; the binding's outputs come from its own allocation (huge
pages where the system has them), the probe's from the standard allocator.

Build the probe first (``cargo build -p hhg-core --example images_probe --profile
bench-fast``, with the same RUSTFLAGS as the extension) and pass it with --probe.
"""

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import hhg


def cpu_seconds():
    """The CPU time of all of this process's threads so far (Linux), in seconds."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total * 1e-9


def best(function, reps):
    """The best wall time and the best CPU time (all threads) of ``reps`` calls."""
    walls, cpus = [], []
    for _ in range(reps):
        start, cpu = time.perf_counter(), cpu_seconds()
        function()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_seconds() - cpu)
    return min(walls), min(cpus)


def probe_times(probe, path, edge, reps):
    """The probe's best (wall, CPU) times of the binding's calls with fresh outputs: open build +
    taken pairs, open build + u64 columns, periodic build + u64 columns."""
    output = subprocess.run(
        [probe, path, "1.0", repr(edge), str(reps)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    def times(pattern):
        found = re.search(pattern + r" ([0-9.]+) s, cpu ([0-9.]+) s", output)
        return float(found.group(1)), float(found.group(2))

    return (
        times(r"build \+ taken pairs"),
        times(r"build \+ fresh columns"),
        times(r"periodic fresh: build \+ fresh columns"),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", required=True, help="the built images_probe binary")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--density", type=float, default=8.0)
    parser.add_argument("--reps", type=int, default=3, help="calls per timing, best taken")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds")
    args = parser.parse_args()
    edge = (args.n / args.density) ** (1 / 3)
    rng = np.random.default_rng(1)
    points = np.ascontiguousarray(rng.uniform(0, edge, (args.n, 3)))
    box = edge * np.eye(3)
    grid = hhg.Grid(1.0)
    open_list = hhg.NeighborList(1.0, False)
    periodic_list = hhg.NeighborList(1.0, False)

    def grid_pairs():
        grid.build(points)
        return grid.pairs()

    calls = {
        "grid": grid_pairs,
        "open": lambda: open_list.compute(points, box, False, "ij"),
        "periodic": lambda: periodic_list.compute(points, box, True, "ij"),
    }
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "points.f64")
        points.tofile(path)
        print(f"n = {args.n}, {len(grid_pairs())} open pairs, {len(calls['periodic']()[0])} periodic pairs")
        print("Wall (CPU) seconds, best of each round; ratios Python / Rust of CPU (wall) time.")
        print("| round | Grid.pairs | Rust taken pairs | NeighborList open | Rust open columns | NeighborList periodic | Rust periodic columns | grid / Rust | open / Rust | periodic / Rust |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for round_ in range(args.rounds):
            timed = {name: best(call, args.reps) for name, call in calls.items()}
            rust_taken, rust_open, rust_periodic = probe_times(args.probe, path, edge, args.reps)

            def cell(t):
                return f"{t[0]:.3f} ({t[1]:.3f})"

            def ratio(a, b):
                return f"{a[1] / b[1]:.2f} ({a[0] / b[0]:.2f})"

            print(
                f"| {round_ + 1} | {cell(timed['grid'])} | {cell(rust_taken)} | "
                f"{cell(timed['open'])} | {cell(rust_open)} | "
                f"{cell(timed['periodic'])} | {cell(rust_periodic)} | "
                f"{ratio(timed['grid'], rust_taken)} | {ratio(timed['open'], rust_open)} | "
                f"{ratio(timed['periodic'], rust_periodic)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
