"""Lookups in one large scope: latency and recall@1 against exact search, and start-up at size.

Run: python bench/scale.py --data DIR [--sizes 100000,1000000] [--queries 1000] [--arms exact,faiss,usearch]

DIR holds `qqp_pairs.jsonl.gz`. Its unique questions are embedded by the default embedder
(multilingual-e5-small ONNX, cached in the temporary directory: `--real` of them); a size beyond
them is filled with real vectors plus small seeded noise, renormalized (bench/scale_data.py), and
the output says so. Queries are near-duplicates: half held-out QQP paraphrases of stored
questions, half stored rows with a little noise. Recall@1 is the share of queries whose first
result is the exact nearest row (the exact search's first result).

Each arm searches one scope of each size, one query at a time, in this process:
- `exact`: the service's index with no approximate index (one matrix-vector product);
- `faiss`: the service's index above its threshold: faiss HNSW proposes, exact dot products
  re-check (memory/index.py, what the service runs);
- `usearch`: a usearch HNSW graph proposing as many rows, re-checked the same way (the
  alternative measured before choosing).
A `pgvector` arm belongs beside them (an `Arm`: build, then search one query).

Then, for the largest size, one fresh process per way of starting (`--startup`): the index filled
with every row and its approximate index read from the persisted file, or rebuilt; seconds and
resident memory. Reading the rows from the database is not in these figures.
No figure here is asserted; they are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scale_data import Matrix, grow, normalized, perturbed, real_vectors
from memory_guard.core.scope import Scope
from memory_guard.memory.index import APPROXIMATE_FETCH, VectorIndex
from memory_guard.memory.index_file import folder_of, open_approximate

SCOPE = Scope("bench", "scale")
TOP_K = 3  # the service's default MEMORY_ASSISTED_TOP_K
QUERY_NOISE = 0.2  # a perturbed copy's cosine to its source: about 0.98
SEED = 16

Search = Callable[[Matrix], int]  # a query's first result: its row


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    build: Callable[[Matrix], Search]  # index these rows; how to search one query


def _service_index(rows: Matrix, approximate_from: int) -> VectorIndex:
    index = VectorIndex("bench", rows.shape[1], approximate_from=approximate_from)
    ids = list(range(1, len(rows) + 1))
    index.put_many(SCOPE, ids, rows, [0.0] * len(rows), [float("inf")] * len(rows))
    return index


def _through(index: VectorIndex) -> Search:
    def search(query: Matrix) -> int:
        hits = index.search(SCOPE, query, TOP_K, 1.0).hits
        return hits[0].entry_id - 1 if hits else -1

    return search


def exact_arm(rows: Matrix) -> Search:
    return _through(_service_index(rows, approximate_from=0))


def faiss_arm(rows: Matrix) -> Search:
    index = _service_index(rows, approximate_from=min(len(rows), 1))
    open_approximate(index, None)
    return _through(index)


def usearch_arm(rows: Matrix) -> Search:
    from usearch.index import Index

    graph = Index(
        ndim=rows.shape[1], metric="ip", dtype="f32", connectivity=16, expansion_search=APPROXIMATE_FETCH
    )
    graph.add(np.arange(len(rows), dtype=np.uint64), rows, threads=os.cpu_count() or 1)

    def search(query: Matrix) -> int:
        found = graph.search(query, APPROXIMATE_FETCH, threads=1).keys.astype(np.int64)
        return int(found[np.argmax(rows[found] @ query)]) if len(found) else -1

    return search


ARMS = {
    arm.name: arm for arm in (Arm("exact", exact_arm), Arm("faiss", faiss_arm), Arm("usearch", usearch_arm))
}


def exact_nearest(rows: Matrix, queries: Matrix) -> np.ndarray:
    best = np.full(len(queries), -np.inf, dtype=np.float32)
    where = np.zeros(len(queries), dtype=np.int64)
    for start in range(0, len(rows), 100_000):
        scores = queries @ rows[start : start + 100_000].T
        top = scores.argmax(axis=1)
        better = scores[np.arange(len(queries)), top] > best
        best[better] = scores[np.arange(len(queries)), top][better]
        where[better] = top[better] + start
    return where


def measure(arm: Arm, rows: Matrix, queries: Matrix, truth: np.ndarray, held: int) -> None:
    """`held`: how many of the queries, first, are paraphrases."""
    started = time.perf_counter()
    search = arm.build(rows)
    built = time.perf_counter() - started
    for query in queries[:20]:  # warm-up
        search(query)
    seconds, found = [], []
    for query in queries:
        t0 = time.perf_counter()
        found.append(search(query))
        seconds.append(time.perf_counter() - t0)
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    right = np.asarray(found) == truth
    print(
        f"  {arm.name:8} build {built:7.1f} s   p50 {statistics.median(ms):7.3f} ms   p99 {p99:7.3f} ms   "
        f"recall@1 {float(right.mean()):.4f}",
        f"(paraphrases {float(right[:held].mean()):.4f}, perturbed copies {float(right[held:].mean()):.4f})",
        flush=True,
    )


def queries_for(rows: Matrix, paraphrases: Matrix, count: int) -> Matrix:
    held = paraphrases[: count // 2]
    return normalized(np.concatenate([held, perturbed(rows, count - len(held), QUERY_NOISE, SEED)]))


def startup(rows_file: Path, folder: Path) -> None:
    """One fresh process: fill the index, then read its approximate index (or build and write it).
    The rows come from a mapped file a slice at a time, as from the database, so that the
    resident memory is the index's."""
    rows = np.load(rows_file, mmap_mode="r")
    started = time.perf_counter()
    index = VectorIndex("bench", rows.shape[1], approximate_from=1)
    for start in range(0, len(rows), 100_000):
        part = np.ascontiguousarray(rows[start : start + 100_000])
        ids = list(range(start + 1, start + len(part) + 1))
        index.put_many(SCOPE, ids, part, [0.0] * len(part), [float("inf")] * len(part))
    del rows, part
    filled = time.perf_counter() - started
    load = open_approximate(index, folder)
    total = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    status = Path("/proc/self/status").read_text()
    now = (
        int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024 / 1024
    )
    got = {"fill_s": filled, "total_s": total, "peak_gib": peak, "rss_gib": now}
    print(json.dumps({**got, "read": load.read, "built": load.built}))


