"""The guard: for a question, find the best entry of its scope and decide.

Exact normalized match first (no embedding call), then cosine similarity through the
index. `inspect` has no side effect (staff lookup); `lookup` counts usage, logs the
decision for the stats and prunes what it found expired.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta

from memory_guard.clock import Clock
from memory_guard.embeddings.base import Embedder, Vectors
from memory_guard.memory.entry import Decision, Entry, Scope
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.lookups import LookupRecord
from memory_guard.memory.normalize import key_hash
from memory_guard.memory.storage import MemoryStore
from memory_guard.ops.metrics import Metrics

DIRECT_USAGE = 2
ASSISTED_USAGE = 1


@dataclass(frozen=True, slots=True)
class Thresholds:
    direct: float
    similar: float
    top_k: int
    max_age: timedelta
    auto_prune: bool


@dataclass(frozen=True, slots=True)
class Candidate:
    entry: Entry
    score: float
    exact: bool = False


@dataclass(slots=True)
class GuardResult:
    decision: Decision
    candidates: list[Candidate] = field(default_factory=list)
    vector: Vectors | None = None

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    def matches(self, similar: float) -> list[Candidate]:
        """The candidates close enough to be given to the LLM as grounding."""
        return [c for c in self.candidates if c.score >= similar]


def tokens_of(entry: Entry) -> int:
    """Tokens the answer cost when it was learned: what serving it again saves."""
    usage = entry.metadata.get("usage") or {}
    return int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))


class Guard:
    def __init__(
        self,
        store: MemoryStore,
        index: VectorIndex,
        embedder: Embedder,
        thresholds: Thresholds,
        metrics: Metrics,
        clock: Clock,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.thresholds = thresholds
        self._metrics = metrics
        self._clock = clock

    async def embed(self, text: str) -> Vectors:
        vectors = await self.embedder.embed([text])
        vector: Vectors = vectors[0]
        return vector

    def _decide(self, best: Candidate | None, allow_direct: bool) -> Decision:
        if best is None or best.score < self.thresholds.similar:
            return Decision.MISS
        if allow_direct and best.score >= self.thresholds.direct:
            return Decision.DIRECT
        return Decision.ASSISTED

    async def inspect(
        self, scope: Scope, question: str, allow_direct: bool = True, k: int | None = None
    ) -> GuardResult:
        """What the guard would do, with no side effect."""
        result, _ = await self._find(scope, question, allow_direct, k or self.thresholds.top_k)
        return result

    async def lookup(self, scope: Scope, question: str, allow_direct: bool = True) -> GuardResult:
        started = time.perf_counter()
        result, expired = await self._find(scope, question, allow_direct, self.thresholds.top_k)
        if expired and self.thresholds.auto_prune:
            await self.prune(scope.tenant)
        await self._account(scope, result)
        self._metrics.lookup_seconds.observe(time.perf_counter() - started)
        return result

    async def prune(self, tenant: str) -> int:
        now = self._clock()
        removed = await self.store.delete_expired(tenant, now - self.thresholds.max_age, now)
        for entry_id in removed:
            self.index.remove(entry_id)
        if removed:
            self._metrics.cache_operations.labels(operation="prune", type="response").inc(len(removed))
        return len(removed)

    async def _find(
        self, scope: Scope, question: str, allow_direct: bool, k: int
    ) -> tuple[GuardResult, list[int]]:
        now = self._clock()
        key = key_hash(scope.tenant, scope.agent, scope.project, scope.phase, question)
        exact = [
            e
            for e in await self.store.find_by_key(scope.tenant, key)
            if e.servable(now, self.thresholds.max_age)
        ]
        if exact:
            best = Candidate(exact[0], 1.0, exact=True)
            return GuardResult(self._decide(best, allow_direct), [best]), []
        vector = await self.embed(question)
        found = self.index.search(scope, vector, k, now.timestamp())
        entries = await self.store.get_many(scope.tenant, [hit.entry_id for hit in found.hits])
        candidates = [
            Candidate(entries[hit.entry_id], hit.score)
            for hit in found.hits
            if hit.entry_id in entries and entries[hit.entry_id].servable(now, self.thresholds.max_age)
        ]
        top = candidates[0] if candidates else None
        return GuardResult(self._decide(top, allow_direct), candidates, vector), found.expired

    async def _account(self, scope: Scope, result: GuardResult) -> None:
        now = self._clock()
        best = result.best
        tokens_saved, usage, used_ids = 0, 0, []
        if result.decision is Decision.DIRECT and best is not None:
            tokens_saved, usage, used_ids = tokens_of(best.entry), DIRECT_USAGE, [best.entry.id]
        elif result.decision is Decision.ASSISTED:
            usage = ASSISTED_USAGE
            used_ids = [c.entry.id for c in result.matches(self.thresholds.similar)]
        record = LookupRecord(
            scope=scope,
            decision=result.decision.value,
            entry_id=best.entry.id if best else None,
            score=best.score if best else None,
            tokens_saved=tokens_saved,
        )
        await self.store.record_lookup(record, used_ids, usage, now)
        self._metrics.lookups.labels(decision=result.decision.value).inc()
        operation = "hit" if result.decision is Decision.DIRECT else "miss"
        self._metrics.cache_operations.labels(operation=operation, type="response").inc()
