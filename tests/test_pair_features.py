"""The pair classifier's input, pinned feature by feature, and the verdicts drawn from it.

The classifier reads its columns by name (`features.FEATURES`, `PairModel.features`): two
columns swapped in `Comparison.vector`, or two names swapped in `FEATURES`, feed it another
question than the one it was trained on while every verdict still looks plausible. So each
feature of a few real pairs is written out here by name, with values worked out by hand from
the words of the two questions.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_guard.core.verdict import Verdict, Verification
from memory_guard.embeddings.base import Vectors
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.verify.features import FEATURES, compare, forget_comparisons
from memory_guard.verify.model import MODEL_FILE, Cutoffs, PairModel, load_models
from memory_guard.verify.verifier import OfflineVerifier


@pytest.fixture(autouse=True)
def _computed_afresh() -> None:
    """Pairs are cached by their texts: each test computes its own, not an earlier test's."""
    forget_comparisons()


# Every feature is 0 unless a case says otherwise; `residual_similarity` is 1 when no residual
# is given.
ZERO = dict.fromkeys(FEATURES, 0.0) | {"residual_similarity": 1.0}

# (stored, incoming, similarity, residual, the features that are not ZERO's)
CASES: list[tuple[str, str, float, float | None, dict[str, float]]] = [
    # Same content words (stop word "en" aside): everything shared, nothing left over.
    (
        "Comment créer un index PostgreSQL ?",
        "Comment créer un index en PostgreSQL ?",
        0.97,
        None,
        {"similarity": 0.97, "similarity_above_0_9": 0.07, "word_overlap": 1, "trigram_overlap": 1,
         "length_ratio": 1},
    ),
    # Nothing but stop words: empty sets overlap fully and count as one word each.
    (
        "Comment ?",
        "Pourquoi ?",
        0.5,
        None,
        {"similarity": 0.5, "word_overlap": 1, "trigram_overlap": 1, "length_ratio": 1, "intent_differs": 1},
    ),
    # {convertir, 30, 000, fcfa} vs {convertir, 150, 000, fcfa}: 3 of 5 stems shared.
    (
        "Convertir 30 000 € en FCFA",
        "Convertir 150 000 € en FCFA",
        0.93,
        0.25,
        {"similarity": 0.93, "similarity_above_0_9": 0.03, "word_overlap": 3 / 5, "trigram_overlap": 16 / 23,
         "unshared_words": 2 / 10, "length_ratio": 1, "numbers_differ": 1, "intent_unknown": 1,
         "residual_similarity": 0.25, "leftover_sides": 2, "leftover_stored": 1 / 5,
         "leftover_incoming": 1 / 5},
    ),
    # A number on one side only; {penalit, retard, marche} vs {penalit, 10, jour, retard}.
    (
        "Pénalités de retard du marché",
        "Pénalités pour 10 jours de retard",
        0.8,
        0.25,
        {"similarity": 0.8, "word_overlap": 2 / 5, "trigram_overlap": 7 / 15, "unshared_words": 3 / 10,
         "length_ratio": 3 / 4, "numbers_one_sided": 1, "key_term_one_sided": 1, "intent_unknown": 1,
         "residual_similarity": 0.25, "leftover_sides": 2, "leftover_stored": 1 / 5,
         "leftover_incoming": 2 / 5},
    ),
    (
        "Le chantier est-il autorisé le dimanche ?",
        "Le chantier est-il interdit le dimanche ?",
        0.95,
        0.25,
        {"similarity": 0.95, "similarity_above_0_9": 0.05, "word_overlap": 3 / 5, "trigram_overlap": 21 / 41,
         "unshared_words": 2 / 10, "length_ratio": 1, "opposite_meaning": 1, "intent_unknown": 1,
         "residual_similarity": 0.25, "leftover_sides": 2, "leftover_stored": 1 / 5,
         "leftover_incoming": 1 / 5},
    ),
    (
        "Comment migrer une base MySQL vers PostgreSQL ?",
        "Comment migrer une base Oracle vers PostgreSQL ?",
        0.91,
        0.25,
        {"similarity": 0.91, "similarity_above_0_9": 0.01, "word_overlap": 3 / 5, "trigram_overlap": 9 / 16,
         "unshared_words": 2 / 10, "length_ratio": 1, "key_term_swapped": 1, "residual_similarity": 0.25,
         "leftover_sides": 2, "leftover_stored": 1 / 5, "leftover_incoming": 1 / 5},
    ),
    # A procedure asked of a bare subject: one kind unknown is enough for `intent_unknown`.
    (
        "Comment créer un index PostgreSQL ?",
        "Index PostgreSQL",
        0.9,
        None,
        {"similarity": 0.9, "word_overlap": 2 / 3, "trigram_overlap": 7 / 10, "unshared_words": 1 / 10,
         "length_ratio": 2 / 3, "intent_unknown": 1, "leftover_sides": 1, "leftover_stored": 1 / 5},
    ),
    # A definition vs a cost; only the incoming question keeps a word of its own ("coute").
    (
        "Qu'est-ce qu'une DICT ?",
        "Combien coûte une DICT ?",
        0.88,
        None,
        {"similarity": 0.88, "word_overlap": 1 / 2, "trigram_overlap": 1 / 4, "unshared_words": 1 / 10,
         "length_ratio": 1 / 2, "intent_differs": 1, "leftover_sides": 1, "leftover_incoming": 1 / 5},
    ),
    (
        "Le chantier est-il autorisé le dimanche ?",
        "Le chantier n'est-il pas autorisé le dimanche ?",
        0.96,
        None,
        {"similarity": 0.96, "similarity_above_0_9": 0.06, "word_overlap": 4 / 5, "trigram_overlap": 5 / 6,
         "unshared_words": 1 / 10, "length_ratio": 4 / 5, "negation_differs": 1, "intent_unknown": 1,
         "leftover_sides": 1, "leftover_incoming": 1 / 5},
    ),
    # Six words left on the incoming side: the count stops at five.
    (
        "Comment établir le planning d'un chantier ?",
        "Comment établir le budget prévisionnel détaillé annuel consolidé global d'un chantier ?",
        0.85,
        0.4,
        {"similarity": 0.85, "word_overlap": 2 / 9, "trigram_overlap": 14 / 73, "unshared_words": 7 / 10,
         "length_ratio": 3 / 8, "residual_similarity": 0.4, "leftover_sides": 2, "leftover_stored": 1 / 5,
         "leftover_incoming": 1},
    ),
    # Eleven words in one question and not the other: that count stops at ten, the stored
    # question's leftovers (nine words) at five.
    (
        "Quelle garantie pour un pont en béton armé précontraint suspendu métallique haubané routier ?",
        "Durée décennale",
        0.3,
        0.1,
        {"similarity": 0.3, "unshared_words": 1, "length_ratio": 2 / 9,
         "key_term_one_sided": 1, "intent_unknown": 1, "residual_similarity": 0.1, "leftover_sides": 2,
         "leftover_stored": 1, "leftover_incoming": 2 / 5},
    ),
]  # fmt: skip


