"""The similarity index: one normalized float32 matrix per scope, in memory.

Loaded from the store at start-up and kept in step with every learn, edit and delete.
A lookup is one matrix-vector product over the scope's rows. Only vectors of one
embedding model live here, so vectors of different models are never compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors

# Scores closer than this are a tie, decided for the newest entry.
TIE_EPSILON = 1e-6


@dataclass(frozen=True, slots=True)
class Hit:
    entry_id: int
    score: float


@dataclass(slots=True)
class _ScopeRows:
    """Growable row buffers; rows [0, size) are live. Deletion moves the last row into the hole."""

    vectors: npt.NDArray[np.float32]
    ids: npt.NDArray[np.int64]
    created: npt.NDArray[np.float64]
    expires: npt.NDArray[np.float64]
    size: int = 0
    positions: dict[int, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, dimension: int, capacity: int = 16) -> _ScopeRows:
        return cls(
            vectors=np.zeros((capacity, dimension), dtype=np.float32),
            ids=np.zeros(capacity, dtype=np.int64),
            created=np.zeros(capacity, dtype=np.float64),
            expires=np.zeros(capacity, dtype=np.float64),
        )

    def _reserve(self, capacity: int) -> None:
        # Fresh buffers and one copy of the live rows (np.resize would also fill the rest).
        for name in ("vectors", "ids", "created", "expires"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def _grow(self) -> None:
        # Not np.resize, which writes the whole new buffer (repeating the rows): at 10,000 rows
        # that stopped the event loop for ~50 ms in the middle of an import's publication.
        self._reserve(max(16, len(self.ids) * 2))

    def put(self, entry_id: int, vector: Vectors, created: float, expires: float) -> None:
        row = self.positions.get(entry_id)
        if row is None:
            if self.size == len(self.ids):
                self._grow()
            row = self.size
            self.size += 1
            self.positions[entry_id] = row
        self.vectors[row] = vector
        self.ids[row] = entry_id
        self.created[row] = created
        self.expires[row] = expires

    def extend(
        self,
        ids: npt.NDArray[np.int64],
        vectors: Vectors,
        created: npt.NDArray[np.float64],
        expires: npt.NDArray[np.float64],
    ) -> None:
        """Append rows whose ids are not here yet, in one copy."""
        start, end = self.size, self.size + len(ids)
        if end > len(self.ids):
            self._reserve(max(16, end, len(self.ids) * 2))
        self.vectors[start:end] = vectors
        self.ids[start:end] = ids
        self.created[start:end] = created
        self.expires[start:end] = expires
        self.positions.update(zip(ids.tolist(), range(start, end), strict=True))
        self.size = end

    def drop(self, entry_id: int) -> None:
        row = self.positions.pop(entry_id)
        last = self.size - 1
        if row != last:
            moved = int(self.ids[last])
            self.vectors[row] = self.vectors[last]
            self.ids[row] = moved
            self.created[row] = self.created[last]
            self.expires[row] = self.expires[last]
            self.positions[moved] = row
        self.size = last


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    expired: list[int]


class VectorIndex:
    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id = model_id
        self.dimension = dimension
        self._scopes: dict[Scope, _ScopeRows] = {}
        self._scope_of: dict[int, Scope] = {}

    def __len__(self) -> int:
        return len(self._scope_of)

    def scope_size(self, scope: Scope) -> int:
        rows = self._scopes.get(scope)
        return rows.size if rows else 0

    def put(self, scope: Scope, entry_id: int, vector: Vectors, created: float, expires: float) -> None:
        """Add or replace an entry. `created`/`expires` are POSIX seconds (expires may be inf)."""
        if vector.shape != (self.dimension,):
            raise ValueError(f"vector of shape {vector.shape} in an index of dimension {self.dimension}")
        previous = self._scope_of.get(entry_id)
        if previous is not None and previous != scope:
            self.remove(entry_id)
        rows = self._scopes.get(scope)
        if rows is None:
            rows = self._scopes[scope] = _ScopeRows.empty(self.dimension)
        rows.put(entry_id, vector, created, expires)
        self._scope_of[entry_id] = scope

    def put_many(
        self,
        scope: Scope,
        ids: Sequence[int],
        vectors: Vectors,
        created: Sequence[float],
        expires: Sequence[float],
    ) -> None:
        """Add entries of one scope at once (loading at start): what `put` does for each."""
        if vectors.shape != (len(ids), self.dimension):
            raise ValueError(
                f"vectors of shape {vectors.shape} for {len(ids)} entries of dimension {self.dimension}"
            )
        if any(entry_id in self._scope_of for entry_id in ids) or len(set(ids)) != len(ids):
            for i, entry_id in enumerate(ids):  # replacing: the careful way
                self.put(scope, entry_id, vectors[i], created[i], expires[i])
            return
        rows = self._scopes.get(scope)
        if rows is None:
            rows = self._scopes[scope] = _ScopeRows.empty(self.dimension)
        rows.extend(
            np.asarray(ids, dtype=np.int64),
            vectors,
            np.asarray(created, dtype=np.float64),
            np.asarray(expires, dtype=np.float64),
        )
        self._scope_of.update(dict.fromkeys(ids, scope))

    def remove(self, entry_id: int) -> None:
        scope = self._scope_of.pop(entry_id, None)
        if scope is None:
            return
        rows = self._scopes[scope]
        rows.drop(entry_id)
        if rows.size == 0:
            del self._scopes[scope]

    def search(self, scope: Scope, query: Vectors, k: int, now: float) -> SearchResult:
        """Best `k` live rows of the scope; ties go to the newest.

        Expired rows are never returned; their ids come back in `expired` for pruning.
        """
        rows = self._scopes.get(scope)
        if rows is None or rows.size == 0:
            return SearchResult([], [])
        n = rows.size
        # Not `@`: a matrix-vector product this size goes to OpenBLAS's thread pool, whose
        # idle workers spin-wait after each call and kept a whole core of this 2-core machine
        # busy between lookups. einsum's own loop stays on this thread (measured: as fast at
        # 2,000 rows, 1.3x slower at 100,000).
        scores = np.einsum("ij,j->i", rows.vectors[:n], query)
        dead = rows.expires[:n] <= now
        expired = [int(i) for i in rows.ids[:n][dead]] if dead.any() else []
        scores = np.where(dead, -math.inf, scores)
        if k < n:
            kth = np.partition(scores, n - k)[n - k]
            # Everything tied with the k-th best stays in, so ties can go to the newest.
            chosen = np.flatnonzero(scores >= kth - TIE_EPSILON)
        else:
            chosen = np.flatnonzero(scores > -math.inf)
        if chosen.size == 0:
            return SearchResult([], expired)
        picked = scores[chosen]
        rounded = np.round(picked / TIE_EPSILON)
        order = np.lexsort((-rows.ids[chosen], -rows.created[chosen], -rounded))[:k]
        hits = [Hit(int(rows.ids[chosen[i]]), float(picked[i])) for i in order if picked[i] > -math.inf]
        return SearchResult(hits, expired)
