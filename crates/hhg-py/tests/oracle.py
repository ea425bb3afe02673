"""Brute-force numpy oracles for the pytest suite: every pair and every periodic image."""

import itertools

import numpy as np


def cell_widths(box):
    """The distances between opposite faces of the cell (rows = cell vectors)."""
    box = np.asarray(box, dtype=np.float64)
    volume = abs(np.linalg.det(box))
    faces = [np.cross(box[1], box[2]), np.cross(box[2], box[0]), np.cross(box[0], box[1])]
    return np.array([volume / np.linalg.norm(f) for f in faces])


def full_pairs(points, box, periodic, cutoff):
    """Every ``(i, j, S)`` with ``|x[j] - x[i] + S @ box| <= cutoff`` (``i != j`` or
    ``S != 0``), as a dict from ``(i, j, S)`` to the vector ``D``, all in float64."""
    x = np.asarray(points, dtype=np.float64)
    box = np.asarray(box, dtype=np.float64)
    periodic = np.broadcast_to(np.asarray(periodic, dtype=bool), (3,))
    n = len(x)
    ranges = []
    if periodic.any():
        inverse = np.linalg.inv(np.where(periodic[:, None], box, np.eye(3)))
        fractions = x @ inverse
        widths = cell_widths(np.where(periodic[:, None], box, np.eye(3)))
    for k in range(3):
        if not periodic[k]:
            ranges.append([0])
            continue
        spread = fractions[:, k].max() - fractions[:, k].min() if n else 0.0
        reach = int(np.ceil(cutoff / widths[k] + spread)) + 1
        ranges.append(range(-reach, reach + 1))
    out = {}
    difference = x[None, :, :] - x[:, None, :]  # [i, j] = x[j] - x[i]
    for shift in itertools.product(*ranges):
        s = np.array(shift, dtype=np.float64)
        moved = s[0] * box[0] + s[1] * box[1] + s[2] * box[2] if periodic.any() else 0.0
        vectors = difference + moved
        d2 = (vectors[..., 0] ** 2 + vectors[..., 1] ** 2) + vectors[..., 2] ** 2
        within = d2 <= cutoff * cutoff
        if shift == (0, 0, 0):
            np.fill_diagonal(within, False)
        for i, j in zip(*np.nonzero(within)):
            out[(int(i), int(j), shift)] = vectors[i, j]
    return out


def canonical(i, j, shift):
    """The orientation a half list is compared in: the smaller of ``(i, j, S)`` and
    ``(j, i, -S)``."""
    shift = tuple(int(s) for s in shift)
    mirrored = (int(j), int(i), tuple(-s for s in shift))
    return min((int(i), int(j), shift), mirrored)


def half_keys(full):
    """The half list of a full oracle list: each pair once, in canonical orientation."""
    return sorted({canonical(i, j, s) for (i, j, s) in full})


def random_cell(rng, kind, scale=4.0):
    """A cell: ``"cubic"``, ``"orthorhombic"`` or ``"triclinic"`` (skewed)."""
    if kind == "cubic":
        return np.eye(3) * scale
    if kind == "orthorhombic":
        return np.diag(rng.uniform(0.6, 1.4, 3) * scale)
    box = np.diag(rng.uniform(0.8, 1.2, 3) * scale)
    box[1, 0] = rng.uniform(-0.5, 0.5) * scale
    box[2, 0] = rng.uniform(-0.4, 0.4) * scale
    box[2, 1] = rng.uniform(-0.4, 0.4) * scale
    return box
