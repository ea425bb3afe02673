"""hhg.Grid, hhg.NeighborSearch and hhg.BroadPhase against numpy brute force."""

import numpy as np
import pytest

import hhg


def brute_lists(queries, points, radius, exclude_self):
    """Each query's neighbours among ``points`` (ascending) and their squared distances."""
    q = np.asarray(queries, dtype=np.float64)
    p = np.asarray(points, dtype=np.float64)
    diff = q[:, None, :] - p[None, :, :]
    d2 = (diff[..., 0] ** 2 + diff[..., 1] ** 2) + diff[..., 2] ** 2
    within = d2 <= radius * radius
    if exclude_self:
        np.fill_diagonal(within, False)
    return [np.nonzero(row)[0] for row in within], d2


def check_lists(lists, expected, d2=None):
    offsets, indices = lists[0], lists[1]
    assert offsets.dtype == np.int64 and indices.dtype == np.uint32
    assert len(offsets) == len(expected) + 1
    for k, want in enumerate(expected):
        got = indices[offsets[k] : offsets[k + 1]]
        np.testing.assert_array_equal(got, want)
        if d2 is not None:
            np.testing.assert_allclose(
                lists[2][offsets[k] : offsets[k + 1]], d2[k, want], rtol=1e-5
            )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grid_lists_pairs_query(dtype):
    rng = np.random.default_rng(21)
    points = rng.uniform(-3, 3, (500, 3)).astype(dtype)
    grid = hhg.Grid(0.7)
    grid.build(points)
    assert len(grid) == 500 and grid.dtype == np.dtype(dtype).name
    expected, d2 = brute_lists(points, points, 0.7, exclude_self=True)
    check_lists(grid.neighbor_lists(), expected)
    lists = grid.neighbor_lists(with_distances=True)
    assert lists[2].dtype == dtype
    check_lists(lists, expected, d2)
    pairs = grid.pairs()
    assert pairs.dtype == np.uint32 and pairs.shape[1] == 2
    assert np.all(pairs[:, 0] < pairs[:, 1])
    want = sorted((a, int(b)) for a, row in enumerate(expected) for b in row if a < b)
    assert sorted(map(tuple, pairs.tolist())) == want
    pairs2, pair_d2 = grid.pairs(with_distances=True)
    np.testing.assert_array_equal(pairs, pairs2)
    np.testing.assert_allclose(pair_d2, d2[pairs[:, 0], pairs[:, 1]], rtol=1e-5)
    queries = rng.uniform(-3, 3, (50, 3))
    expected_q, dq = brute_lists(queries.astype(dtype), points, 0.7, exclude_self=False)
    check_lists(grid.query(queries), expected_q)
    check_lists(grid.query(queries, with_distances=True), expected_q, dq)
    order = grid.order()
    assert sorted(order.tolist()) == list(range(500))


def test_grid_rebuild_switches_dtype():
    grid = hhg.Grid(1.0)
    grid.build(np.zeros((3, 3), dtype=np.float32))
    assert grid.dtype == "float32"
    grid.build(np.zeros((4, 3)))
    assert grid.dtype == "float64" and len(grid) == 4
    offsets, indices = grid.neighbor_lists()
    assert offsets.tolist() == [0, 3, 6, 9, 12]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_neighbor_search_sets(dtype):
    rng = np.random.default_rng(22)
    fluid = rng.uniform(0, 4, (300, 3))
    boundary = rng.uniform(0, 4, (200, 3))
    search = hhg.NeighborSearch(0.5, dtype=dtype, with_distances=True)
    f = search.add_dynamic_set(fluid)
    b = search.add_static_set(boundary)
    assert (f, b, search.set_count) == (0, 1, 2)
    search.set_active(f, f)
    search.set_active(f, b)
    assert search.is_active(f, b) and not search.is_active(b, f)
    search.find_neighbors()
    cast = np.dtype(dtype).type
    expected, d2 = brute_lists(fluid.astype(cast), fluid.astype(cast), 0.5, True)
    check_lists(search.neighbors(f, f), expected, d2)
    expected, d2 = brute_lists(fluid.astype(cast), boundary.astype(cast), 0.5, False)
    check_lists(search.neighbors(f, b), expected, d2)
    with pytest.raises(ValueError, match="not active"):
        search.neighbors(b, f)
    moved = fluid + 0.05
    search.update_positions(f, moved)
    search.find_neighbors()
    expected, _ = brute_lists(moved.astype(cast), boundary.astype(cast), 0.5, False)
    check_lists(search.neighbors(f, b), expected)
    with pytest.raises(ValueError):
        search.update_positions(f, moved[:10])
    with pytest.raises(ValueError):
        search.set_active(f, 7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_broad_phase(dtype):
    rng = np.random.default_rng(23)
    centres = rng.uniform(0, 20, (400, 3))
    halves = rng.uniform(0.05, 1.0, (400, 3)) * rng.choice([1, 1, 1, 8], (400, 1))
    mins = (centres - halves).astype(dtype)
    maxs = (centres + halves).astype(dtype)
    broad = hhg.BroadPhase()
    broad.build(mins, maxs)
    assert len(broad) == 400
    overlap = np.all(
        (mins[:, None, :] <= maxs[None, :, :]) & (mins[None, :, :] <= maxs[:, None, :]),
        axis=2,
    )
    want = sorted((int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(overlap, 1))))
    pairs = broad.pairs()
    assert pairs.dtype == np.uint32
    assert sorted(map(tuple, pairs.tolist())) == want
    point = centres[0]
    inside = np.nonzero(np.all((mins <= point) & (point <= maxs), axis=1))[0]
    np.testing.assert_array_equal(broad.query_point(point), inside)
    lo, hi = np.full(3, 5.0), np.full(3, 9.0)
    hits = np.nonzero(np.all((mins <= hi) & (lo <= maxs), axis=1))[0]
    np.testing.assert_array_equal(broad.query_box(lo, hi), hits)
