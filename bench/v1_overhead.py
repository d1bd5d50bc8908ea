"""What `POST /v1/chat/completions` adds to the time to first token of a miss, side by side in one run.

Three processes on loopback: the bench's quick streaming upstream (bench/upstream.py: answers at once
with a fixed reply), `memory-guard serve` (bench/service.py: a temporary SQLite file, `LLM_BASE_URL`
on that upstream, an LLM key, the default local embedder unless `--embedder` names another, the other
settings at their defaults) and this one, the client. Before timing, `--entries` FAQ entries are
stored through `POST /staff/memory`, so that a miss searches an index that is not empty.

The official `openai` client (sync, streaming, no retries) then sends `--n` new questions, each to
(a) the upstream straight and (b) memory-guard's `/v1` (`Cache-Control: no-store`: nothing is learned,
every question stays new), alternating which goes first; each is timed from the call to its first
chunk with content. Each round also times one embedding of the same question in this process, with
the embedder the service was built with (`embed()`, its worker thread included, no cache). `--warmup`
rounds come first, untimed.

Printed: p50 and p90 of (a), of (b) per decision (the `x-memory-guard-decision` header: a question
that scores above the similarity threshold against the FAQ is `assisted`, timed apart), of the
embedding; the service's own mean lookup time over the timed rounds (its `/metrics`, embedding
included); the added time to first token, p50(b miss) - p50(a), the median of the same difference
taken question by question, and the first minus the embedding's p50, against the aim of 2 ms
(issue 15); and, as an extra, the time to first token of a direct hit: one entry stored, its question
asked `--n` times. Figures only: nothing is asserted about speed.
When the service has no `/v1` route (404), the /v1 figures are said to be unavailable.

Run: python bench/v1_overhead.py [--n 200] [--warmup 20] [--entries 200] [--embedder local|hashing|MODEL]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import numpy as np  # noqa: E402
import openai  # noqa: E402

from bench.figures import setup_line  # noqa: E402
from bench.latency_http import insert_faqs  # noqa: E402
from bench.load_data import miss_questions  # noqa: E402
from bench.load_setup import fake_upstream  # noqa: E402
from bench.load_traffic import API_KEYS, CLIENT_KEY, STAFF_KEY  # noqa: E402
from bench.questions import faq_questions  # noqa: E402
from bench.service import service_process  # noqa: E402
from memory_guard.core.normalize import embedding_text  # noqa: E402
from memory_guard.embeddings.base import Embedder  # noqa: E402
from memory_guard.embeddings.factory import build_embedder  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402

AIM_MS = 2.0
MODEL = "bench-model"
UPSTREAM_KEY = "sk-bench-upstream"
DECISION_HEADER = "x-memory-guard-decision"
HIT_QUESTION = "Quel est le numéro du service client pour une commande passée en magasin ?"
HIT_ANSWER = "Le service client répond au 01 23 45 67 89, du lundi au vendredi."


class BenchFailure(RuntimeError):
    """An answer that is not the one asked for: the figures would lie, the run stops."""


@dataclass(slots=True)
class Timings:
    """Seconds per sample, kept per label (the decision, for the /v1 arm)."""

    by_label: dict[str, list[float]] = field(default_factory=dict)

    def add(self, label: str, seconds: float) -> None:
        self.by_label.setdefault(label, []).append(seconds)

    def get(self, label: str) -> list[float]:
        return self.by_label.get(label, [])


def ms(seconds: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(seconds, dtype=np.float64) * 1000.0, q))


def spread(seconds: Sequence[float]) -> str:
    return f"p50={ms(seconds, 50):.2f} ms p90={ms(seconds, 90):.2f} ms (n={len(seconds)})"


def first_token(client: openai.OpenAI, question: str, headers: dict[str, str]) -> tuple[float, str]:
    """Seconds from the call to the first chunk with content, the whole stream read; and the
    decision header (empty when there is none, as from the upstream)."""
    start = time.perf_counter()
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL,
        messages=[{"role": "user", "content": question}],
        stream=True,
        extra_headers=headers,
    )
    first: float | None = None
    for chunk in raw.parse():
        if first is None and any(choice.delta.content for choice in chunk.choices):
            first = time.perf_counter() - start
    if first is None:
        raise BenchFailure(f"no content streamed for {question!r} from {client.base_url}")
    return first, raw.headers.get(DECISION_HEADER, "")


async def _timed_embed(embedder: Embedder, text: str) -> float:
    start = time.perf_counter()
    await embedder.embed([text])
    return time.perf_counter() - start


def service_settings(database: Path, upstream_url: str, embedder: str) -> Settings:
    chosen: dict[str, Any] = {"embedding_provider": "local"}
    if embedder == "hashing":
        chosen = {"embedding_provider": "hashing"}
    elif embedder != "local":
        chosen["embedding_model"] = embedder
    return Settings(
        _env_file=None,
        memory_db_path=database,
        api_keys=API_KEYS,
        llm_base_url=upstream_url,
        llm_api_key=UPSTREAM_KEY,
        llm_max_retries=0,
        llm_timeout_s=20.0,
        **chosen,
    )


def openai_client(base_url: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=30.0)


def staff_client(base_url: str) -> httpx.Client:
    return httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {STAFF_KEY}"}, timeout=60)


@dataclass(slots=True)
class Run:
    straight: list[float] = field(default_factory=list)
    via: Timings = field(default_factory=Timings)
    embed: list[float] = field(default_factory=list)
    pairs: list[float] = field(default_factory=list)  # (b) - (a) of the same question, misses only
    hits: list[float] = field(default_factory=list)
    lookups: tuple[float, float] = (0.0, 0.0)  # the service's lookup seconds and count, timed rounds
    v1_missing: str = ""  # why the /v1 arm could not run; empty when it did


def lookup_totals(service: httpx.Client) -> tuple[float, float]:
    """The service's own `memory_guard_lookup_seconds` histogram: its sum and count so far."""
    text = service.get("/metrics").raise_for_status().text
    found = dict.fromkeys(("_sum", "_count"), 0.0)
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        for suffix in found:
            if name == f"memory_guard_lookup_seconds{suffix}":
                found[suffix] = float(value)
    return found["_sum"], found["_count"]


