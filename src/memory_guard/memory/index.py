"""The similarity index: one normalized float32 matrix per scope, in memory.

Loaded from the store at start-up and kept in step with every learn, edit and delete.
A lookup is one matrix-vector product over the scope's rows; in a scope of `approximate_from` rows
or more, a product over the rows its approximate index proposes (scope_rows.py, ann_index.py),
with the same rules. Only vectors of one embedding model live here, so vectors of different
models are never compared.

An entry has a row for its question and one per question variant, all in its scope and with its
dates; a search gives each entry once, through the best of its wordings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.ann_index import AnnIndex
from memory_guard.memory.scope_rows import ScopeRows

# Scores closer than this are a tie, decided for the newest entry.
TIE_EPSILON = 1e-6
# A scope of this many rows is searched through an approximate index, below exactly: where the
# approximate index starts to win (bench/scale.py; docs/DEVELOPMENT.md, "Large memories").
APPROXIMATE_FROM = 20_000
# Rows the approximate index proposes for an exact re-check, then up to MAX_FETCH when too few
# live entries are among them (variants of one entry, expired rows).
APPROXIMATE_FETCH = 64
MAX_FETCH = 4096


@dataclass(frozen=True, slots=True)
class Hit:
    entry_id: int
    score: float
    variant_id: int | None = None  # the variant whose wording matched; None: the entry's question


def _key(entry_id: int, variant_id: int | None) -> int:
    """A row's key within the index: the entry's id for its question, minus the variant's id for a
    variant (ids are positive, so the two never meet; one int keeps 100,000 keys small)."""
    return entry_id if variant_id is None else -variant_id


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    expired: list[int]


class VectorIndex:
    def __init__(self, model_id: str, dimension: int, approximate_from: int = APPROXIMATE_FROM) -> None:
        """`approximate_from`: the scope size from which an approximate index is used (0: never)."""
        self.model_id = model_id
        self.dimension = dimension
        self.approximate_from = approximate_from
        self._scopes: dict[Scope, ScopeRows] = {}
        self._scope_of: dict[int, Scope] = {}  # every entry with a row, question's or variant's
        self._variants_of: dict[int, set[int]] = {}  # the variants with a row, of the entries with any
        # One worker for every scope's run-time build (a build takes a core for seconds, never
        # two), started with the first build, stopped by `close`.
        self._builder: ThreadPoolExecutor | None = None

    def _build_worker(self) -> ThreadPoolExecutor:
        if self._builder is None:
            self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ann-build")
        return self._builder

    def close(self) -> None:
        """Stop the build worker, once the builds under way are installed or abandoned."""
        if self._builder is not None:
            self._builder.shutdown(wait=True, cancel_futures=True)
            self._builder = None

    def __len__(self) -> int:
        """How many entries have a row (their question's, or a variant's)."""
        return len(self._scope_of)

    @property
    def variant_rows(self) -> int:
        return sum(len(variants) for variants in self._variants_of.values())

    def scope_size(self, scope: Scope) -> int:
        rows = self._scopes.get(scope)
        return rows.size if rows else 0

    def scope_rows(self) -> list[tuple[Scope, ScopeRows]]:
        """Every scope's rows (index_file.py reads and attaches their approximate indexes)."""
        return list(self._scopes.items())

    def approximate_scopes(self) -> int:
        """How many scopes are searched through an approximate index."""
        return sum(
            rows.ann is not None and rows.size >= self.approximate_from > 0 for rows in self._scopes.values()
        )

    def _rows_for(self, scope: Scope, entry_id: int) -> ScopeRows:
        previous = self._scope_of.get(entry_id)
        if previous is not None and previous != scope:
            self.remove(entry_id)
        rows = self._scopes.get(scope)
        if rows is None:
            rows = self._scopes[scope] = ScopeRows.empty(self.dimension)
        self._scope_of[entry_id] = scope
        return rows

    def _check(self, vector: Vectors) -> None:
        if vector.shape != (self.dimension,):
            raise ValueError(f"vector of shape {vector.shape} in an index of dimension {self.dimension}")

    def put(self, scope: Scope, entry_id: int, vector: Vectors, created: float, expires: float) -> None:
        """Add or replace an entry's question. `created`/`expires` are POSIX seconds (expires may be
        inf); its variants' rows take the same dates."""
        self._check(vector)
        rows = self._rows_for(scope, entry_id)
        rows.put(entry_id, entry_id, vector, created, expires)
        for variant_id in self._variants_of.get(entry_id, ()):
            rows.redate(_key(entry_id, variant_id), created, expires)

    def put_variant(
        self, scope: Scope, entry_id: int, variant_id: int, vector: Vectors, created: float, expires: float
    ) -> None:
        """Add or replace a variant of an entry: its scope and dates are the entry's."""
        self._check(vector)
        rows = self._rows_for(scope, entry_id)
        rows.put(_key(entry_id, variant_id), entry_id, vector, created, expires)
        self._variants_of.setdefault(entry_id, set()).add(variant_id)

    def put_many(
        self,
        scope: Scope,
        ids: Sequence[int],
        vectors: Vectors,
        created: Sequence[float],
        expires: Sequence[float],
        variant_ids: Sequence[int] | None = None,
    ) -> None:
        """Add rows of one scope at once (loading at start): what `put` does for each entry's
        question, or with `variant_ids` what `put_variant` does for each variant of `ids`."""
        if vectors.shape != (len(ids), self.dimension):
            raise ValueError(
                f"vectors of shape {vectors.shape} for {len(ids)} entries of dimension {self.dimension}"
            )
        keys = (
            list(ids) if variant_ids is None else [_key(e, v) for e, v in zip(ids, variant_ids, strict=True)]
        )
        rows = self._scopes.get(scope)
        known = rows.positions if rows is not None else {}
        if (
            any(key in known for key in keys)
            or any(self._scope_of.get(entry_id, scope) != scope for entry_id in ids)
            or len(set(keys)) != len(keys)
        ):
            for i, entry_id in enumerate(ids):  # replacing: the careful way
                if variant_ids is None:
                    self.put(scope, entry_id, vectors[i], created[i], expires[i])
                else:
                    self.put_variant(scope, entry_id, variant_ids[i], vectors[i], created[i], expires[i])
            return
        if rows is None:
            rows = self._scopes[scope] = ScopeRows.empty(self.dimension)
        rows.extend(
            np.asarray(keys, dtype=np.int64),
            np.asarray(ids, dtype=np.int64),
            vectors,
            np.asarray(created, dtype=np.float64),
            np.asarray(expires, dtype=np.float64),
        )
        self._scope_of.update(dict.fromkeys(ids, scope))
        if variant_ids is not None:
            for entry_id, variant_id in zip(ids, variant_ids, strict=True):
                self._variants_of.setdefault(entry_id, set()).add(variant_id)

    def remove(self, entry_id: int) -> None:
        """Remove an entry's rows: its question's and its variants'."""
        scope = self._scope_of.pop(entry_id, None)
        if scope is None:
            return
        rows = self._scopes[scope]
        if entry_id in rows.positions:
            rows.drop(entry_id)
        for variant_id in self._variants_of.pop(entry_id, ()):
            rows.drop(_key(entry_id, variant_id))
        if rows.size == 0:
            del self._scopes[scope]

    def remove_variant(self, entry_id: int, variant_id: int) -> None:
        variants = self._variants_of.get(entry_id)
        if variants is None or variant_id not in variants:
            return
        scope = self._scope_of[entry_id]
        rows = self._scopes[scope]
        rows.drop(_key(entry_id, variant_id))
        variants.discard(variant_id)
        if not variants:
            del self._variants_of[entry_id]
            if entry_id not in rows.positions:
                del self._scope_of[entry_id]
        if rows.size == 0:
            del self._scopes[scope]

    def search(self, scope: Scope, query: Vectors, k: int, now: float) -> SearchResult:
        """Best `k` entries of the scope, each through its best live wording; ties go to the newest.

        Expired rows are never returned; their entries' ids come back in `expired` for pruning
        (with the approximate index, those of the rows it proposed).
        """
        rows = self._scopes.get(scope)
        if rows is None or rows.size == 0:
            return SearchResult([], [])
        if rows.size >= self.approximate_from > 0:
            ann = rows.approximate(self.approximate_from, self._build_worker())
            found = _approximate(rows, ann, query, k, now) if ann is not None else None
            if found is not None:
                return found
        n = rows.size
        # Not `@`: a matrix-vector product this size goes to OpenBLAS's thread pool, whose
        # idle workers spin-wait after each call and kept a whole core of this 2-core machine
        # busy between lookups. einsum's own loop stays on this thread (measured: as fast at
        # 2,000 rows, 1.3x slower at 100,000).
        scores = np.einsum("ij,j->i", rows.vectors[:n], query)
        dead = rows.expires[:n] <= now
        expired = sorted({int(i) for i in rows.ids[:n][dead]}) if dead.any() else []
        scores = np.where(dead, -math.inf, scores)
        wanted = k
        while True:
            hits = _best(rows, scores, wanted, k)
            # Rows of one entry count once: with variants, the best `wanted` rows may hold fewer
            # than k entries, so look further until k are found or no row is left.
            if len(hits) >= k or rows.variant_rows == 0 or wanted >= n:
                return SearchResult(hits, expired)
            wanted = min(n, wanted * 2 + rows.variant_rows)


