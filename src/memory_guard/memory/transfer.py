"""Moving a memory between environments: export to JSON Lines, import from them.

An import is all or nothing: every line is checked first, and a file with a bad line
imports nothing unless the caller asks to skip bad lines. It is committed in chunks, so that
the answers' bookkeeping is not held behind one long transaction, yet stays all or nothing to
everyone else: its rows are written unseen (marked with the import's name) and published in
one short transaction at the end; a failed or stopped import removes them, and rows a crashed
process left are removed at the next start (`discard_abandoned_imports`).

Questions are re-embedded with the configured model. A line whose question is already stored
in its scope (same normalized question, in a live entry; for an obsolete line, in any entry) is
left out, so importing a file twice changes nothing. A line's question variants come with it; a
variant whose wording is already held in its scope (by a stored live entry, or by an earlier
wording of the file) is left out, since one wording leads to one answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from memory_guard.core.errors import InvalidRequest
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.entry import Entry, Status
from memory_guard.memory.import_store import ImportStaging
from memory_guard.memory.jsonl import ImportLine, LineError, export_line, parse_lines
from memory_guard.memory.store import EntryFilter, NewEntry
from memory_guard.memory.variant import NewVariant
from memory_guard.memory.writer import EntryWriter

logger = logging.getLogger(__name__)

BATCH = 64
# Rows per write transaction of an import: short enough for answers' bookkeeping to interleave.
CHUNK = 200
# Lines checked (or keyed) between two turns of the event loop: about a millisecond of work.
SLICE = 100
PAUSE_S = 0.001
# An unfinished import of a process this one cannot see (another container) is abandoned past this.
_FOREIGN_IMPORT_S = 24 * 3600
_REPORTED_ERRORS = 100


class InvalidImport(InvalidRequest):
    code = "invalid_import"

    def __init__(self, errors: list[LineError]) -> None:
        shown = errors[:_REPORTED_ERRORS]
        summary = "; ".join(f"line {e.line}: {e.message}" for e in shown[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        super().__init__(
            f"{len(errors)} bad line(s), nothing was imported: {summary}{more}. "
            "Fix them, or import with skip_bad_lines to leave them out."
        )
        self.extra = {"lines": [e.to_public() for e in shown]}


@dataclass(slots=True)
class ImportReport:
    imported: int = 0
    already_present: int = 0
    skipped: list[LineError] = field(default_factory=list)

    def to_public(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "already_present": self.already_present,
            "skipped": [e.to_public() for e in self.skipped],
        }


@dataclass(slots=True)
class ImportPlan:
    fresh: list[tuple[ImportLine, str]]  # the lines to store, with their exact-match keys
    report: ImportReport


@dataclass(frozen=True, slots=True)
class ImportProgress:
    done: int
    total: int
    report: ImportReport | None = None  # given once, when the import is stored


class MemoryTransfer:
    def __init__(self, *, writer: EntryWriter, staging: ImportStaging, default_agent: str) -> None:
        self._writer = writer
        self._staging = staging
        self._default_agent = default_agent

    async def export(self, tenant: str, where: EntryFilter) -> AsyncIterator[str]:
        """The tenant's entries, newest first, one JSON line each (read page by page), each with
        its variants."""
        page: list[Entry] = []
        async for entry in self._writer.every_entry(tenant, where):
            page.append(entry)
            if len(page) == CHUNK:
                for line in await self._export_lines(tenant, page):
                    yield line
                page = []
        for line in await self._export_lines(tenant, page):
            yield line

    async def _export_lines(self, tenant: str, entries: list[Entry]) -> list[str]:
        variants = await self._writer.variants_of(tenant, [entry.id for entry in entries]) if entries else {}
        return [export_line(entry, variants.get(entry.id, ())) + "\n" for entry in entries]

    async def plan_import(
        self, tenant: str, lines: Iterable[str], skip_bad_lines: bool = False
    ) -> ImportPlan:
        """Check every line and set aside those already stored; raises `InvalidImport` on a bad
        line unless they are to be skipped. Nothing is written."""
        parsed, errors = await _parse_in_slices(list(lines), tenant, self._default_agent)
        if not parsed and not errors:
            raise InvalidRequest("the file holds no entry", code="empty_import")
        fresh, present, repeats = await self._split_known(tenant, parsed)
        errors = sorted(errors + repeats, key=lambda e: e.line)
        if errors and not skip_bad_lines:
            raise InvalidImport(errors)
        return ImportPlan(fresh, ImportReport(already_present=present, skipped=errors))

    async def run_import(self, plan: ImportPlan, actor: str) -> AsyncIterator[ImportProgress]:
        """Embed the planned entries batch by batch and write them unseen chunk by chunk, telling
        how far it got after each batch, then publish them all at once: an import stopped midway
        leaves nothing behind."""
        total = len(plan.fresh)
        yield ImportProgress(0, total)
        pending = _import_name()
        change = Change(actor, Action.IMPORT)
        stored: list[tuple[Entry, Vectors | None]] = []
        with_variants: list[Entry] = []
        waiting: list[NewEntry] = []
        published = False
        try:
            for start in range(0, total, BATCH):
                batch = plan.fresh[start : start + BATCH]
                wordings = [v.question for line, _ in batch for v in line.variants]
                vectors = await self._writer.embed_many([line.question for line, _ in batch] + wordings)
                more = iter(vectors[len(batch) :])
                waiting.extend(
                    self._new_entry(
                        line,
                        key,
                        vectors[i],
                        self._new_variants(line, [next(more) for _ in line.variants], actor),
                    )
                    for i, (line, key) in enumerate(batch)
                )
                if len(waiting) >= CHUNK or start + BATCH >= total:
                    inserted = await self._writer.insert_unseen(waiting, change, pending)
                    stored.extend(inserted)
                    with_variants.extend(
                        e for (e, _), new in zip(inserted, waiting, strict=True) if new.variants
                    )
                    waiting = []
                yield ImportProgress(min(start + BATCH, total), total)
            if stored:
                await self._staging.publish(pending)
            published = True
        finally:
            if not published:
                await asyncio.shield(self._discard(pending, stored))
        for start in range(0, len(stored), CHUNK):  # a slice at a time, answering in between
            self._writer.serve(stored[start : start + CHUNK])
            await _pause()
        for start in range(0, len(with_variants), CHUNK):
            await self._writer.serve_variants(with_variants[start : start + CHUNK])
        plan.report.imported = len(stored)
        # Tens of thousands of objects: freed all at once when the request ends, they stopped
        # the event loop for tens of milliseconds.
        for held in (stored, plan.fresh):
            while held:
                del held[-CHUNK:]
                await _pause()
        yield ImportProgress(total, total, plan.report)

    async def _discard(self, pending: str, stored: list[tuple[Entry, Vectors | None]]) -> None:
        try:
            removed = await self._staging.discard(pending)
        except Exception:
            logger.exception("import %s stopped; its rows stay unseen until the next start", pending)
            return
        if stored and removed == 0:
            # Stopped just as its publication committed: it is stored, so it is served.
            self._writer.serve(stored)

    async def import_lines(
        self, tenant: str, lines: Iterable[str], actor: str, skip_bad_lines: bool = False
    ) -> ImportReport:
        plan = await self.plan_import(tenant, lines, skip_bad_lines)
        async for _ in self.run_import(plan, actor):
            pass
        return plan.report

    async def _split_known(
        self, tenant: str, parsed: list[ImportLine]
    ) -> tuple[list[tuple[ImportLine, str]], int, list[LineError]]:
        """(lines to insert with their keys, how many are already stored, lines repeating another)."""
        keyed: list[tuple[ImportLine, str]] = []
        for start in range(0, len(parsed), SLICE):
            keyed.extend((line, line.scope.key(line.question)) for line in parsed[start : start + SLICE])
            await _pause()
        stored = await self._writer.statuses_by_key(tenant, sorted({key for _, key in keyed}))
        first_line: dict[str, int] = {}
        fresh: list[tuple[ImportLine, str]] = []
        repeats: list[LineError] = []
        present = 0
        for line, key in keyed:
            if key in first_line:
                repeats.append(
                    LineError(
                        line.line,
                        f"the same question in the same scope as line {first_line[key]}",
                        "repeated_question",
                        {"first_line": first_line[key]},
                    )
                )
                continue
            first_line[key] = line.line
            if _present(line.status, stored.get(key, set())):
                present += 1
            else:
                fresh.append((line, key))
        return await self._placed_variants(tenant, fresh), present, repeats

    async def _placed_variants(
        self, tenant: str, fresh: list[tuple[ImportLine, str]]
    ) -> list[tuple[ImportLine, str]]:
        """The lines with the variants they may bring: not a wording held in the scope already, by a
        stored live entry or by the file (a line's question, or an earlier variant)."""
        keys = {id(line): [line.scope.key(v.question) for v in line.variants] for line, _ in fresh}
        wanted = sorted({key for line_keys in keys.values() for key in line_keys})
        if not wanted:
            return fresh
        held = await self._writer.holders(tenant, wanted)
        taken = {key for _, key in fresh}
        placed: list[tuple[ImportLine, str]] = []
        for line, key in fresh:
            kept = []
            for variant, variant_key in zip(line.variants, keys[id(line)], strict=True):
                if variant_key not in taken and variant_key not in held:
                    taken.add(variant_key)
                    kept.append(variant)
            placed.append((replace(line, variants=kept) if len(kept) < len(line.variants) else line, key))
        return placed

    def _new_variants(self, line: ImportLine, vectors: list[Any], actor: str) -> list[NewVariant]:
        return [
            NewVariant(
                v.question,
                line.scope.key(v.question),
                v.status,
                v.origin,
                v.confirmations,
                vector,
                self._writer.embedding_model,
                actor,
            )
            for v, vector in zip(line.variants, vectors, strict=True)
        ]

    def _new_entry(
        self, line: ImportLine, key: str, vector: Any, variants: list[NewVariant] | None = None
    ) -> NewEntry:
        return NewEntry(
            scope=line.scope,
            question=line.question,
            answer=line.answer,
            key_hash=key,
            status=line.status,
            source=line.source,
            vector=vector,
            embedding_model=self._writer.embedding_model,
            tags=line.tags,
            metadata=line.metadata,
            expires_at=line.expires_at,
            variants=variants or (),
        )


async def _pause() -> None:
    """Let the others run: waiting requests, and the worker threads (a hit's embedding) that need
    the GIL, which a bare `sleep(0)` would not give up long enough for them to take it."""
    await asyncio.sleep(PAUSE_S)


async def _parse_in_slices(
    lines: list[str], tenant: str, default_agent: str
) -> tuple[list[ImportLine], list[LineError]]:
    """`parse_lines` a slice at a time on the event loop, answering others in between.

    Not in a worker thread: pure Python holds the GIL, and the event loop then waited up to the
    interpreter's switch interval (5 ms) at each of a hit's steps; hits took up to 200 ms.
    """
    parsed: list[ImportLine] = []
    errors: list[LineError] = []
    for start in range(0, len(lines), SLICE):
        good, bad = parse_lines(lines[start : start + SLICE], tenant, default_agent)
        parsed.extend(replace(line, line=line.line + start) for line in good)
        errors.extend(replace(error, line=error.line + start) for error in bad)
        await _pause()
    return parsed, errors


def _import_name() -> str:
    """Names an import's unseen rows: host and process say whether the import is still running."""
    return f"{socket.gethostname()}:{os.getpid()}:{int(time.time())}:{uuid.uuid4().hex}"


def _abandoned(name: str) -> bool:
    host, _, rest = name.partition(":")
    pid_text, _, rest = rest.partition(":")
    started_text, _, _ = rest.partition(":")
    if not pid_text.isdigit() or not started_text.isdigit():
        return True
    if host != socket.gethostname():
        return time.time() - int(started_text) > _FOREIGN_IMPORT_S
    pid = int(pid_text)
    if pid == os.getpid():  # this process has just started: none of its imports is running yet
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


async def discard_abandoned_imports(staging: ImportStaging) -> int:
    """Remove the rows of imports that stopped without finishing (a crash, a kill -9): at start."""
    removed = 0
    for name in await staging.unfinished():
        if _abandoned(name):
            count = await staging.discard(name)
            logger.warning("removed %d entries of an unfinished import (%s)", count, name)
            removed += count
    return removed


def _present(status: Status, stored: set[Status]) -> bool:
    """A live line is present when a live entry has its question; an obsolete one, when any has."""
    if status is Status.OBSOLETE:
        return bool(stored)
    return bool(stored - {Status.OBSOLETE})
