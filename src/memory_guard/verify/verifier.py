"""The offline hit verifier: does the stored answer serve the incoming question?

Cosine similarity only proposes a candidate. The checks of `features` reject it when they
prove the questions differ (numbers, negation, opposite words, a key term swapped, another
kind of answer); otherwise the learned classifier gives the probability that the answer
serves, and that probability becomes a verdict. No network: the only model it may run is the
local embedder, on the few words that differ between the two questions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory_guard.core.verdict import Verdict, Verification
from memory_guard.embeddings.base import Embedder
from memory_guard.verify.features import Comparison, compare
from memory_guard.verify.model import PairModel


class OfflineVerifier:
    def __init__(self, model: PairModel | None, embedder: Embedder | None = None) -> None:
        # No model (an embedder it was not trained for): the checks alone decide.
        self.model = model
        self._embedder = embedder

    def needs_residual(self, comparison: Comparison) -> bool:
        """Whether deciding this pair takes an embedding of its leftover words."""
        return (
            self.model is not None
            and self.model.uses_residual
            and not comparison.conflict
            and comparison.needs_residual
        )

    def decide(self, comparison: Comparison, residual: float | None = None) -> Verification:
        conflict = comparison.conflict
        if conflict:
            return Verification(Verdict.REJECT, conflict, 0.0)
        if self.model is None:
            return Verification(Verdict.ACCEPT, "no difference found (checks only)")
        p = self.model.probability(comparison.vector(residual))
        if p >= self.model.cutoffs.accept:
            return Verification(Verdict.ACCEPT, f"same question (p={p:.2f})", p)
        if p < self.model.cutoffs.reject:
            return Verification(Verdict.REJECT, f"likely another question (p={p:.2f})", p)
        return Verification(Verdict.UNSURE, f"unsure (p={p:.2f})", p)

    def verify(
        self, stored: str, incoming: str, similarity: float, residual: float | None = None
    ) -> Verification:
        return self.decide(compare(stored, incoming, similarity), residual)

    async def verify_many(self, incoming: str, candidates: Sequence[tuple[str, float]]) -> list[Verification]:
        """Verdicts on (stored question, score) candidates, with one embedding call at most."""
        comparisons = [compare(stored, incoming, score) for stored, score in candidates]
        residuals: list[float | None] = [None] * len(comparisons)
        wanted = [i for i, c in enumerate(comparisons) if self.needs_residual(c)]
        if wanted and self._embedder is not None:
            texts = sorted({text for i in wanted for text in comparisons[i].leftovers})
            vectors = dict(zip(texts, await self._embedder.embed(texts), strict=True))
            for i in wanted:
                left, right = comparisons[i].leftovers
                residuals[i] = float(np.dot(vectors[left], vectors[right]))
        return [self.decide(c, r) for c, r in zip(comparisons, residuals, strict=True)]
