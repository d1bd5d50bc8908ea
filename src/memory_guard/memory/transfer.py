"""Moving a memory between environments: export to JSON Lines, import from them.

An import is all or nothing: every line is checked first, and a file with a bad line
imports nothing unless the caller asks to skip bad lines. Questions are re-embedded with
the configured model. A line whose question is already stored in its scope (same normalized
question, in a live entry; for an obsolete line, in any entry) is left out, so importing a file
twice changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from memory_guard.errors import InvalidRequest
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.entry import Status
from memory_guard.memory.jsonl import ImportLine, LineError, export_line, parse_lines
from memory_guard.memory.service import MemoryService
from memory_guard.memory.storage import EntryFilter, NewEntry

BATCH = 64
_PAGE = 500
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
    def __init__(self, memory: MemoryService, default_agent: str) -> None:
        self._memory = memory
        self._default_agent = default_agent

    async def export(self, tenant: str, where: EntryFilter) -> AsyncIterator[str]:
        """The tenant's entries, newest first, one JSON line each (read page by page)."""
        before: int | None = None
        while True:
            entries = await self._memory.store.list_entries(tenant, where, _PAGE, before)
            for entry in entries:
                yield export_line(entry) + "\n"
            if len(entries) < _PAGE:
                return
            before = entries[-1].id

    async def plan_import(
        self, tenant: str, lines: Iterable[str], skip_bad_lines: bool = False
    ) -> ImportPlan:
        """Check every line and set aside those already stored; raises `InvalidImport` on a bad
        line unless they are to be skipped. Nothing is written."""
        parsed, errors = parse_lines(lines, tenant, self._default_agent)
        if not parsed and not errors:
            raise InvalidRequest("the file holds no entry", code="empty_import")
        fresh, present, repeats = await self._split_known(tenant, parsed)
        errors = sorted(errors + repeats, key=lambda e: e.line)
        if errors and not skip_bad_lines:
            raise InvalidImport(errors)
        return ImportPlan(fresh, ImportReport(already_present=present, skipped=errors))

    async def run_import(self, plan: ImportPlan, actor: str) -> AsyncIterator[ImportProgress]:
        """Embed the planned entries batch by batch, telling how far it got after each, then store
        them all in one transaction: an import stopped midway stores nothing."""
        total = len(plan.fresh)
        yield ImportProgress(0, total)
        news: list[NewEntry] = []
        for start in range(0, total, BATCH):
            batch = plan.fresh[start : start + BATCH]
            vectors = await self._memory.guard.embed_many([line.question for line, _ in batch])
            news.extend(self._new_entry(line, key, vectors[i]) for i, (line, key) in enumerate(batch))
            yield ImportProgress(len(news), total)
        if news:
            await self._memory.insert_many(news, Change(actor, Action.IMPORT))
        plan.report.imported = len(news)
        yield ImportProgress(total, total, plan.report)

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
        keyed = [(line, line.scope.key(line.question)) for line in parsed]
        stored = await self._memory.store.statuses_by_key(tenant, sorted({key for _, key in keyed}))
        first_line: dict[str, int] = {}
        fresh: list[tuple[ImportLine, str]] = []
        repeats: list[LineError] = []
        present = 0
        for line, key in keyed:
            if key in first_line:
                repeats.append(
                    LineError(line.line, f"the same question in the same scope as line {first_line[key]}")
                )
                continue
            first_line[key] = line.line
            if _present(line.status, stored.get(key, set())):
                present += 1
            else:
                fresh.append((line, key))
        return fresh, present, repeats

    def _new_entry(self, line: ImportLine, key: str, vector: Any) -> NewEntry:
        return NewEntry(
            scope=line.scope,
            question=line.question,
            answer=line.answer,
            key_hash=key,
            status=line.status,
            source=line.source,
            vector=vector,
            embedding_model=self._memory.guard.embedder.model_id,
            tags=line.tags,
            metadata=line.metadata,
            expires_at=line.expires_at,
        )


def _present(status: Status, stored: set[Status]) -> bool:
    """A live line is present when a live entry has its question; an obsolete one, when any has."""
    if status is Status.OBSOLETE:
        return bool(stored)
    return bool(stored - {Status.OBSOLETE})
