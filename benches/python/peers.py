#!/usr/bin/env python3
"""Python peers of hhg-bench: vesin, freud, scipy's cKDTree and matscipy on one point file.

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

Install the peers with: pip install vesin freud-analysis scipy matscipy
"""

import argparse
import json
import multiprocessing
import sys
import time

MODULUS = (1 << 61) - 1
SLACK = 1e-5
PEERS = ("vesin", "freud", "scipy", "matscipy")
PACKAGES = {
    "vesin": "vesin",
    "freud": "freud-analysis",
    "scipy": "scipy",
    "matscipy": "matscipy",
}
# Cell-list peers allocate their cells over the bounding box: above this many cells of the
# search radius they are skipped rather than run out of memory.
MAX_CELLS = 2e8


def emit(record):
    """Prints one JSON line and flushes it."""
    print(json.dumps(record), flush=True)


def exact_pairs(np, points, i, j, radius, full=False):
    """Keeps the candidate pairs within the radius by hhg's predicate, each once as i < j.

    A half list (each pair once, either way round) is turned round where needed; of a full
    list (each pair both ways) only the entries with i < j are kept.
    """
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    if full:
        keep = i < j
        lo, hi = i[keep], j[keep]
    else:
        lo = np.minimum(i, j)
        hi = np.maximum(i, j)
        keep = lo != hi
        lo, hi = lo[keep], hi[keep]
    d = points[lo] - points[hi]
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    r = np.float32(radius)
    keep = d2 <= r * r
    return lo[keep], hi[keep]


def checksum(np, lo, hi):
    """The pair checksum: the sum of i + j modulo 2^61 - 1."""
    if lo.size == 0:
        return 0
    return int((lo.astype(np.uint64) + hi.astype(np.uint64)).sum(dtype=np.uint64)) % MODULUS


def run_vesin(np, points, radius, threads):
    """vesin's NeighborList, a half list without periodicity (one call: build and query)."""
    from vesin import NeighborList

    probe = radius * (1.0 + SLACK)
    start = time.perf_counter()
    nl = NeighborList(cutoff=probe, full_list=False)
    i, j = nl.compute(
        points=points.astype(np.float64), box=np.zeros((3, 3)), periodic=False, quantities="ij"
    )
    built = start
    lo, hi = exact_pairs(np, points, i, j, radius)
    done = time.perf_counter()
    return 1, built - start, done - built, lo, hi


def run_freud(np, points, radius, threads):
    """freud's AABBQuery in a periodic box so large that no pair wraps around it.

    freud implements pair queries in periodic boxes only. The points keep their coordinates:
    the box [-L/2, L/2) holds every point with L/2 above the largest coordinate magnitude, so
    the direct distance is always the minimum image, and L exceeds that magnitude by more than
    twice the radius, so no wrapped image is within the radius.
    """
    import freud

    freud.parallel.set_num_threads(threads)
    extent = float(np.abs(points).max()) if points.size else 1.0
    side = 2.0 * (extent + 2.0 * radius) + 1.0
    probe = radius * (1.0 + SLACK)
    start = time.perf_counter()
    box = freud.box.Box(side, side, side)
    query = freud.locality.AABBQuery(box, points)
    built = time.perf_counter()
    nlist = query.query(points, {"r_max": probe, "exclude_ii": True}).toNeighborList()
    lo, hi = exact_pairs(
        np, points, nlist.query_point_indices, nlist.point_indices, radius, full=True
    )
    done = time.perf_counter()
    return threads, built - start, done - built, lo, hi


def run_scipy(np, points, radius, threads):
    """scipy's cKDTree and its query_pairs (single-threaded)."""
    from scipy.spatial import cKDTree

    probe = radius * (1.0 + SLACK)
    start = time.perf_counter()
    tree = cKDTree(points.astype(np.float64))
    built = time.perf_counter()
    pairs = tree.query_pairs(probe, output_type="ndarray")
    lo, hi = exact_pairs(np, points, pairs[:, 0], pairs[:, 1], radius)
    done = time.perf_counter()
    return 1, built - start, done - built, lo, hi


def run_matscipy(np, points, radius, threads):
    """matscipy's neighbour_list (cell lists in C) over the points' bounding box."""
    from matscipy.neighbours import neighbour_list

    probe = radius * (1.0 + SLACK)
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
    lo, hi = exact_pairs(np, points, i, j, radius, full=True)
    done = time.perf_counter()
    return 1, built - start, done - built, lo, hi


RUNNERS = {
    "vesin": run_vesin,
    "freud": run_freud,
    "scipy": run_scipy,
    "matscipy": run_matscipy,
}


def measure(runner, np, points, args, conn):
    """Runs one peer up to --reps times in a child process and sends the best run back."""
    try:
        best = None
        started = time.perf_counter()
        for _ in range(max(1, args.reps)):
            run_started = time.perf_counter()
            threads, build_s, query_s, lo, hi = runner(np, points, args.radius, args.threads)
            if best is None or build_s + query_s < best[1] + best[2]:
                best = (threads, build_s, query_s)
            pairs, check = int(lo.size), checksum(np, lo, hi)
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
    args = parser.parse_args()
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
            emit({"engine": engine, "skipped": f"{PACKAGES[engine]} is not installed (pip install {PACKAGES[engine]})"})
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
