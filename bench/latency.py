"""Latency of a memory lookup: the index search alone, and a direct hit end to end over HTTP.

Two parts, one line per figure:

1. `VectorIndex.search` alone (k=3) over random unit float32 vectors of dimension 384 (seeded
   numpy RNG): p50/p99 in ms over random queries at 10,000 and 100,000 entries in one scope,
   and 100,000 entries spread over 100 scopes (a lookup only reads its own scope). Also the
   build time (one `put` per entry, as the service loads its store) and the matrix's memory.
2. A direct hit end to end: `memory-guard serve` in its own process (temporary SQLite file, one
   client and one staff key, the LOCAL embedding model, `llm_base_url` on a loopback port that
   refuses connections so an accidental LLM call fails the run). FAQ entries are inserted
   through `POST /staff/memory`, then `POST /chat` is timed (keep-alive httpx client, whole SSE
   stream read) for two kinds of repeated questions, never byte-identical to the stored one:
     (a) exact: the same question in another case or without its closing "?" (no embedding);
     (b) cosine: the question with a trailing "please"/"svp", kept only when
         `POST /staff/memory/lookup` says `direct`, not exact, on the intended entry.
   Every timed stream must be `cached_response` then `done` with decision `direct`.

Run:  python bench/latency.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the app harness of the tests is reused here
    sys.path.insert(0, str(ROOT))

from tests.server import parse_sse  # noqa: E402

from bench.questions import Faq, Probe, faq_questions, qualify  # noqa: E402
from bench.service import refusing_port, service_process  # noqa: E402
from memory_guard.core.decision import Decision  # noqa: E402
from memory_guard.core.scope import Scope  # noqa: E402
from memory_guard.memory.index import VectorIndex  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402

Vectors = npt.NDArray[np.float32]

DIMENSION = 384
TOP_K = 3
SEED = 20240611
CREATED_TS = 1_700_000_000.0
NOW_TS = CREATED_TS + 3600.0
CLIENT_KEY = "bench-client-key"
STAFF_KEY = "bench-staff-key"
TENANT = "bench"


@dataclass(frozen=True, slots=True)
class Sizes:
    index_entries: tuple[int, ...]  # entries in ONE scope, one run each
    index_queries: int
    spread_entries: int  # entries over `spread_scopes` scopes; 0 skips that run
    spread_scopes: int
    faq_entries: int
    chat_requests: int  # timed requests per kind
    warmup: int


FULL = Sizes(
    index_entries=(10_000, 100_000),
    index_queries=2_000,
    spread_entries=100_000,
    spread_scopes=100,
    faq_entries=1_000,
    chat_requests=300,
    warmup=20,
)
QUICK = Sizes(
    index_entries=(1_000, 5_000),
    index_queries=200,
    spread_entries=5_000,
    spread_scopes=10,
    faq_entries=40,
    chat_requests=15,
    warmup=4,
)


# ---------------------------------------------------------------- figures


def percentiles_ms(seconds: Sequence[float] | npt.NDArray[np.float64]) -> tuple[float, float]:
    """p50 and p99 (linear interpolation) of durations given in seconds, in milliseconds."""
    values = np.asarray(seconds, dtype=np.float64) * 1000.0
    if values.size == 0:
        raise ValueError("no measurements")
    p50, p99 = np.percentile(values, [50, 99])
    return float(p50), float(p99)


def figure(name: str, seconds: Sequence[float] | npt.NDArray[np.float64], **labels: object) -> str:
    p50, p99 = percentiles_ms(seconds)
    tags = " ".join(f"{key}={value}" for key, value in labels.items())
    return f"{name} {tags} n={len(seconds)}: p50={p50:.3f} ms p99={p99:.3f} ms"


def setup_line() -> str:
    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    return (
        f"setup: cpus={cpus} usable={usable} python={platform.python_version()} "
        f"numpy={np.__version__} platform={platform.platform()}"
    )


# ---------------------------------------------------------------- part 1: the index alone


def random_unit(rng: np.random.Generator, rows: int, dimension: int) -> Vectors:
    matrix = rng.standard_normal((rows, dimension), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


@dataclass(frozen=True, slots=True)
class IndexRun:
    entries: int
    scopes: int
    build_s: float
    live_bytes: int
    allocated_bytes: int
    search_s: npt.NDArray[np.float64]


def matrix_bytes(index: VectorIndex) -> int:
    """Bytes of the vector buffers as allocated (row capacity grows by doubling)."""
    # The buffers are private to the index; reading their size is harmless and is what the
    # service holds in memory for this model.
    return sum(rows.vectors.nbytes for rows in index._scopes.values())


def bench_index(entries: int, scopes: int, queries: int, rng: np.random.Generator) -> IndexRun:
    all_scopes = [Scope(TENANT, f"agent-{i}" if scopes > 1 else "default") for i in range(scopes)]
    vectors = random_unit(rng, entries, DIMENSION)
    index = VectorIndex("bench/random-unit", DIMENSION)
    started = time.perf_counter()
    for row in range(entries):
        index.put(all_scopes[row % scopes], row + 1, vectors[row], CREATED_TS, math.inf)
    build_s = time.perf_counter() - started

    asked = random_unit(rng, queries, DIMENSION)
    asked_scopes = rng.integers(0, scopes, size=queries)
    for i in range(min(20, queries)):  # warm caches and lazy BLAS set-up
        index.search(all_scopes[int(asked_scopes[i])], asked[i], TOP_K, NOW_TS)
    seconds = np.empty(queries, dtype=np.float64)
    for i in range(queries):
        scope = all_scopes[int(asked_scopes[i])]
        query = asked[i]
        start = time.perf_counter_ns()
        result = index.search(scope, query, TOP_K, NOW_TS)
        seconds[i] = (time.perf_counter_ns() - start) / 1e9
        if len(result.hits) != TOP_K or result.expired:
            raise RuntimeError(f"search returned {len(result.hits)} hits, {len(result.expired)} expired")
    return IndexRun(
        entries=entries,
        scopes=scopes,
        build_s=build_s,
        live_bytes=entries * DIMENSION * np.dtype(np.float32).itemsize,
        allocated_bytes=matrix_bytes(index),
        search_s=seconds,
    )


def index_lines(run: IndexRun) -> list[str]:
    mib = 1024 * 1024
    labels: dict[str, object] = {"entries": run.entries, "scopes": run.scopes, "dim": DIMENSION}
    build = " ".join(f"{key}={value}" for key, value in labels.items())
    return [
        f"index_build {build}: {run.build_s:.3f} s ({run.build_s / run.entries * 1e6:.2f} us/put), "
        f"matrix {run.live_bytes / mib:.1f} MiB live, {run.allocated_bytes / mib:.1f} MiB allocated",
        figure("index_search_ms", run.search_s, **labels, k=TOP_K),
    ]


def run_index_part(sizes: Sizes, out: list[str]) -> None:
    rng = np.random.default_rng(SEED)
    plans = [(n, 1) for n in sizes.index_entries]
    if sizes.spread_entries:
        plans.append((sizes.spread_entries, sizes.spread_scopes))
    for entries, scopes in plans:
        emit(out, *index_lines(bench_index(entries, scopes, sizes.index_queries, rng)))


# ---------------------------------------------------------------- part 2: direct hits over HTTP


def timed_chat(client: httpx.Client, probe: Probe) -> float:
    """POST /chat, read the whole stream, check it is a direct answer; the seconds it took."""
    start = time.perf_counter()
    with client.stream("POST", "/chat", json={"message": probe.message}) as response:
        lines = [line.rstrip("\r") for line in response.iter_lines()]
    seconds = time.perf_counter() - start
    if response.status_code != 200:
        raise RuntimeError(f"/chat answered {response.status_code} for {probe.message!r}")
    events = parse_sse(lines)
    kinds = [event.event for event in events]
    if "cached_response" not in kinds or kinds[-1:] != ["done"]:
        raise RuntimeError(f"not a direct answer for {probe.message!r}: events {kinds} {events}")
    cached = next(event.data for event in events if event.event == "cached_response")
    done = events[-1].data
    if done.get("decision") != Decision.DIRECT or cached.get("entry_id") != probe.entry_id:
        raise RuntimeError(f"unexpected answer for {probe.message!r}: {cached} {done}")
    return seconds


def run_http_part(sizes: Sizes, out: list[str]) -> None:
    faqs = faq_questions(sizes.faq_entries)
    with (
        tempfile.TemporaryDirectory(prefix="mg-latency-") as tmp,
        refusing_port() as llm_port,
    ):
        settings = Settings(
            _env_file=None,
            memory_db_path=Path(tmp) / "latency.db",
            api_keys=f"{CLIENT_KEY}:{TENANT}:client,{STAFF_KEY}:{TENANT}:staff",
            embedding_provider="local",
            llm_base_url=f"http://127.0.0.1:{llm_port}/v1",
            llm_api_key="sk-unused",
            llm_max_retries=0,
            llm_timeout_s=2.0,
        )
        with (
            service_process(settings) as server,
            httpx.Client(
                base_url=server.base_url, headers={"Authorization": f"Bearer {STAFF_KEY}"}, timeout=30
            ) as staff,
            httpx.Client(
                base_url=server.base_url, headers={"Authorization": f"Bearer {CLIENT_KEY}"}, timeout=30
            ) as client,
        ):
            stored: list[tuple[Faq, int]] = []
            insert_s: list[float] = []
            model = "?"
            started = time.perf_counter()
            for faq in faqs:
                start = time.perf_counter()
                reply = staff.post("/staff/memory", json={"question": faq.question, "answer": faq.answer})
                insert_s.append(time.perf_counter() - start)
                if reply.status_code != 201:
                    raise RuntimeError(f"POST /staff/memory answered {reply.status_code}: {reply.text}")
                entry = reply.json()
                model = entry["embedding_model"]
                stored.append((faq, int(entry["id"])))
            loaded_s = time.perf_counter() - started
            emit(
                out,
                f"http_setup: embedding_model={model} entries={len(stored)} inserted in {loaded_s:.1f} s "
                f"direct_threshold={settings.memory_direct_threshold} "
                f"similarity_threshold={settings.memory_similarity_threshold} "
                f"top_k={settings.memory_assisted_top_k}",
                figure("http_insert_ms", insert_s, route="POST/staff/memory"),
            )

            exact, exact_tally = qualify(staff, stored, "exact")
            cosine, cosine_tally = qualify(staff, stored, "cosine")
            for kind, tally in (("exact", exact_tally), ("cosine", cosine_tally)):
                scores = np.array(tally.scores or [math.nan])
                emit(
                    out,
                    f"http_qualified kind={kind}: {tally.direct} of {tally.tried} variants answered direct "
                    f"from their own entry ({tally.languages()}); {tally.other_entry} direct from ANOTHER "
                    f"entry; {tally.below} below the direct threshold; {tally.wrong_kind} of the other "
                    f"match kind; best score min={scores.min():.4f} median={float(np.median(scores)):.4f}",
                )
            if not exact or not cosine:
                raise RuntimeError("no qualifying question for one of the kinds")

            # Warm-up: both kinds, from the end of the lists (timed ones start at the front).
            for probe in itertools.islice(
                itertools.chain.from_iterable(zip(reversed(exact), reversed(cosine), strict=False)),
                sizes.warmup,
            ):
                timed_chat(client, probe)

            # Timed: the two kinds interleaved so that drift hits both alike. Fewer qualified
            # questions than requests means some are asked more than once (said below).
            exact_s: list[float] = []
            cosine_s: list[float] = []
            exact_cycle = itertools.cycle(exact)
            cosine_cycle = itertools.cycle(cosine)
            for _ in range(sizes.chat_requests):
                exact_s.append(timed_chat(client, next(exact_cycle)))
                cosine_s.append(timed_chat(client, next(cosine_cycle)))
            emit(
                out,
                figure(
                    "http_direct_exact_ms",
                    exact_s,
                    distinct=min(len(exact), sizes.chat_requests),
                    model=model,
                ),
                figure(
                    "http_direct_cosine_ms",
                    cosine_s,
                    distinct=min(len(cosine), sizes.chat_requests),
                    model=model,
                ),
            )


# ---------------------------------------------------------------- entry point


def emit(out: list[str], *lines: str) -> None:
    for line in lines:
        print(line, flush=True)
        out.append(line)


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--skip-http", action="store_true", help="only the index part")
    parser.add_argument("--skip-index", action="store_true", help="only the HTTP part")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL

    out: list[str] = []
    emit(out, setup_line() + (" mode=quick" if args.quick else " mode=full"))
    if not args.skip_index:
        run_index_part(sizes, out)
    if not args.skip_http:
        run_http_part(sizes, out)
    return out


if __name__ == "__main__":
    main()
