"""What the gateway learns by itself: a completed answer stored as an `auto` entry."""

from __future__ import annotations

import asyncio
from typing import Any

from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.entry import Entry, Source, Status
from memory_guard.memory.store import NewEntry
from memory_guard.memory.writer import EntryWriter

# Who the audit trail names for what the gateway learns by itself.
LEARNING_ACTOR = "memory-guard (learning)"


class Learner:
    def __init__(self, *, writer: EntryWriter) -> None:
        self._writer = writer

    def learning_lock(self, scope: Scope, question: str) -> asyncio.Lock:
        """The lock `learn` must be called under (see there)."""
        return self._writer.key_lock(scope.key(question))

    async def learn(
        self,
        scope: Scope,
        question: str,
        answer: str,
        metadata: dict[str, Any],
        vector: Vectors | None,
        replace: bool,
    ) -> tuple[Entry | None, str | None]:
        """Store a completed answer as `auto`. Returns (entry, None) or (None, why not).

        The caller holds `learning_lock` for the question, taken before any write transaction (a
        staff write takes the same lock first, then the writer: one order, no deadlock), so that
        two runs finishing the same new question at once do not both insert it.
        """
        writer = self._writer
        key = scope.key(question)
        now = writer.now()
        known = [e for e in await writer.find_by_key(scope.tenant, key) if e.status is not Status.OBSOLETE]
        live = [e for e in known if e.servable(now, writer.max_age)]
        if any(e.status is Status.VALIDATED for e in live):
            return None, "validated_entry_exists"
        if live and not replace:
            return None, "already_known"
        if any(h.variant_id is not None for h in (await writer.holders(scope.tenant, [key])).get(key, [])):
            # A live entry holds this wording as a variant (one not yet served, or the lookup would
            # have answered it): one wording leads to one answer, and that variant is how it does.
            return None, "wording_held"
        if vector is None:
            vector = await writer.embed(question)
        # An expired or refreshed `auto` entry is renewed in place rather than duplicated.
        target = next((e for e in known if e.status is Status.AUTO), None)
        if target is None:
            new = NewEntry(
                scope,
                question,
                answer,
                key,
                Status.AUTO,
                Source.LEARNED,
                vector,
                writer.embedding_model,
                metadata=metadata,
            )
            return await writer.insert(new, Change(LEARNING_ACTOR, Action.CREATE)), None
        fields = {
            "answer": answer,
            "metadata": metadata,
            "vector": vector,
            "embedding_model": writer.embedding_model,
        }
        renewed = await writer.update(scope.tenant, target.id, Change(LEARNING_ACTOR, Action.EDIT), fields)
        return renewed, None
