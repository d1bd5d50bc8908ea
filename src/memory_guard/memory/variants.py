"""Staff's (and the service's) writing of question variants: list, add, remove, validate.

A variant is another wording of its entry's question: embedded as the question is, matched as it
is, served under the rules of `variant_policy.py`. One wording leads to one answer: a wording is
refused when it is the entry's own question, or is held in the scope by another variant or by a
live entry's question or variant. Editing an entry's question leaves its variants as they are;
deleting the entry removes them (in the database and in the index).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from memory_guard.core.errors import MemoryGuardError
from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.entry import Entry, Status, entry_not_found
from memory_guard.memory.index import VectorIndex, put_stored
from memory_guard.memory.variant import (
    MAX_VARIANTS,
    DuplicateVariant,
    NewVariant,
    TooManyVariants,
    Variant,
    VariantIndexRow,
    VariantIsQuestion,
    VariantOrigin,
    VariantStatus,
    VariantStore,
    variant_not_found,
)
from memory_guard.memory.variant_policy import CONFIRMED
from memory_guard.memory.writer import EntryWriter

logger = logging.getLogger(__name__)


class VariantService:
    def __init__(self, *, writer: EntryWriter, store: VariantStore) -> None:
        self._writer = writer
        self._store = store

    async def of_entry(self, tenant: str, entry_id: int) -> list[Variant]:
        """The entry's variants, oldest first."""
        await self._writer.get(tenant, entry_id)
        return await self._store.of_entry(tenant, entry_id)

    async def add(
        self,
        tenant: str,
        entry_id: int,
        question: str,
        actor: str,
        *,
        status: VariantStatus = VariantStatus.VALIDATED,
        origin: VariantOrigin = VariantOrigin.STAFF,
        confirmations: int = 1,
    ) -> Variant:
        """Store a wording of the entry's question, embedded with the service's model, audited.

        Staff's wording is `validated` and counts as one confirmation; a learner passes its own
        status and origin."""
        entry = await self._writer.get(tenant, entry_id)
        key = entry.scope.key(question)
        async with self._writer.key_lock(key):  # the lock a new entry of this question takes
            entry = await self._writer.get(tenant, entry_id)
            refused = await self._refusal(entry, key)
            if refused is not None:
                raise refused
            vector = await self._writer.embed(question)
            new = NewVariant(
                question, key, status, origin, confirmations, vector, self._writer.embedding_model, actor
            )
            return await self._store_new(entry, new)

    async def learn(
        self, scope: Scope, entry_id: int, question: str, vector: Vectors, actor: str
    ) -> tuple[Variant | None, str | None]:
        """Record `question` as a `learned` wording of the entry (origin `llm`, one confirmation:
        the LLM's choice of this entry for it), audited; (variant, None), or (None, why not).

        The caller holds the question's key lock (`EntryWriter.key_lock`), taken before any write
        transaction it opens around this call, and gives the question's vector, made before it:
        nothing slow runs while the writer is held."""
        entry = await self._writer.find(scope.tenant, entry_id)
        if entry is None or entry.scope != scope:
            return None, "entry_not_in_scope"
        if entry.status is Status.OBSOLETE:
            return None, "entry_obsolete"
        key = scope.key(question)
        refused = await self._refusal(entry, key)
        if refused is not None:
            return None, "too_many_variants" if isinstance(refused, TooManyVariants) else "wording_held"
        new = NewVariant(
            question,
            key,
            VariantStatus.LEARNED,
            VariantOrigin.LLM,
            1,
            vector,
            self._writer.embedding_model,
            actor,
        )
        return await self._store_new(entry, new), None

    async def _refusal(self, entry: Entry, key: str) -> MemoryGuardError | None:
        """Why the wording of `key` may not become a variant of `entry`, if it may not: one
        wording leads to one answer."""
        if key == entry.scope.key(entry.question):
            return VariantIsQuestion(entry.id)
        own = await self._store.of_entry(entry.scope.tenant, entry.id)
        repeated = next((v for v in own if v.key_hash == key), None)
        if repeated is not None:
            return DuplicateVariant(entry.id, repeated.id)
        if len(own) >= MAX_VARIANTS:
            return TooManyVariants()
        holders = (await self._store.holders(entry.scope.tenant, [key])).get(key, [])
        if holders:
            return DuplicateVariant(holders[0].entry_id, holders[0].variant_id)
        return None

    async def _store_new(self, entry: Entry, new: NewVariant) -> Variant:
        change = Change(new.created_by, Action.ADD_VARIANT)
        variant = await self._store.add(entry.scope.tenant, entry.id, new, self._writer.now(), change)
        if variant is None:
            raise entry_not_found(entry.id)
        self._writer.serve_variant(entry, variant.id, new.vector)
        return variant

    async def remove(self, tenant: str, entry_id: int, variant_id: int, actor: str) -> None:
        change = Change(actor, Action.REMOVE_VARIANT)
        removed = await self._store.delete(tenant, entry_id, variant_id, self._writer.now(), change)
        if removed is None:
            await self._writer.get(tenant, entry_id)  # an unknown entry says so
            raise variant_not_found(variant_id)
        self._writer.forget_variant(entry_id, variant_id)

    async def validate(self, tenant: str, entry_id: int, variant_id: int, actor: str) -> Variant:
        """Staff vouch for the wording: it serves as the question does from now on."""
        variant = await self._get(tenant, entry_id, variant_id)
        if variant.status is VariantStatus.VALIDATED:
            return variant
        change = Change(actor, Action.VALIDATE_VARIANT)
        validated = await self._store.update(
            tenant,
            entry_id,
            variant_id,
            self._writer.now(),
            change,
            status=VariantStatus.VALIDATED,
            confirmations=variant.confirmations + 1,
        )
        if validated is None:
            raise variant_not_found(variant_id)
        return validated

    async def entry_of(self, tenant: str, entry_id: int) -> Entry:
        return await self._writer.get(tenant, entry_id)

    async def find(self, tenant: str, entry_id: int, variant_id: int) -> Variant | None:
        """The entry's variant, or None when it has no such variant (any more)."""
        variant = (await self._store.get_many(tenant, [variant_id])).get(variant_id)
        return variant if variant is not None and variant.entry_id == entry_id else None

    async def confirm(self, tenant: str, entry_id: int, variant: Variant, actor: str) -> Variant | None:
        """One independent confirmation more for a learned variant, up to `CONFIRMED` (more would
        change nothing of how it serves), audited; the variant afterwards, None once removed."""
        change = Change(actor, Action.CONFIRM_VARIANT)
        now = self._writer.now()
        return await self._store.confirm(tenant, entry_id, variant.id, CONFIRMED, now, change)

    async def reject(self, tenant: str, entry_id: int, variant: Variant, actor: str) -> bool:
        """Remove a wording an answer was served through and said wrong, audited as such (the
        event's action says why); False when it was removed already."""
        change = Change(actor, Action.REJECT_VARIANT)
        removed = await self._store.delete(tenant, entry_id, variant.id, self._writer.now(), change)
        if removed is None:
            return False
        self._writer.forget_variant(entry_id, variant.id)
        return True

    async def _get(self, tenant: str, entry_id: int, variant_id: int) -> Variant:
        await self._writer.get(tenant, entry_id)
        variant = (await self._store.get_many(tenant, [variant_id])).get(variant_id)
        if variant is None or variant.entry_id != entry_id:
            raise variant_not_found(variant_id)
        return variant


def _entry_id(row: VariantIndexRow) -> int:
    return row.entry_id


def _variant_id(row: VariantIndexRow) -> int:
    return row.variant_id


async def load_variants(index: VectorIndex, store: VariantStore, max_age: timedelta) -> int:
    """Add the variants of every servable entry to a freshly loaded index: how many."""
    loaded = skipped = 0
    async for rows in store.index_rows(index.model_id, max_age):
        wrong = put_stored(index, rows, _entry_id, _variant_id)
        loaded += len(rows) - wrong
        skipped += wrong
    if loaded:
        logger.info("index: %d question variants of %s", loaded, index.model_id)
    if skipped:
        logger.warning(
            "%d stored variant vectors have the wrong dimension; run `memory-guard reindex`", skipped
        )
    return loaded
