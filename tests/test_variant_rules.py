"""When a question variant is served (memory/variant_policy.py), through the real services on a real
SQLite file; and how the index keeps an entry's wordings.

Learned variants are written through the variant service, as the learning of wordings will."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from memory_guard.core.decision import Decision
from memory_guard.core.scope import Scope
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import EXACT
from memory_guard.db.database import Database
from memory_guard.embeddings.base import normalize_rows
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.memory.entry import Status
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.reindex import reindex
from memory_guard.memory.sqlite_store import SqliteMemoryStore
from memory_guard.memory.variant import VariantOrigin, VariantStatus
from memory_guard.memory.variant_store import SqliteVariantStore
from memory_guard.services import Services
from tests.conftest import make_settings
from tests.upstream import FakeUpstream

SCOPE = Scope("acme", "default")
QUESTION = "Quels moyens de paiement acceptez-vous pour les factures ?"
VARIANT = "Puis-je régler une facture par virement bancaire ?"
NEAR_VARIANT = "Bonjour, puis-je régler une facture par virement bancaire ?"  # the same vector


@pytest.fixture
async def services(tmp_path: Path, upstream: FakeUpstream) -> AsyncIterator[Services]:
    opened = await Services.open(make_settings(tmp_path, upstream), embedder=HashingEmbedder())
    try:
        yield opened
    finally:
        await opened.aclose()


async def _entry(services: Services, status: Status) -> int:
    entry = await services.entries.create_faq(SCOPE, QUESTION, "Carte, virement ou chèque.", [], "staff")
    if status is not Status.VALIDATED:
        await services.entries.set_status("acme", entry.id, status, "staff")
    return entry.id


async def _learned(services: Services, entry_id: int, confirmations: int) -> int:
    variant = await services.variants.add(
        "acme",
        entry_id,
        VARIANT,
        "memory-guard (learning)",
        status=VariantStatus.LEARNED,
        origin=VariantOrigin.LLM,
        confirmations=confirmations,
    )
    return variant.id


@pytest.mark.parametrize(
    ("status", "confirmations", "decision"),
    [(Status.VALIDATED, 1, "direct"), (Status.AUTO, 1, "assisted"), (Status.AUTO, 2, "direct")],
)
async def test_a_learned_variant_serves_on_an_exact_match_only_when_its_entry_is_validated_or_confirmed(
    services: Services, status: Status, confirmations: int, decision: str
) -> None:
    entry_id = await _entry(services, status)
    variant_id = await _learned(services, entry_id, confirmations)
    found = await services.guard.inspect(SCOPE, VARIANT)
    assert found.decision.value == decision
    best = found.candidates[0]
    assert best.entry.id == entry_id and best.exact and best.variant is not None
    assert best.variant.id == variant_id and best.held is (decision == "assisted")
    assert services.guard.policy.grounding(found.candidates) == [best], "held, it still grounds the LLM"


@pytest.mark.parametrize("status", [Status.VALIDATED, Status.AUTO])
async def test_a_learned_variant_serves_by_vector_only_once_confirmed(
    services: Services, status: Status
) -> None:
    entry_id = await _entry(services, status)
    variant_id = await _learned(services, entry_id, confirmations=1)
    found = await services.guard.inspect(SCOPE, NEAR_VARIANT)
    best = found.candidates[0]
    assert not best.exact and best.variant is not None and best.variant.id == variant_id
    assert best.score > 0.99 and best.held
    assert found.decision is Decision.ASSISTED and found.served is None
    await services.variants.remove("acme", entry_id, variant_id, "staff")
    await _learned(services, entry_id, confirmations=2)
    confirmed = await services.guard.inspect(SCOPE, NEAR_VARIANT)
    assert confirmed.decision is Decision.DIRECT
    assert confirmed.served is not None and confirmed.served.entry.id == entry_id


async def test_staff_validation_of_a_learned_variant_makes_it_serve(services: Services) -> None:
    entry_id = await _entry(services, Status.AUTO)
    variant_id = await _learned(services, entry_id, confirmations=1)
    assert (await services.guard.inspect(SCOPE, VARIANT)).decision is Decision.ASSISTED
    validated = await services.variants.validate("acme", entry_id, variant_id, "staff")
    assert (validated.status, validated.confirmations) == (VariantStatus.VALIDATED, 2)
    for question in (VARIANT, NEAR_VARIANT):
        found = await services.guard.inspect(SCOPE, question)
        assert found.served is not None and found.served.entry.id == entry_id, question


async def test_a_lookup_served_through_a_variant_is_logged_with_it(services: Services) -> None:
    entry_id = await _entry(services, Status.VALIDATED)
    variant_id = await _learned(services, entry_id, confirmations=1)
    result = await services.guard.lookup(SCOPE, VARIANT)
    await services.bookkeeping.flush()
    row = await services.db.fetch_one("SELECT entry_id, variant_id, decision FROM lookups")
    assert row is not None and result.lookup_id is not None
    assert (row["entry_id"], row["variant_id"], row["decision"]) == (entry_id, variant_id, "direct")


async def test_a_deleted_entry_leaves_no_variant_row_in_the_index(services: Services) -> None:
    entry_id = await _entry(services, Status.VALIDATED)
    await _learned(services, entry_id, confirmations=1)
    assert services.guard.index.variant_rows == 1
    await services.entries.delete("acme", entry_id, "staff")
    assert services.guard.index.variant_rows == 0 and len(services.guard.index) == 0
    assert await services.db.fetch_all("SELECT id FROM response_variants") == []


async def test_reindex_re_embeds_the_variants(tmp_path: Path, upstream: FakeUpstream) -> None:
    previous, current = HashingEmbedder(dimension=64), HashingEmbedder()
    services = await Services.open(make_settings(tmp_path, upstream), embedder=previous)
    try:
        entry_id = await _entry(services, Status.VALIDATED)
        await _learned(services, entry_id, confirmations=1)
    finally:
        await services.aclose()
    db = await Database.open(tmp_path / "memory.db")
    try:
        # The entry's question is already the current model's: only its variant is stale.
        store = SqliteMemoryStore(db)
        vector = (await current.embed([QUESTION]))[0]
        await store.set_vectors([(entry_id, vector)], current.model_id)
        variants = SqliteVariantStore(db)
        assert await reindex(store, current, everything=False, variants=variants) == 1
        rows = await db.fetch_all("SELECT embedding_model, length(embedding) AS width FROM response_variants")
        assert [(r["embedding_model"], r["width"]) for r in rows] == [(current.model_id, 4 * 384)]
    finally:
        await db.close()


def _unit(*values: float) -> np.ndarray:
    return normalize_rows(np.array([values], dtype=np.float32))[0]


def test_the_index_gives_each_entry_once_through_its_best_wording() -> None:
    index = VectorIndex("m", 3)
    index.put(SCOPE, 1, _unit(1, 0, 0), 1.0, math.inf)
    index.put_variant(SCOPE, 1, 7, _unit(0, 1, 0), 1.0, math.inf)
    index.put_variant(SCOPE, 1, 8, _unit(0, 1, 0.1), 1.0, math.inf)
    index.put(SCOPE, 2, _unit(0, 0.9, 0.5), 2.0, math.inf)
    hits = index.search(SCOPE, _unit(0, 1, 0), k=2, now=0).hits
    assert [(h.entry_id, h.variant_id) for h in hits] == [(1, 7), (2, None)], "k entries, not k rows"
    best = index.search(SCOPE, _unit(1, 0, 0), k=5, now=0).hits[0]
    assert (best.entry_id, best.variant_id) == (1, None), "the entry's own question when it is the best"
    index.remove_variant(1, 7)
    assert index.search(SCOPE, _unit(0, 1, 0), k=1, now=0).hits[0].variant_id == 8
    index.put(SCOPE, 1, _unit(1, 0, 0), 1.0, 50.0)  # a new expiry binds its variants too
    found = index.search(SCOPE, _unit(0, 1, 0), k=5, now=60.0)
    assert [h.entry_id for h in found.hits] == [2] and found.expired == [1]
    index.remove(1)
    assert index.variant_rows == 0 and index.scope_size(SCOPE) == 1


def test_the_index_loads_variants_in_bulk_beside_their_entries() -> None:
    index = VectorIndex("m", 3)
    index.put_many(SCOPE, [1, 2], np.stack([_unit(1, 0, 0), _unit(0, 0, 1)]), [1.0, 2.0], [math.inf] * 2)
    index.put_many(
        SCOPE, [1, 1], np.stack([_unit(0, 1, 0), _unit(0, 1, 1)]), [1.0] * 2, [math.inf] * 2, [3, 4]
    )
    assert index.variant_rows == 2 and len(index) == 2 and index.scope_size(SCOPE) == 4
    assert index.search(SCOPE, _unit(0, 1, 0), k=1, now=0).hits[0].variant_id == 3
    index.remove(1)
    assert index.scope_size(SCOPE) == 1


def test_a_held_candidate_stops_the_decision_as_an_unsure_one_does() -> None:
    class Scored:
        def __init__(self, score: float, held: bool) -> None:
            self.score, self.exact, self.verification, self.held = score, True, EXACT, held

    policy = ServePolicy(similar=0.85, direct=0.95, verified_direct=0.9, confident=0.9)
    first, second = Scored(1.0, held=True), Scored(0.99, held=False)
    assert policy.decide([first, second], True) == (Decision.DIRECT, first)
    assert policy.decide([first, second], True, held=lambda c: c.held) == (Decision.ASSISTED, None)
