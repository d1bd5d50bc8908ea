"""One scope's rows in the similarity index, and its approximate index once it is large.

The rows (vectors, keys, entries, dates) are the truth every search is checked against. A
scope of at least `approximate_from` rows also gets an approximate index (ann_index.py), built
in a worker thread from a copy of the rows when the scope grows past that size at run time, so
that no lookup waits for it: until it is installed the scope is searched exactly, and the rows
put or dropped meanwhile are applied to it when it is.
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memory_guard.embeddings.base import Vectors
from memory_guard.memory.ann_index import AnnIndex

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ScopeRows:
    """Growable row buffers; rows [0, size) are live. Deletion moves the last row into the hole.

    `keys` are the rows' keys (index.py `_key`), `ids` the entries they belong to."""

    vectors: npt.NDArray[np.float32]
    keys: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int64]
    created: npt.NDArray[np.float64]
    expires: npt.NDArray[np.float64]
    size: int = 0
    positions: dict[int, int] = field(default_factory=dict)
    variant_rows: int = 0
    ann: AnnIndex | None = None
    ann_changed: bool = False  # since it was built, read or written
    _building: Future[AnnIndex] | None = None
    _touched: set[int] = field(default_factory=set)  # keys put or dropped while it builds
    _build_failed: bool = False  # then the scope stays exact until the process restarts

    @classmethod
    def empty(cls, dimension: int, capacity: int = 16) -> ScopeRows:
        return cls(
            vectors=np.zeros((capacity, dimension), dtype=np.float32),
            keys=np.zeros(capacity, dtype=np.int64),
            ids=np.zeros(capacity, dtype=np.int64),
            created=np.zeros(capacity, dtype=np.float64),
            expires=np.zeros(capacity, dtype=np.float64),
        )

    def _reserve(self, capacity: int) -> None:
        # Fresh buffers and one copy of the live rows (np.resize would also fill the rest).
        for name in ("vectors", "keys", "ids", "created", "expires"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def _grow(self) -> None:
        # Not np.resize, which writes the whole new buffer (repeating the rows): at 10,000 rows
        # that stopped the event loop for ~50 ms in the middle of an import's publication.
        self._reserve(max(16, len(self.ids) * 2))

    def put(self, key: int, entry_id: int, vector: Vectors, created: float, expires: float) -> None:
        row = self.positions.get(key)
        if row is None:
            if self.size == len(self.ids):
                self._grow()
            row = self.size
            self.size += 1
            self.positions[key] = row
            self.variant_rows += key < 0
            moved = True
        else:
            moved = not np.array_equal(self.vectors[row], vector)
        self.vectors[row] = vector
        self.keys[row] = key
        self.ids[row] = entry_id
        self.created[row] = created
        self.expires[row] = expires
        if moved:  # a new date alone leaves the graph as it is
            self._approximate_put(np.asarray([key], dtype=np.int64), self.vectors[row : row + 1])

    def redate(self, key: int, created: float, expires: float) -> None:
        row = self.positions[key]
        self.created[row] = created
        self.expires[row] = expires

    def extend(
        self,
        keys: npt.NDArray[np.int64],
        ids: npt.NDArray[np.int64],
        vectors: Vectors,
        created: npt.NDArray[np.float64],
        expires: npt.NDArray[np.float64],
    ) -> None:
        """Append rows whose keys are not here yet, in one copy."""
        start, end = self.size, self.size + len(ids)
        if end > len(self.ids):
            self._reserve(max(16, end, len(self.ids) * 2))
        self.vectors[start:end] = vectors
        self.keys[start:end] = keys
        self.ids[start:end] = ids
        self.created[start:end] = created
        self.expires[start:end] = expires
        self.positions.update(zip(keys.tolist(), range(start, end), strict=True))
        self.variant_rows += int((keys < 0).sum())
        self.size = end
        self._approximate_put(keys, self.vectors[start:end])

    def drop(self, key: int) -> None:
        row = self.positions.pop(key)
        self.variant_rows -= key < 0
        last = self.size - 1
        if row != last:
            moved = int(self.keys[last])
            self.vectors[row] = self.vectors[last]
            self.keys[row] = moved
            self.ids[row] = self.ids[last]
            self.created[row] = self.created[last]
            self.expires[row] = self.expires[last]
            self.positions[moved] = row
        self.size = last
        if self.ann is not None:
            self.ann.discard(key)
            self.ann_changed = True
        if self._building is not None:
            self._touched.add(key)

    # The approximate index.

    def _approximate_put(self, keys: npt.NDArray[np.int64], vectors: Vectors) -> None:
        if self.ann is not None:
            self.ann.add(keys, vectors)
            self.ann_changed = True
        elif self._building is not None:
            self._touched.update(keys.tolist())

    def approximate(self, approximate_from: int, builder: Executor) -> AnnIndex | None:
        """The approximate index when it is ready; starts its build on `builder` when the scope
        has grown to `approximate_from` rows (0: never)."""
        if self.ann is None and self._building is not None and self._building.done():
            self._install(self._building)
        elif (
            self.ann is None
            and self._building is None
            and not self._build_failed
            and 0 < approximate_from <= self.size
        ):
            keys = self.keys[: self.size].copy()
            vectors = self.vectors[: self.size].copy()
            dimension = self.vectors.shape[1]
            self._building = builder.submit(AnnIndex.build, dimension, keys, vectors)
        return self.ann

    def wait_for_build(self) -> AnnIndex | None:
        """Install the build under way once it ends (tests, bench)."""
        if self._building is not None:
            self._building.exception()
            self._install(self._building)
        return self.ann

    def _install(self, building: Future[AnnIndex]) -> None:
        self._building = None
        touched, self._touched = self._touched, set()
        error = building.exception()
        if error is not None:
            self._build_failed = True
            logger.error("building the approximate index failed; the scope stays exact: %r", error)
            return
        ann = building.result()
        for key in touched:
            row = self.positions.get(key)
            if row is None:
                ann.discard(key)
            else:
                ann.add(np.asarray([key], dtype=np.int64), self.vectors[row : row + 1])
        self.attach(ann)
        logger.info("approximate index built: %d rows", ann.live)

    def attach(self, ann: AnnIndex) -> None:
        self.ann = ann
        self.ann_changed = True
