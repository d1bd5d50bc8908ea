"""The hot path under load, side by side: the code before a change against the working tree, in one run.

Each tree runs `memory-guard serve` in its own process from its own sources (`PYTHONPATH=<tree>/src`,
this interpreter), with the local embedding model and a temporary SQLite file, configured only by
environment variables, in front of a quick fake upstream (bench/upstream.py) on loopback. By default
the trees are the commit before the change (`--base`, checked out by `git worktree add --detach` under
a temporary directory and removed at the end) and this working tree, each with ITS OWN default
embedding model: the comparison then shows what the change costs, a new default model included.
`--embedding-model NAME` sets `EMBEDDING_MODEL` for every tree (once) or for each tree in turn (once
per tree; `default` leaves a tree's own), to compare trees on the same model. Figures, per tree:

  a) direct hits per second from 1, 8 and 32 concurrent keep-alive clients, whole SSE stream read and
     checked (`cached_response` + `done` direct from the intended entry). Exact hits: another case or no
     closing mark (no embedding). Cosine hits: a phrase before or after the question that the service
     embeds, so that the verifier's model reads the pair (the cross-encoder with multilingual-e5-small,
     the pair classifier with MiniLM); a lead-in, a greeting or politeness would be set aside and the
     question served without any model. Only the variants the tree serves direct are asked: found on a
     first service process of the tree with `POST /staff/memory/lookup`, tried in a seeded order until
     3,000 are served (all 8,000 when fewer are), and timed on a second one over the same database
     with empty caches (bench/load_qualify.py). The tally of the variants tried (direct, from ANOTHER
     entry, not direct, per form) is printed and its direct share is in the table. Half of the timed
     cosine hits (`--repeat`) repeat a text this service was already asked (its embedding cached; the
     table gives the share reached); a variant answered otherwise when timed is counted (`not
     direct`, `other entry`), never asked again, and not counted as a hit.
  b) first-event latency, p50 and p99, of 200 /chat streams of memory hits sent at once.
  c) added time to first token on a miss: p50 through memory-guard minus p50 calling the upstream
     straight (alternated request by request), and that minus one local embedding with the tree's own
     model (timed in this process, with the working tree's code, on the same questions). The answer
     learned from each is deleted at once, untimed (multilingual-e5-small scores two of these
     questions about 0.91: the next would be answered `assisted`, grounded on the last). Those that
     still score above the similarity threshold against the FAQ are `assisted` (candidates given
     to the LLM): timed apart, with their own figures.
  d) hit latency (max, p99) and failed hits while `POST /staff/memory/import` stores 10,000 entries,
     hits paced at `--import-rate` per second.
  e) start-up time (process start to the first 200 of /readyz) with 100,000 entries and with none
     (bench/load_startup.py).

Rounds alternate the trees (a, b, e) and the medians of the rounds are shown, with the ratio of the
last tree over the first. Everything listens on 127.0.0.1 and is written under one temporary directory.

Run:  python bench/load.py [--quick] [--tree base --tree .] [--figures abcde] [--embedding-model NAME]
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
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import load_traffic as traffic  # noqa: E402
from bench.load_data import HitMix, import_lines, miss_questions  # noqa: E402
from bench.load_qualify import Prepared, prepare  # noqa: E402
from bench.load_setup import (  # noqa: E402
    Report,
    Tree,
    fake_upstream,
    percentile_ms,
    resolve_trees,
    service_env,
)
from bench.load_startup import startup_part  # noqa: E402
from bench.service import TreeService, tree_process  # noqa: E402

BASE_COMMIT = "405eb00"  # before multilingual-e5-small became the default embedding model


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
    variants: int  # cosine variants a tree should serve direct (tried until found, or all tried)


FULL = Sizes(2000, 3, 3.0, 0.5, (1, 8, 32), 200, 150, 10_000, 4, 100_000, 3, 3000)
QUICK = Sizes(200, 1, 0.8, 0.3, (1, 8, 32), 200, 20, 600, 4, 20_000, 1, 400)
TINY = Sizes(16, 1, 0.2, 0.1, (1, 4), 20, 4, 20, 2, 200, 1, 8)  # the test's, not a measurement


def setup_line(sizes: Sizes, mode: str) -> str:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"setup: cpus={os.cpu_count()} usable={usable} python={platform.python_version()} "
        f"platform={platform.platform()} mode={mode} faq_entries={sizes.faq_entries} rounds={sizes.rounds}"
    )


# ------------------------------------------------------------------ figures a-d: one service per tree


async def traffic_part(
    trees: Sequence[Tree], services: Sequence[TreeService], prepared: Sequence[Prepared], sizes: Sizes,
    figures: str, repeat: float, import_rate: float, upstream_url: str, report: Report,
) -> None:  # fmt: skip
    mixes = [HitMix(p.stored, p.qualified.probes, repeat) for p in prepared]
    order = list(range(len(trees)))

    if "a" in figures:
        for round_no in range(sizes.rounds):
            for kind in ("exact", "cosine"):
                for clients in sizes.concurrency:
                    for i in order if round_no % 2 == 0 else order[::-1]:
                        if kind == "cosine" and not mixes[i].has_cosine:
                            report.emit(f"a cosine tree={trees[i].name}: no variant left to ask, not timed")
                            continue
                        run = await traffic.hit_rate(
                            services[i].base_url, mixes[i], kind, clients, sizes.rate_s, sizes.warmup_s
                        )
                        figure = f"a {kind} direct hits/s, {clients} client{'s' if clients > 1 else ''}"
                        report.add(figure, "hits/s", trees[i].name, run.per_second)
                        report.emit(
                            f"{figure} tree={trees[i].name} round={round_no + 1}: {run.per_second:.1f} "
                            f"(n={run.hits} in {run.seconds:.2f} s, not direct {run.not_direct}, "
                            f"other entry {run.other_entry}, client CPU {run.client_cpu_s / run.seconds:.0%})"
                        )
                        await asyncio.sleep(0.3)  # let a tree's deferred writes land before the next run
        for tree, mix in zip(trees, mixes, strict=True):
            report.emit(f"a cosine mix tree={tree.name}: {mix.tally()}")
            asked = mix.fresh_asked + mix.repeats_asked
            # above `--repeat` once a tree runs out of first askings: its embedding is then cached
            report.add(
                "a cosine hits repeating a text", "%", tree.name, 100 * mix.repeats_asked / max(asked, 1)
            )

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
        await miss_part(trees, services, [p.model_id for p in prepared], sizes, upstream_url, report)

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
    trees: Sequence[Tree], services: Sequence[TreeService], model_ids: Sequence[str], sizes: Sizes,
    upstream_url: str, report: Report,
) -> None:  # fmt: skip
    questions = miss_questions(sizes.misses + 3 * len(trees))
    guard = [traffic.client(s.base_url, traffic.CLIENT_KEY) for s in services]
    staff = [traffic.client(s.base_url, traffic.STAFF_KEY) for s in services]
    straight = traffic.client(upstream_url, "sk-bench-unused")
    guard_s: list[dict[str, list[float]]] = [{} for _ in trees]  # per decision
    straight_s: list[float] = []
    try:
        warm, timed = questions[: 3 * len(trees)], questions[3 * len(trees) :]
        for n, question in enumerate(warm):  # the first upstream call of a service opens its connection
            *_, learned = await traffic.guard_ttft(guard[n % len(trees)], question)
            await traffic.forget(staff[n % len(trees)], learned)
            await traffic.upstream_ttft(straight, question)
        for n, question in enumerate(timed):
            # every tree gets the same questions; which goes first alternates
            for i in range(len(trees)) if n % 2 == 0 else reversed(range(len(trees))):
                seconds, decision, learned = await traffic.guard_ttft(guard[i], question)
                guard_s[i].setdefault(decision, []).append(seconds)
                await traffic.forget(staff[i], learned)
                straight_s.append(await traffic.upstream_ttft(straight, question))
    finally:
        for http in [*guard, *staff, straight]:
            await http.aclose()
    straight_ms = percentile_ms(straight_s, 50)
    report.emit(
        f"c upstream called straight: first token p50={straight_ms:.2f} ms "
        f"p99={percentile_ms(straight_s, 99):.2f} ms (n={len(straight_s)})"
    )
    embed_ms: dict[str, float] = {}
    for model_id in dict.fromkeys(model_ids):
        embed_s = await embedding_seconds(model_id, timed)
        embed_ms[model_id] = percentile_ms(embed_s, 50)
        report.emit(
            f"c one local embedding in this process ({model_id}, these questions): "
            f"p50={embed_ms[model_id]:.2f} ms p99={percentile_ms(embed_s, 99):.2f} ms (n={len(embed_s)})"
        )
    for i, tree in enumerate(trees):
        decisions = {decision: len(got) for decision, got in guard_s[i].items()}
        if "direct" in decisions:
            raise traffic.BenchFailure(f"a miss question was served direct on {tree.name}: {decisions}")
        # A question far from every entry can still score above the similarity threshold (the
        # multilingual embedder's scores crowd high): the LLM then gets candidates as grounding
        # (`assisted`). Both kinds are timed, apart.
        for decision in ("miss", "assisted"):
            timings = guard_s[i].get(decision)
            if not timings:
                continue
            via_ms = percentile_ms(timings, 50)
            added, beyond = via_ms - straight_ms, via_ms - straight_ms - embed_ms[model_ids[i]]
            report.add(f"c first token, {decision}, p50", "ms", tree.name, via_ms)
            report.add(f"c added to first token, {decision}, p50", "ms", tree.name, added)
            report.add(f"c added beyond one embedding, {decision}, p50", "ms", tree.name, beyond)
            report.emit(
                f"c {decision} tree={tree.name}: first token p50={via_ms:.2f} ms "
                f"p99={percentile_ms(timings, 99):.2f} ms, added {added:.2f} ms, beyond one embedding "
                f"{beyond:.2f} ms (decisions {decisions})"
            )


async def embedding_seconds(model_id: str, questions: Sequence[str]) -> list[float]:
    """One local embedding per question with the model that stores `model_id`, timed in this
    process through the model's own `embed` (the worker thread included, no cache), on the text
    the service would embed (this working tree's code)."""
    from memory_guard.core.normalize import embedding_text
    from memory_guard.embeddings.local import MODELS, LocalOnnxEmbedder

    names = [model.name for model in MODELS.values() if model.model_id == model_id]
    if not names:
        raise traffic.BenchFailure(f"this working tree has no local model storing {model_id!r}")
    embedder = LocalOnnxEmbedder.load(names[0])
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


# ------------------------------------------------------------------ entry point


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small counts, one round: a smoke run (< 3 min)")
    parser.add_argument("--tiny", action="store_true", help="counts too small to measure: the smoke test's")
    parser.add_argument(
        "--tree", action="append", help="a source tree to run ('base': --base checked out); repeatable"
    )
    parser.add_argument(
        "--base", default=BASE_COMMIT, help=f"the commit 'base' checks out (default {BASE_COMMIT})"
    )
    parser.add_argument(
        "--embedding-model",
        action="append",
        help="EMBEDDING_MODEL of every tree (given once) or of each tree in turn (once per tree); "
        "'default' leaves a tree's own default (the default for all)",
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
    models = args.embedding_model or ["default"]
    if len(models) not in (1, len(specs)):
        parser.error(
            f"--embedding-model given {len(models)} times for {len(specs)} trees: once, or once per tree"
        )
    if len(models) == 1:
        models = models * len(specs)

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mg-load-")))
        trees = [
            replace(tree, embedding_model=None if model == "default" else model)
            for tree, model in zip(resolve_trees(specs, args.base, tmp, stack), models, strict=True)
        ]
        report = Report([tree.name for tree in trees])
        report.emit(
            setup_line(sizes, mode),
            *(
                f"tree {tree.describe}, EMBEDDING_MODEL={tree.embedding_model or '(unset: its default)'}"
                for tree in trees
            ),
        )
        upstream_url = stack.enter_context(fake_upstream(tmp))
        started = time.perf_counter()
        if set("abcd") & set(args.figures):
            prepared = prepare(trees, sizes.faq_entries, sizes.variants, tmp, upstream_url, report)
            with ExitStack() as running:
                services = [
                    running.enter_context(
                        tree_process(
                            tree.path,
                            service_env(p.database, upstream_url, tree.embedding_model),
                            p.database.parent,
                        )
                    )
                    for tree, p in zip(trees, prepared, strict=True)
                ]
                asyncio.run(
                    traffic_part(
                        trees,
                        services,
                        prepared,
                        sizes,
                        args.figures,
                        args.repeat,
                        args.import_rate,
                        upstream_url,
                        report,
                    )
                )
        if "e" in args.figures:
            startup_part(trees, sizes.startup_entries, sizes.startup_rounds, tmp, upstream_url, report)
        report.emit(
            f"measured in {time.perf_counter() - started:.0f} s; medians of the rounds:", *report.table()
        )
        return report.lines


if __name__ == "__main__":
    main()
