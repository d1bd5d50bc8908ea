"""The cross-encoder in the verifier, through the real app and the shipped model file.

The checks veto first and the cross-encoder never reads what they reject; it reads at most the best
3 candidates they let through, in one run; its probability shows in the staff lookup; the cut-offs in
its file decide what is served direct; MEMORY_CROSS_ENCODER=off brings back the classifier's path.
Where a test needs a verdict on a given side of a cut-off it loads a copy of the shipped file whose
metadata carries other cut-offs, so that it holds whatever probabilities a retrained model gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import onnx
import pytest

from memory_guard.core.scope import Scope
from memory_guard.core.verdict_reasons import describe_reason
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.services import Services
from memory_guard.settings import Settings
from memory_guard.verify.async_cross_encoder import AsyncCrossEncoder, CrossEncoderLoadError
from memory_guard.verify.cross_encoder import MAX_CANDIDATES, METADATA_KEY, CrossEncoder, shipped_asset
from memory_guard.verify.verifier import UNREAD
from tests.conftest import client_for, make_settings
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le délai de paiement d'une facture de travaux ?"
# Scored the highest by the test embedder, and vetoed by the numbers check.
VETOED = "Quel est le délai de paiement d'une facture de travaux en 2024 ?"
# What the checks let through, more than the cross-encoder reads.
PASSED = (
    "Quel est le délai de paiement d'une facture de travaux publics ?",
    "Le délai de paiement d'une facture de travaux, quel est-il ?",
    "Quel est le délai de paiement pour une facture de travaux ?",
    "Quel est le délai de paiement d'une facture ?",
    "Quel délai de paiement pour une facture de travaux ?",
)
# Every stored question a candidate, and every candidate one that a yes can serve.
LOW: dict[str, Any] = {
    "memory_similarity_threshold": 0.5,
    "memory_direct_threshold": 0.5,
    "memory_verified_direct_threshold": 0.5,
    "memory_assisted_top_k": 10,
    # The hashing embedder is no multilingual-e5: `auto` would leave the cross-encoder off.
    "memory_cross_encoder": "on",
}
SCOPE = Scope("acme", "default", "", "")


@pytest.fixture(scope="module")
def encoder() -> Iterator[CrossEncoder]:
    loaded = CrossEncoder.load()
    yield loaded
    loaded.close()


def probability(encoder: CrossEncoder, stored: str, incoming: str = QUESTION) -> float:
    (p,) = encoder.probabilities([(stored, incoming)])
    return p


def with_cutoffs(path: Path, direct: float, unsure: float) -> Path:
    """A copy of the shipped model whose metadata carries these cut-offs."""
    with resources.as_file(shipped_asset()) as source:
        model = onnx.load(str(source))
    (entry,) = [prop for prop in model.metadata_props if prop.key == METADATA_KEY]
    meta = json.loads(entry.value)
    meta["cutoffs"] = {"direct": direct, "unsure": unsure}
    entry.value = json.dumps(meta)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def start(tmp_path: Path, fresh_upstream: FakeUpstream) -> Iterator[Callable[..., LiveApp]]:
    started: list[LiveApp] = []

    def factory(cross_encoder_file: Path | None = None, **overrides: Any) -> LiveApp:
        settings = make_settings(tmp_path, fresh_upstream, **{**LOW, **overrides})
        live = LiveApp(settings, embedder=HashingEmbedder(), cross_encoder_file=cross_encoder_file).start()
        started.append(live)
        return live

    yield factory
    for live in started:
        live.stop()


def store(live: LiveApp, questions: Sequence[str]) -> dict[str, int]:
    with client_for(live, "sa") as staff:
        ids = {}
        for question in questions:
            response = staff.post(
                "/staff/memory", json={"question": question, "answer": f"Réponse à {question}"}
            )
            assert response.status_code == 201, response.text
            ids[question] = response.json()["id"]
        return ids


def lookup(live: LiveApp, question: str = QUESTION) -> dict[str, Any]:
    with client_for(live, "sa") as staff:
        response = staff.post("/staff/memory/lookup", json={"question": question})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


def by_question(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["matched_question"]: c for c in body["candidates"]}


def test_the_lookup_shows_what_the_cross_encoder_read_and_nothing_for_what_it_did_not(
    start: Callable[..., LiveApp], encoder: CrossEncoder
) -> None:
    live = start()
    store(live, [VETOED, *PASSED])
    body = lookup(live)
    candidates = by_question(body)
    assert set(candidates) == {VETOED, *PASSED}, "every stored question is a candidate"
    best = body["candidates"][0]
    assert best["matched_question"] == VETOED, "the test embedder ranks the vetoed one first"

    # Vetoed by the numbers: a no of the checks, never read.
    assert (best["verdict"], best["reason_code"], best["by"]) == ("reject", "numbers_differ", "offline")
    assert best["cross_encoder_probability"] is None

    # The best 3 the checks let through are read, whatever the vetoed one scored above them.
    passed = [c for c in body["candidates"] if c["matched_question"] in PASSED]
    assert [c["score"] for c in passed] == sorted((c["score"] for c in passed), reverse=True)
    read, unread = passed[:MAX_CANDIDATES], passed[MAX_CANDIDATES:]
    assert len(unread) == len(PASSED) - MAX_CANDIDATES
    for candidate in read:
        p = probability(encoder, candidate["matched_question"])
        assert candidate["cross_encoder_probability"] == pytest.approx(p, abs=1e-4)
        assert candidate["by"] == "cross_encoder"
        assert candidate["probability"] == candidate["cross_encoder_probability"]
        assert candidate["reason_code"].startswith("cross_encoder_")
        assert float(candidate["reason_params"]["p"]) == pytest.approx(p, abs=1e-4)
    for candidate in unread:
        assert candidate["cross_encoder_probability"] is None
        assert (candidate["verdict"], candidate["reason"]) == ("unsure", UNREAD)
        assert candidate["reason_code"] == "cross_encoder_unread"
        assert candidate["reason_params"] == {"count": str(MAX_CANDIDATES)}


class RecordingCrossEncoder(AsyncCrossEncoder):
    """The real model, with the pairs of each run written down."""

    def __init__(self, encoder: CrossEncoder) -> None:
        super().__init__(encoder)
        self.runs: list[list[tuple[str, str]]] = []

    async def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.runs.append(list(pairs))
        return await super().probabilities(pairs)


async def _recorded_lookup(
    tmp_path: Path, stored: Sequence[str], cross_encoder_file: Path, asked: str = QUESTION
) -> list[list[tuple[str, str]]]:
    """The (stored, incoming) pairs the cross-encoder read in each run of a client's lookup."""
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, memory_db_path=tmp_path / "memory.db", embedding_provider="hashing", **LOW
    )
    services = await Services.open(
        settings, embedder=HashingEmbedder(), cross_encoder_file=cross_encoder_file
    )
    recording = await RecordingCrossEncoder.open(cross_encoder_file)
    try:
        verifier = services.guard.verifier
        assert verifier is not None and verifier.cross_encoder is not None
        verifier.cross_encoder = recording
        for question in stored:
            await services.entries.create_faq(SCOPE, question, "réponse", [], "test")
        found = await services.guard.lookup(SCOPE, asked)
        assert found.served is None, "every verdict unsure: nothing served, every candidate verified"
        return recording.runs
    finally:
        await recording.aclose()
        await services.aclose()