def _approximate(rows: ScopeRows, ann: AnnIndex, query: Vectors, k: int, now: float) -> SearchResult | None:
    """The best `k` entries among the rows the approximate index proposes, scored exactly
    against the live rows; None when it cannot find `k` live entries (most rows expired): the
    caller then searches exactly."""
    fetch = max(APPROXIMATE_FETCH, 4 * k)
    while True:
        # The graph forgets dropped rows (their keys are no longer in `positions` either).
        chosen = np.fromiter(
            (
                row
                for key in ann.search(query, fetch).tolist()
                if (row := rows.positions.get(key)) is not None
            ),
            dtype=np.int64,
        )
        scores = np.einsum("ij,j->i", rows.vectors[chosen], query)
        dead = rows.expires[chosen] <= now
        scores[dead] = -math.inf
        hits = _rank(rows, chosen, scores, k)
        if len(hits) >= k or fetch >= rows.size:
            expired = sorted({int(i) for i in rows.ids[chosen[dead]]})
            return SearchResult(hits, expired)
        if fetch >= MAX_FETCH:
            return None
        fetch *= 4


def _best(rows: ScopeRows, scores: npt.NDArray[np.float32], wanted: int, k: int) -> list[Hit]:
    """The best `k` entries among the best `wanted` live rows (and those tied with the last)."""
    n = rows.size
    if wanted < n:
        kth = np.partition(scores, n - wanted)[n - wanted]
        # Everything tied with the last one wanted stays in, so ties can go to the newest.
        chosen = np.flatnonzero(scores >= kth - TIE_EPSILON)
    else:
        chosen = np.flatnonzero(scores > -math.inf)
    if chosen.size == 0:
        return []
    return _rank(rows, chosen, scores[chosen], k)


