"""The per-scope similarity index."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import normalize_rows
from memory_guard.memory.index import VectorIndex

A = Scope("acme", "default")
B = Scope("globex", "default")


def unit(*values: float) -> np.ndarray:
    return normalize_rows(np.array([values], dtype=np.float32))[0]


def test_best_first_and_k_limited() -> None:
    index = VectorIndex("m", 3)
    index.put(A, 1, unit(1, 0, 0), 1.0, math.inf)
    index.put(A, 2, unit(1, 1, 0), 2.0, math.inf)
    index.put(A, 3, unit(0, 1, 0), 3.0, math.inf)
    hits = index.search(A, unit(1, 0.1, 0), k=2, now=10).hits
    assert [h.entry_id for h in hits] == [1, 2]
    assert hits[0].score > hits[1].score


def test_ties_go_to_the_newest_entry() -> None:
    index = VectorIndex("m", 3)
    for entry_id, created in ((10, 5.0), (11, 9.0), (12, 7.0)):
        index.put(A, entry_id, unit(0, 0, 1), created, math.inf)
    index.put(A, 13, unit(0, 1, 1), 99.0, math.inf)
    assert [h.entry_id for h in index.search(A, unit(0, 0, 1), k=1, now=0).hits] == [11]
    assert [h.entry_id for h in index.search(A, unit(0, 0, 1), k=3, now=0).hits] == [11, 12, 10]


def test_scopes_never_mix() -> None:
    index = VectorIndex("m", 3)
    index.put(A, 1, unit(1, 0, 0), 1.0, math.inf)
    index.put(B, 2, unit(1, 0, 0), 1.0, math.inf)
    assert [h.entry_id for h in index.search(B, unit(1, 0, 0), k=5, now=0).hits] == [2]
    assert index.search(Scope("acme", "default", "P1"), unit(1, 0, 0), k=5, now=0).hits == []


def test_expired_rows_are_skipped_and_reported() -> None:
    index = VectorIndex("m", 3)
    index.put(A, 1, unit(1, 0, 0), 1.0, 50.0)
    index.put(A, 2, unit(1, 0.2, 0), 1.0, math.inf)
    found = index.search(A, unit(1, 0, 0), k=5, now=60.0)
    assert [h.entry_id for h in found.hits] == [2]
    assert found.expired == [1]


def test_remove_and_replace_keep_rows_consistent() -> None:
    rng = np.random.default_rng(0)
    index = VectorIndex("m", 8)
    vectors = {i: normalize_rows(rng.normal(size=(1, 8)))[0] for i in range(100)}
    for i, vector in vectors.items():
        index.put(A, i, vector, float(i), math.inf)
    for i in range(0, 100, 3):
        index.remove(i)
        del vectors[i]
    vectors[1] = normalize_rows(rng.normal(size=(1, 8)))[0]
    index.put(A, 1, vectors[1], 1.0, math.inf)
    assert len(index) == len(vectors)
    for i, vector in vectors.items():
        assert index.search(A, vector, k=1, now=0).hits[0].entry_id == i


def test_moving_an_entry_to_another_scope() -> None:
    index = VectorIndex("m", 3)
    index.put(A, 1, unit(1, 0, 0), 1.0, math.inf)
    index.put(B, 1, unit(1, 0, 0), 1.0, math.inf)
    assert index.search(A, unit(1, 0, 0), k=1, now=0).hits == []
    assert index.scope_size(B) == 1


def test_wrong_dimension_is_refused() -> None:
    index = VectorIndex("m", 3)
    with pytest.raises(ValueError, match="dimension 3"):
        index.put(A, 1, np.ones(4, dtype=np.float32), 0.0, math.inf)