async def test_a_lookup_reads_the_best_three_unvetoed_candidates_over_both_of_its_runs(
    tmp_path: Path,
) -> None:
    # direct 1, unsure 0: every pair read is unsure, so the lookup verifies all its candidates.
    unsure = with_cutoffs(tmp_path / "unsure.onnx", direct=1.0, unsure=0.0)
    # The vetoed best candidate is checked alone, costs no read, and the next run reads 3.
    (run,) = await _recorded_lookup(tmp_path / "a", [VETOED, *PASSED], unsure)
    assert len(run) == MAX_CANDIDATES and all(b == QUESTION for _, b in run)
    assert VETOED not in [a for a, _ in run]
    # A best candidate read alone first leaves the second run 2 reads.
    runs = await _recorded_lookup(tmp_path / "b", PASSED, unsure)
    assert [len(run) for run in runs] == [1, MAX_CANDIDATES - 1]
    assert len({pair for run in runs for pair in run}) == MAX_CANDIDATES


def test_the_cross_encoder_reads_the_questions_without_their_politeness() -> None:
    # Greetings and thanks ask nothing: every reader (the service, the fit of the cut-offs, the
    # benches) gets the probability of the bare questions.
    encoder = CrossEncoder.load()
    try:
        polite, bare = encoder.probabilities(
            [(f"Bonjour, {PASSED[1]}", f"Bonjour, {QUESTION} Merci"), (PASSED[1], QUESTION)]
        )
        assert polite == pytest.approx(bare, abs=1e-6)
        (other,) = encoder.probabilities([(f"Bonjour, {PASSED[1]}", f"Dites, {QUESTION} Merci")])
        assert other != pytest.approx(bare, abs=1e-6), "a word that is not politeness is read"
    finally:
        encoder.close()


