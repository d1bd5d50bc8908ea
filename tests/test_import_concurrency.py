"""An import committed in chunks stays all or nothing to everyone else.

Its rows are written unseen chunk by chunk (so answers' bookkeeping interleaves), published in
one last transaction; a failed or stopped import removes them; a crashed one's are removed at
the next start.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from memory_guard.core.clock import utc_now
from memory_guard.core.errors import UpstreamError
from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.import_store import SqliteImportStaging
from memory_guard.memory.sqlite_store import SqliteMemoryStore
from memory_guard.memory.store import EntryFilter
from memory_guard.services import Services
from memory_guard.settings import Settings

SCOPE = Scope("acme", "default")
FAQ = "Quel est le délai de la garantie de parfait achèvement ?"


def _lines(count: int) -> list[str]:
    return [
        json.dumps({"question": f"Question importée numéro {n} ?", "answer": f"Réponse {n}."})
        for n in range(count)
    ]


async def _services(tmp_path: Path, embedder: object | None = None) -> Services:
    settings = Settings(_env_file=None, memory_db_path=tmp_path / "m.db", embedding_provider="hashing")  # type: ignore[call-arg]
    return await Services.open(settings, embedder=embedder or HashingEmbedder())  # type: ignore[arg-type]


def _pending_rows(path: Path) -> tuple[int, int]:
    """(entries, audit events) written by unfinished imports, as another connection sees them."""
    with sqlite3.connect(path) as db:
        entries = db.execute("SELECT COUNT(*) FROM responses WHERE pending_import IS NOT NULL").fetchone()[0]
        events = db.execute("SELECT COUNT(*) FROM audit_events WHERE pending_import IS NOT NULL").fetchone()[
            0
        ]
    return entries, events


async def _visible(services: Services) -> dict[str, object]:
    """Everything through which staff or clients could see an entry."""
    exported = [line async for line in services.transfer.export("acme", EntryFilter())]
    events, _ = await services.audit.audit_log("acme", None, [], 50, None)
    found = await services.guard.inspect(SCOPE, "Question importée numéro 3 ?")
    return {
        "counts": await SqliteMemoryStore(services.db).count_by("acme", "status"),
        "listed": len(await SqliteMemoryStore(services.db).list_entries("acme", EntryFilter(), 10, None)),
        "exported": len(exported),
        "audit": [e.action for e in events],
        "index": len(services.guard.index),
        "found": found.decision.value,
    }


async def test_an_unfinished_import_is_invisible_then_published_whole(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    try:
        faq = await services.entries.create_faq(SCOPE, FAQ, "Un an.", (), "staff")
        before = await _visible(services)
        plan = await services.transfer.plan_import("acme", _lines(700))
        steps = services.transfer.run_import(plan, "staff")
        while (await anext(steps)).done < 512:
            pass
        assert _pending_rows(tmp_path / "m.db") == (512, 512), "two chunks are committed"
        assert await _visible(services) == before, "and nothing of them shows"

        # The writer is free between chunks: an answer's bookkeeping is written mid-import.
        found = await services.guard.lookup(SCOPE, FAQ)
        assert found.served is not None
        await services.bookkeeping.flush()
        usage = await services.search.usage("acme", faq.id)
        assert usage[1].by_decision["direct"] == 1

        async for _ in steps:
            pass
        assert plan.report.imported == 700
        assert _pending_rows(tmp_path / "m.db") == (0, 0)
        after = await _visible(services)
        assert after["counts"] == {"auto": 0, "validated": 701, "obsolete": 0}
        assert after["exported"] == 701 and after["index"] == 701 and after["found"] == "direct"
        events, _ = await services.audit.audit_log("acme", None, [Action.IMPORT], 1000, None)
        assert len(events) == 700, "each imported entry has its audit event"
    finally:
        await services.aclose()


class FailingEmbedder(HashingEmbedder):
    """Embeds the first `good` calls, then the endpoint goes down."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) > 1:  # the import's batches, not the questions asked
            if self.good == 0:
                raise UpstreamError("the embeddings endpoint failed: ConnectError")
            self.good -= 1
        return await super().embed(texts)


