"""What keeps a memory hit cheap, checked by behaviour (speed itself is measured in bench/load.py).

- The checks of a pair of questions are worked out once and reused, yet every comparison carries
  its own similarity, so a verdict never comes from another score.
- The index scores a scope without numpy's matrix product (whose BLAS thread pool spin-waits on a
  core after each call) and gives the same scores and order as that product.
- Start-up objects are frozen out of the garbage collector, so that a full collection (during an
  import, say) does not pause the event loop scanning them.
- An import's lines are checked a slice at a time on the event loop, and still numbered as in the file.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import numpy as np
import pytest

from memory_guard.core.scope import Scope
from memory_guard.core.verdict import Verdict
from memory_guard.memory.index import VectorIndex
from memory_guard.services import Services
from memory_guard.verify.features import compare
from memory_guard.verify.model import load_models
from memory_guard.verify.verifier import OfflineVerifier
from tests.conftest import make_settings
from tests.upstream import FakeUpstream

STORED = "Quel est le délai de livraison d'un colis à Lyon ?"
INCOMING = "Petite question : quel est le délai de livraison d'un colis à Lyon ?"


def test_a_pair_compared_again_keeps_its_own_similarity() -> None:
    high, low = compare(STORED, INCOMING, 0.97), compare(STORED, INCOMING, 0.41)
    assert high.similarity == 0.97 and low.similarity == 0.41
    assert high.vector()[0] == 0.97 and low.vector()[0] == 0.41
    assert high.vector()[2:].tolist() == low.vector()[2:].tolist()


def test_a_cached_pair_still_gets_the_verdict_of_its_score() -> None:
    model = load_models()["local/all-MiniLM-L6-v2-qint8"]
    verifier = OfflineVerifier(model)
    first = verifier.verify(STORED, INCOMING, 0.96)
    assert first.verdict is Verdict.ACCEPT
    far = verifier.verify(STORED, INCOMING, 0.2)
    assert far.probability is not None and first.probability is not None
    assert far.probability < first.probability
    assert verifier.verify(STORED, INCOMING, 0.96) == first


def test_index_scores_are_the_dot_products_in_order() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex("m", 32)
    scope = Scope("t", "a")
    index.put_many(scope, list(range(1, 301)), vectors, [0.0] * 300, [float("inf")] * 300)
    query = vectors[42]
    found = index.search(scope, query, 5, now=1.0)
    expected = np.argsort(-(vectors.astype(np.float64) @ query.astype(np.float64)))[:5] + 1
    assert [hit.entry_id for hit in found.hits] == expected.tolist()
    assert found.hits[0].entry_id == 43 and found.hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_start_up_objects_are_frozen_out_of_the_collector(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    gc.unfreeze()
    services = await Services.open(make_settings(tmp_path, upstream, embedding_provider="hashing"))
    try:
        assert gc.get_freeze_count() > 10_000
    finally:
        await services.aclose()


async def test_an_import_checked_slice_by_slice_numbers_its_lines_as_the_file_does(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    lines = [
        json.dumps({"question": f"Question importée numéro {n} ?", "answer": "Oui."}) for n in range(1, 351)
    ]
    lines[236] = "{not json"  # line 237, in the third slice
    lines[299] = ""  # a blank line is no line to report
    lines[311] = lines[4]  # line 312 repeats line 5
    services = await Services.open(make_settings(tmp_path, upstream))
    try:
        plan = await services.transfer.plan_import("acme", lines, skip_bad_lines=True)
    finally:
        await services.aclose()
    assert [(e.line, e.code) for e in plan.report.skipped] == [
        (237, "invalid_json"),
        (312, "repeated_question"),
    ]
    assert len(plan.fresh) == 347
    assert [line.line for line, _ in plan.fresh][-3:] == [348, 349, 350]
