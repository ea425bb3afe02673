"""hhg.NeighborList against the numpy brute-force oracle: open, orthorhombic and triclinic
cells, cells smaller than twice the cutoff, float32 and float64, half and full lists, every
quantity."""

import numpy as np
import pytest

import hhg
from oracle import canonical, cell_widths, full_pairs, half_keys, random_cell

QUANTITIES = "ijSdD"


def check_against_oracle(points, box, periodic, cutoff, full_list, dtype):
    """Runs hhg and the oracle on the same points and compares every quantity."""
    points = np.asarray(points, dtype=dtype)
    box = np.asarray(box, dtype=dtype)
    i, j, S, d, D = hhg.NeighborList(cutoff, full_list).compute(
        points, box, periodic, QUANTITIES
    )
    assert i.dtype == np.uint64 and j.dtype == np.uint64
    assert S.dtype == np.int32 and S.shape == (len(i), 3)
    assert d.dtype == dtype and D.dtype == dtype and D.shape == (len(i), 3)
    # The oracle decides in float64 on the caller's values, as hhg's NeighborList does.
    oracle = full_pairs(points.astype(np.float64), box.astype(np.float64), periodic, cutoff)
    # Without d and D, most pairs are decided by the grid's own distance: the same pairs in
    # the same order.
    only_pairs = hhg.NeighborList(cutoff, full_list).compute(points, box, periodic, "ijS")
    for ours, theirs in zip(only_pairs, (i, j, S)):
        np.testing.assert_array_equal(ours, theirs)
    triples = [(int(a), int(b), tuple(int(s) for s in shift)) for a, b, shift in zip(i, j, S)]
    if full_list:
        assert sorted(triples) == sorted(oracle)
    else:
        keys = [canonical(*t) for t in triples]
        assert len(set(keys)) == len(keys), "a half list holds each pair once"
        assert sorted(keys) == half_keys(oracle)
    if triples:
        expected = np.array([oracle[t] for t in triples])
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        scale = max(1.0, float(np.abs(points).max()))
        np.testing.assert_allclose(D, expected, rtol=0, atol=tolerance * scale)
        np.testing.assert_allclose(
            d, np.linalg.norm(expected, axis=1), rtol=0, atol=tolerance * scale
        )
    return len(triples)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("full_list", [False, True])
def test_open(dtype, full_list):
    rng = np.random.default_rng(1)
    points = rng.uniform(-2, 3, (300, 3))
    count = check_against_oracle(points, np.zeros((3, 3)), False, 0.6, full_list, dtype)
    assert count > 100


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("full_list", [False, True])
@pytest.mark.parametrize("kind", ["cubic", "orthorhombic", "triclinic"])
def test_periodic(kind, full_list, dtype):
    rng = np.random.default_rng(2)
    box = random_cell(rng, kind, 4.0)
    points = rng.uniform(0, 1, (150, 3)) @ box
    count = check_against_oracle(points, box, True, 1.1, full_list, dtype)
    assert count > 100


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("full_list", [False, True])
@pytest.mark.parametrize("cutoff", [1.2, 2.5])
def test_small_triclinic_cell(cutoff, full_list, dtype):
    """A cell narrower than twice the cutoff (and than the cutoff): several shifts for one
    pair, and points with their own images."""
    rng = np.random.default_rng(3)
    box = random_cell(rng, "triclinic", 2.0)
    points = rng.uniform(0, 1, (20, 3)) @ box
    check_against_oracle(points, box, True, cutoff, full_list, dtype)
    i, j, S = hhg.NeighborList(cutoff, full_list).compute(points, box, True, "ijS")
    if cutoff > cell_widths(box).min():
        assert np.any(i == j), "a point sees its own images"
    keys = {(a, b) for a, b in zip(i.tolist(), j.tolist())}
    assert len(keys) < len(i), "several shifts for the same i, j"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("full_list", [False, True])
@pytest.mark.parametrize("outside", [False, True])
@pytest.mark.parametrize("factor", [0.98, 1.02])
@pytest.mark.parametrize("kind", ["orthorhombic", "triclinic"])
def test_both_sides_of_the_minimum_image_switch(kind, factor, outside, full_list, dtype):
    """A cutoff just below half the narrowest width (the minimum-image search, one-sided
    ghosts) and just above it (every image), with points in the cell or spread over three
    cells either way: the oracle's pairs, shifts, distances and vectors, sorted or not."""
    rng = np.random.default_rng(9)
    box = random_cell(rng, kind, 3.0)
    spread = (-1.0, 2.0) if outside else (0.0, 1.0)
    points = rng.uniform(*spread, (160, 3)) @ box
    cutoff = cell_widths(box).min() / 2.0 * factor
    count = check_against_oracle(points, box, True, cutoff, full_list, dtype)
    assert count > 100
    i, j, S = hhg.NeighborList(cutoff, full_list).compute(
        np.asarray(points, dtype=dtype), np.asarray(box, dtype=dtype), True, "ijS"
    )
    si, sj, sS = hhg.NeighborList(cutoff, full_list, sorted=True).compute(
        np.asarray(points, dtype=dtype), np.asarray(box, dtype=dtype), True, "ijS"
    )
    triples = sorted(zip(i.tolist(), j.tolist(), map(tuple, S.tolist())))
    assert list(zip(si.tolist(), sj.tolist(), map(tuple, sS.tolist()))) == triples


