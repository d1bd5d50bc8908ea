"""The offline verifier's part of bench/quality.py (the checks and the pair classifier)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bench.pairs import compare_pairs
from bench.quality_stats import Decisions, Pair, Scores, decide_pairs
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import Verification
from memory_guard.embeddings.base import Embedder
from memory_guard.verify.features import compare, forget_comparisons
from memory_guard.verify.verifier import OfflineVerifier


async def time_with_embedding(
    pairs: Sequence[Pair],
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    verifier: OfflineVerifier | None,
    policy: ServePolicy,
    limit: int = 300,
) -> npt.NDArray[np.float64]:
    """`verify_many` timed one candidate at a time on the candidates whose decision takes the
    embedding of their leftover words (seconds)."""
    timings: list[float] = []
    if verifier is None:
        return np.array(timings)
    for pair, score, is_exact in zip(pairs, scores, exact, strict=True):
        if len(timings) >= limit:
            break
        if (
            is_exact
            or score < policy.similar
            or not verifier.needs_residual(compare(pair.a, pair.b, float(score)))
        ):
            continue
        forget_comparisons()
        started = time.perf_counter()
        await verifier.verify_many(pair.b, [(pair.a, float(score))])
        timings.append(time.perf_counter() - started)
    return np.array(timings)


async def verify_pairs(
    pairs: Sequence[Pair],
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    embedder: Embedder,
    verifier: OfflineVerifier | None,
    policy: ServePolicy,
) -> tuple[Decisions, npt.NDArray[np.float64]]:
    """The guard's decision for each pair, and the verifier's time per candidate (seconds).

    As in a lookup, only a candidate whose score a verdict can serve is verified. The leftover
    words are embedded in batches first, as `compare_pairs` does; the time per candidate is the
    checks and the classifier (`bench/latency.py` measures the whole path).
    """
    verifications: list[Verification | None] = [None] * len(pairs)
    timings: list[float] = []
    if verifier is None:
        return decide_pairs(policy, scores, exact, verifications), np.array(timings)
    todo = [i for i in range(len(pairs)) if not exact[i] and scores[i] >= policy.verify_from()]
    compared = await compare_pairs([pairs[i] for i in todo], scores[todo], embedder)
    for i, item in zip(todo, compared, strict=True):
        # The pair was compared while its leftover words were embedded: time the checks, not the cache.
        forget_comparisons()
        started = time.perf_counter()
        verifications[i] = verifier.verify(item.pair.a, item.pair.b, float(scores[i]), item.residual)
        timings.append(time.perf_counter() - started)
    return decide_pairs(policy, scores, exact, verifications), np.array(timings)
