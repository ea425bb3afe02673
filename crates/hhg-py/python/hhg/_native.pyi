"""Type stubs of hhg's native module (the classes the package ``hhg`` exports)."""

from typing import Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
Lists = Union[
    Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32]],
    Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.floating]],
]

def default_threads() -> int:
    """The thread count a call uses when it names none: the cores available to the process."""

class NeighborList:
    """A neighbour list calculator with vesin's interface (pairs with ``|D| <= cutoff``)."""

    cutoff: float
    full_list: bool
    sorted: bool
    n_threads: Optional[int]

    def __init__(
        self,
        cutoff: float,
        full_list: bool,
        n_threads: Optional[int] = None,
        *,
        sorted: bool = False,
        algorithm: Literal["auto", "cell_list", "brute_force"] = "auto",
        skin: float = 0.0,
    ) -> None: ...
    def compute(
        self,
        points: ArrayLike,
        box: ArrayLike,
        periodic: Union[bool, Sequence[bool], ArrayLike],
        quantities: str = "ij",
        copy: bool = True,
        *,
        n_threads: Optional[int] = None,
    ) -> Tuple[np.ndarray, ...]:
        """The ``quantities`` (``i``, ``j``, ``P``, ``S``, ``d``, ``D``) in the order asked."""

class Grid:
    """A grid over one set of points, searching within ``radius`` (``<=``)."""

    radius: float
    dtype: Optional[str]

    def __init__(self, radius: float) -> None: ...
    def build(self, points: ArrayLike, *, n_threads: Optional[int] = None) -> None: ...
    def neighbor_lists(
        self, with_distances: bool = False, *, n_threads: Optional[int] = None
    ) -> Lists:
        """``(offsets, indices[, distances_squared])``: point ``i``'s neighbours are
        ``indices[offsets[i]:offsets[i + 1]]``, ascending."""
    def pairs(
        self, with_distances: bool = False, *, n_threads: Optional[int] = None
    ) -> Union[
        npt.NDArray[np.uint32], Tuple[npt.NDArray[np.uint32], npt.NDArray[np.floating]]
    ]:
        """Each pair ``i < j`` once, as an ``(m, 2)`` array (with squared distances)."""
    def query(
        self,
        points: ArrayLike,
        with_distances: bool = False,
        *,
        n_threads: Optional[int] = None,
    ) -> Lists:
        """The built points within the radius of each query point, as CSR lists."""
    def order(self) -> npt.NDArray[np.uint32]:
        """The permutation that sorts the built points by cell."""
    def __len__(self) -> int: ...

class NeighborSearch:
    """Fixed-radius search between several point sets with an activation table."""

    radius: float
    set_count: int

    def __init__(
        self,
        radius: float,
        dtype: Literal["float32", "float64"] = "float64",
        with_distances: bool = False,
    ) -> None: ...
    def add_dynamic_set(self, points: ArrayLike) -> int: ...
    def add_static_set(
        self, points: ArrayLike, *, n_threads: Optional[int] = None
    ) -> int: ...
    def update_positions(
        self, set: int, points: ArrayLike, *, n_threads: Optional[int] = None
    ) -> None: ...
    def set_active(self, searching: int, searched: int, active: bool = True) -> None: ...
    def is_active(self, searching: int, searched: int) -> bool: ...
    def find_neighbors(self, *, n_threads: Optional[int] = None) -> None: ...
    def neighbors(self, searching: int, searched: int) -> Lists:
        """``(offsets, indices[, distances_squared])`` of set ``searching`` in ``searched``."""

class BroadPhase:
    """Overlapping pairs of axis-aligned boxes of any mix of sizes."""

    def __init__(self) -> None: ...
    def build(
        self, mins: ArrayLike, maxs: ArrayLike, *, n_threads: Optional[int] = None
    ) -> None: ...
    def pairs(self, *, n_threads: Optional[int] = None) -> npt.NDArray[np.uint32]: ...
    def query_point(self, point: ArrayLike) -> npt.NDArray[np.uint32]: ...
    def query_box(self, min: ArrayLike, max: ArrayLike) -> npt.NDArray[np.uint32]: ...
    def __len__(self) -> int: ...
