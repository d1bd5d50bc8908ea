"""Latency of a memory lookup: the index search alone, and a direct hit end to end over HTTP.

Two parts, one line per figure:

1. `VectorIndex.search` alone (k=3) over random unit float32 vectors of dimension 384 (seeded
   numpy RNG): p50/p99 in ms over random queries at 10,000 and 100,000 entries in one scope,
   and 100,000 entries spread over 100 scopes (a lookup only reads its own scope). Also the
   build time (one `put` per entry, as the service loads its store) and the matrix's memory.
2. Direct hits end to end over HTTP (bench/latency_http.py), for each model set-up: the
   default multilingual-e5-small embedder with the cross-encoder on ("e5+ce", the default) and
   off ("e5"), and the English MiniLM ("minilm"); exact, cosine and reworded repeats of stored
   questions, and the resident memory of the service process after the hits.
The header gives the sizes of the shipped model files and what the cross-encoder file says of
itself (cut-offs, fit, training).

Run:  python bench/latency.py [--quick] [--setups e5+ce,e5,minilm] [--skip-index] [--skip-http]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the app harness of the tests is reused here
    sys.path.insert(0, str(ROOT))

from bench.figures import emit, figure, setup_line  # noqa: E402
from bench.latency_http import SETUPS, run_setup  # noqa: E402
from bench.model_files import header_lines  # noqa: E402
from memory_guard.core.scope import Scope  # noqa: E402
from memory_guard.memory.index import VectorIndex  # noqa: E402

Vectors = npt.NDArray[np.float32]

DIMENSION = 384
TOP_K = 3
SEED = 20240611
CREATED_TS = 1_700_000_000.0
NOW_TS = CREATED_TS + 3600.0
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


# ---------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--skip-http", action="store_true", help="only the index part")
    parser.add_argument("--skip-index", action="store_true", help="only the HTTP part")
    parser.add_argument(
        "--setups",
        default=",".join(SETUPS),
        help=f"comma-separated HTTP set-ups among {', '.join(SETUPS)} (default: all)",
    )
    args = parser.parse_args(argv)
    setups = [name.strip() for name in args.setups.split(",") if name.strip()]
    unknown = [name for name in setups if name not in SETUPS]
    if unknown or not setups:
        parser.error(
            f"--setups: unknown {', '.join(unknown) or '(none given)'}; choose among {', '.join(SETUPS)}"
        )
    sizes = QUICK if args.quick else FULL

    out: list[str] = []
    emit(out, setup_line() + (" mode=quick" if args.quick else " mode=full"))
    emit(out, *(f"model_files: {line}" for line in header_lines()))
    if not args.skip_index:
        run_index_part(sizes, out)
    if not args.skip_http:
        for name in setups:
            run_setup(SETUPS[name], sizes.faq_entries, sizes.chat_requests, sizes.warmup, out)
    return out


if __name__ == "__main__":
    main()
