"""The approximate index of large scopes (memory/ann_index.py, scope_rows.py, index.py): what the
exact search guarantees, it keeps: the exact nearest, ties, one hit per entry, no removed,
re-embedded or expired row, no other scope's row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memory_guard.core.scope import Scope
from memory_guard.memory.ann_index import AnnIndex
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.index_file import open_approximate

A = Scope("acme", "default")
B = Scope("globex", "default")
OTHER_AGENT = Scope("acme", "sales")
DIM = 64
ROWS = 3000
FROM = 1000  # the test's threshold: a scope of ROWS rows is searched approximately


def unit_rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def near(vector: np.ndarray, seed: int, noise: float = 0.15) -> np.ndarray:
    jitter = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32) * noise / math.sqrt(DIM)
    moved = vector + jitter
    return (moved / np.linalg.norm(moved)).astype(np.float32)


def filled(approximate_from: int, rows: np.ndarray, scope: Scope = A, first_id: int = 1) -> VectorIndex:
    index = VectorIndex("m", DIM, approximate_from=approximate_from)
    ids = list(range(first_id, first_id + len(rows)))
    index.put_many(scope, ids, rows, [float(i) for i in ids], [math.inf] * len(rows))
    return index


@pytest.fixture
def proposals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the approximate index proposed rows: proof that a search went through it."""
    calls: list[int] = []
    original = AnnIndex.search

    def counted(self: AnnIndex, query: np.ndarray, fetch: int) -> np.ndarray:
        calls.append(fetch)
        return original(self, query, fetch)

    monkeypatch.setattr(AnnIndex, "search", counted)
    return calls


def test_below_the_threshold_results_are_the_exact_search_s(proposals: list[int]) -> None:
    rows = unit_rows(FROM + 20, seed=1)
    index, exact = filled(FROM, rows), filled(0, rows)
    assert open_approximate(index, None).built == 1
    # Variants of some entries and a tie, so that every rule of the exact search is at play.
    for entry_id in range(1, 40):
        variant = near(rows[entry_id + 100], entry_id)
        index.put_variant(A, entry_id, entry_id, variant, float(entry_id), math.inf)
        exact.put_variant(A, entry_id, entry_id, variant, float(entry_id), math.inf)
    for twin in (5_000, 5_001):
        index.put(A, twin, rows[300], 7.0, math.inf)
        exact.put(A, twin, rows[300], 7.0, math.inf)
    index.search(A, rows[0], 5, 0.0)
    assert proposals  # above the threshold, with its graph
    proposals.clear()
    for entry_id in range(1, 80):  # below it again: exact, its graph still there
        index.remove(entry_id)
        exact.remove(entry_id)
    assert index.scope_size(A) < FROM
    for query_id in range(200):
        query = near(rows[query_id * 5], seed=query_id)
        assert index.search(A, query, 5, 0.0) == exact.search(A, query, 5, 0.0)
    assert index.search(A, rows[300], 3, 0.0) == exact.search(A, rows[300], 3, 0.0)
    assert not proposals


def test_above_the_threshold_the_exact_nearest_is_found_on_near_duplicates(proposals: list[int]) -> None:
    rows = unit_rows(ROWS, seed=2)
    index, exact = filled(FROM, rows), filled(0, rows)
    assert open_approximate(index, None).built == 1
    for query_id in range(300):
        query = near(rows[(query_id * 7) % ROWS], seed=query_id)
        got, want = index.search(A, query, 3, 0.0).hits, exact.search(A, query, 3, 0.0).hits
        assert got[0] == want[0]  # same entry, same exact score
    assert len(proposals) == 300


def test_a_removed_re_embedded_or_expired_row_never_comes_back(proposals: list[int]) -> None:
    rows = unit_rows(ROWS, seed=3)
    index = filled(FROM, rows)
    open_approximate(index, None)
    index.remove(10)  # deleted or obsoleted: the writer removes it
    index.put_variant(A, 20, 7, rows[30], 20.0, math.inf)
    index.remove_variant(20, 7)
    index.put(A, 40, rows[50], 40.0, math.inf)  # re-embedded: its old vector is gone
    index.put(A, 60, rows[59], 60.0, 5.0)  # its own vector, now expiring at 5
    for query, gone in ((rows[9], 10), (rows[30], 20), (rows[39], 40)):
        hits = index.search(A, query, 3, 0.0).hits
        assert gone not in [hit.entry_id for hit in hits]
    found = index.search(A, rows[59], 3, 10.0)
    assert 60 not in [hit.entry_id for hit in found.hits]
    assert 60 in found.expired
    re_embedded = index.search(A, rows[50], 3, 0.0).hits
    assert {hit.entry_id: hit.score for hit in re_embedded}[40] == pytest.approx(1.0)  # tied with 51
    assert index.search(A, rows[59], 3, 1.0).hits[0].entry_id == 60  # not yet expired
    assert proposals


