#!/usr/bin/env python3
"""Python peers of hhg-bench: vesin, freud, scipy's cKDTree, matscipy and hhg's own Python
package on one point file.

The contract is that of `hhg-bench --points FILE --radius R --json`: FILE holds raw
little-endian float32 x, y, z triples; one JSON line per engine goes to standard output with
the keys engine, case, n, threads, build_s, query_s, total_s, pairs and checksum. A peer whose
package is missing prints {"engine": NAME, "skipped": REASON} instead.

Every peer searches within the radius widened by a relative 1e-5 and its candidates are then
re-checked with hhg's exact predicate, (dx*dx + dy*dy) + dz*dz <= r*r evaluated in float32 in
that order, so all engines report the same pairs. The checksum is the sum of i + j over the
unordered pairs modulo 2^61 - 1. The re-check is part of the query time. Each time is the best
of --reps runs by total; no further run starts once the runs so far and one more would pass
--timeout seconds. Every peer runs in a forked child process, which is stopped after
--timeout seconds (default 120): some cell-list peers degrade badly on points spread over a
huge box, and the peer is then reported as skipped.

With --box LX,LY,LZ the points lie in the box [0, L) periodic along all three axes, each
edge longer than twice the radius, and pairs follow the minimum-image rule. The re-check then
takes, per axis, the nearest of x_i against x_j, x_i + L against x_j, and x_i against x_j + L
(the point below moved up, each sum rounded to float32, so the distance is the same from
either side), exactly as hhg-bench's brute force and hhg's PeriodicSearch do, and the checksum
adds each pair's shift code 9 (sx + 1) + 3 (sy + 1) + (sz + 1), with x_j + s L the image.

hhg-python is hhg's own package (crates/hhg-py), to show the binding's cost beside the Rust
engine: without --box it runs what the Rust engine `hhg` runs, hhg.Grid(r).build(points) and
neighbor_lists() on the same float32 points (hhg's own predicate, so no re-check; the checksum
is taken after the timed calls); with --box it runs the vesin-compatible
hhg.NeighborList(...).compute(points, box, True, "ij") in float64, re-checked like vesin.

Install the peers with: pip install vesin freud-analysis scipy matscipy (and hhg with
pip install ./crates/hhg-py)
"""

import argparse
import json
import multiprocessing
import sys
import time

MODULUS = (1 << 61) - 1
SLACK = 1e-5
PEERS = ("vesin", "freud", "scipy", "matscipy", "hhg-python")
PACKAGES = {
    "vesin": "vesin",
    "freud": "freud-analysis",
    "scipy": "scipy",
    "matscipy": "matscipy",
    "hhg-python": "./crates/hhg-py",
}
# Cell-list peers allocate their cells over the bounding box: above this many cells of the
# search radius they are skipped rather than run out of memory.
MAX_CELLS = 2e8


def emit(record):
    """Prints one JSON line and flushes it."""
    print(json.dumps(record), flush=True)


