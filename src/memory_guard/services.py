"""Every long-lived resource of the service, opened and closed together.

The API's lifespan and the command-line tools both build this; nothing here knows HTTP.
"""

from __future__ import annotations

import gc
import logging
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from memory_guard.agent.loop import AgentLoop
from memory_guard.agent.profiles import DEFAULT_AGENT, AgentDirectory
from memory_guard.agent.skills import builtin_registry
from memory_guard.chat.completions import CompletionService
from memory_guard.chat.service import ChatService
from memory_guard.conversations.service import ConversationService
from memory_guard.conversations.sqlite_store import SqliteConversationStore
from memory_guard.conversations.store import Exchange
from memory_guard.core.clock import Clock, utc_now
from memory_guard.core.errors import NotReady
from memory_guard.db.backend import open_database
from memory_guard.db.bookkeeping import Bookkeeping, RowWriter
from memory_guard.db.database import Database
from memory_guard.embeddings.base import Embedder
from memory_guard.embeddings.cache import CACHE_SIZE, CachingEmbedder
from memory_guard.embeddings.factory import build_embedder
from memory_guard.embeddings.readiness import Readiness
from memory_guard.hits.floors import ScopeFloors
from memory_guard.hits.service import HitService
from memory_guard.hits.sqlite_store import SqliteHitStore
from memory_guard.memory.audit_store import SqliteAuditLog
from memory_guard.memory.audit_trail import AuditTrail
from memory_guard.memory.entries import EntryService
from memory_guard.memory.guard import Guard, LookupLimits
from memory_guard.memory.import_store import SqliteImportStaging
from memory_guard.memory.index import VectorIndex, put_stored
from memory_guard.memory.index_file import open_index_files, save_index_files
from memory_guard.memory.learning import Learner
from memory_guard.memory.lookup_store import SqliteLookupLog
from memory_guard.memory.lookups import LoggedLookup, ReusedLookup
from memory_guard.memory.proposal_store import SqliteProposalStore
from memory_guard.memory.proposals import ProposalService
from memory_guard.memory.search import EntrySearch
from memory_guard.memory.sqlite_store import SqliteMemoryStore
from memory_guard.memory.stats import JudgePrice, MemoryStats, Price
from memory_guard.memory.store import IndexRow, MemoryStore
from memory_guard.memory.transfer import MemoryTransfer, discard_abandoned_imports
from memory_guard.memory.variant_store import SqliteVariantStore
from memory_guard.memory.variants import VariantService, load_variants
from memory_guard.memory.writer import EntryWriter
from memory_guard.ops.metrics import Metrics
from memory_guard.settings import Settings
from memory_guard.upstream.llm import ChatModel
from memory_guard.upstream.openai_chat import OpenAIChatModel
from memory_guard.upstream.probe import UpstreamProbe
from memory_guard.verify.async_cross_encoder import AsyncCrossEncoder
from memory_guard.verify.configured import open_cross_encoder, policy_of, verifier_of
from memory_guard.verify.judge_reads import JudgeReads
from memory_guard.verify.judge_store import SqlJudgementStore
from memory_guard.verify.judge_switch import judge_switch
from memory_guard.verify.llm_judge import JUDGE_MAX_ANSWER_CHARS, JUDGE_MAX_TOKENS, LlmJudge

logger = logging.getLogger(__name__)


def build_chat_model(settings: Settings, *, judge: bool = False) -> OpenAIChatModel:
    """The answering model's client, or (`judge`) the judge's: same upstream and key, a cheap
    model, a short budget and timeout."""
    return OpenAIChatModel(
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key.get_secret_value(),
        model=settings.memory_judge_model if judge else settings.llm_model,
        max_tokens=JUDGE_MAX_TOKENS if judge else settings.llm_max_tokens,
        timeout_s=settings.memory_judge_timeout_s if judge else settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        turn_deadline_s=settings.memory_judge_timeout_s if judge else settings.llm_turn_deadline_s,
        max_answer_chars=JUDGE_MAX_ANSWER_CHARS if judge else settings.llm_max_answer_chars,
        secrets=[settings.embedding_api_key.get_secret_value()],
    )


def limits_of(settings: Settings) -> LookupLimits:
    return LookupLimits(
        top_k=settings.memory_assisted_top_k,
        max_age=timedelta(days=settings.memory_max_age_days),
        auto_prune=settings.memory_auto_prune,
    )


