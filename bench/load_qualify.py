"""The cosine variants of the load benchmark, which of them a tree serves direct, and each
tree's database prepared with the FAQ stored.

A cosine hit must reach the verifier's model: its EMBEDDED text must differ from the stored
question's, and it must not be the stored question once greetings, lead-ins and politeness are
set aside (`same_once_polite`: served without any model since the lead-ins joined the greetings,
so "Quick question: …" or "Excusez-moi, …" no longer measure a cosine hit). The forms below keep
a closing phrase or an opening the service does embed. With the multilingual-e5-small embedder
the cross-encoder reads every such pair the checks let through; with MiniLM the pair classifier.

Neither serves every variant direct (the cross-encoder served about one reworded question in
five in bench/latency.py), so a variant is asked in figure a) only when the tree serves it. Each
tree is asked the variants, in a seeded order, through `POST /staff/memory/lookup` (what the
guard would do, with no side effect) on a service process of its own, until enough are served
direct (a tree that serves few is asked more); the timed service is a second process over the
same database with empty caches, so that a variant asked there for the first time is still
embedded and read. The tally of every variant tried, per form, stays in the output: served
direct from the intended entry (and how many of those the cross-encoder read), from ANOTHER
entry, or not direct.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.load_data import SEED, Probe, stored_model
from bench.load_setup import Report, Tree, service_env
from bench.load_traffic import STAFF_KEY, BenchFailure, client, store_faqs
from bench.questions import Faq, faq_questions
from bench.service import tree_process

COSINE_FORMS: dict[str, tuple[str, ...]] = {
    "en": ("{b}, exactly?", "{b}? Thanks for the info.", "Good morning, {q}", "One more thing: {q}"),
    "fr": ("{b}, au juste ?", "{b} ? Merci pour l'info.", "Rebonjour, {q}", "Encore une chose : {q}"),
}
OUTCOMES = ("direct", "other entry", "not direct")


def cosine_variants(faq: Faq) -> list[tuple[str, str]]:
    """(form, text) of each cosine variant of a stored question."""
    body = faq.question.rstrip().rstrip("?").rstrip()
    return [(form, form.format(q=faq.question, b=body)) for form in COSINE_FORMS[faq.language]]


def sample(stored: Sequence[tuple[Faq, int]], seed: int = SEED) -> list[tuple[str, Probe]]:
    """Every (form, probe) of every stored entry, in a seeded order."""
    pool = [
        (form, Probe(text, entry_id, "cosine"))
        for faq, entry_id in stored
        for form, text in cosine_variants(faq)
    ]
    random.Random(seed).shuffle(pool)
    return pool


@dataclass(slots=True)
class Qualified:
    """The variants a tree serves direct from their own entry, and the tally of the sample."""

    probes: list[Probe] = field(default_factory=list)
    by_form: dict[str, dict[str, int]] = field(default_factory=dict)
    cross_encoder: int = 0  # qualified variants whose served candidate the cross-encoder read
    other_entries: list[str] = field(default_factory=list)  # "variant -> entry n (intended m)"

    @property
    def tried(self) -> int:
        return sum(sum(counts.values()) for counts in self.by_form.values())

    def count(self, outcome: str) -> int:
        return sum(counts.get(outcome, 0) for counts in self.by_form.values())

    def lines(self, tree: str) -> list[str]:
        tried, direct = self.tried, self.count("direct")
        head = (
            f"a cosine variants tree={tree}: {direct} of {tried} ({direct / max(tried, 1):.0%}) direct "
            f"from their own entry (the cross-encoder read {self.cross_encoder} of them), "
            f"{self.count('other entry')} from ANOTHER entry, {self.count('not direct')} not direct; "
            f"only those {direct} are asked below"
        )
        forms = [
            f"a cosine variants tree={tree} form {form!r}: "
            + ", ".join(f"{outcome} {counts.get(outcome, 0)}" for outcome in OUTCOMES)
            for form, counts in self.by_form.items()
        ]
        others = [f"a cosine variants tree={tree} ANOTHER entry: {line}" for line in self.other_entries[:5]]
        return [head, *forms, *others]


def outcome_of(body: dict[str, Any], probe: Probe) -> tuple[str, bool]:
    """What a lookup said of a probe: its outcome and whether the cross-encoder read the served
    candidate. The served entry is the first candidate marked so, not always the best-scored."""
    served = next((c for c in body.get("candidates", []) if c.get("served")), None)
    if body.get("decision") != "direct" or served is None:
        return "not direct", False
    if served["entry_id"] != probe.entry_id:
        return "other entry", False
    if served.get("exact"):
        raise BenchFailure(f"cosine variant {probe.message!r} has the stored question's key")
    read = served.get("by") == "cross_encoder" or served.get("cross_encoder_probability") is not None
    return "direct", read


async def qualify(
    base_url: str, pairs: Sequence[tuple[str, Probe]], wanted: int, workers: int = 4
) -> Qualified:
    """The probes through `POST /staff/memory/lookup` in order, `workers` at a time, until
    `wanted` are served direct or none is left (a tree that serves few is asked more, so that
    it does not run out of first askings sooner); the probes kept in the sample's order."""
    outcomes: list[tuple[str, bool, int | None]] = [("", False, None)] * len(pairs)
    queue = iter(range(len(pairs)))
    found = [0]

    async def worker() -> None:
        async with client(base_url, STAFF_KEY) as staff:
            for n in queue:
                if found[0] >= wanted:
                    return
                probe = pairs[n][1]
                reply = await staff.post("/staff/memory/lookup", json={"question": probe.message})
                if reply.status_code != 200:
                    raise BenchFailure(
                        f"POST /staff/memory/lookup answered {reply.status_code}: {reply.text[:300]}"
                    )
                body = reply.json()
                outcome, read = outcome_of(body, probe)
                outcomes[n] = (outcome, read, body.get("served_entry_id"))
                found[0] += outcome == "direct"

    await asyncio.gather(*(worker() for _ in range(workers)))
    qualified = Qualified()
    for (form, probe), (outcome, read, served) in zip(pairs, outcomes, strict=True):
        if not outcome:
            continue  # not tried: enough were found
        counts = qualified.by_form.setdefault(form, {})
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "direct":
            qualified.probes.append(probe)
            qualified.cross_encoder += read
        elif outcome == "other entry":
            qualified.other_entries.append(f"{probe.message!r} -> entry {served} (intended {probe.entry_id})")
    return qualified