def lower_first(np, i, j, full):
    """Each candidate pair once as lo < hi: a half list (each pair once, either way round) is
    turned round where needed; of a full list (each pair both ways) only the entries with
    i < j are kept."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    if full:
        keep = i < j
        return i[keep], j[keep]
    lo = np.minimum(i, j)
    hi = np.maximum(i, j)
    keep = lo != hi
    return lo[keep], hi[keep]


def exact_pairs(np, points, i, j, radius, full=False):
    """Keeps the candidate pairs within the radius by hhg's predicate, each once as i < j.

    A half list (each pair once, either way round) is turned round where needed; of a full
    list (each pair both ways) only the entries with i < j are kept.
    """
    lo, hi = lower_first(np, i, j, full)
    d = points[lo] - points[hi]
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    r = np.float32(radius)
    keep = d2 <= r * r
    return lo[keep], hi[keep]


def exact_periodic_pairs(np, points, i, j, radius, lengths, full=False):
    """Like exact_pairs, in the periodic box [0, lengths): returns lo, hi and the shift code
    of each kept pair (see the module documentation)."""
    lo, hi = lower_first(np, i, j, full)
    a = points[lo]
    b = points[hi]
    d = np.empty_like(a)
    code = np.zeros(lo.size, dtype=np.uint64)
    for axis in range(3):
        length = np.float32(lengths[axis])
        best = a[:, axis] - b[:, axis]
        shift = np.zeros(lo.size, dtype=np.int64)
        # The point below moves up: s = -1 measures a + L against b, s = 1 a against b + L.
        for s, candidate in (
            (-1, (a[:, axis] + length) - b[:, axis]),
            (1, a[:, axis] - (b[:, axis] + length)),
        ):
            better = np.abs(candidate) < np.abs(best)
            best = np.where(better, candidate, best)
            shift = np.where(better, s, shift)
        d[:, axis] = best
        code = code * np.uint64(3) + (shift + 1).astype(np.uint64)
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    r = np.float32(radius)
    keep = d2 <= r * r
    return lo[keep], hi[keep], code[keep]


def checksum(np, lo, hi, code=None):
    """The pair checksum: the sum of i + j (plus the shift code in a periodic box) modulo
    2^61 - 1."""
    if lo.size == 0:
        return 0
    terms = lo.astype(np.uint64) + hi.astype(np.uint64)
    if code is not None:
        terms = terms + code
    return int(terms.sum(dtype=np.uint64)) % MODULUS


def finish(np, points, i, j, radius, lengths, full=False):
    """The exact pairs of a peer's candidates and their checksum: (lo, hi, checksum)."""
    if lengths is None:
        lo, hi = exact_pairs(np, points, i, j, radius, full)
        return lo, hi, checksum(np, lo, hi)
    lo, hi, code = exact_periodic_pairs(np, points, i, j, radius, lengths, full)
    return lo, hi, checksum(np, lo, hi, code)


def run_vesin(np, points, radius, threads, lengths):
    """vesin's NeighborList, a half list (one call: build and query)."""
    from vesin import NeighborList

    probe = radius * (1.0 + SLACK)
    periodic = lengths is not None
    box = np.diag(np.asarray(lengths, dtype=np.float64)) if periodic else np.zeros((3, 3))
    start = time.perf_counter()
    nl = NeighborList(cutoff=probe, full_list=False)
    i, j = nl.compute(
        points=points.astype(np.float64), box=box, periodic=periodic, quantities="ij"
    )
    built = start
    result = finish(np, points, i, j, radius, lengths)
    done = time.perf_counter()
    return 1, built - start, done - built, result


def run_freud(np, points, radius, threads, lengths):
    """freud's AABBQuery; without --box, in a periodic box so large that no pair wraps.

    freud implements pair queries in periodic boxes only, over [-L/2, L/2). Open points keep
    their coordinates: the box holds every point with L/2 above the largest coordinate
    magnitude, so the direct distance is always the minimum image, and L exceeds that
    magnitude by more than twice the radius, so no wrapped image is within the radius. In a
    periodic box [0, L) the points are moved down by L/2 for freud (the candidates are then
    re-checked on the caller's coordinates).
    """
    import freud

    freud.parallel.set_num_threads(threads)
    probe = radius * (1.0 + SLACK)
    if lengths is None:
        extent = float(np.abs(points).max()) if points.size else 1.0
        side = 2.0 * (extent + 2.0 * radius) + 1.0
        edges, inside = (side, side, side), points
    else:
        edges = tuple(float(length) for length in lengths)
        inside = (points.astype(np.float64) - np.asarray(edges) / 2.0).astype(np.float32)
    start = time.perf_counter()
    box = freud.box.Box(*edges)
    query = freud.locality.AABBQuery(box, inside)
    built = time.perf_counter()
    nlist = query.query(inside, {"r_max": probe, "exclude_ii": True}).toNeighborList()
    result = finish(
        np, points, nlist.query_point_indices, nlist.point_indices, radius, lengths, full=True
    )
    done = time.perf_counter()
    return threads, built - start, done - built, result


