"""hhg: fixed-radius neighbour search on hierarchical hash grids, from Python.

- ``NeighborList(cutoff, full_list)``: vesin's neighbour list interface;
  ``compute(points, box, periodic, quantities="ij")`` returns ``i``, ``j``, ``P``, ``S``,
  ``d``, ``D`` as vesin 0.6 does, for open, orthorhombic and triclinic cells, with every
  periodic image within the cutoff.
- ``Grid(radius)``: ``build(points)``, ``neighbor_lists()``, ``pairs()``, ``query(points)``.
- ``NeighborSearch(radius)``: several point sets (moving and static) with an activation table.
- ``BroadPhase()``: overlapping pairs of axis-aligned boxes of any mix of sizes.

Every search releases the GIL and runs on ``n_threads`` threads (``None`` or ``0``: all
cores); results are new numpy arrays that own their data. Points are ``(n, 3)`` arrays:
float32 arrays are searched in float32 by ``Grid`` and ``BroadPhase``; any other real dtype is
converted to float64 once, and a non-C-contiguous array is copied once. ``NeighborList``
always searches in float64, as vesin does, and returns ``d`` and ``D`` in the points' float
dtype. Bad input raises ``ValueError`` (``TypeError`` for a non-real dtype) with the engine's
message; an allocation the engine cannot make raises ``MemoryError``.

Differences from vesin: a pair at exactly the cutoff is included (``<=``); errors are
``ValueError`` rather than ``RuntimeError``; ``copy`` is accepted but the arrays are always
new; ``skin`` is accepted and every ``compute`` searches afresh; ``algorithm`` is accepted and
hhg's grid always runs; the box's dtype need not match the points'.
"""

from ._native import BroadPhase, Grid, NeighborList, NeighborSearch, default_threads

__all__ = ["BroadPhase", "Grid", "NeighborList", "NeighborSearch", "default_threads"]