def _rank(
    rows: ScopeRows, chosen: npt.NDArray[np.int64], picked: npt.NDArray[np.float32], k: int
) -> list[Hit]:
    """The best `k` entries of the rows `chosen`, whose scores are `picked`."""
    rounded = np.round(picked / TIE_EPSILON)
    # Best score, then newest entry, then highest id; an entry's question before its variants.
    order = np.lexsort((-rows.keys[chosen], -rows.ids[chosen], -rows.created[chosen], -rounded))
    hits: list[Hit] = []
    seen: set[int] = set()
    for i in order:
        if picked[i] == -math.inf:
            break
        entry_id = int(rows.ids[chosen[i]])
        if entry_id in seen:
            continue
        seen.add(entry_id)
        key = int(rows.keys[chosen[i]])
        hits.append(Hit(entry_id, float(picked[i]), None if key > 0 else -key))
        if len(hits) == k:
            break
    return hits


class StoredVector(Protocol):
    """A stored row as the index loads it: its scope, its float32 blob and its dates."""

    @property
    def scope(self) -> Scope: ...
    @property
    def embedding(self) -> bytes: ...  # float32, little-endian
    @property
    def created(self) -> float: ...
    @property
    def expires(self) -> float: ...


R = TypeVar("R", bound=StoredVector)


def put_stored(
    index: VectorIndex,
    rows: Sequence[R],
    entry_of: Callable[[R], int],
    variant_of: Callable[[R], int] | None = None,
) -> int:
    """Add stored rows at start-up, one buffer per scope rather than one array per row: entries'
    questions, or with `variant_of` their variants. A blob of another width is skipped: how many."""
    width = index.dimension * 4
    by_scope: dict[Scope, list[R]] = {}
    skipped = 0
    for row in rows:
        if len(row.embedding) != width:
            skipped += 1
            continue
        by_scope.setdefault(row.scope, []).append(row)
    for scope, kept in by_scope.items():
        vectors = np.frombuffer(b"".join(row.embedding for row in kept), dtype="<f4")
        index.put_many(
            scope,
            [entry_of(row) for row in kept],
            vectors.reshape(len(kept), index.dimension).astype(np.float32),
            [row.created for row in kept],
            [row.expires for row in kept],
            variant_ids=[variant_of(row) for row in kept] if variant_of is not None else None,
        )
    return skipped