def run_scipy(np, points, radius, threads, lengths):
    """scipy's cKDTree and its query_pairs (single-threaded; periodic through boxsize)."""
    from scipy.spatial import cKDTree

    probe = radius * (1.0 + SLACK)
    boxsize = None if lengths is None else np.asarray(lengths, dtype=np.float64)
    start = time.perf_counter()
    tree = cKDTree(points.astype(np.float64), boxsize=boxsize)
    built = time.perf_counter()
    pairs = tree.query_pairs(probe, output_type="ndarray")
    result = finish(np, points, pairs[:, 0], pairs[:, 1], radius, lengths)
    done = time.perf_counter()
    return 1, built - start, done - built, result


def run_matscipy(np, points, radius, threads, lengths):
    """matscipy's neighbour_list (cell lists in C) over the points' bounding box, or over
    the periodic box."""
    from matscipy.neighbours import neighbour_list

    probe = radius * (1.0 + SLACK)
    if lengths is not None:
        start = time.perf_counter()
        i, j = neighbour_list(
            "ij",
            positions=points.astype(np.float64),
            cutoff=probe,
            cell=np.diag(np.asarray(lengths, dtype=np.float64)),
            pbc=[True, True, True],
        )
        built = start
        result = finish(np, points, i, j, radius, lengths, full=True)
        done = time.perf_counter()
        return 1, built - start, done - built, result
    lo_corner = points.min(axis=0).astype(np.float64)
    extent = points.max(axis=0).astype(np.float64) - lo_corner + 2.0 * probe
    cells = float(np.prod(np.maximum(extent / probe, 1.0)))
    if cells > MAX_CELLS:
        raise MemoryError(
            f"its cell list would need {cells:.2g} cells over the bounding box (limit {MAX_CELLS:.0g})"
        )
    start = time.perf_counter()
    i, j = neighbour_list(
        "ij",
        positions=points.astype(np.float64) - lo_corner + probe,
        cutoff=probe,
        cell=np.diag(extent),
        pbc=[False, False, False],
    )
    built = start
    result = finish(np, points, i, j, radius, None, full=True)
    done = time.perf_counter()
    return 1, built - start, done - built, result


def run_hhg_python(np, points, radius, threads, lengths):
    """hhg's Python package: the Rust engine's own calls on the same float32 points (open),
    or the vesin-compatible NeighborList in the periodic box (re-checked like vesin)."""
    import hhg

    if lengths is not None:
        probe = radius * (1.0 + SLACK)
        box = np.diag(np.asarray(lengths, dtype=np.float64))
        start = time.perf_counter()
        nl = hhg.NeighborList(probe, False, n_threads=threads)
        i, j = nl.compute(points, box, True, "ij")
        built = start
        result = finish(np, points, i, j, radius, lengths)
        done = time.perf_counter()
        return threads, built - start, done - built, result
    start = time.perf_counter()
    grid = hhg.Grid(radius)
    grid.build(points, n_threads=threads)
    built = time.perf_counter()
    offsets, indices = grid.neighbor_lists(n_threads=threads)
    done = time.perf_counter()
    # The same predicate as the Rust engine: every entry is a pair, no re-check.
    rows = np.repeat(np.arange(len(points), dtype=np.int64), np.diff(offsets))
    lo, hi = lower_first(np, rows, indices, True)
    return threads, built - start, done - built, (lo, hi, checksum(np, lo, hi))


RUNNERS = {
    "vesin": run_vesin,
    "freud": run_freud,
    "scipy": run_scipy,
    "matscipy": run_matscipy,
    "hhg-python": run_hhg_python,
}


