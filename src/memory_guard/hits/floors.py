"""Per-scope direct floors learned from reviewed served answers.

A scope whose reviewed served answers show, with 95% confidence, a wrong-answer rate above the
bound gets a floor: from then on the guard serves a non-exact candidate there only at a score the
reviews vouch for. The rule only ever raises a floor, and only on evidence: the Wilson lower bound
of the wrong rate among the reviewed answers at or above a score must exceed the bound for that
score to be refused. (Reviews are not a random sample, and nothing below a floor is served to be
reviewed again, so a floor stays until its reviews change.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory_guard.core.scope import Scope
from memory_guard.hits.accuracy import wilson_interval


@dataclass(frozen=True, slots=True)
class ScopeFloor:
    scope: Scope
    floor: float
    reviewed: int
    wrong: int

    def to_public(self) -> dict[str, object]:
        return {
            "agent": self.scope.agent,
            "project": self.scope.project,
            "phase": self.scope.phase,
            "floor": round(self.floor, 4),
            "reviewed": self.reviewed,
            "wrong": self.wrong,
        }


def learned_floor(reviews: Sequence[tuple[float, bool]], bound: float) -> float | None:
    """The lowest reviewed score from which the answers are not shown to be wrong more often than
    `bound`, or None when the reviews show no excess at all. `reviews` are (score, wrong) pairs."""
    ordered = sorted(reviews)
    wrong_from = [0] * (len(ordered) + 1)  # wrong answers at index i and above
    for i in range(len(ordered) - 1, -1, -1):
        wrong_from[i] = wrong_from[i + 1] + int(ordered[i][1])
    for i, (score, _) in enumerate(ordered):
        if i and ordered[i - 1][0] == score:
            continue  # a floor sits between two scores, never inside a tie
        low, _ = wilson_interval(wrong_from[i], len(ordered) - i)
        if low <= bound:
            return None if i == 0 else score
    # Even the best-scored answers are shown wrong: nothing up to them is served any more.
    return math.nextafter(ordered[-1][0], math.inf) if ordered else None


class ScopeFloors:
    """The raised floors, in memory; the guard asks one per lookup."""

    def __init__(self, bound: float) -> None:
        self.bound = bound
        self._floors: dict[Scope, ScopeFloor] = {}

    def floor(self, scope: Scope) -> float:
        found = self._floors.get(scope)
        return found.floor if found else 0.0

    def learn(self, scope: Scope, reviews: Sequence[tuple[float, bool]]) -> None:
        floor = learned_floor(reviews, self.bound)
        if floor is None:
            self._floors.pop(scope, None)
            return
        wrong = sum(1 for _, is_wrong in reviews if is_wrong)
        self._floors[scope] = ScopeFloor(scope, floor, len(reviews), wrong)

    def learn_all(self, reviews: Iterable[tuple[Scope, float, bool]]) -> None:
        by_scope: dict[Scope, list[tuple[float, bool]]] = {}
        for scope, score, wrong in reviews:
            by_scope.setdefault(scope, []).append((score, wrong))
        for scope, scored in by_scope.items():
            self.learn(scope, scored)

    def raised(self, tenant: str) -> list[ScopeFloor]:
        return sorted(
            (f for f in self._floors.values() if f.scope.tenant == tenant),
            key=lambda f: (f.scope.agent, f.scope.project, f.scope.phase),
        )
