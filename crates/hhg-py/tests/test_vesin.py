"""hhg.NeighborList against vesin on the same points (skipped when vesin is not installed)."""

import numpy as np
import pytest

import hhg
from oracle import canonical, random_cell

vesin = pytest.importorskip("vesin")


def keyed(i, j, S, d, full_list):
    """The pairs as a sorted list of keys with their distances (half lists canonicalized)."""
    rows = []
    for a, b, s, dist in zip(i.tolist(), j.tolist(), S.tolist(), d.tolist()):
        key = (a, b, tuple(s)) if full_list else canonical(a, b, s)
        rows.append((key, dist))
    return sorted(rows)


@pytest.mark.parametrize("full_list", [False, True])
@pytest.mark.parametrize(
    "kind,periodic,scale,cutoff",
    [
        ("cubic", False, 6.0, 0.9),
        ("orthorhombic", True, 6.0, 0.9),
        ("triclinic", True, 6.0, 1.1),
        ("triclinic", True, 2.0, 1.5),  # the cutoff exceeds half the cell's width
        ("triclinic", [True, False, True], 4.0, 1.2),
    ],
)
def test_same_pairs_as_vesin(kind, periodic, scale, cutoff, full_list):
    rng = np.random.default_rng(31)
    box = random_cell(rng, kind, scale)
    points = rng.uniform(0, 1, (400, 3)) @ box
    ours = hhg.NeighborList(cutoff=cutoff, full_list=full_list).compute(
        points, box, periodic, "ijSdD"
    )
    theirs = vesin.NeighborList(cutoff=cutoff, full_list=full_list).compute(
        points, box, periodic, "ijSdD"
    )
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
    a = keyed(*ours[:4], full_list)
    b = keyed(*theirs[:4], full_list)
    assert [k for k, _ in a] == [k for k, _ in b]
    np.testing.assert_allclose([d for _, d in a], [d for _, d in b], rtol=1e-12)


def test_float32_like_vesin():
    rng = np.random.default_rng(32)
    box = (np.eye(3) * 5).astype(np.float32)
    points = rng.uniform(0, 5, (300, 3)).astype(np.float32)
    ours = hhg.NeighborList(cutoff=0.8, full_list=True, sorted=True).compute(
        points, box, True, "ijd"
    )
    theirs = vesin.NeighborList(cutoff=0.8, full_list=True, sorted=True).compute(
        points, box, True, "ijd"
    )
    assert [x.dtype for x in ours] == [x.dtype for x in theirs]
    assert len(ours[0]) == len(theirs[0])