@pytest.mark.parametrize(
    ("direct", "unsure", "verdict", "decision"),
    [
        (-1, -1, "accept", "direct"),
        (1, -1, "unsure", "assisted"),
        (1, 1, "reject", "miss"),  # a rejected candidate grounds nothing
    ],
    ids=["direct-cut-off-just-below-p", "p-between-the-cut-offs", "unsure-cut-off-just-above-p"],
)
def test_the_cut_offs_in_the_file_decide_what_is_served_direct(
    start: Callable[..., LiveApp],
    encoder: CrossEncoder,
    tmp_path: Path,
    fresh_upstream: FakeUpstream,
    direct: int,
    unsure: int,
    verdict: str,
    decision: str,
) -> None:
    stored = PASSED[1]
    p = probability(encoder, stored)
    # The cut-offs a step either side of p, whatever the model makes of the pair.
    step = min(1e-4, p / 2, (1 - p) / 2)
    assert step > 1e-6, f"p={p}: no room beside it for the doctored cut-offs"
    model = with_cutoffs(tmp_path / "cut.onnx", direct=p + direct * step, unsure=p + unsure * step)
    live = start(cross_encoder_file=model)
    (entry_id,) = store(live, [stored]).values()

    body = lookup(live)
    (candidate,) = body["candidates"]
    assert (candidate["verdict"], body["decision"]) == (verdict, decision)
    assert (
        candidate["reason_code"]
        == {
            "accept": "cross_encoder_same",
            "unsure": "cross_encoder_unsure",
            "reject": "cross_encoder_other",
        }[verdict]
    )
    assert body["served_entry_id"] == (entry_id if decision == "direct" else None)

    # A client's question decides the same way: served from memory, or the LLM answers.
    if decision == "assisted":
        fresh_upstream.push(Reply(text="Trente jours."))
    with client_for(live, "ka") as client:
        reply = chat(client, message=QUESTION)
    assert reply.done["decision"] == decision
    if decision == "direct":
        assert reply.of("cached_response")[0]["entry_id"] == entry_id


@pytest.mark.parametrize("asked", ["Bonjour, {q} svp", "Petite question : {q}", "Excuse me, {q}"])
def test_the_same_question_with_a_greeting_and_thanks_is_served_unread(
    start: Callable[..., LiveApp], tmp_path: Path, asked: str
) -> None:
    # A cut-off no probability reaches: only the rule can serve, never the model.
    strict = with_cutoffs(tmp_path / "strict.onnx", direct=1.0, unsure=0.0)
    live = start(cross_encoder_file=strict)
    (entry_id,) = store(live, [PASSED[1]]).values()
    body = lookup(live, asked.format(q=PASSED[1].lower()))
    (candidate,) = body["candidates"]
    assert not candidate["exact"], "the exact-match key keeps the greeting: a cosine candidate"
    assert (candidate["verdict"], candidate["reason_code"]) == ("accept", "same_once_polite")
    assert candidate["cross_encoder_probability"] is None
    assert (body["decision"], body["served_entry_id"]) == ("direct", entry_id)
    # One word more is a question for the model again, which this file never lets through.
    other = lookup(live, f"Bonjour, {PASSED[1]} en 2024 svp")["candidates"]
    assert all(c["reason_code"] != "same_once_polite" for c in other)


