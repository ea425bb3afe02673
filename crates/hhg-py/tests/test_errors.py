"""Bad input raises Python exceptions with the engine's messages, never a crash."""

import numpy as np
import pytest

import hhg


@pytest.mark.parametrize("cutoff", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_cutoff(cutoff):
    with pytest.raises(ValueError, match="radius"):
        hhg.NeighborList(cutoff, False)
    with pytest.raises(ValueError, match="radius"):
        hhg.Grid(cutoff)
    with pytest.raises(ValueError, match="radius"):
        hhg.NeighborSearch(cutoff)


@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_point_is_named(periodic, bad):
    points = np.zeros((5, 3))
    points[3, 1] = bad
    with pytest.raises(ValueError, match=r"3.*\by\b|point 3"):
        hhg.NeighborList(1.0, False).compute(points, np.eye(3) * 4, periodic)
    grid = hhg.Grid(1.0)
    with pytest.raises(ValueError, match="3"):
        grid.build(points)


def test_wrong_shapes_and_dtypes():
    calculator = hhg.NeighborList(1.0, False)
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        calculator.compute(np.zeros((4, 2)), np.eye(3), False)
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        calculator.compute(np.zeros(3), np.eye(3), False)
    with pytest.raises(ValueError, match="3x3"):
        calculator.compute(np.zeros((4, 3)), np.eye(2), False)
    with pytest.raises(TypeError, match="real numbers"):
        calculator.compute(np.zeros((4, 3), dtype=complex), np.eye(3), False)
    with pytest.raises(TypeError, match="real numbers"):
        calculator.compute([["a", "b", "c"]], np.eye(3), False)
    with pytest.raises(ValueError, match="periodic"):
        calculator.compute(np.zeros((4, 3)), np.eye(3), [True, False])
    with pytest.raises(ValueError, match="unexpected character"):
        calculator.compute(np.zeros((4, 3)), np.eye(3), False, "ijx")
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        hhg.Grid(1.0).build(np.zeros((4, 4)))


def test_bad_cells():
    calculator = hhg.NeighborList(1.0, False)
    points = np.zeros((2, 3))
    with pytest.raises(ValueError, match="cell"):
        calculator.compute(points, np.zeros((3, 3)), True)
    flat = np.array([[1.0, 0, 0], [2.0, 0, 0], [0, 0, 1.0]])
    with pytest.raises(ValueError, match="cell"):
        calculator.compute(points, flat, True)
    box = np.eye(3)
    box[1, 2] = np.nan
    with pytest.raises(ValueError):
        calculator.compute(points, box, True)
    # An open cell does not use the box's values.
    calculator.compute(points, np.zeros((3, 3)), False)


def test_bad_threads_and_options():
    with pytest.raises(ValueError, match="n_threads"):
        hhg.NeighborList(1.0, False, n_threads=-1)
    with pytest.raises(ValueError, match="n_threads"):
        hhg.NeighborList(1.0, False).compute(np.zeros((2, 3)), np.eye(3), True, n_threads=-2)
    with pytest.raises(ValueError, match="algorithm"):
        hhg.NeighborList(1.0, False, algorithm="octree")
    with pytest.raises(ValueError, match="skin"):
        hhg.NeighborList(1.0, False, skin=-1.0)
    with pytest.raises(ValueError, match="dtype"):
        hhg.NeighborSearch(1.0, dtype="float16")


def test_use_before_build():
    with pytest.raises(ValueError, match="build"):
        hhg.Grid(1.0).neighbor_lists()
    with pytest.raises(ValueError, match="build"):
        hhg.Grid(1.0).pairs()
    with pytest.raises(ValueError, match="build"):
        hhg.BroadPhase().pairs()


def test_broad_phase_bad_boxes():
    broad = hhg.BroadPhase()
    with pytest.raises(ValueError, match="same number"):
        broad.build(np.zeros((3, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError):
        broad.build(np.ones((1, 3)), np.zeros((1, 3)))  # min above max
    mins = np.zeros((2, 3))
    mins[1, 2] = np.nan
    with pytest.raises(ValueError):
        broad.build(mins, np.ones((2, 3)))


def test_too_many_images():
    """A cutoff thousands of times the cell's width asks for more images than allowed."""
    with pytest.raises(ValueError, match="image"):
        hhg.NeighborList(1000.0, False).compute(np.zeros((2, 3)), np.eye(3) * 0.5, True)
