"""The guard: for a question, find the best entry of its scope and decide.

Exact normalized match first (no embedding call), then cosine similarity through the
index. A question variant is matched as its entry's own question is, and a candidate says which
wording matched (`variant_policy.py` says when a variant's match may be served). Similarity only
proposes candidates: the hit verifier decides whether a candidate's answer serves the question,
read against the wording that matched, and only a verified candidate is served `direct`. `inspect` has
no side effect (staff lookup); `lookup` counts usage, logs the decision with the verdict for
the stats and prunes what it found expired, all queued to be written after the answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta

from memory_guard.core.clock import Clock
from memory_guard.core.decision import Decision
from memory_guard.core.normalize import embedding_text
from memory_guard.core.scope import Scope
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import EXACT, Verdict, Verification
from memory_guard.db.bookkeeping import Bookkeeping, Chore
from memory_guard.embeddings.base import Embedder, Vectors
from memory_guard.hits.floors import ScopeFloors
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.entry import Entry
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.lookups import LoggedLookup, LookupRecord
from memory_guard.memory.store import MemoryStore
from memory_guard.memory.variant import Variant, VariantStatus, VariantStore
from memory_guard.memory.variant_policy import CONFIRMED, held, matchable
from memory_guard.ops.metrics import Metrics
from memory_guard.ops.tracing import child_span
from memory_guard.verify.judge import HitJudge, StoredAnswer
from memory_guard.verify.judge_reads import JudgeReads, judge_reads
from memory_guard.verify.verifier import OfflineVerifier

# What the audit trail records for entries a lookup found expired and removed.
AUTO_PRUNE = Change("memory-guard (auto-prune)", Action.PRUNE)
# ... and for a learned variant the LLM judge confirmed.
JUDGE_CONFIRMS = Change("memory-guard (judge)", Action.CONFIRM_VARIANT)

DIRECT_USAGE = 2
ASSISTED_USAGE = 1


@dataclass(frozen=True, slots=True)
class LookupLimits:
    """How far a lookup looks; what it may serve is the serve policy's."""

    top_k: int  # candidates from the index
    max_age: timedelta  # an entry not updated for this long is no longer served
    auto_prune: bool  # remove the expired entries a lookup finds


@dataclass(frozen=True, slots=True)
class _Wording:
    """An entry's answer under one of its variants' wordings, as the judge reads it."""

    id: int
    question: str
    answer: str


@dataclass(frozen=True, slots=True)
class Candidate:
    entry: Entry
    score: float
    exact: bool = False
    verification: Verification | None = None  # None when not verified (verifier off, or too far)
    variant: Variant | None = None  # the variant whose wording matched; None: the entry's question

    @property
    def wording(self) -> str:
        """The stored question that matched: what the verifier and the judge compare."""
        return self.variant.question if self.variant is not None else self.entry.question

    @property
    def held(self) -> bool:
        """Its wording may not be served (yet): it only grounds the LLM."""
        return held(self.entry, self.variant, self.exact)

    @property
    def stored(self) -> StoredAnswer:
        if self.variant is None:
            return self.entry
        return _Wording(self.entry.id, self.variant.question, self.entry.answer)


@dataclass(slots=True)
class GuardResult:
    decision: Decision
    candidates: list[Candidate] = field(default_factory=list)
    vector: Vectors | None = None
    served: Candidate | None = None  # the candidate answered `direct`, when the decision is direct
    lookup_id: int | None = None  # the lookup log's row, once recorded
    scope_floor: float = 0.0  # the floor the scope's reviews raised, when they did

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


def tokens_of(entry: Entry) -> int:
    """Tokens the answer cost when it was learned: what serving it again saves."""
    usage = entry.metadata.get("usage") or {}
    return int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))


def completion_tokens_of(entry: Entry) -> int:
    """Tokens the answer's own text cost when it was learned: what an LLM that reuses it, rather
    than writing it again with the same prompt, saves."""
    usage = entry.metadata.get("usage") or {}
    return int(usage.get("completion_tokens", 0))


