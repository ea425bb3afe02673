#!/usr/bin/env python3
"""Times hhg's Python package against vesin, freud, scipy and matscipy on uniform random points.

For each size and cell (open, periodic cubic, periodic triclinic) it times, best of --reps
runs (each a whole call: build, search, outputs), the half list of pairs within the cutoff as
each package gives it, without any re-check:

- ``hhg.NeighborList(1.0, False).compute(points, box, periodic, "ij")`` (vesin's interface,
  uint64 ``i`` and ``j``);
- ``hhg.Grid(1.0).build(points)`` then ``pairs()`` (open only: the engine's own pair search
  with uint32 pairs; the binding's cost is the difference to the same calls in Rust, which
  ``cargo run -p hhg-core --example images_probe`` times on the points --save-points writes);
- ``vesin.NeighborList(cutoff=1.0, full_list=False).compute`` with the same arguments;
- freud's ``AABBQuery(box, points).query(points, r_max=1, exclude_ii=True)`` (a full list,
  both directions; open space as a periodic box too large to wrap; triclinic cells in freud's
  upper triangular form, which the scene's cell has);
- scipy's ``cKDTree(points, boxsize=...).query_pairs(1.0, output_type="ndarray")`` (one
  thread; periodic only for orthorhombic boxes, so no triclinic figure);
- matscipy's ``neighbour_list("ij", positions, cutoff, cell, pbc)`` (one thread, a full list;
  open space as a non-periodic cell over the points' bounding box).

The points are uniform in a cell of volume ``n / density`` (``density`` points per unit
volume, cutoff 1: about 4.19 * density neighbours per point), float64. The triclinic cell is
``[[L, 0, 0], [0.3 L, L, 0], [0.2 L, 0.25 L, L]]`` (rows are cell vectors) with the points
inside it. A package that is not installed is left out. The pairs column counts each pair once
(full lists halved), so the rows of one case must agree.
"""

import argparse
import time

import numpy as np

import hhg

SKEW = np.array([[1.0, 0.0, 0.0], [0.3, 1.0, 0.0], [0.2, 0.25, 1.0]])


def best(function, reps):
    """The best wall time of ``reps`` calls, and the last result."""
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def hhg_list(points, box, periodic, threads):
    nl = hhg.NeighborList(1.0, False, n_threads=threads)
    return lambda: len(nl.compute(points, box, periodic, "ij")[0])


def hhg_grid(points, box, periodic, threads):
    if periodic:
        return None
    grid = hhg.Grid(1.0)

    def run():
        grid.build(points, n_threads=threads)
        return len(grid.pairs(n_threads=threads))

    return run


def vesin_list(points, box, periodic, threads):
    import vesin

    nl = vesin.NeighborList(cutoff=1.0, full_list=False, n_threads=threads)
    return lambda: len(nl.compute(points, box, periodic, "ij")[0])


def freud_query(points, box, periodic, threads):
    import freud

    freud.parallel.set_num_threads(threads if threads > 0 else None)
    if periodic:
        # freud's box: a1 = (Lx, 0, 0), a2 = (xy Ly, Ly, 0), a3 = (xz Lz, yz Lz, Lz), centred
        # on the origin.
        lx, ly, lz = box[0, 0], box[1, 1], box[2, 2]
        cell = freud.box.Box(lx, ly, lz, box[1, 0] / ly, box[2, 0] / lz, box[2, 1] / lz)
        inside = points - box.sum(axis=0) / 2.0
    else:
        side = 2.0 * (float(np.abs(points).max()) + 2.0) + 1.0
        cell = freud.box.Box.cube(side)
        inside = points

    def run():
        query = freud.locality.AABBQuery(cell, inside)
        nlist = query.query(inside, {"r_max": 1.0, "exclude_ii": True}).toNeighborList()
        return len(nlist.point_indices) // 2

    return run


def scipy_pairs(points, box, periodic, threads):
    from scipy.spatial import cKDTree

    if periodic and np.count_nonzero(box - np.diag(np.diag(box))):
        return None
    boxsize = np.diag(box).copy() if periodic else None

    def run():
        tree = cKDTree(points, boxsize=boxsize)
        return len(tree.query_pairs(1.0, output_type="ndarray"))

    return run


def matscipy_list(points, box, periodic, threads):
    from matscipy.neighbours import neighbour_list

    if periodic:
        positions, cell = points, box
    else:
        low = points.min(axis=0)
        positions = points - low + 1.0
        cell = np.diag(points.max(axis=0) - low + 2.0)

    def run():
        i, _ = neighbour_list("ij", positions=positions, cutoff=1.0, cell=cell, pbc=[periodic] * 3)
        return len(i) // 2

    return run


ENGINES = [
    ("hhg.NeighborList", hhg_list),
    ("hhg.Grid pairs", hhg_grid),
    ("vesin", vesin_list),
    ("freud", freud_query),
    ("scipy", scipy_pairs),
    ("matscipy", matscipy_list),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--density", type=float, default=8.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--cells", default="open,periodic,triclinic")
    parser.add_argument("--engines", default=",".join(name for name, _ in ENGINES))
    parser.add_argument(
        "--save-points",
        default=None,
        metavar="PREFIX",
        help="write each size's points to PREFIX-N.f64 (raw float64, for images_probe)",
    )
    args = parser.parse_args()
    wanted = set(args.engines.split(","))
    rng = np.random.default_rng(1)
    print("| n | cell | engine | pairs | time (s) | vs hhg.NeighborList |")
    print("|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        edge = (n / args.density) ** (1 / 3)
        fractions = rng.uniform(0, 1, (n, 3))
        for cell in args.cells.split(","):
            box = edge * (SKEW if cell == "triclinic" else np.eye(3))
            points = np.ascontiguousarray(fractions @ box)
            if args.save_points and cell == "open":
                points.tofile(f"{args.save_points}-{n}.f64")
            periodic = cell != "open"
            ours = None
            for name, make in ENGINES:
                if name not in wanted:
                    continue
                try:
                    run = make(points, box, periodic, args.threads)
                except ImportError:
                    continue
                if run is None:
                    continue
                t, pairs = best(run, args.reps)
                if name == "hhg.NeighborList":
                    ours = t
                ratio = f"{t / ours:.2f}" if ours else ""
                print(f"| {n} | {cell} | {name} | {pairs} | {t:.3f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
