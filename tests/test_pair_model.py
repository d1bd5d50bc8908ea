"""The pair classifier: its file, its arithmetic, and the one embedding call it may cost."""

from __future__ import annotations

import math

import numpy as np

from memory_guard.core.verdict import Verdict
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.embeddings.local import QUANTIZED_MODEL
from memory_guard.verify.features import FEATURES, compare
from memory_guard.verify.model import Cutoffs, PairModel, load_models
from memory_guard.verify.verifier import OfflineVerifier
from tests.fakes import CountingEmbedder

NAMES = ("similarity", "residual_similarity")


def _model(hidden: bool) -> PairModel:
    return PairModel(
        embedding_model="test",
        features=NAMES,
        mean=np.array([0.5, 0.5]),
        scale=np.array([0.1, 0.2]),
        weights=np.array([2.0, -1.0]),
        bias=0.3,
        cutoffs=Cutoffs(accept=0.5, reject=0.2, confident=0.95),
        hidden_weights=np.array([[1.0, 0.5], [-0.5, 1.0]]) if hidden else None,
        hidden_bias=np.array([0.1, -0.1]) if hidden else None,
    )


def test_probability_is_the_documented_arithmetic() -> None:
    vector = compare("a b", "a c", 0.8).vector(residual=0.4)
    x = (np.array([0.8, 0.4]) - 0.5) / np.array([0.1, 0.2])
    linear = _model(hidden=False)
    assert linear.probability(vector) == 1 / (1 + math.exp(-(x @ [2.0, -1.0] + 0.3)))
    network = _model(hidden=True)
    hidden = np.tanh(x @ np.array([[1.0, 0.5], [-0.5, 1.0]]) + [0.1, -0.1])
    assert network.probability(vector) == 1 / (1 + math.exp(-(hidden @ [2.0, -1.0] + 0.3)))
    assert PairModel.from_json("test", network.to_json()).probability(vector) == network.probability(vector)


def test_shipped_file_has_a_classifier_for_the_default_model() -> None:
    models = load_models()
    assert QUANTIZED_MODEL.model_id in models
    model = models[QUANTIZED_MODEL.model_id]
    assert set(model.features) <= set(FEATURES)
    same = compare("Comment créer un index PostgreSQL ?", "Comment créer un index en PostgreSQL ?", 0.98)
    other = compare("Comment créer un index PostgreSQL ?", "Comment supprimer un index PostgreSQL ?", 0.98)
    assert model.probability(same.vector(None)) > 0.5
    assert other.conflict, "opposite words are the checks' business, not the classifier's"


async def test_leftovers_of_every_candidate_are_embedded_in_one_call() -> None:
    embedder = CountingEmbedder(HashingEmbedder())
    verifier = OfflineVerifier(_model(hidden=False), embedder)
    verdicts = await verifier.verify_many(
        "Comment établir le planning d'un chantier ?",
        [
            ("Comment établir le budget d'un chantier ?", 0.9),
            ("Comment établir le calendrier d'un chantier ?", 0.9),
            ("Comment établir le planning de 2 chantiers ?", 0.9),  # numbers differ: no embedding
            ("Comment établir le planning d'un chantier svp ?", 0.9),  # nothing left on one side
        ],
    )
    assert sorted(embedder.texts) == ["budget", "calendrier", "planning"]
    assert verdicts[2].verdict is Verdict.REJECT and verdicts[2].reason.startswith("numbers differ")
    assert all(v.probability is not None for v in verdicts)
