"""The approximate index of one large scope: a faiss HNSW graph over the scope's rows.

It only proposes: the similarity index (index.py) re-checks what it proposes against its live
rows with exact dot products, so the graph may hold rows removed since (tombstones) and never
decides a score. A graph cannot forget a point, so a removed or re-embedded row leaves its old
label dead (`dead`), and a new vector takes a new label.

faiss-cpu, chosen over usearch by bench/scale.py on real embeddings (docs/DEVELOPMENT.md,
"Large memories"): HNSW with 32 links per point.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_guard.embeddings.base import Vectors

# faiss logs at INFO every build of itself it fails to load ("Could not load library with AVX512
# support"), three lines in every start's log that say nothing wrong.
logging.getLogger("faiss.loader").setLevel(logging.WARNING)
import faiss  # noqa: E402

# Measured at 1M rows (bench/scale.py): building with 64 candidates found the exact nearest of
# 98.5% of near-duplicate queries, with 128 of 99.3% (at twice the build time).
LINKS = 32  # HNSW M: links per point
BUILD_EFFORT = 128  # efConstruction
SEARCH_EFFORT = 128  # efSearch, at least: candidates a search keeps while it walks the graph
# faiss parallelizes with OpenMP, whose idle workers spin between calls (the same reason index.py
# keeps its product off OpenBLAS's pool): one thread for lookups and additions at run time; a
# bulk build at start-up may take every core (`build`). Set where faiss is used, not on import.
# A dead label's key: row keys are entry ids (positive) or minus variant ids (negative), never 0.
DEAD = 0


class AnnIndex:
    """The graph and which row key each of its labels stands for (`DEAD`: none)."""

    def __init__(self, dimension: int, graph: faiss.IndexHNSWFlat | None = None) -> None:
        faiss.omp_set_num_threads(1)
        self.dimension = dimension
        self.graph = graph if graph is not None else _new_graph(dimension)
        self._keys: npt.NDArray[np.int64] = np.full(max(16, self.graph.ntotal), DEAD, dtype=np.int64)
        self._label_of: dict[int, int] = {}

    @classmethod
    def build(
        cls, dimension: int, keys: npt.NDArray[np.int64], vectors: Vectors, threads: int = 1
    ) -> AnnIndex:
        ann = cls(dimension)
        faiss.omp_set_num_threads(max(1, threads))  # back to 1 below: lookups run single-threaded
        try:
            ann.add(keys, vectors)
        finally:
            faiss.omp_set_num_threads(1)
        return ann

    @property
    def labels(self) -> int:
        return int(self.graph.ntotal)

    @property
    def live(self) -> int:
        return len(self._label_of)

    @property
    def dead(self) -> int:
        return self.labels - self.live

    def holds(self, key: int) -> bool:
        return key in self._label_of

    def add(self, keys: npt.NDArray[np.int64], vectors: Vectors) -> None:
        """Add rows (a key already here: its old label dies, the new vector takes a new one)."""
        if len(keys) == 0:
            return
        start = self.labels
        end = start + len(keys)
        if end > len(self._keys):
            grown = np.full(max(end, 2 * len(self._keys)), DEAD, dtype=np.int64)
            grown[:start] = self._keys[:start]
            self._keys = grown
        for key in keys.tolist():
            self.discard(key)
        self.graph.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self._keys[start:end] = keys
        self._label_of.update(zip(keys.tolist(), range(start, end), strict=True))

    def discard(self, key: int) -> None:
        label = self._label_of.pop(key, None)
        if label is not None:
            self._keys[label] = DEAD

    def search(self, query: Vectors, fetch: int) -> npt.NDArray[np.int64]:
        """The keys of (about) the `fetch` nearest live rows, best first: may miss some, never
        names a removed one."""
        self.graph.hnsw.efSearch = max(fetch, SEARCH_EFFORT)
        _, labels = self.graph.search(query.reshape(1, -1).astype(np.float32, copy=False), fetch)
        found = labels[0]
        keys: npt.NDArray[np.int64] = self._keys[found[found >= 0]]
        live: npt.NDArray[np.int64] = keys[keys != DEAD]
        return live

    def stored_vectors(self) -> Vectors:
        """The vectors the graph holds, by label (a view of faiss's storage, no copy)."""
        storage: Any = faiss.downcast_index(self.graph.storage)
        flat: Vectors = faiss.rev_swig_ptr(storage.get_xb(), self.labels * self.dimension)
        return flat.reshape(self.labels, self.dimension)

    def label_keys(self) -> npt.NDArray[np.int64]:
        return self._keys[: self.labels].copy()

    def write(self, path: Path) -> None:
        faiss.write_index(self.graph, str(path))

    @classmethod
    def read(cls, path: Path, dimension: int, label_keys: npt.NDArray[np.int64]) -> AnnIndex:
        graph = faiss.read_index(str(path))
        if not isinstance(graph, faiss.IndexHNSWFlat) or graph.d != dimension:
            raise ValueError(f"{path} is not an HNSW index of dimension {dimension}")
        if graph.ntotal != len(label_keys):
            raise ValueError(f"{path} holds {graph.ntotal} points, its keys {len(label_keys)}")
        ann = cls(dimension, graph)
        ann._keys[: len(label_keys)] = label_keys
        alive = np.flatnonzero(label_keys != DEAD)
        ann._label_of = dict(zip(label_keys[alive].tolist(), alive.tolist(), strict=True))
        return ann


def _new_graph(dimension: int) -> faiss.IndexHNSWFlat:
    graph = faiss.IndexHNSWFlat(dimension, LINKS, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = BUILD_EFFORT
    return graph