def measure(
    upstream: openai.OpenAI,
    guard: openai.OpenAI,
    embedder: Embedder,
    questions: Sequence[str],
    warmup: int,
    service: httpx.Client,
) -> Run:
    run = Run()
    loop = asyncio.new_event_loop()
    no_store = {"Cache-Control": "no-store"}
    try:
        try:  # a question of its own: should no-store be ignored, it is the one learned
            first_token(guard, f"{questions[0]} (probe)", no_store)
        except openai.NotFoundError as error:
            run.v1_missing = f"POST /v1/chat/completions answered {error.status_code}"
        before = lookup_totals(service)
        for n, question in enumerate(questions):
            if n == warmup:
                before = lookup_totals(service)
            order = ("a", "b") if n % 2 == 0 else ("b", "a")
            got: dict[str, tuple[float, str]] = {}
            for arm in order:
                if arm == "a":
                    got[arm] = first_token(upstream, question, {})
                elif not run.v1_missing:
                    got[arm] = first_token(guard, question, no_store)
            embed_s = loop.run_until_complete(_timed_embed(embedder, embedding_text(question)))
            if n < warmup:
                continue
            run.straight.append(got["a"][0])
            run.embed.append(embed_s)
            if "b" in got:
                seconds, decision = got["b"]
                run.via.add(decision or "(no decision header)", seconds)
                if decision == "miss":
                    run.pairs.append(seconds - got["a"][0])
    finally:
        loop.close()
    after = lookup_totals(service)
    run.lookups = (after[0] - before[0], after[1] - before[1])
    return run