def expected(changes: dict[str, float]) -> dict[str, float]:
    assert set(changes) <= set(FEATURES), set(changes) - set(FEATURES)
    return ZERO | changes


@pytest.mark.parametrize(("stored", "incoming", "similarity", "residual", "changes"), CASES)
def test_each_feature_sits_under_its_name(
    stored: str, incoming: str, similarity: float, residual: float | None, changes: dict[str, float]
) -> None:
    vector = compare(stored, incoming, similarity).vector(residual)
    assert len(vector) == len(FEATURES)
    assert dict(zip(FEATURES, vector.tolist(), strict=True)) == pytest.approx(expected(changes), abs=1e-12)


def test_the_cases_tell_every_two_features_apart() -> None:
    """Without a case where two features differ, swapping them would go unnoticed above."""
    rows = [expected(case[-1]) for case in CASES]
    alike = [(a, b) for a, b in itertools.combinations(FEATURES, 2) if all(row[a] == row[b] for row in rows)]
    assert alike == []


def test_leftovers_are_the_meaningful_words_the_other_question_lacks() -> None:
    assert compare(
        "Comment établir le planning d'un chantier ?", "Comment établir le calendrier des chantiers ?", 0.9
    ).leftovers == ("planning", "calendrier")
    # Stop words are never leftovers; word order and accents-free spelling are the question's own.
    assert compare("Quel est le prix du béton armé ?", "Prix du béton ?", 0.9).leftovers == ("arme", "")
    assert compare("Prix du béton ?", "Prix du béton", 0.9).leftovers == ("", "")
    assert compare(
        "Comment établir le budget d'un chantier ?", "Comment établir le planning détaillé annuel ?", 0.9
    ).leftovers == ("budget chantier", "planning detaille annuel")


# -- the shipped classifier ----------------------------------------------------------------------


def _shipped() -> dict[str, dict[str, Any]]:
    text = resources.files("memory_guard.verify").joinpath(MODEL_FILE).read_text("utf-8")
    models: dict[str, dict[str, Any]] = json.loads(text)["models"]
    return models