async def test_a_failed_import_removes_the_chunks_it_wrote(tmp_path: Path) -> None:
    services = await _services(tmp_path, FailingEmbedder(good=8))
    try:
        with pytest.raises(UpstreamError):
            await services.transfer.import_lines("acme", _lines(1000), "staff")
        assert _pending_rows(tmp_path / "m.db") == (0, 0), "the chunks written before the failure are gone"
        assert await SqliteMemoryStore(services.db).count_by("acme", "status") == {
            "auto": 0,
            "validated": 0,
            "obsolete": 0,
        }
    finally:
        await services.aclose()


async def test_a_stopped_import_removes_the_chunks_it_wrote(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    try:
        plan = await services.transfer.plan_import("acme", _lines(700))
        steps = services.transfer.run_import(plan, "staff")
        while (await anext(steps)).done < 256:
            pass
        assert _pending_rows(tmp_path / "m.db") == (256, 256)
        await steps.aclose()  # a closed progress stream, Ctrl-C
        assert _pending_rows(tmp_path / "m.db") == (0, 0)
    finally:
        await services.aclose()


def _dead_pid() -> int:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(finished.stdout)


async def test_rows_of_a_crashed_import_are_removed_at_the_next_start(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    try:
        plan = await services.transfer.plan_import("acme", _lines(50))
        news = [services.transfer._new_entry(line, key, None) for line, key in plan.fresh]
        # What a process killed mid-import leaves: a chunk written under its name, never published.
        crashed = f"{socket.gethostname()}:{_dead_pid()}:{int(time.time())}:0123abcd"
        await SqliteMemoryStore(services.db).insert_many(
            news, utc_now(), Change("staff", Action.IMPORT), crashed
        )
        # An import of a process still running (this one's parent, say) is left alone.
        running = f"{socket.gethostname()}:{os.getppid()}:{int(time.time())}:4567ef"
        await SqliteMemoryStore(services.db).insert_many(
            news[:5], utc_now(), Change("staff", Action.IMPORT), running
        )
    finally:
        await services.aclose()
    assert _pending_rows(tmp_path / "m.db") == (55, 55)

    services = await _services(tmp_path)
    try:
        assert _pending_rows(tmp_path / "m.db") == (5, 5), "the crashed import's rows and events are gone"
        assert await SqliteImportStaging(services.db).unfinished() == [running]
    finally:
        await services.aclose()


def _kill_an_import_midway(path: Path, source: Path) -> None:
    """Run `memory-guard import` and SIGKILL it once it has committed chunks."""
    environment = {**os.environ, "MEMORY_DB_PATH": str(path), "API_KEYS": "", "EMBEDDING_PROVIDER": "hashing"}
    process = subprocess.Popen(
        [sys.executable, "-m", "memory_guard", "import", str(source), "--tenant", "acme"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while _pending_rows(path)[0] < 400 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        process.kill()  # no cleanup of its own
        process.wait()


async def test_an_import_killed_midway_leaves_nothing_seen_and_its_rows_go_at_the_next_start(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    source = tmp_path / "big.jsonl"
    source.write_text("\n".join(_lines(30_000)), encoding="utf-8")
    await (await _services(tmp_path)).aclose()  # the schema exists before the import starts
    _kill_an_import_midway(path, source)
    left, _ = _pending_rows(path)
    assert left >= 400, "the import was killed with chunks committed"

    services = await _services(tmp_path)
    try:
        assert _pending_rows(path) == (0, 0)
        assert await SqliteMemoryStore(services.db).count_by("acme", "status") == {
            "auto": 0,
            "validated": 0,
            "obsolete": 0,
        }
        assert len(services.guard.index) == 0
    finally:
        await services.aclose()