def direct_hits(guard: openai.OpenAI, staff: httpx.Client, count: int, warmup: int) -> list[float]:
    """One entry stored, its question asked `warmup + count` times: the last `count` timed."""
    reply = staff.post("/staff/memory", json={"question": HIT_QUESTION, "answer": HIT_ANSWER})
    if reply.status_code != 201:
        raise BenchFailure(f"POST /staff/memory answered {reply.status_code}: {reply.text[:300]}")
    seconds: list[float] = []
    for n in range(warmup + count):
        took, decision = first_token(guard, HIT_QUESTION, {})
        if decision != "direct":
            raise BenchFailure(f"the stored question was answered {decision!r}, not direct")
        if n >= warmup:
            seconds.append(took)
    return seconds


def report(run: Run, embedder_id: str) -> list[str]:
    lines = [f"a upstream straight: first token {spread(run.straight)}"]
    lines.append(f"embedding in this process ({embedder_id}): {spread(run.embed)}")
    if run.v1_missing:
        lines.append(f"b /v1: unavailable, {run.v1_missing}; no /v1 figure")
        return lines
    for decision, seconds in sorted(run.via.by_label.items()):
        lines.append(f"b /v1 {decision}: first token {spread(seconds)}")
    total_s, count = run.lookups
    if count:
        lines.append(
            f"b the service's own lookups (embedding included), mean from its /metrics: "
            f"{total_s / count * 1000:.2f} ms (n={count:.0f})"
        )
    misses = run.via.get("miss")
    if not misses:
        lines.append("added: no question was a miss through /v1; no added figure")
    else:
        added = ms(misses, 50) - ms(run.straight, 50)
        beyond = added - ms(run.embed, 50)
        verdict = "within" if beyond <= AIM_MS else "over"
        paired = statistics.median(run.pairs) * 1000
        lines.append(f"added first token p50 (b miss - a): {added:.2f} ms")
        lines.append(f"median of the paired differences (b miss - a, same question): {paired:.2f} ms")
        lines.append(f"added beyond one embedding, p50: {beyond:.2f} ms, aim <= {AIM_MS:.0f} ms: {verdict}")
    if run.hits:
        lines.append(f"c /v1 direct hit, the same question repeated: first token {spread(run.hits)}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=200, help="timed questions per arm (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed rounds first (default 20)")
    parser.add_argument("--entries", type=int, default=200, help="FAQ entries stored first (default 200)")
    parser.add_argument(
        "--embedder",
        default="local",
        help="'local' (the default local model), 'hashing' (tests' n-grams) or a local model's name",
    )
    args = parser.parse_args(argv)
    if args.n < 1 or args.warmup < 0 or args.entries < 0:
        parser.error("--n must be at least 1, --warmup and --entries at least 0")
    print(setup_line(), flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="mg-v1-overhead-") as tmp,
        fake_upstream(Path(tmp)) as upstream_url,
    ):
        settings = service_settings(Path(tmp) / "v1.db", upstream_url, args.embedder)
        embedder = build_embedder(settings)
        with (
            service_process(settings) as server,
            staff_client(server.base_url) as staff,
            openai_client(upstream_url, UPSTREAM_KEY) as upstream,
            openai_client(f"{server.base_url}/v1", CLIENT_KEY) as guard,
        ):
            stored, _, model_id = (
                insert_faqs(staff, faq_questions(args.entries)) if args.entries else ([], [], "")
            )
            print(
                f"setup: embedder={embedder.model_id} entries={len(stored)} openai={openai.__version__} "
                f"upstream={upstream_url} service={server.base_url} (three processes)",
                flush=True,
            )
            if model_id and model_id != embedder.model_id:
                raise BenchFailure(
                    f"the service stores {model_id}, this process embeds with {embedder.model_id}"
                )
            questions = miss_questions(args.warmup + args.n)
            run = measure(upstream, guard, embedder, questions, args.warmup, staff)
            if not run.v1_missing:
                run.hits = direct_hits(guard, staff, args.n, min(args.warmup, 5))
        asyncio.run(embedder.aclose())
    for line in report(run, embedder.model_id):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