def run_startup(rows: Matrix) -> None:
    """The first process finds no file: it builds and writes it; the second reads it."""
    with tempfile.TemporaryDirectory() as tmp:
        rows_file = Path(tmp) / "rows.npy"
        np.save(rows_file, rows)
        folder = folder_of(Path(tmp) / "memory.db")
        for label in ("rebuild", "persisted"):
            out = subprocess.run(
                [sys.executable, __file__, "--startup-child", str(rows_file), str(folder)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got = json.loads(out.strip().splitlines()[-1])
            print(
                f"  start-up, {label:9}: {got['total_s']:6.1f} s (rows in {got['fill_s']:.1f} s), "
                f"resident {got['rss_gib']:.2f} GiB (peak {got['peak_gib']:.2f}), "
                f"read {got['read']}, built {got['built']}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, help="folder with qqp_pairs.jsonl.gz")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--real", type=int, default=100_000, help="QQP questions to embed (cached)")
    parser.add_argument(
        "--paraphrases", type=int, default=2000, help="held-out paraphrases to embed (cached)"
    )
    parser.add_argument("--arms", default="exact,faiss,usearch")
    parser.add_argument("--startup", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--startup-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.startup_child:
        rows_file, folder = args.startup_child
        startup(Path(rows_file), Path(folder))
        return
    if args.data is None:
        parser.error("--data is required")
    sizes = [int(size) for size in args.sizes.split(",")]
    real = real_vectors(args.data, args.real, args.paraphrases)
    print(f"{len(real.stored):,} real QQP questions embedded by {real.model_id}", end=", ")
    print(f"{len(real.paraphrases)} held-out paraphrases")
    for size in sizes:
        rows = grow(real.stored, size, SEED)
        synthetic = max(0, size - len(real.stored))
        queries = queries_for(rows, real.paraphrases, args.queries)
        truth = exact_nearest(rows, queries)
        print(
            f"{size:,} rows in one scope ({synthetic:,} of them real vectors plus noise, renormalized), "
            f"{len(queries)} near-duplicate queries, top {TOP_K}:",
            flush=True,
        )
        for name in filter(None, args.arms.split(",")):
            try:
                measure(ARMS[name], rows, queries, truth, min(len(real.paraphrases), args.queries // 2))
            except ImportError as error:  # usearch is not a dependency of the service
                print(f"  {name:8} skipped: {error}")
        if args.startup and size == max(sizes):
            run_startup(rows)


if __name__ == "__main__":
    main()