def _entry_id(row: IndexRow) -> int:
    return row.id


async def load_index(
    store: MemoryStore, embedder: Embedder, max_age: timedelta, approximate_from: int
) -> VectorIndex:
    """Fill the index with every servable vector of the configured model."""
    started = time.perf_counter()
    try:
        _ = embedder.dimension
    except NotReady:
        # A remote model of unpublished width: one call tells it (the endpoint must be up at start).
        await embedder.embed(["dimension probe"])
    index = VectorIndex(embedder.model_id, embedder.dimension, approximate_from)
    skipped = 0
    async for rows in store.index_rows(embedder.model_id, max_age):
        skipped += put_stored(index, rows, _entry_id)
    logger.info(
        "index loaded: %d vectors of %s in %.2fs",
        len(index),
        embedder.model_id,
        time.perf_counter() - started,
    )
    if skipped:
        logger.warning("%d stored vectors have the wrong dimension; run `memory-guard reindex`", skipped)
    # After a change of EMBEDDING_MODEL the entries embedded by the previous one are found only by
    # an exact match: say so at every start until they are re-embedded.
    other = len(await store.ids_to_reembed(embedder.model_id, everything=False))
    if other:
        logger.warning(
            "%d entries are not embedded with %s and are served only on an exact match; "
            "run `memory-guard reindex` to re-embed them",
            other,
            embedder.model_id,
        )
    return index


