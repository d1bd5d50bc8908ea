"""Counting the guard's decisions over labelled question pairs (used by bench/quality.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Decision = Literal["direct", "assisted", "miss"]
Scores = npt.NDArray[np.float64]


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


def decide(score: float, direct: float, similar: float) -> Decision:
    """The guard's decision for one score: thresholds are inclusive."""
    if score >= direct:
        return "direct"
    if score >= similar:
        return "assisted"
    return "miss"


def rate(count: int, total: int) -> float | None:
    return count / total if total else None


def summarize(
    scores: Scores,
    same: npt.NDArray[np.bool_],
    exact: npt.NDArray[np.bool_],
    direct: float,
    similar: float,
    served: npt.NDArray[np.bool_] | None = None,
) -> Summary:
    """Count the decisions of a group of pairs, split by their label.

    `served` marks the pairs the guard answers direct (verifier and thresholds together);
    without it a score at or above `direct` is enough (cosine alone).
    """
    is_direct = (scores >= direct) if served is None else (served & (scores >= similar))
    is_assisted = (scores >= similar) & ~is_direct
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
    served: npt.NDArray[np.bool_] | None = None


def make_groups(
    name: str,
    pairs: Sequence[Pair],
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    served: npt.NDArray[np.bool_] | None = None,
) -> list[Group]:
    same = np.array([p.same for p in pairs], dtype=np.bool_)
    groups = [Group(name, scores, same, exact, served)]
    for attr in ("kind", "lang"):
        values = sorted({getattr(p, attr) for p in pairs if getattr(p, attr)})
        for value in values:
            mask = np.array([getattr(p, attr) == value for p in pairs], dtype=np.bool_)
            part = None if served is None else served[mask]
            groups.append(Group(f"  {attr}={value}", scores[mask], same[mask], exact[mask], part))
    return groups