def _probability_by_name(data: dict[str, Any], features: dict[str, float]) -> float:
    """The model file's arithmetic, every input looked up by the name the file gives it."""
    x = [
        (features[name] - m) / s
        for name, m, s in zip(data["features"], data["mean"], data["scale"], strict=True)
    ]
    if "hidden_weights" in data:
        units = len(data["hidden_bias"])
        x = [
            math.tanh(
                sum(x[i] * data["hidden_weights"][i][u] for i in range(len(x))) + data["hidden_bias"][u]
            )
            for u in range(units)
        ]
    z = sum(v * w for v, w in zip(x, data["weights"], strict=True)) + data["bias"]
    return 1.0 / (1.0 + math.exp(-z))


@pytest.mark.parametrize("embedding_model", sorted(_shipped()))
def test_the_shipped_classifier_reads_each_feature_by_name(embedding_model: str) -> None:
    data = _shipped()[embedding_model]
    model = load_models()[embedding_model]
    assert model.embedding_model == embedding_model
    assert model.features == tuple(data["features"])
    assert model.cutoffs == Cutoffs(**data["cutoffs"])
    for stored, incoming, similarity, residual, changes in CASES:
        vector = compare(stored, incoming, similarity).vector(residual)
        assert model.probability(vector) == pytest.approx(
            _probability_by_name(data, expected(changes)), rel=1e-9, abs=1e-12
        ), (stored, incoming)


# -- verdicts ------------------------------------------------------------------------------------

# Cut-offs no probability of these tests reaches: every verdict with a classifier is unsure.
WIDE = Cutoffs(accept=0.999, reject=0.001, confident=0.9999)

SAME = ("Comment créer un index PostgreSQL ?", "Comment créer un index en PostgreSQL ?")
SYNONYMS = ("Comment établir le planning d'un chantier ?", "Comment établir le calendrier d'un chantier ?")


def _model(weights: Sequence[float], bias: float, hidden: bool = False, cutoffs: Cutoffs = WIDE) -> PairModel:
    return PairModel(
        embedding_model="test",
        features=("similarity", "residual_similarity"),
        mean=np.zeros(2),
        scale=np.ones(2),
        weights=np.asarray(weights, dtype=np.float64),
        bias=bias,
        cutoffs=cutoffs,
        hidden_weights=np.array([[1.0, 0.5], [-0.5, 1.0]]) if hidden else None,
        hidden_bias=np.array([0.1, -0.1]) if hidden else None,
    )


@pytest.mark.parametrize(
    ("cutoffs", "verification"),
    [
        (Cutoffs(0.5, 0.2, 0.95), Verification(Verdict.ACCEPT, "same question (p=0.50)", 0.5)),
        (Cutoffs(0.9, 0.5, 0.95), Verification(Verdict.UNSURE, "unsure (p=0.50)", 0.5)),
        (Cutoffs(0.9, 0.6, 0.95), Verification(Verdict.REJECT, "likely another question (p=0.50)", 0.5)),
    ],
    ids=["at-accept-accepts", "at-reject-is-unsure", "below-reject-rejects"],
)
def test_a_probability_on_a_cutoff_falls_on_its_side(cutoffs: Cutoffs, verification: Verification) -> None:
    half = _model([0.0, 0.0], 0.0, cutoffs=cutoffs)  # p = 0.5 for every pair
    assert OfflineVerifier(half).verify(*SAME, 0.97) == verification


def test_checks_alone_accept_what_they_cannot_tell_apart_and_reject_what_they_can() -> None:
    rules_only = OfflineVerifier(None)
    assert rules_only.verify(*SAME, 0.97) == Verification(Verdict.ACCEPT, "no difference found (checks only)")
    rejected = OfflineVerifier(_model([0.0, 0.0], 0.0)).verify("Comment ?", "Pourquoi ?", 0.97)
    assert rejected == Verification(Verdict.REJECT, "asks for another kind of answer: how vs why", 0.0)


def test_verify_feeds_the_score_and_the_residual_to_the_classifier() -> None:
    verifier = OfflineVerifier(_model([1.0, 2.0], -0.5))
    found = verifier.verify(*SYNONYMS, 0.8, residual=0.3)
    assert found.probability == pytest.approx(1 / (1 + math.exp(-(0.8 + 2 * 0.3 - 0.5))), rel=1e-12)
    assert verifier.verify(*SYNONYMS, 0.8).probability == pytest.approx(
        1 / (1 + math.exp(-(0.8 + 2 * 1.0 - 0.5))), rel=1e-12
    )


