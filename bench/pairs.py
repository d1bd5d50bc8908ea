"""Scored and compared question pairs, as the guard sees them: shared by training and the bench."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from bench.quality_stats import Pair, Scores
from memory_guard.core.normalize import embedding_text, normalize_question
from memory_guard.embeddings.base import Embedder
from memory_guard.verify.features import Comparison, compare

BATCH_SIZE = 64


def exact_match(a: str, b: str) -> bool:
    """The guard's first lookup step: equal normalized questions."""
    return normalize_question(a) == normalize_question(b)


async def embed_unique(
    texts: Iterable[str], embedder: Embedder, batch_size: int = BATCH_SIZE, progress: bool = True
) -> dict[str, npt.NDArray[np.float32]]:
    """Embed each distinct text once, in batches; return text -> unit vector.

    Texts go by increasing length so that a batch pads its short texts little.
    """
    unique = sorted(dict.fromkeys(texts), key=len)
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    if not unique:
        return vectors
    with tqdm(total=len(unique), desc="embedding", unit="text", file=sys.stderr, disable=not progress) as bar:
        for start in range(0, len(unique), batch_size):
            batch = unique[start : start + batch_size]
            rows = await embedder.embed(batch)
            if rows.shape[0] != len(batch):
                raise RuntimeError(f"embedder returned {rows.shape[0]} rows for {len(batch)} texts")
            for text, row in zip(batch, rows, strict=True):
                vectors[text] = row
            bar.update(len(batch))
    return vectors


async def score_pairs(
    pairs: Sequence[Pair], embedder: Embedder, batch_size: int = BATCH_SIZE, progress: bool = True
) -> tuple[Scores, npt.NDArray[np.bool_]]:
    """Score every pair as the guard would; return (scores, was-exact-match)."""
    exact = np.array([exact_match(p.a, p.b) for p in pairs], dtype=np.bool_)
    # Embedded as the guard embeds them: without greetings and politeness.
    to_embed = (
        embedding_text(text)
        for p, is_exact in zip(pairs, exact, strict=True)
        if not is_exact
        for text in (p.a, p.b)
    )
    vectors = await embed_unique(to_embed, embedder, batch_size, progress)
    scores = np.ones(len(pairs), dtype=np.float64)
    for i, (pair, is_exact) in enumerate(zip(pairs, exact, strict=True)):
        if not is_exact:
            scores[i] = float(np.dot(vectors[embedding_text(pair.a)], vectors[embedding_text(pair.b)]))
    return scores, exact


@dataclass(frozen=True, slots=True)
class Compared:
    pair: Pair
    comparison: Comparison
    residual: float | None  # cosine of the two leftovers, when both questions keep words of their own


async def compare_pairs(
    pairs: Sequence[Pair], scores: Scores, embedder: Embedder, progress: bool = False
) -> list[Compared]:
    """Every pair compared at its score, with the residual similarity the verifier would compute."""
    comparisons = [compare(p.a, p.b, float(s)) for p, s in zip(pairs, scores, strict=True)]
    texts = [text for c in comparisons if c.needs_residual for text in c.leftovers]
    vectors = await embed_unique(texts, embedder, progress=progress)
    result = []
    for pair, c in zip(pairs, comparisons, strict=True):
        residual = None
        if c.needs_residual:
            left, right = c.leftovers
            residual = float(np.dot(vectors[left], vectors[right]))
        result.append(Compared(pair, c, residual))
    return result
