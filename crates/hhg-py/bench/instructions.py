#!/usr/bin/env python3
"""The binding's cost in instructions: hhg's Python calls against the same Rust calls, counted by callgrind.

Wall and CPU times on a shared machine move by 10-20 % from round to round (see
``overhead.py``), more than the binding's cost, so this script counts instructions instead:
``valgrind --tool=callgrind`` runs a Python process making K calls and one making K + 2, and
the Rust probe (``crates/hhg-core/examples/images_probe.rs`` with ``only=NAME``) with K and
K + 2 repetitions; the difference of each pair, halved, is one call's instructions, start-up
(Python's, numpy's, the probe's reading of the points) cancelling out. One thread on both
sides (``n_threads=1``, ``RAYON_NUM_THREADS=1``), uniform points of density 8 in a cube,
cutoff 1, float64, as in ``overhead.py``:

- ``hhg.Grid(1).build(points)`` + ``pairs()`` against the probe's ``open-taken``;
- ``hhg.NeighborList(1, False).compute(points, box, False, "ij")`` against ``open-columns``;
- ``hhg.NeighborList(1, False).compute(points, box, True, "ij")`` against ``periodic-fresh``.

Callgrind counts the instructions of user space only: what the kernel spends on page faults
(and the binding's huge pages save) is not in these figures, which are the binding's own work
beside the engine's. valgrind cannot run AVX-512 code: build the extension and the probe for
at most AVX2 (e.g. ``RUSTFLAGS="-C target-cpu=x86-64-v3"``); the run-time dispatch picks the
AVX2 kernels under valgrind whatever the CPU.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

PYTHON_CALLS = {
    "grid": "grid = hhg.Grid(1.0)\n"
    "def call():\n    grid.build(points, n_threads=1)\n    return grid.pairs(n_threads=1)\n",
    "open": "nl = hhg.NeighborList(1.0, False, n_threads=1)\n"
    "def call():\n    return nl.compute(points, box, False, 'ij')\n",
    "periodic": "nl = hhg.NeighborList(1.0, False, n_threads=1)\n"
    "def call():\n    return nl.compute(points, box, True, 'ij')\n",
}
PROBE_CALLS = {"grid": "open-taken", "open": "open-columns", "periodic": "periodic-fresh"}

PYTHON_CHILD = """
import numpy as np
import hhg
points = np.fromfile({path!r}, dtype=np.float64).reshape(-1, 3)
box = {edge!r} * np.eye(3)
{setup}
for _ in range({calls}):
    out = call()
    del out
"""


def instructions(command, env):
    """The instructions valgrind's callgrind counted for `command` (all its threads)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            env=env,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            sys.exit(f"{command[0]} failed under valgrind:\n{result.stderr[-2000:]}")
        match = re.search(r"Collected : (\d+)", result.stderr)
        if match is None:
            sys.exit(f"valgrind printed no instruction count:\n{result.stderr[-2000:]}")
        return int(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", required=True, help="the built images_probe binary")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--density", type=float, default=8.0)
    parser.add_argument("--calls", type=int, default=1, help="K: the shorter run's calls")
    parser.add_argument(
        "--only", default="grid,open,periodic", help="comma-separated: grid, open, periodic"
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH (Debian: apt-get install valgrind)")
    names = args.only.split(",")
    unknown = [name for name in names if name not in PYTHON_CALLS]
    if unknown:
        sys.exit(f"unknown call(s) {unknown}: choose among {sorted(PYTHON_CALLS)}")
    edge = (args.n / args.density) ** (1 / 3)
    rng = np.random.default_rng(1)
    points = np.ascontiguousarray(rng.uniform(0, edge, (args.n, 3)))
    env = dict(os.environ, RAYON_NUM_THREADS="1", PYTHONHASHSEED="0")
    short, long = args.calls, args.calls + 2
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "points.f64")
        points.tofile(path)
        print(f"n = {args.n}, one thread, instructions per call = (run of {long} - run of {short}) / 2")
        print("| call | Python | Rust | Python / Rust |")
        print("|---|---:|---:|---:|")
        for name in names:

            def python_run(calls):
                child = PYTHON_CHILD.format(
                    path=path, edge=edge, setup=PYTHON_CALLS[name], calls=calls
                )
                return instructions([sys.executable, "-c", child], env)

            def probe_run(reps):
                command = [args.probe, path, "1.0", repr(edge), str(reps), f"only={PROBE_CALLS[name]}"]
                return instructions(command, env)

            python = (python_run(long) - python_run(short)) / 2
            rust = (probe_run(long) - probe_run(short)) / 2
            print(
                f"| {name} | {python / 1e6:.1f} M | {rust / 1e6:.1f} M | {python / rust:.4f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
