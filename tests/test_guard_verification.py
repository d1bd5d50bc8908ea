"""The guard asks the verifier only what the decision needs, and serves the best verified candidate."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memory_guard.core.decision import Decision
from memory_guard.core.scope import Scope
from memory_guard.core.verdict import Verification
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.services import Services
from memory_guard.settings import Settings

SCOPE = Scope("default", "default", "", "")


async def _services(tmp_path: Path) -> tuple[Services, list[list[str]]]:
    # Low thresholds so that every stored question is a candidate that could be served; the checks
    # decide (tests/test_cross_encoder_verifier.py has the cross-encoder's reads).
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        memory_db_path=tmp_path / "memory.db",
        embedding_provider="hashing",
        memory_cross_encoder="off",
        memory_similarity_threshold=0.1,
        memory_direct_threshold=0.1,
        memory_verified_direct_threshold=0.1,
    )
    services = await Services.open(settings, embedder=HashingEmbedder())
    verifier = services.guard.verifier
    assert verifier is not None
    asked: list[list[str]] = []
    inner = verifier.verify_many

    async def recording(
        incoming: str, candidates: Sequence[tuple[str, float]], **options: int
    ) -> list[Verification]:
        asked.append([stored for stored, _ in candidates])
        return await inner(incoming, candidates, **options)

    verifier.verify_many = recording  # type: ignore[method-assign]
    return services, asked


async def test_a_served_best_candidate_is_verified_alone(tmp_path: Path) -> None:
    services, asked = await _services(tmp_path)
    try:
        for question in ("Comment configurer le proxy ?", "Comment configurer le proxy inverse ?"):
            await services.entries.create_faq(SCOPE, question, "réponse", [], "test")
        found = await services.guard.lookup(SCOPE, "comment configurer le proxy svp")
        assert found.decision is Decision.DIRECT
        assert found.served is not None and found.served.entry.question == "Comment configurer le proxy ?"
        assert asked == [["Comment configurer le proxy ?"]]

        asked.clear()
        shown = await services.search.lookup(SCOPE, "comment configurer le proxy svp")
        assert len(asked) == 1 and len(asked[0]) == 2, "staff see a verdict on every candidate"
        assert all(c.verification is not None for c in shown.candidates)
    finally:
        await services.aclose()


async def test_a_rejected_best_candidate_gives_way_to_the_next_verified_one(tmp_path: Path) -> None:
    services, asked = await _services(tmp_path)
    try:
        await services.entries.create_faq(
            SCOPE, "Retenue de garantie sur un marché de 150 000 € ?", "7 500 €", [], "test"
        )
        await services.entries.create_faq(
            SCOPE,
            "Dites-moi la retenue de garantie applicable à un marché public de 30 000 €",
            "1 500 €",
            [],
            "test",
        )
        found = await services.guard.lookup(SCOPE, "Retenue de garantie sur un marché de 30 000 € ?")
        best = found.best
        assert best is not None and best.verification is not None
        assert best.verification.reason == "numbers differ: 150 000 vs 30 000"
        assert found.served is not None and found.served.entry.answer == "1 500 €"
        assert len(asked) == 2 and len(asked[0]) == 1, "the best first, then the others together"
    finally:
        await services.aclose()


async def test_politeness_does_not_move_the_vector(tmp_path: Path) -> None:
    services = await Services.open(
        Settings(  # type: ignore[call-arg]
            _env_file=None,
            memory_db_path=tmp_path / "m.db",
            embedding_provider="hashing",
            memory_cross_encoder="off",
        ),
        embedder=HashingEmbedder(),
    )
    try:
        await services.entries.create_faq(
            SCOPE, "Comment configurer le proxy inverse ?", "réponse", [], "test"
        )
        found = await services.guard.lookup(SCOPE, "Bonjour, Comment configurer le proxy inverse svp ?")
        best = found.best
        assert best is not None and not best.exact, "another exact key: the cosine path"
        assert best.score > 0.999
        assert found.decision is Decision.DIRECT
    finally:
        await services.aclose()