def measure(runner, np, points, args, conn):
    """Runs one peer up to --reps times in a child process and sends the best run back."""
    try:
        best = None
        started = time.perf_counter()
        for _ in range(max(1, args.reps)):
            run_started = time.perf_counter()
            threads, build_s, query_s, (lo, _, check) = runner(
                np, points, args.radius, args.threads, args.lengths
            )
            if best is None or build_s + query_s < best[1] + best[2]:
                best = (threads, build_s, query_s)
            pairs = int(lo.size)
            now = time.perf_counter()
            if now - started + (now - run_started) > args.timeout:
                break
        conn.send(("ok", best, pairs, check))
    except ImportError as e:
        conn.send(("import", str(e)))
    except MemoryError as e:
        conn.send(("skip", str(e)))
    except Exception as e:  # noqa: BLE001 - any failure of a peer is reported, not raised
        conn.send(("skip", f"failed: {type(e).__name__}: {e}"))
    finally:
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--points", required=True, help="raw little-endian float32 xyz file")
    parser.add_argument("--radius", type=float, required=True, help="search radius")
    parser.add_argument("--json", action="store_true", help="JSON lines (the only output)")
    parser.add_argument("--threads", type=int, default=1, help="threads for peers that thread")
    parser.add_argument("--reps", type=int, default=1, help="runs per peer, best taken")
    parser.add_argument("--engine", default=",".join(PEERS), help="comma-separated peers")
    parser.add_argument("--case", default=None, help="the case name (default: file stem)")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds after which a peer is stopped"
    )
    parser.add_argument(
        "--box",
        default=None,
        help="LX,LY,LZ: the points lie in the box [0, L), periodic along every axis",
    )
    args = parser.parse_args()
    args.lengths = None
    if args.box is not None:
        try:
            args.lengths = [float(v) for v in args.box.split(",")]
        except ValueError:
            args.lengths = []
        if len(args.lengths) != 3 or min(args.lengths) <= 2.0 * args.radius:
            print(f"--box {args.box}: expected three lengths above twice the radius", file=sys.stderr)
            return 2
    engines = [e.strip() for e in args.engine.split(",") if e.strip()]
    case = args.case
    if case is None:
        case = args.points.rsplit("/", 1)[-1].rsplit(".", 1)[0]

    try:
        import numpy as np
    except ImportError:
        for engine in engines:
            emit({"engine": engine, "skipped": "numpy is not installed (pip install vesin freud-analysis scipy matscipy)"})
        return 0

    raw = np.fromfile(args.points, dtype="<f4")
    if raw.size % 3:
        print(f"{args.points}: {raw.size * 4} bytes is not a whole number of points", file=sys.stderr)
        return 2
    points = np.ascontiguousarray(raw.reshape(-1, 3))
    n = len(points)
    context = multiprocessing.get_context("fork")

    for engine in engines:
        runner = RUNNERS.get(engine)
        if runner is None:
            emit({"engine": engine, "skipped": f"unknown peer (expected one of {', '.join(PEERS)})"})
            continue
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=measure, args=(runner, np, points, args, sender))
        child.start()
        sender.close()
        message = None
        if receiver.poll(args.timeout):
            try:
                message = receiver.recv()
            except EOFError:
                message = None
        if child.is_alive():
            child.kill()
        child.join()
        if message is None:
            emit({"engine": engine, "skipped": f"stopped after {args.timeout:g} s (--timeout)"})
            continue
        kind = message[0]
        if kind == "import":
            emit({"engine": engine, "skipped": f"{engine} is not installed (pip install {PACKAGES[engine]})"})
            continue
        if kind == "skip":
            emit({"engine": engine, "skipped": message[1]})
            continue
        _, (threads, build_s, query_s), pairs, check = message
        emit(
            {
                "engine": engine,
                "case": case,
                "n": n,
                "threads": threads,
                "build_s": build_s,
                "query_s": query_s,
                "total_s": build_s + query_s,
                "pairs": pairs,
                "checksum": check,
            }
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
