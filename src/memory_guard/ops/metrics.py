"""Prometheus counters, one registry per app instance (nothing global at import time)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from memory_guard.core.decision import DECISIONS

METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.lookups = Counter(
            "memory_guard_lookups",
            "Clients' questions looked up in memory, by the guard's decision (staff lookups not counted).",
            ["decision"],
            registry=self.registry,
        )
        self.cache_operations = Counter(
            "memory_cache_operations",
            "Clients' lookups answered from memory (operation=hit) or not (miss), and expired entries"
            " pruned (prune); type is always response.",
            ["operation", "type"],
            registry=self.registry,
        )
        self.llm_calls = Counter(
            "memory_guard_llm_calls",
            "Turns of the agent loop sent to the answering model, by outcome; a turn's retries count once"
            " and the judge's calls are not counted.",
            ["outcome"],
            registry=self.registry,
        )
        self.tokens = Counter(
            "memory_guard_llm_tokens",
            "Tokens the answering model reported for the agent loop's turns (not the judge's).",
            ["kind"],
            registry=self.registry,
        )
        self.verdicts = Counter(
            "memory_guard_verifier_verdicts",
            "Verdicts on the candidate each client lookup served or would have served.",
            ["verdict", "by"],
            registry=self.registry,
        )
        self.lookup_seconds = Histogram(
            "memory_guard_lookup_seconds",
            "Time of one client lookup (embedding, verification and judge included).",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "memory_guard_request_seconds",
            "Time from a question's arrival to the end of its answer (the whole stream), by the guard's"
            " decision.",
            ["decision"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0),
            registry=self.registry,
        )
        self.tokens_saved = Counter(
            "memory_guard_upstream_tokens_saved",
            "Upstream tokens the answers from memory spared: for a direct answer, the prompt and"
            " completion tokens its entry cost when it was learned (an entry written by staff or"
            " imported records none and counts 0); for a stored answer the LLM reused, the tokens of"
            " its text less those of the pick. The same figure as tokens_saved in the stats.",
            registry=self.registry,
        )
        self.bookkeeping = Counter(
            "memory_guard_bookkeeping_rows",
            "Rows written after their answers (lookup log, usage, history), or dropped after retries.",
            ["outcome"],
            registry=self.registry,
        )
        self.embedding_cache = Counter(
            "memory_guard_embedding_cache",
            "Texts the embedding cache answered (hit) or passed to the embedder (miss).",
            ["result"],
            registry=self.registry,
        )
        for outcome in ("written", "dropped"):
            self.bookkeeping.labels(outcome=outcome)
        for result in ("hit", "miss"):
            self.embedding_cache.labels(result=result)
        for decision in DECISIONS:
            self.lookups.labels(decision=decision)
            self.request_seconds.labels(decision=decision)

    def render(self) -> bytes:
        return generate_latest(self.registry)