class CallCounter(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return await super().embed(texts)


async def test_verify_many_decides_on_the_residual_of_the_leftovers() -> None:
    embedder = CallCounter()
    verifier = OfflineVerifier(_model([1.0, 2.0], -0.5), embedder)
    left, right = await HashingEmbedder().embed(["planning", "calendrier"])
    residual = float(np.dot(left, right))
    assert residual != pytest.approx(1.0)

    (found,) = await verifier.verify_many(SYNONYMS[1], [(SYNONYMS[0], 0.8)])

    assert embedder.calls == [["calendrier", "planning"]]
    assert found == verifier.verify(*SYNONYMS, 0.8, residual=residual)
    assert found != verifier.verify(*SYNONYMS, 0.8)


async def test_verify_many_embeds_nothing_when_no_pair_needs_it() -> None:
    embedder = CallCounter()
    verifier = OfflineVerifier(_model([1.0, 2.0], -0.5), embedder)
    found = await verifier.verify_many(SAME[1], [(SAME[0], 0.97), ("Pourquoi ?", 0.5)])
    assert embedder.calls == []
    assert [v.verdict for v in found] == [Verdict.UNSURE, Verdict.REJECT]


# -- the model file ------------------------------------------------------------------------------


def test_a_model_without_hidden_layer_survives_its_file() -> None:
    linear = _model([2.0, -1.0], 0.3)
    again = PairModel.from_json("other", linear.to_json())
    assert (again.embedding_model, again.hidden_weights, again.hidden_bias) == ("other", None, None)
    vector = compare(*SYNONYMS, 0.8).vector(0.4)
    assert again.probability(vector) == linear.probability(vector)


def test_the_file_keeps_six_decimals() -> None:
    model = _model([0.12345678, 1.0], 0.98765432, hidden=True)
    data = model.to_json()
    assert data["weights"] == [0.123457, 1.0]
    assert data["bias"] == 0.987654
    assert data["hidden_bias"] == [0.1, -0.1]


def test_a_file_naming_an_unknown_feature_is_refused() -> None:
    data = _model([1.0, 1.0], 0.0).to_json() | {"features": ["similarity", "gut_feeling"]}
    with pytest.raises(
        ValueError, match=r"pair_model\.json uses unknown features \['gut_feeling'\]; retrain it"
    ):
        PairModel.from_json("test", data)


def test_scores_far_out_saturate_instead_of_overflowing() -> None:
    vector = compare(*SAME, 1.0).vector()
    assert _model([-1000.0, 0.0], 0.0).probability(vector) == 1.0 / (1.0 + math.exp(40.0))
    assert _model([1000.0, 0.0], 0.0).probability(vector) == 1.0 / (1.0 + math.exp(-40.0))


def test_models_load_from_a_given_file(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    network = _model([2.0, -1.0], 0.3, hidden=True)
    path.write_text(json.dumps({"models": {"m1": network.to_json()}}), "utf-8")
    ((name, loaded),) = load_models(path).items()
    assert (name, loaded.embedding_model, loaded.features) == ("m1", "m1", network.features)
    assert loaded.cutoffs == network.cutoffs
    vector = compare(*SYNONYMS, 0.8).vector(0.4)
    assert loaded.probability(vector) == pytest.approx(network.probability(vector), rel=1e-6)


@pytest.mark.parametrize(
    "cutoffs", [(0.5, 0.5, 0.5), (1.0, 0.0, 1.0), (0.0, 0.0, 0.0)], ids=["all-equal", "widest", "all-zero"]
)
def test_cutoffs_may_touch_each_other_and_the_bounds(cutoffs: tuple[float, float, float]) -> None:
    accept, reject, confident = cutoffs
    assert Cutoffs(accept, reject, confident).to_json() == {
        "accept": accept,
        "reject": reject,
        "confident": confident,
    }


@pytest.mark.parametrize(
    ("accept", "reject", "confident"),
    [(0.5, -0.1, 0.9), (0.5, 0.6, 0.9), (0.95, 0.2, 0.9), (0.7, 0.2, 1.1)],
    ids=["reject-below-0", "reject-above-accept", "accept-above-confident", "confident-above-1"],
)
def test_cutoffs_out_of_order_are_refused(accept: float, reject: float, confident: float) -> None:
    expected_message = (
        "cut-offs must be ordered 0 <= reject <= accept <= confident <= 1, "
        f"not {reject}, {accept}, {confident}"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(expected_message)}$"):
        Cutoffs(accept, reject, confident)