@dataclass(frozen=True, slots=True)
class Prepared:
    """A tree's database with the FAQ stored, the cosine variants it serves and its model id."""

    database: Path
    stored: list[tuple[Faq, int]]
    qualified: Qualified
    model_id: str


def prepare(
    trees: Sequence[Tree], entries: int, wanted: int, tmp: Path, upstream_url: str, report: Report
) -> list[Prepared]:
    """The FAQ stored in each tree and its cosine variants tried, on a service process that is
    then stopped: the timed one starts over the same database with empty caches."""
    faqs = faq_questions(entries)
    databases = []
    with ExitStack() as running:
        services = []
        for n, tree in enumerate(trees):
            work = tmp / f"traffic-{n}"
            work.mkdir()
            databases.append(work / "memory.db")
            env = service_env(databases[-1], upstream_url, tree.embedding_model)
            services.append(running.enter_context(tree_process(tree.path, env, work)))

        async def store_and_qualify() -> tuple[list[list[tuple[Faq, int]]], list[Qualified]]:
            started = time.perf_counter()
            stored = await asyncio.gather(*(store_faqs(s.base_url, faqs) for s in services))
            took = time.perf_counter() - started
            report.emit(
                f"stored {len(faqs)} FAQ entries in each tree through POST /staff/memory in {took:.1f} s"
            )
            started = time.perf_counter()
            found = await asyncio.gather(
                *(qualify(s.base_url, sample(st), wanted) for s, st in zip(services, stored, strict=True))
            )
            took = time.perf_counter() - started
            report.emit(f"tried cosine variants until {wanted} served direct in each tree: {took:.1f} s")
            return list(stored), list(found)

        stored, found = asyncio.run(store_and_qualify())
    prepared = []
    for tree, database, faq_ids, qualified in zip(trees, databases, stored, found, strict=True):
        prepared.append(Prepared(database, faq_ids, qualified, stored_model(database)))
        report.emit(
            f"tree {tree.name} stores vectors of {prepared[-1].model_id}", *qualified.lines(tree.name)
        )
        share = 100 * qualified.count("direct") / max(qualified.tried, 1)
        report.add("a cosine variants served direct (lookup)", "%", tree.name, share)
    return prepared