@pytest.mark.parametrize("full_list", [False, True])
def test_mixed_periodicity_and_points_outside(full_list):
    rng = np.random.default_rng(4)
    box = random_cell(rng, "triclinic", 3.0)
    points = rng.uniform(-1.5, 2.5, (120, 3)) @ box  # many outside the cell
    for periodic in ([True, False, True], [False, True, False], (True, True, False)):
        check_against_oracle(points, box, periodic, 1.0, full_list, np.float64)


def test_single_point_self_images():
    box = np.diag([1.5, 10.0, 10.0])
    i, j, S, d = hhg.NeighborList(2.0, False).compute([[0.25, 1.0, 1.0]], box, True, "ijSd")
    assert i.tolist() == [0] and j.tolist() == [0]
    assert S.tolist() in ([[1, 0, 0]], [[-1, 0, 0]])
    assert d.tolist() == [1.5]
    i, S = hhg.NeighborList(2.0, True).compute([[0.25, 1.0, 1.0]], box, True, "iS")
    assert sorted(S.tolist()) == [[-1, 0, 0], [1, 0, 0]]


def test_quantities_order_and_pairs():
    rng = np.random.default_rng(5)
    points = rng.uniform(0, 3, (100, 3))
    box = np.eye(3) * 3
    calculator = hhg.NeighborList(0.8, True)
    i, j, S, d, D = calculator.compute(points, box, True, "ijSdD")
    D2, j2, P, d2 = calculator.compute(points, box, True, "DjPd")
    np.testing.assert_array_equal(D, D2)
    np.testing.assert_array_equal(j, j2)
    np.testing.assert_array_equal(d, d2)
    assert P.dtype == np.uint64 and P.shape == (len(i), 2)
    np.testing.assert_array_equal(P[:, 0], i)
    np.testing.assert_array_equal(P[:, 1], j)
    (only_i,) = calculator.compute(points, box, True, "i")
    np.testing.assert_array_equal(only_i, i)
    assert calculator.compute(points, box, True, "") == ()
    # The vector is x[j] - x[i] + S @ box.
    np.testing.assert_allclose(D, points[j] - points[i] + S @ box, atol=1e-12)
    np.testing.assert_allclose(d, np.linalg.norm(D, axis=1), atol=1e-12)


@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("full_list", [False, True])
def test_sorted(periodic, full_list):
    rng = np.random.default_rng(6)
    points = rng.uniform(0, 5, (400, 3))
    i, j = hhg.NeighborList(0.7, full_list, sorted=True).compute(
        points, np.eye(3) * 5, periodic
    )
    assert len(i) > 0
    assert np.all(np.diff(i.astype(np.int64)) >= 0)


def test_integer_points_give_float64():
    points = np.array([[0, 0, 0], [1, 0, 0], [5, 5, 5]], dtype=np.int32)
    i, j, d = hhg.NeighborList(1.0, False).compute(points, np.eye(3) * 10, False, "ijd")
    assert d.dtype == np.float64
    assert (i.tolist(), j.tolist(), d.tolist()) == ([0], [1], [1.0])


def test_at_exactly_the_cutoff_is_a_pair():
    points = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]]
    (i,) = hhg.NeighborList(0.5, False).compute(points, np.zeros((3, 3)), False, "i")
    assert len(i) == 1


def test_non_contiguous_and_empty_points():
    rng = np.random.default_rng(7)
    wide = rng.uniform(0, 2, (200, 6))
    strided = wide[:, ::2]
    assert not strided.flags["C_CONTIGUOUS"]
    a = hhg.NeighborList(0.5, True).compute(strided, np.eye(3) * 2, True, "ijS")
    b = hhg.NeighborList(0.5, True).compute(strided.copy(), np.eye(3) * 2, True, "ijS")
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    i, d, D = hhg.NeighborList(0.5, False).compute(np.zeros((0, 3)), np.eye(3), True, "idD")
    assert len(i) == 0 and d.dtype == np.float64 and D.shape == (0, 3)


def test_arrays_own_their_data():
    rng = np.random.default_rng(8)
    points = rng.uniform(0, 2, (100, 3))
    calculator = hhg.NeighborList(0.5, False)
    i, j, D = calculator.compute(points, np.eye(3) * 2, True, "ijD")
    first = i.copy()
    calculator.compute(points + 0.1, np.eye(3) * 2, True, "ijD")
    np.testing.assert_array_equal(i, first)  # not a view into reused buffers
    assert i.flags["C_CONTIGUOUS"] and D.flags["C_CONTIGUOUS"]
    assert i.flags["WRITEABLE"]
