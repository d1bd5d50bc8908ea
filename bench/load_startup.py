"""Figure e of the load benchmark: start-up time, with an empty database and with a large one.

The big database is the tree's own: its service creates the schema and stores one entry, and
SQL copies that row with its own question, key, dates (same format) and a random unit vector
of the model's width."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from bench import load_traffic as traffic
from bench.load_data import clone_entries, copy_database
from bench.load_setup import Report, Tree, service_env
from bench.service import tree_process


def startup_part(
    trees: Sequence[Tree], entries: int, rounds: int, tmp: Path, upstream_url: str, report: Report
) -> None:
    databases: dict[str, tuple[Path, Path]] = {}
    for tree in trees:
        work = tmp / f"startup-{len(databases)}"
        work.mkdir()
        empty, full = work / "empty.db", work / "full.db"
        with tree_process(tree.path, service_env(empty, upstream_url, tree.embedding_model), work):
            pass  # its own migrations
        copy_database(empty, full)
        with tree_process(tree.path, service_env(full, upstream_url, tree.embedding_model), work) as service:
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
        model, dimension = clone_entries(full, entries)
        took = time.perf_counter() - started
        report.emit(
            f"e database tree={tree.name}: {entries + 1} entries ({model}, {dimension} dims, "
            f"random unit vectors) written by SQL in {took:.1f} s, {full.stat().st_size / 1e6:.0f} MB"
        )
        databases[tree.name] = (empty, full)
    for round_no in range(rounds):
        for tree in trees if round_no % 2 == 0 else trees[::-1]:
            empty, full = databases[tree.name]
            ready = {}
            for label, database in (("empty", empty), ("full", full)):
                with tree_process(
                    tree.path,
                    service_env(database, upstream_url, tree.embedding_model) | {"LOG_LEVEL": "INFO"},
                    database.parent,
                ) as s:
                    ready[label] = s.ready_s
                    loaded = [
                        line
                        for line in s.log.read_text(errors="replace").splitlines()
                        if "index loaded" in line
                    ]
            report.add("e start-up, empty database", "s", tree.name, ready["empty"])
            report.add(f"e start-up, {entries} entries", "s", tree.name, ready["full"])
            report.add(
                f"e start-up, {entries} entries minus empty", "s", tree.name, ready["full"] - ready["empty"]
            )
            said = loaded[-1].split("index loaded")[-1].strip(" :") if loaded else "no index log line"
            report.emit(
                f"e start-up tree={tree.name} round={round_no + 1}: empty {ready['empty']:.2f} s, "
                f"{entries} entries {ready['full']:.2f} s (log: index loaded {said})"
            )