def test_most_rows_expired_falls_back_to_the_exact_search() -> None:
    rows = unit_rows(ROWS, seed=4)
    index = VectorIndex("m", DIM, approximate_from=FROM)
    ids = list(range(1, ROWS + 1))
    expires = [5.0] * (ROWS - 2) + [math.inf, math.inf]  # only the last two live
    index.put_many(A, ids, rows, [0.0] * ROWS, expires)
    open_approximate(index, None)
    found = index.search(A, rows[0], 2, 10.0)
    assert sorted(hit.entry_id for hit in found.hits) == [ROWS - 1, ROWS]


def test_scopes_and_tenants_never_mix() -> None:
    rows = unit_rows(ROWS, seed=5)
    index = filled(FROM, rows)
    index.put_many(B, list(range(10_001, 10_001 + ROWS)), rows, [9e9] * ROWS, [math.inf] * ROWS)
    index.put_many(OTHER_AGENT, list(range(20_001, 20_001 + ROWS)), rows, [9e9] * ROWS, [math.inf] * ROWS)
    assert open_approximate(index, None).built == 3
    for query_id in range(100):
        query = near(rows[query_id], seed=query_id)
        assert all(1 <= hit.entry_id <= ROWS for hit in index.search(A, query, 5, 0.0).hits)
        assert all(10_001 <= hit.entry_id < 20_001 for hit in index.search(B, query, 5, 0.0).hits)
    moved = unit_rows(1, seed=99)[0]
    index.put(B, 5, moved, 1.0, math.inf)  # an entry moved to another scope leaves its old one
    assert 5 not in [hit.entry_id for hit in index.search(A, rows[4], 5, 0.0).hits]
    assert 5 not in [hit.entry_id for hit in index.search(A, moved, 5, 0.0).hits]
    assert index.search(B, moved, 1, 0.0).hits[0].entry_id == 5


def test_one_hit_per_entry_through_its_best_wording_above_the_threshold() -> None:
    rows = unit_rows(ROWS, seed=6)
    index = filled(FROM, rows)
    open_approximate(index, None)
    index.put_variant(A, 1, 99, near(rows[500], seed=1, noise=0.01), 1.0, math.inf)
    hits = index.search(A, rows[500], 3, 0.0).hits
    assert [hit.entry_id for hit in hits].count(501) == 1
    assert hits[0].entry_id == 501 and hits[0].variant_id is None  # its own question is exact
    assert hits[1].entry_id == 1 and hits[1].variant_id == 99
    assert len({hit.entry_id for hit in hits}) == 3


def test_ties_still_go_to_the_newest_entry_above_the_threshold() -> None:
    rows = unit_rows(ROWS, seed=7)
    index = filled(FROM, rows)
    open_approximate(index, None)
    twin = rows[100]
    index.put(A, 50_000, twin, 1e9, math.inf)  # newest, same vector as entry 101
    index.put(A, 50_001, twin, 5.0, math.inf)
    hits = index.search(A, twin, 3, 0.0).hits
    assert [hit.entry_id for hit in hits] == [50_000, 101, 50_001]


def test_a_scope_grown_past_the_threshold_builds_its_index_in_the_background(proposals: list[int]) -> None:
    rows = unit_rows(FROM + 200, seed=8)
    index = filled(FROM, rows[: FROM - 1])
    index.search(A, rows[0], 3, 0.0)
    assert not proposals
    index.put_many(A, list(range(FROM, FROM + 201)), rows[FROM - 1 :], [0.0] * 201, [math.inf] * 201)
    assert index.search(A, rows[5], 3, 0.0).hits[0].entry_id == 6  # exact while it builds
    assert not proposals
    index.remove(7)  # changes while it builds are applied when it is installed
    fresh = unit_rows(1, seed=98)[0]
    index.put(A, 9_999, fresh, 0.0, math.inf)
    [(_, scope_rows)] = index.scope_rows()
    ann = scope_rows.wait_for_build()
    assert ann is not None and not ann.holds(7) and ann.holds(9_999)
    assert index.search(A, rows[6], 3, 0.0).hits[0].entry_id != 7
    assert index.search(A, fresh, 3, 0.0).hits[0].entry_id == 9_999
    assert proposals
