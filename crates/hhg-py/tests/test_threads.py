"""Thread counts: the same results for every count, concurrent calls from Python threads."""

import threading

import numpy as np
import pytest

import hhg


def test_default_threads():
    assert hhg.default_threads() >= 1


@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("full_list", [False, True])
def test_same_result_for_every_thread_count(periodic, full_list):
    rng = np.random.default_rng(11)
    points = rng.uniform(0, 10, (20000, 3))
    box = np.eye(3) * 10
    results = []
    for n_threads in (1, 2, 3, None, 0):
        calculator = hhg.NeighborList(0.6, full_list, n_threads=n_threads)
        results.append(calculator.compute(points, box, periodic, "ijSdD"))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_per_call_threads_on_native_classes():
    rng = np.random.default_rng(12)
    points = rng.uniform(0, 10, (20000, 3))
    grid = hhg.Grid(0.5)
    grid.build(points, n_threads=1)
    one = grid.neighbor_lists(True, n_threads=1)
    two = grid.neighbor_lists(True, n_threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(grid.pairs(n_threads=1), grid.pairs(n_threads=2))


def test_concurrent_python_threads():
    """Several Python threads compute at once (the GIL is released while searching)."""
    rng = np.random.default_rng(13)
    points = rng.uniform(0, 8, (30000, 3))
    box = np.eye(3) * 8
    expected = hhg.NeighborList(0.5, False).compute(points, box, True, "ijS")
    failures = []

    def work():
        try:
            got = hhg.NeighborList(0.5, False, n_threads=1).compute(points, box, True, "ijS")
            for a, b in zip(expected, got):
                np.testing.assert_array_equal(a, b)
        except Exception as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