def test_without_the_cross_encoder_the_checks_and_classifier_decide_as_before(
    start: Callable[..., LiveApp],
) -> None:
    live = start(memory_cross_encoder="off")
    store(live, [VETOED, *PASSED])
    body = lookup(live)
    assert all(c["cross_encoder_probability"] is None for c in body["candidates"])
    assert {c["by"] for c in body["candidates"]} == {"offline"}
    # No classifier ships for the test embedder: the checks alone, the vetoed one rejected, the others
    # a plain yes, and the best of those is served.
    best, second = body["candidates"][:2]
    assert (best["matched_question"], best["verdict"]) == (VETOED, "reject")
    assert (second["verdict"], second["reason_code"]) == ("accept", "checks_only")
    assert (body["decision"], body["served_entry_id"]) == ("direct", second["entry_id"])
    with client_for(live, "ka") as client:
        ready = client.get("/readyz").json()
    assert ready["cross_encoder"] is None


def test_readiness_names_the_cross_encoder(start: Callable[..., LiveApp], encoder: CrossEncoder) -> None:
    live = start()
    with client_for(live, "ka") as client:
        ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["cross_encoder"] == encoder.model_id


async def test_a_bad_model_file_stops_the_start_with_a_message_naming_it(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        memory_db_path=tmp_path / "memory.db",
        embedding_provider="hashing",
        memory_cross_encoder="on",
    )
    broken = tmp_path / "broken.onnx"
    with resources.as_file(shipped_asset()) as source:
        broken.write_bytes(source.read_bytes()[:4096])
    with pytest.raises(CrossEncoderLoadError, match="MEMORY_CROSS_ENCODER=off") as caught:
        await Services.open(settings, embedder=HashingEmbedder(), cross_encoder_file=broken)
    assert str(broken) in str(caught.value)
    # Off, the file is never read.
    off = settings.model_copy(update={"memory_cross_encoder": "off"})
    services = await Services.open(off, embedder=HashingEmbedder(), cross_encoder_file=broken)
    assert services.cross_encoder is None
    await services.aclose()


def test_the_cross_encoder_reasons_have_codes() -> None:
    assert describe_reason(UNREAD) == {"reason_code": "cross_encoder_unread", "reason_params": {"count": "3"}}
    for words, code in (
        ("same question", "cross_encoder_same"),
        ("likely another question", "cross_encoder_other"),
        ("unsure", "cross_encoder_unsure"),
    ):
        assert describe_reason(f"cross-encoder: {words} (p=0.9931)") == {
            "reason_code": code,
            "reason_params": {"p": "0.9931"},
        }


def test_a_wrong_review_raises_the_scope_floor_over_the_cross_encoders_yes(
    start: Callable[..., LiveApp], tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    # Cut-offs at 0: every pair the cross-encoder reads is a confident yes.
    live = start(cross_encoder_file=with_cutoffs(tmp_path / "yes.onnx", direct=0.0, unsure=0.0))
    store(live, [PASSED[1]])
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        assert chat(acme, message=QUESTION).done["decision"] == "direct"
        (hit,) = staff.get("/staff/memory/hits").json()["items"]
        assert (hit["verdict"], hit["verified_by"]) == ("accept", "cross_encoder")
        review = staff.post(f"/staff/memory/hits/{hit['lookup_id']}/review", json={"correct": False})
        review.raise_for_status()
        fresh_upstream.push(Reply(text="Trente jours."))
        assert chat(acme, message=QUESTION).done["decision"] == "assisted"


def test_the_judge_settles_an_unsure_read_and_the_lookup_keeps_the_probability(
    start: Callable[..., LiveApp], encoder: CrossEncoder, tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    # Cut-offs at 1 and 0: every pair the cross-encoder reads is unsure, and goes to the judge.
    unsure = with_cutoffs(tmp_path / "unsure.onnx", direct=1.0, unsure=0.0)
    live = start(cross_encoder_file=unsure, memory_judge_enabled=True)
    stored = PASSED[1]
    (entry_id,) = store(live, [stored]).values()
    fresh_upstream.push(Reply(text="YES: same question, other wording"))
    with client_for(live, "ka") as client:
        reply = chat(client, message=QUESTION)
    assert reply.done["decision"] == "direct"
    assert reply.of("cached_response")[0]["entry_id"] == entry_id
    # The staff lookup reads the judge's cached verdict, with what the cross-encoder said beside it.
    (candidate,) = lookup(live)["candidates"]
    assert (candidate["verdict"], candidate["by"]) == ("accept", "judge")
    assert candidate["cross_encoder_probability"] == pytest.approx(probability(encoder, stored), abs=1e-4)
