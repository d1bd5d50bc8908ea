"""Prometheus counters, one registry per app instance (nothing global at import time)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.lookups = Counter(
            "memory_guard_lookups", "Guard decisions.", ["decision"], registry=self.registry
        )
        self.cache_operations = Counter(
            "memory_cache_operations",
            "Operations on the memory caches (hit, miss, learn, skip_learn, prune).",
            ["operation", "type"],
            registry=self.registry,
        )
        self.llm_calls = Counter(
            "memory_guard_llm_calls",
            "Chat completion requests sent upstream.",
            ["outcome"],
            registry=self.registry,
        )
        self.tokens = Counter(
            "memory_guard_llm_tokens", "Tokens reported by the upstream.", ["kind"], registry=self.registry
        )
        self.verdicts = Counter(
            "memory_guard_verifier_verdicts",
            "Verdicts on the candidate each lookup served or would have served.",
            ["verdict", "by"],
            registry=self.registry,
        )
        self.lookup_seconds = Histogram(
            "memory_guard_lookup_seconds",
            "Time of one guard lookup (embedding included).",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
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
        for decision in ("direct", "assisted", "miss"):
            self.lookups.labels(decision=decision)

    def render(self) -> bytes:
        return generate_latest(self.registry)
