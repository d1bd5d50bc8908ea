"""Counting the guard's decisions over labelled question pairs (used by bench/quality.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory_guard.core.decision import Decision
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import Verification

Scores = npt.NDArray[np.float64]
Decisions = npt.NDArray[np.str_]  # one `Decision` value per pair


@dataclass(frozen=True, slots=True)
class Pair:
    a: str  # the stored question
    b: str  # the incoming question
    same: bool  # would the stored answer be right for the incoming question?
    kind: str = ""
    lang: str = ""


@dataclass(frozen=True, slots=True)
class Summary:
    """Outcome counts of one group of pairs at one pair of thresholds."""

    n: int
    n_same: int
    n_diff: int
    same_direct: int  # correct direct answers
    same_assisted: int
    diff_direct: int  # WRONG direct answers
    diff_assisted: int
    exact: int  # pairs decided by the exact normalized match
    median_same: float
    median_diff: float

    @property
    def n_direct(self) -> int:
        return self.same_direct + self.diff_direct

    @property
    def direct_precision(self) -> float | None:
        return self.same_direct / self.n_direct if self.n_direct else None


@dataclass(frozen=True, slots=True)
class PairCandidate:
    """A pair's stored question as the guard sees it: the lookup's only candidate."""

    score: float
    exact: bool
    verification: Verification | None = None  # None: not verified, the score alone decides


def decide_pairs(
    policy: ServePolicy,
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    verifications: Sequence[Verification | None] | None = None,
) -> Decisions:
    """The guard's decision for each pair, through the service's own serve policy."""
    checked = verifications if verifications is not None else [None] * len(scores)
    decided = []
    for score, is_exact, verification in zip(scores, exact, checked, strict=True):
        candidate = PairCandidate(float(score), bool(is_exact), verification)
        decision, _ = policy.decide([candidate], allow_direct=True)
        decided.append(decision.value)
    return np.array(decided, dtype=np.str_)


def cosine_alone(policy: ServePolicy, direct: float) -> ServePolicy:
    """`policy` with no verifier at another direct threshold (the sweep of the report)."""
    similar = min(policy.similar, direct)
    return ServePolicy(similar=similar, direct=direct, verified_direct=direct, confident=policy.confident)


def rate(count: int, total: int) -> float | None:
    return count / total if total else None


def summarize(
    scores: Scores, same: npt.NDArray[np.bool_], exact: npt.NDArray[np.bool_], decisions: Decisions
) -> Summary:
    """Count the decisions of a group of pairs, split by their label."""
    is_direct = decisions == Decision.DIRECT.value
    is_assisted = decisions == Decision.ASSISTED.value
    diff = ~same
    return Summary(
        n=int(scores.size),
        n_same=int(same.sum()),
        n_diff=int(diff.sum()),
        same_direct=int((is_direct & same).sum()),
        same_assisted=int((is_assisted & same).sum()),
        diff_direct=int((is_direct & diff).sum()),
        diff_assisted=int((is_assisted & diff).sum()),
        exact=int(exact.sum()),
        median_same=float(np.median(scores[same])) if same.any() else math.nan,
        median_diff=float(np.median(scores[diff])) if diff.any() else math.nan,
    )


@dataclass(frozen=True, slots=True)
class Group:
    label: str
    scores: Scores
    same: npt.NDArray[np.bool_]
    exact: npt.NDArray[np.bool_]
    decisions: Decisions


def make_groups(
    name: str, pairs: Sequence[Pair], scores: Scores, exact: npt.NDArray[np.bool_], decisions: Decisions
) -> list[Group]:
    same = np.array([p.same for p in pairs], dtype=np.bool_)
    groups = [Group(name, scores, same, exact, decisions)]
    for attr in ("kind", "lang"):
        values = sorted({getattr(p, attr) for p in pairs if getattr(p, attr)})
        for value in values:
            mask = np.array([getattr(p, attr) == value for p in pairs], dtype=np.bool_)
            groups.append(Group(f"  {attr}={value}", scores[mask], same[mask], exact[mask], decisions[mask]))
    return groups
