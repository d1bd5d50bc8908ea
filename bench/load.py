"""The hot path under load, side by side: the code before a change against the working tree, in one run.

Each tree runs `memory-guard serve` in its own process from its own sources (`PYTHONPATH=<tree>/src`,
this interpreter), with the local embedding model and a temporary SQLite file, configured only by
environment variables, in front of a quick fake upstream (bench/upstream.py) on loopback. By default
the trees are the commit before the change (`--base`, checked out by `git worktree add --detach` under
a temporary directory and removed at the end) and this working tree. Figures, per tree:

  a) direct hits per second from 1, 8 and 32 concurrent keep-alive clients, whole SSE stream read and
     checked (`cached_response` + `done` direct from the intended entry). Exact hits: another case or no
     closing mark (no embedding). Cosine hits: a phrase added before or after the question that changes
     the embedded text; half of them (`--repeat`) repeat a text this service was already asked.
  b) first-event latency, p50 and p99, of 200 /chat streams of memory hits sent at once.
  c) added time to first token on a miss: p50 through memory-guard minus p50 calling the upstream
     straight (alternated request by request), and that minus one local embedding (timed in this
     process with the working tree's model, on the same questions).
  d) hit latency (max, p99) and failed hits while `POST /staff/memory/import` stores 10,000 entries,
     hits paced at `--import-rate` per second.
  e) start-up time (process start to the first 200 of /readyz) with 100,000 entries and with none.
     The big database is the tree's own: its service creates the schema and stores one entry, and
     SQL copies that row 100,000 times with its own question, key, dates (same format) and a random
     unit vector of the model's width.

Rounds alternate the trees (a, b, e) and the medians of the rounds are shown, with the ratio of the
last tree over the first. Everything listens on 127.0.0.1 and is written under one temporary directory.

Run:  python bench/load.py [--quick] [--tree base --tree .] [--figures abcde]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import load_traffic as traffic  # noqa: E402
from bench.load_data import HitMix, clone_entries, copy_database, import_lines, miss_questions  # noqa: E402
from bench.load_setup import (  # noqa: E402
    Report,
    Tree,
    fake_upstream,
    percentile_ms,
    resolve_trees,
    service_env,
)
from bench.questions import faq_questions  # noqa: E402
from bench.service import TreeService, tree_process  # noqa: E402

BASE_COMMIT = "7f3f8fd"


@dataclass(frozen=True, slots=True)
class Sizes:
    faq_entries: int
    rounds: int
    rate_s: float
    warmup_s: float
    concurrency: tuple[int, ...]
    burst_streams: int
    misses: int
    import_entries: int
    import_workers: int
    startup_entries: int
    startup_rounds: int


FULL = Sizes(2000, 3, 3.0, 0.5, (1, 8, 32), 200, 150, 10_000, 4, 100_000, 3)
QUICK = Sizes(200, 1, 0.8, 0.3, (1, 8, 32), 200, 20, 600, 4, 20_000, 1)
TINY = Sizes(16, 1, 0.2, 0.1, (1, 4), 20, 4, 20, 2, 200, 1)  # the test's, not a measurement


def setup_line(sizes: Sizes, mode: str) -> str:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"setup: cpus={os.cpu_count()} usable={usable} python={platform.python_version()} "
        f"platform={platform.platform()} mode={mode} faq_entries={sizes.faq_entries} rounds={sizes.rounds}"
    )


# ------------------------------------------------------------------ figures a-d: one service per tree


async def traffic_part(
    trees: Sequence[Tree], services: Sequence[TreeService], sizes: Sizes, figures: str, repeat: float,
    import_rate: float, upstream_url: str, report: Report,
) -> None:  # fmt: skip
    faqs = faq_questions(sizes.faq_entries)
    started = time.perf_counter()
    stored = await asyncio.gather(*(traffic.store_faqs(s.base_url, faqs) for s in services))
    took = time.perf_counter() - started
    report.emit(f"stored {len(faqs)} FAQ entries in each tree through POST /staff/memory in {took:.1f} s")
    mixes = [HitMix(entries, repeat) for entries in stored]
    order = list(range(len(trees)))

    if "a" in figures:
        for round_no in range(sizes.rounds):
            for kind in ("exact", "cosine"):
                for clients in sizes.concurrency:
                    for i in order if round_no % 2 == 0 else order[::-1]:
                        run = await traffic.hit_rate(
                            services[i].base_url, mixes[i], kind, clients, sizes.rate_s, sizes.warmup_s
                        )
                        figure = f"a {kind} direct hits/s, {clients} client{'s' if clients > 1 else ''}"
                        report.add(figure, "hits/s", trees[i].name, run.per_second)
                        report.emit(
                            f"{figure} tree={trees[i].name} round={round_no + 1}: {run.per_second:.1f} "
                            f"(n={run.hits} in {run.seconds:.2f} s, not direct {run.not_direct}, "
                            f"client CPU {run.client_cpu_s / run.seconds:.0%})"
                        )
                        await asyncio.sleep(0.3)  # let a tree's deferred writes land before the next run
        for tree, mix in zip(trees, mixes, strict=True):
            report.emit(f"a cosine mix tree={tree.name}: {mix.tally()}")

    if "b" in figures:
        for round_no in range(sizes.rounds):
            for i in order if round_no % 2 == 0 else order[::-1]:
                burst = await traffic.first_event_burst(services[i].base_url, mixes[i], sizes.burst_streams)
                p50, p99 = (percentile_ms(burst.first_event_s, q) for q in (50, 99))
                report.add(f"b first event p50, {sizes.burst_streams} streams", "ms", trees[i].name, p50)
                report.add(f"b first event p99, {sizes.burst_streams} streams", "ms", trees[i].name, p99)
                report.emit(
                    f"b burst tree={trees[i].name} round={round_no + 1}: {sizes.burst_streams} streams, "
                    f"first event p50={p50:.1f} ms p99={p99:.1f} ms, last stream done at "
                    f"{max(burst.whole_s) * 1000:.0f} ms, not direct {burst.not_direct}"
                )
                await asyncio.sleep(0.5)

    if "c" in figures:
        await miss_part(trees, services, sizes, upstream_url, report)

    if "d" in figures:
        lines = import_lines(sizes.import_entries)
        for i, tree in enumerate(trees):
            during = await traffic.hits_during_import(
                services[i].base_url, mixes[i], lines, import_rate, sizes.import_workers
            )
            if not during.latencies_s:
                raise traffic.BenchFailure(f"no hit was asked during the import on {tree.name}")
            worst = max(during.latencies_s) * 1000
            p50, p99 = percentile_ms(during.latencies_s, 50), percentile_ms(during.latencies_s, 99)
            n = sizes.import_entries
            report.add(f"d worst hit during a {n}-entry import", "ms", tree.name, worst)
            report.add(f"d p99 hit during a {n}-entry import", "ms", tree.name, p99)
            report.add(f"d failed hits during a {n}-entry import", "count", tree.name, len(during.failures))
            report.add(f"d {n}-entry import duration", "s", tree.name, during.import_s)
            report.emit(
                f"d import tree={tree.name}: {during.imported} entries in {during.import_s:.1f} s; "
                f"{len(during.latencies_s)} hits at {import_rate:g}/s asked meanwhile: max={worst:.1f} ms "
                f"p99={p99:.1f} ms p50={p50:.1f} ms, failed {len(during.failures)} {during.failures[:3]}, "
                f"not direct {during.not_direct}"
            )


async def miss_part(
    trees: Sequence[Tree], services: Sequence[TreeService], sizes: Sizes, upstream_url: str, report: Report
) -> None:
    questions = miss_questions(sizes.misses + 3 * len(trees))
    guard = [traffic.client(s.base_url, traffic.CLIENT_KEY) for s in services]
    straight = traffic.client(upstream_url, "sk-bench-unused")
    guard_s: list[list[float]] = [[] for _ in trees]
    straight_s: list[float] = []
    decisions: list[dict[str, int]] = [{} for _ in trees]
    try:
        warm, timed = questions[: 3 * len(trees)], questions[3 * len(trees) :]
        for n, question in enumerate(warm):  # the first upstream call of a service opens its connection
            await traffic.guard_ttft(guard[n % len(trees)], question)
            await traffic.upstream_ttft(straight, question)
        for n, question in enumerate(timed):
            # every tree gets the same questions; which goes first alternates
            for i in range(len(trees)) if n % 2 == 0 else reversed(range(len(trees))):
                seconds, decision = await traffic.guard_ttft(guard[i], question)
                decisions[i][decision] = decisions[i].get(decision, 0) + 1
                if decision == "miss":
                    guard_s[i].append(seconds)
                straight_s.append(await traffic.upstream_ttft(straight, question))
    finally:
        for http in [*guard, straight]:
            await http.aclose()
    embed_s = await embedding_seconds(timed)
    embed_ms = percentile_ms(embed_s, 50)
    straight_ms = percentile_ms(straight_s, 50)
    report.emit(
        f"c upstream called straight: first token p50={straight_ms:.2f} ms "
        f"p99={percentile_ms(straight_s, 99):.2f} ms (n={len(straight_s)})",
        f"c one local embedding in this process (working tree's model, these questions): "
        f"p50={embed_ms:.2f} ms p99={percentile_ms(embed_s, 99):.2f} ms (n={len(embed_s)})",
    )
    for i, tree in enumerate(trees):
        if len(guard_s[i]) < max(1, len(timed) // 2):
            raise traffic.BenchFailure(f"too few misses on {tree.name}: decisions {decisions[i]}")
        via_ms, added = percentile_ms(guard_s[i], 50), percentile_ms(guard_s[i], 50) - straight_ms
        report.add("c first token on a miss, p50", "ms", tree.name, via_ms)
        report.add("c added to first token on a miss, p50", "ms", tree.name, added)
        report.add("c added beyond one embedding, p50", "ms", tree.name, added - embed_ms)
        report.emit(
            f"c miss tree={tree.name}: first token p50={via_ms:.2f} ms "
            f"p99={percentile_ms(guard_s[i], 99):.2f} ms, added {added:.2f} ms, beyond one embedding "
            f"{added - embed_ms:.2f} ms (decisions {decisions[i]})"
        )


async def embedding_seconds(questions: Sequence[str]) -> list[float]:
    """One local embedding per question, timed in this process, through the model's own
    `embed` (the worker thread included, no cache), on the text the service would embed."""
    from memory_guard.core.normalize import embedding_text
    from memory_guard.embeddings.local import DEFAULT_MODEL, LocalOnnxEmbedder

    embedder = LocalOnnxEmbedder.load(DEFAULT_MODEL)
    try:
        for question in questions[:3]:
            await embedder.embed([embedding_text(question)])
        seconds = []
        for question in questions:
            start = time.perf_counter()
            await embedder.embed([embedding_text(question)])
            seconds.append(time.perf_counter() - start)
        return seconds
    finally:
        await embedder.aclose()


# ------------------------------------------------------------------ figure e: start-up


def startup_part(trees: Sequence[Tree], sizes: Sizes, tmp: Path, upstream_url: str, report: Report) -> None:
    databases: dict[str, tuple[Path, Path]] = {}
    for tree in trees:
        work = tmp / f"startup-{len(databases)}"
        work.mkdir()
        empty, full = work / "empty.db", work / "full.db"
        with tree_process(tree.path, service_env(empty, upstream_url), work):
            pass  # its own migrations
        copy_database(empty, full)
        with tree_process(tree.path, service_env(full, upstream_url), work) as service:
            reply = httpx.post(
                f"{service.base_url}/staff/memory",
                json={
                    "question": "Quel est le délai de livraison d'un colis à Lyon ?",
                    "answer": "Deux jours.",
                },
                headers={"Authorization": f"Bearer {traffic.STAFF_KEY}"},
                timeout=30,
            )
            if reply.status_code != 201:
                raise traffic.BenchFailure(
                    f"POST /staff/memory answered {reply.status_code}: {reply.text[:300]}"
                )
        started = time.perf_counter()
        model, dimension = clone_entries(full, sizes.startup_entries)
        took = time.perf_counter() - started
        report.emit(
            f"e database tree={tree.name}: {sizes.startup_entries + 1} entries ({model}, {dimension} dims, "
            f"random unit vectors) written by SQL in {took:.1f} s, {full.stat().st_size / 1e6:.0f} MB"
        )
        databases[tree.name] = (empty, full)
    for round_no in range(sizes.startup_rounds):
        for tree in trees if round_no % 2 == 0 else trees[::-1]:
            empty, full = databases[tree.name]
            ready = {}
            for label, database in (("empty", empty), ("full", full)):
                with tree_process(
                    tree.path, service_env(database, upstream_url) | {"LOG_LEVEL": "INFO"}, database.parent
                ) as s:
                    ready[label] = s.ready_s
                    loaded = [
                        line
                        for line in s.log.read_text(errors="replace").splitlines()
                        if "index loaded" in line
                    ]
            n = sizes.startup_entries
            report.add("e start-up, empty database", "s", tree.name, ready["empty"])
            report.add(f"e start-up, {n} entries", "s", tree.name, ready["full"])
            report.add(f"e start-up, {n} entries minus empty", "s", tree.name, ready["full"] - ready["empty"])
            said = loaded[-1].split("index loaded")[-1].strip(" :") if loaded else "no index log line"
            report.emit(
                f"e start-up tree={tree.name} round={round_no + 1}: empty {ready['empty']:.2f} s, "
                f"{n} entries {ready['full']:.2f} s (log: index loaded {said})"
            )


# ------------------------------------------------------------------ entry point


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small counts, one round: a smoke run (< 2 min)")
    parser.add_argument("--tiny", action="store_true", help="counts too small to measure: the smoke test's")
    parser.add_argument(
        "--tree", action="append", help="a source tree to run ('base': --base checked out); repeatable"
    )
    parser.add_argument(
        "--base", default=BASE_COMMIT, help=f"the commit 'base' checks out (default {BASE_COMMIT})"
    )
    parser.add_argument("--figures", default="abcde", help="which figures to measure (default abcde)")
    parser.add_argument(
        "--repeat", type=float, default=0.5, help="share of cosine hits that repeat a text already asked"
    )
    parser.add_argument(
        "--import-rate", type=float, default=40.0, help="hits per second asked during the import (d)"
    )
    args = parser.parse_args(argv)
    sizes = TINY if args.tiny else QUICK if args.quick else FULL
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    specs = args.tree or ["base", str(ROOT)]

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mg-load-")))
        trees = resolve_trees(specs, args.base, tmp, stack)
        report = Report([tree.name for tree in trees])
        report.emit(setup_line(sizes, mode), *(f"tree {tree.describe}" for tree in trees))
        upstream_url = stack.enter_context(fake_upstream(tmp))
        started = time.perf_counter()
        if set("abcd") & set(args.figures):
            with ExitStack() as running:
                services = []
                for n, tree in enumerate(trees):
                    work = tmp / f"traffic-{n}"
                    work.mkdir()
                    services.append(
                        running.enter_context(
                            tree_process(tree.path, service_env(work / "memory.db", upstream_url), work)
                        )
                    )
                asyncio.run(
                    traffic_part(
                        trees,
                        services,
                        sizes,
                        args.figures,
                        args.repeat,
                        args.import_rate,
                        upstream_url,
                        report,
                    )
                )
        if "e" in args.figures:
            startup_part(trees, sizes, tmp, upstream_url, report)
        report.emit(
            f"measured in {time.perf_counter() - started:.0f} s; medians of the rounds:", *report.table()
        )
        return report.lines


if __name__ == "__main__":
    main()
