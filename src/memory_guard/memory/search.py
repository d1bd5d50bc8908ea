"""Finding entries for staff: a filtered list or a semantic search, a lookup as a client's
question would see it, and an entry's usage."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory_guard.core.errors import InvalidRequest
from memory_guard.core.paging import cut_page, id_cursor
from memory_guard.core.scope import Scope
from memory_guard.memory.entry import Entry, entry_not_found
from memory_guard.memory.guard import Guard, GuardResult
from memory_guard.memory.lookups import EntryUsage
from memory_guard.memory.store import EntryFilter, LookupLog, MemoryStore


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None
    scores: dict[int, float] | None = None  # a semantic search's score of each item, by entry id


class EntrySearch:
    def __init__(
        self, *, store: MemoryStore, guard: Guard, lookups: LookupLog, embedding_model: str, floor: float
    ) -> None:
        self._store = store
        self._guard = guard
        self._lookups = lookups
        self._embedding_model = embedding_model  # the model whose vectors a search compares
        self._floor = floor  # the lowest score a semantic search lists

    async def list_entries(
        self, tenant: str, where: EntryFilter, limit: int, cursor: str | None, query: str | None
    ) -> Page:
        if query:
            return await self._search(tenant, where, limit, cursor, query)
        rows = await self._store.list_entries(tenant, where, limit + 1, id_cursor(cursor))
        items, next_id = cut_page(rows, limit, lambda entry: entry.id)
        return Page(items, None if next_id is None else str(next_id))

    async def lookup(self, scope: Scope, question: str) -> GuardResult:
        """What the guard would decide for the question, without counting it as a use."""
        return await self._guard.inspect(scope, question)

    async def usage(self, tenant: str, entry_id: int) -> tuple[Entry, EntryUsage]:
        entry = await self._store.get(tenant, entry_id)
        if entry is None:
            raise entry_not_found(entry_id)
        return entry, await self._lookups.usage(tenant, entry_id)

    async def _search(
        self, tenant: str, where: EntryFilter, limit: int, cursor: str | None, query: str
    ) -> Page:
        """Semantic search over the tenant's entries, obsolete ones included (staff sees all): those
        scoring at least the search floor, best first (ties: newest first). The cursor is the last
        item's (score in millionths, id), so a page stays right when entries come or go meanwhile."""
        after = _search_cursor(cursor)
        rows = await self._store.search_vectors(tenant, where, self._embedding_model)
        if not rows:
            return Page([], None, {})
        ids = np.array([entry_id for entry_id, _ in rows], dtype=np.int64)
        matrix = np.stack([vector for _, vector in rows]).astype(np.float64)
        scores = matrix @ np.asarray(await self._guard.embed(query), dtype=np.float64)
        # Compared as whole millionths, shifted above zero (a cosine is down to -1): a score read back
        # from a cursor is then the very same number, written in digits only.
        micros = np.rint((scores + 1.0) * 1e6).astype(np.int64)
        keep = micros >= round((self._floor + 1.0) * 1e6)
        if after is not None:
            keep &= (micros < after[0]) | ((micros == after[0]) & (ids < after[1]))
        order = np.flatnonzero(keep)[np.lexsort((-ids[keep], -micros[keep]))][: limit + 1]
        chosen = [int(ids[i]) for i in order[:limit]]
        entries = await self._store.get_many(tenant, chosen)
        items = [entries[i] for i in chosen if i in entries]
        found = {int(ids[i]): round(float(scores[i]), 4) for i in order[:limit]}
        more = len(order) > limit
        last = order[limit - 1] if more else None
        next_cursor = f"{int(micros[last])}:{int(ids[last])}" if last is not None else None
        return Page(items, next_cursor, found)


def _search_cursor(cursor: str | None) -> tuple[int, int] | None:
    """(score + 1 in millionths, entry id) of the last item a search page showed."""
    if cursor is None or cursor == "":
        return None
    score, _, entry_id = cursor.partition(":")
    if not (score.isdigit() and entry_id.isdigit()) or len(score) > 9 or len(entry_id) > 18:
        raise InvalidRequest("cursor is not one this search gave out", code="invalid_cursor")
    return int(score), int(entry_id)
