"""The offline hit verifier: does the stored answer serve the incoming question?

Cosine similarity only proposes a candidate. The checks of `features` reject it when they
prove the questions differ (numbers, negation, opposite words, a key term swapped, another
kind of answer). What they let through is read by the cross-encoder, when the service runs one:
both questions together, its probability turned into a verdict by the cut-offs shipped in its
file. Without it the learned pair classifier gives that probability, from the checks' features
and the embedding of the few words that differ. No network either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory_guard.core.normalize import same_question
from memory_guard.core.verdict import Verdict, Verification
from memory_guard.embeddings.base import Embedder
from memory_guard.verify.async_cross_encoder import AsyncCrossEncoder
from memory_guard.verify.cross_encoder import MAX_CANDIDATES, CrossEncoderCutoffs
from memory_guard.verify.features import Comparison, compare
from memory_guard.verify.model import PairModel

UNREAD = f"not read by the cross-encoder (past its best {MAX_CANDIDATES} candidates)"
# "Bonjour, <q> svp" against <q>: nothing is left to read, and the cross-encoder, trained on pairs
# that differ, scores a question against its own copy lower than a paraphrase (about 0.8).
SAME_ONCE_POLITE = Verification(
    Verdict.ACCEPT, "same question once greetings and politeness are set aside", 1.0
)


def cross_encoder_verdict(p: float, cutoffs: CrossEncoderCutoffs) -> Verification:
    """The cross-encoder's verdict on probability p: from `direct` a confident yes, below
    `unsure` a no, in between unsure."""
    if p >= cutoffs.direct:
        verdict, words = Verdict.ACCEPT, "same question"
    elif p < cutoffs.unsure:
        verdict, words = Verdict.REJECT, "likely another question"
    else:
        verdict, words = Verdict.UNSURE, "unsure"
    return Verification(verdict, f"cross-encoder: {words} (p={p:.4f})", p, "cross_encoder", p)


class OfflineVerifier:
    def __init__(
        self,
        model: PairModel | None,
        embedder: Embedder | None = None,
        cross_encoder: AsyncCrossEncoder | None = None,
    ) -> None:
        # No model (an embedder it was not trained for): the checks alone decide, or the
        # cross-encoder, which replaces the classifier when it runs.
        self.model = model
        self._embedder = embedder
        self.cross_encoder = cross_encoder

    def needs_residual(self, comparison: Comparison) -> bool:
        """Whether the classifier's verdict on this pair takes an embedding of its leftover words."""
        return (
            self.model is not None
            and self.model.uses_residual
            and not comparison.conflict
            and comparison.needs_residual
        )

    def decide(self, comparison: Comparison, residual: float | None = None) -> Verification:
        """The checks' and the classifier's verdict (the cross-encoder left out)."""
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
        """One pair through the checks and the classifier, synchronously (the cross-encoder runs
        off the event loop: `verify_many`)."""
        return self.decide(compare(stored, incoming, similarity), residual)

    async def verify_many(
        self, incoming: str, candidates: Sequence[tuple[str, float]], *, already_read: int = 0
    ) -> list[Verification]:
        """Verdicts on (stored question, score) candidates.

        With the cross-encoder: one run over the best candidates the checks let through, at most
        MAX_CANDIDATES less `already_read` (those of the same question it read in an earlier
        call). Without it: the classifier, with one embedding call at most.
        """
        comparisons = [compare(stored, incoming, score) for stored, score in candidates]
        if self.cross_encoder is None:
            return await self._classified(comparisons)
        verdicts = [
            Verification(Verdict.REJECT, c.conflict, 0.0)
            if c.conflict
            else SAME_ONCE_POLITE
            if same_question(stored, incoming)
            else None
            for c, (stored, _) in zip(comparisons, candidates, strict=True)
        ]
        passed = sorted((i for i, v in enumerate(verdicts) if v is None), key=lambda i: -candidates[i][1])
        read = passed[: max(MAX_CANDIDATES - already_read, 0)]
        if read:
            pairs = [(candidates[i][0], incoming) for i in read]
            for i, p in zip(read, await self.cross_encoder.probabilities(pairs), strict=True):
                verdicts[i] = cross_encoder_verdict(p, self.cross_encoder.cutoffs)
        return [Verification(Verdict.UNSURE, UNREAD) if v is None else v for v in verdicts]

    async def _classified(self, comparisons: list[Comparison]) -> list[Verification]:
        residuals: list[float | None] = [None] * len(comparisons)
        wanted = [i for i, c in enumerate(comparisons) if self.needs_residual(c)]
        if wanted and self._embedder is not None:
            texts = sorted({text for i in wanted for text in comparisons[i].leftovers})
            vectors = dict(zip(texts, await self._embedder.embed(texts), strict=True))
            for i in wanted:
                left, right = comparisons[i].leftovers
                residuals[i] = float(np.dot(vectors[left], vectors[right]))
        return [self.decide(c, r) for c, r in zip(comparisons, residuals, strict=True)]