def _held(candidate: Candidate) -> bool:
    return candidate.held


class Guard:
    def __init__(
        self,
        *,
        store: MemoryStore,
        variants: VariantStore,
        index: VectorIndex,
        embedder: Embedder,
        limits: LookupLimits,
        policy: ServePolicy,
        metrics: Metrics,
        clock: Clock,
        bookkeeping: Bookkeeping,
        verifier: OfflineVerifier | None = None,
        judge: HitJudge | None = None,
        judge_reads: JudgeReads = JudgeReads.EVERY_HIT,
        floors: ScopeFloors | None = None,
    ) -> None:
        self.store = store
        self.variants = variants
        self.index = index
        self.embedder = embedder
        self.limits = limits
        self.verifier = verifier
        self.policy = policy
        self.judge = judge
        self.judge_reads = judge_reads
        self.floors = floors
        self._metrics = metrics
        self._clock = clock
        self._bookkeeping = bookkeeping
        self._prunes_queued: set[str] = set()

    async def embed(self, text: str) -> Vectors:
        vectors = await self.embedder.embed([embedding_text(text)])
        vector: Vectors = vectors[0]
        return vector

    async def embed_many(self, texts: Sequence[str]) -> Vectors:
        """One row per text, embedded as `embed` would (politeness left out)."""
        return await self.embedder.embed([embedding_text(text) for text in texts])

    def _decide(self, candidates: list[Candidate], allow_direct: bool, scope_floor: float) -> GuardResult:
        decision, served = self.policy.decide(candidates, allow_direct, scope_floor, _held)
        return GuardResult(decision, candidates, served=served)

    async def _verified(
        self, question: str, candidates: list[Candidate], everyone: bool, scope_floor: float
    ) -> list[Candidate]:
        """The candidates with the verifier's verdicts.

        Staff (`everyone`) see a verdict on every candidate. A lookup needs verdicts only on the
        candidates whose score could be served, and only until one serves: the best one is
        verified alone first, as it usually settles the lookup (the others' verdicts can cost
        an embedding call or a larger cross-encoder run).
        """
        if self.verifier is None:
            return candidates
        floor = self.policy.verify_from(scope_floor)
        result = list(candidates)
        todo = [i for i, c in enumerate(candidates) if everyone or c.score >= floor]
        already_read = 0
        if not everyone and todo:
            head = todo.pop(0)
            result[head] = (await self._verify(question, [candidates[head]]))[0]
            if self.policy.serves(result[head], scope_floor) and not self._judged_later(result[head]):
                return result
            # The cross-encoder reads at most its top candidates per question, over both calls.
            verification = result[head].verification
            already_read = int(verification is not None and verification.cross_encoder is not None)
        checked = await self._verify(question, [candidates[i] for i in todo], already_read)
        for i, candidate in zip(todo, checked, strict=True):
            result[i] = candidate
        return result

    def _judged_later(self, candidate: Candidate) -> bool:
        """Whether the judge will read this candidate: its verdict is then not the last word, and
        the candidates after it need their own verdicts in case the judge says no (one left
        without any would be served on its score alone)."""
        return self.judge is not None and judge_reads(candidate.verification, self.judge_reads)

    async def _verify(
        self, question: str, candidates: list[Candidate], already_read: int = 0
    ) -> list[Candidate]:
        assert self.verifier is not None
        if not candidates:
            return []
        verdicts = await self.verifier.verify_many(
            question, [(c.wording, c.score) for c in candidates], already_read=already_read
        )
        return [replace(c, verification=v) for c, v in zip(candidates, verdicts, strict=True)]

    async def _judged(
        self, tenant: str, question: str, candidates: list[Candidate], call: bool, scope_floor: float
    ) -> list[Candidate]:
        """Ask the LLM judge about the candidates it reads (verify/judge_reads.py) that a yes would
        serve, best score first, until one candidate serves (the decision takes the first that does)."""
        if self.judge is None:
            return candidates
        judged = list(candidates)
        floor = self.policy.verify_from(scope_floor)
        for i, candidate in enumerate(candidates):
            if candidate.held:
                verification = candidate.verification
                if verification is None or verification.verdict is Verdict.REJECT or candidate.score < floor:
                    break  # it could not serve, confirmed or not
                candidate = judged[i] = await self._confirmed(tenant, candidate, call)
                if candidate.held:
                    break  # the decision stops there either way
            verification = candidate.verification
            if (
                verification is None
                or candidate.score < floor
                or not judge_reads(verification, self.judge_reads)
            ):
                if self.policy.serves(candidate, scope_floor):
                    break
                continue
            verdict = await self.judge.judge(tenant, candidate.stored, question, call=call)
            if verdict is not None:
                # The judge's verdict decides (without one, the local verdict stands); staff still
                # see what the cross-encoder read.
                verdict = replace(verdict, cross_encoder=verification.cross_encoder)
                judged[i] = replace(candidate, verification=verdict)
            if self.policy.serves(judged[i], scope_floor):
                break
        return judged

    async def _confirmed(self, tenant: str, candidate: Candidate, call: bool) -> Candidate:
        """A held learned variant put to the judge: does its entry's answer, stored for the entry's
        own question, serve the variant's wording? A yes is the wording's second, independent
        confirmation (the first was the LLM's choice of that entry for it): from then on it serves
        as any confirmed variant does, this lookup included. The judge reads the pair the LLM
        paired, not the question asked, so its yes vouches for the variant itself; the question
        asked is still read against the variant's wording as for any other match."""
        variant = candidate.variant
        if self.judge is None or variant is None or variant.status is not VariantStatus.LEARNED:
            return candidate
        verdict = await self.judge.judge(tenant, candidate.entry, variant.question, call=call)
        if verdict is None or verdict.verdict is not Verdict.ACCEPT:
            return candidate
        if call:  # a lookup: recorded after the answer (staff's `inspect` changes nothing)
            entry_id = candidate.entry.id

            async def confirm() -> None:
                now = self._clock()
                await self.variants.confirm(tenant, entry_id, variant.id, CONFIRMED, now, JUDGE_CONFIRMS)

            await self._bookkeeping.put(Chore(f"judge confirms variant {variant.id}", confirm))
        confirmed = replace(variant, confirmations=variant.confirmations + 1)
        return replace(candidate, variant=confirmed)

    async def inspect(
        self, scope: Scope, question: str, allow_direct: bool = True, k: int | None = None
    ) -> GuardResult:
        """What the guard would do, with no side effect (the judge's cached verdicts only)."""
        result, _ = await self._find(scope, question, allow_direct, k or self.limits.top_k, judge_calls=False)
        return result

    async def lookup(self, scope: Scope, question: str, allow_direct: bool = True) -> GuardResult:
        started = time.perf_counter()
        with child_span("memory.lookup"):
            result, expired = await self._find(
                scope, question, allow_direct, self.limits.top_k, judge_calls=True
            )
        if expired and self.limits.auto_prune and scope.tenant not in self._prunes_queued:
            self._prunes_queued.add(scope.tenant)
            tenant = scope.tenant
            await self._bookkeeping.put(Chore(f"auto-prune {tenant}", lambda: self._auto_prune(tenant)))
        result.lookup_id = await self._account(scope, question, result)
        self._metrics.lookup_seconds.observe(time.perf_counter() - started)
        return result

    async def _auto_prune(self, tenant: str) -> None:
        self._prunes_queued.discard(tenant)
        await self.prune(tenant, AUTO_PRUNE)

    async def prune(self, tenant: str, change: Change) -> int:
        """Delete the tenant's expired entries; each keeps an audit event with its last state."""
        now = self._clock()
        removed = await self.store.delete_expired(tenant, now - self.limits.max_age, now, change)
        for entry_id in removed:
            self.index.remove(entry_id)
        if removed:
            self._metrics.cache_operations.labels(operation="prune", type="response").inc(len(removed))
        return len(removed)

    async def _find(
        self, scope: Scope, question: str, allow_direct: bool, k: int, judge_calls: bool
    ) -> tuple[GuardResult, list[int]]:
        now = self._clock()
        max_age = self.limits.max_age
        wordings = await self.variants.find_wordings(scope.tenant, scope.key(question))
        exact = [
            Candidate(entry, 1.0, exact=True, verification=EXACT, variant=variant)
            for entry, variant in wordings
            if matchable(entry, now, max_age)
        ]
        if exact:
            # The entry's own question first, then a wording that may serve; a held one only grounds.
            exact_hit = next((c for c in exact if not c.held), exact[0])
            if exact_hit.held and allow_direct:
                exact_hit = await self._confirmed(scope.tenant, exact_hit, judge_calls)
            return self._decide([exact_hit], allow_direct, scope_floor=0.0), []
        vector = await self.embed(question)
        found = self.index.search(scope, vector, k, now.timestamp())
        entries = await self.store.get_many(scope.tenant, [hit.entry_id for hit in found.hits])
        through = [hit.variant_id for hit in found.hits if hit.variant_id is not None]
        variants = await self.variants.get_many(scope.tenant, through) if through else {}
        candidates: list[Candidate] = []
        for hit in found.hits:
            entry = entries.get(hit.entry_id)
            variant = variants.get(hit.variant_id) if hit.variant_id is not None else None
            if entry is None or not matchable(entry, now, max_age):
                continue
            if hit.variant_id is not None and (variant is None or variant.entry_id != entry.id):
                continue  # removed since the index was read
            candidates.append(Candidate(entry, hit.score, variant=variant))
        scope_floor = self.floors.floor(scope) if self.floors is not None else 0.0
        if allow_direct:  # verdicts decide a direct answer; grounding needs none
            with child_span("memory.verify"):
                candidates = await self._verified(question, candidates, not judge_calls, scope_floor)
                candidates = await self._judged(scope.tenant, question, candidates, judge_calls, scope_floor)
        result = self._decide(candidates, allow_direct, scope_floor)
        result.scope_floor = scope_floor
        result.vector = vector
        return result, found.expired

    async def _account(self, scope: Scope, question: str, result: GuardResult) -> int:
        """Queue the decision's log row and usage (written after the answer); the row's id."""
        now = self._clock()
        shown = result.served or result.best
        tokens_saved, usage, used_ids = 0, 0, []
        if result.served is not None:
            tokens_saved, usage, used_ids = (
                tokens_of(result.served.entry),
                DIRECT_USAGE,
                [result.served.entry.id],
            )
        elif result.decision is Decision.ASSISTED:
            usage = ASSISTED_USAGE
            used_ids = [c.entry.id for c in self.policy.grounding(result.candidates)]
        verification = shown.verification if shown else None
        record = LookupRecord(
            scope=scope,
            decision=result.decision.value,
            entry_id=shown.entry.id if shown else None,
            variant_id=shown.variant.id if shown and shown.variant else None,
            score=shown.score if shown else None,
            tokens_saved=tokens_saved,
            question=question,
            verdict=verification.verdict.value if verification else None,
            reason=verification.reason if verification else None,
            probability=verification.probability if verification else None,
            verified_by=verification.by if verification else None,
        )
        lookup_id = self.store.reserve_lookup_id()
        await self._bookkeeping.put(LoggedLookup(lookup_id, record, used_ids, usage, now))
        if verification is not None:
            self._metrics.verdicts.labels(verdict=verification.verdict.value, by=verification.by).inc()
        self._metrics.lookups.labels(decision=result.decision.value).inc()
        operation = "hit" if result.decision is Decision.DIRECT else "miss"
        self._metrics.cache_operations.labels(operation=operation, type="response").inc()
        return lookup_id