@dataclass(slots=True)
class Services:
    settings: Settings
    db: Database
    embedder: Embedder
    cross_encoder: AsyncCrossEncoder | None  # the verifier's second reader, when it runs
    chat_model: ChatModel
    judge_model: ChatModel | None  # the LLM judge's client, when the judge is on (judge_switch.py)
    metrics: Metrics
    bookkeeping: Bookkeeping
    guard: Guard
    entries: EntryService
    variants: VariantService
    search: EntrySearch
    audit: AuditTrail
    transfer: MemoryTransfer
    stats: MemoryStats
    hits: HitService
    conversations: ConversationService
    chat: ChatService
    completions: CompletionService  # the OpenAI-compatible endpoint's runs
    readiness: Readiness
    upstream: UpstreamProbe  # whether the LLM upstream is configured and answers, for /readyz
    proposals: ProposalService
    # What `aclose` closes, the last opened first: the bookkeeping (flushed while the database is
    # still open), then the models, the cross-encoder, the embedder, the database.
    resources: AsyncExitStack

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        chat_model: ChatModel | None = None,
        judge_model: ChatModel | None = None,
        cross_encoder_file: Path | None = None,
        clock: Clock = utc_now,
    ) -> Services:
        """`cross_encoder_file`: a cross-encoder read instead of the shipped one (tests, a
        retrained model), as is: not checked against the pinned hash."""
        # Whatever fails midway, what was opened so far is closed, as `aclose` would.
        async with AsyncExitStack() as resources:
            db = await open_database(settings)
            resources.push_async_callback(db.close)
            embedder = embedder or build_embedder(settings)
            resources.push_async_callback(embedder.aclose)
            # Before the index, which can take long: a bad model file stops the start at once.
            cross_encoder = await open_cross_encoder(settings, embedder.model_id, cross_encoder_file)
            if cross_encoder is not None:
                resources.push_async_callback(cross_encoder.aclose)
            # Off, no judge client exists at all, so nothing can ever call it.
            switch = judge_switch(settings)
            switch.announce(settings)
            if not switch.on:
                judge_model = None
            elif judge_model is None:
                judge_model = build_chat_model(settings, judge=True)
            if judge_model is not None:
                resources.push_async_callback(judge_model.aclose)
            chat_model = chat_model or build_chat_model(settings)
            resources.push_async_callback(chat_model.aclose)
            upstream = UpstreamProbe(settings.llm_base_url, settings.llm_api_key.get_secret_value())
            resources.push_async_callback(upstream.aclose)
            agents = AgentDirectory.from_file(settings.agents_file)
            metrics = Metrics()
            store = SqliteMemoryStore(db)
            conversation_store = SqliteConversationStore(db)
            lookup_log = SqliteLookupLog(db)
            bookkeeping = Bookkeeping(
                db,
                [
                    RowWriter(LoggedLookup, store.record_lookups),
                    RowWriter(Exchange, conversation_store.append_exchanges),
                    RowWriter(ReusedLookup, lookup_log.record_reuses),  # queued after its lookup's row
                ],
                metrics,
            )
            limits = limits_of(settings)
            # Before the index is read: rows of an import that never finished are nobody's.
            staging = SqliteImportStaging(db)
            await discard_abandoned_imports(staging)
            index = await load_index(store, embedder, limits.max_age, settings.memory_approximate_from)
            variant_store = SqliteVariantStore(db)
            await load_variants(index, variant_store, limits.max_age)
            resources.callback(index.close)  # after the save below: it waits for the builds
            await open_index_files(index, db.path)
            resources.callback(save_index_files, index, db.path)
            cached = CachingEmbedder(embedder, CACHE_SIZE, metrics)
            verifier = verifier_of(settings, cached, cross_encoder)
            judgements = SqlJudgementStore(db)
            judge = LlmJudge(judge_model, judgements, clock) if judge_model is not None else None
            floors = ScopeFloors(settings.memory_max_wrong_rate) if settings.memory_scope_floors else None
            guard = Guard(
                store=store,
                variants=variant_store,
                index=index,
                embedder=cached,
                limits=limits,
                policy=policy_of(settings, verifier, embedder.model_id),
                metrics=metrics,
                clock=clock,
                bookkeeping=bookkeeping,
                verifier=verifier,
                judge=judge,
                judge_reads=JudgeReads(settings.memory_judge_reads),
                floors=floors,
            )
            hits = HitService(SqliteHitStore(db), clock, floors)
            await hits.load_floors()
            writer = EntryWriter(
                store=store,
                variants=variant_store,
                index=index,
                guard=guard,
                clock=clock,
                max_age=limits.max_age,
            )
            search = EntrySearch(
                store=store,
                guard=guard,
                lookups=lookup_log,
                embedding_model=index.model_id,
                floor=settings.memory_search_min_score,
            )
            price = Price(settings.memory_price_per_1k_tokens, settings.memory_price_currency)
            stats = MemoryStats(
                store=store,
                lookups=lookup_log,
                hits=hits,
                judgements=judgements,
                judge=switch,
                judge_price=JudgePrice(
                    settings.memory_judge_price_input_per_mtok, settings.memory_judge_price_output_per_mtok
                ),
                price=price,
                clock=clock,
            )
            proposals = ProposalService(store=SqliteProposalStore(db), writer=writer, clock=clock)
            variants = VariantService(writer=writer, store=variant_store)
            conversations = ConversationService(
                store=conversation_store, proposals=proposals, hits=hits, variants=variants
            )
            loop = AgentLoop(
                model=chat_model,
                registry=builtin_registry(),
                max_turns=settings.agent_max_turns,
                metrics=metrics,
                run_deadline_s=settings.llm_run_deadline_s,
            )
            chat = ChatService(
                guard=guard,
                learner=Learner(writer=writer),
                variants=variants,
                conversations=conversations,
                loop=loop,
                agents=agents,
                history_messages=settings.history_messages,
                clock=clock,
                bookkeeping=bookkeeping,
                unit_of_work=db.transaction,
            )
            bookkeeping.start()
            resources.push_async_callback(bookkeeping.close)
            # Start-up leaves some 140,000 objects (modules, schemas, routes, settings) that live
            # as long as the process, and every full collection scanned them again: pauses of
            # 80-180 ms of the event loop measured while an import allocates. Collected once and
            # frozen, they are never scanned again.
            gc.collect()
            gc.freeze()
            return cls(
                settings=settings,
                db=db,
                embedder=embedder,
                cross_encoder=cross_encoder,
                chat_model=chat_model,
                judge_model=judge_model,
                metrics=metrics,
                bookkeeping=bookkeeping,
                guard=guard,
                entries=EntryService(writer=writer, guard=guard),
                variants=variants,
                search=search,
                audit=AuditTrail(audit=SqliteAuditLog(db), writer=writer),
                transfer=MemoryTransfer(writer=writer, staging=staging, default_agent=DEFAULT_AGENT),
                stats=stats,
                hits=hits,
                conversations=conversations,
                chat=chat,
                completions=CompletionService(
                    chat=chat, model=chat_model, metrics=metrics, max_message_chars=settings.max_message_chars
                ),
                readiness=Readiness(embedder),
                upstream=upstream,
                proposals=proposals,
                # Opened: from now on they are closed by `aclose`, not when this block ends.
                resources=resources.pop_all(),
            )

    async def aclose(self) -> None:
        await self.resources.aclose()
