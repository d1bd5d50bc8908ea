"""Every long-lived resource of the service, opened and closed together.

The API's lifespan and the command-line tools both build this; nothing here knows HTTP.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta

from memory_guard.agent.llm import ChatModel
from memory_guard.agent.loop import AgentLoop
from memory_guard.agent.openai_chat import OpenAIChatModel
from memory_guard.agent.profiles import DEFAULT_AGENT, AgentDirectory
from memory_guard.agent.skills import builtin_registry
from memory_guard.chat.service import ChatService
from memory_guard.clock import Clock, utc_now
from memory_guard.conversations.service import ConversationService
from memory_guard.conversations.store import SqliteConversationStore
from memory_guard.db.database import Database
from memory_guard.embeddings.base import Embedder
from memory_guard.embeddings.factory import build_embedder
from memory_guard.errors import NotReady
from memory_guard.hits.floors import ScopeFloors
from memory_guard.hits.service import HitService
from memory_guard.hits.store import SqliteHitStore
from memory_guard.memory.audit_store import SqliteAuditLog
from memory_guard.memory.guard import Guard, Thresholds
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.lookup_store import SqliteLookupLog
from memory_guard.memory.service import MemoryService
from memory_guard.memory.stats import MemoryStats, Price
from memory_guard.memory.storage import MemoryStore
from memory_guard.memory.store import SqliteMemoryStore
from memory_guard.memory.transfer import MemoryTransfer
from memory_guard.ops.metrics import Metrics
from memory_guard.ops.readiness import Readiness
from memory_guard.settings import Settings
from memory_guard.verify.judge_store import SqliteJudgementStore
from memory_guard.verify.llm_judge import LlmJudge
from memory_guard.verify.model import load_models
from memory_guard.verify.policy import ServePolicy
from memory_guard.verify.verifier import Cutoffs, OfflineVerifier

logger = logging.getLogger(__name__)


def build_chat_model(settings: Settings, *, judge: bool = False) -> OpenAIChatModel:
    """The answering model's client, or (`judge`) the judge's: same upstream and key, a cheap
    model, a short budget and timeout."""
    return OpenAIChatModel(
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key.get_secret_value(),
        model=settings.memory_judge_model if judge else settings.llm_model,
        max_tokens=settings.memory_judge_max_tokens if judge else settings.llm_max_tokens,
        timeout_s=settings.memory_judge_timeout_s if judge else settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        referer=settings.app_url,
        title=settings.app_name,
    )


def verifier_of(settings: Settings, embedder: Embedder) -> OfflineVerifier | None:
    """The offline verifier, with the classifier trained for this embedding model if one ships."""
    if settings.memory_verifier == "off":
        return None
    model = load_models().get(embedder.model_id)
    if model is None:
        logger.warning(
            "no pair classifier was trained for %s: the verifier runs its checks only", embedder.model_id
        )
    cutoffs = Cutoffs(accept=settings.memory_verifier_accept, reject=settings.memory_verifier_reject)
    return OfflineVerifier(model, cutoffs, embedder)


def policy_of(settings: Settings) -> ServePolicy:
    return ServePolicy(
        direct=settings.memory_direct_threshold,
        verified_direct=settings.memory_verified_direct_threshold,
        confident=settings.memory_verifier_confident,
    )


def thresholds_of(settings: Settings) -> Thresholds:
    return Thresholds(
        direct=settings.memory_direct_threshold,
        similar=settings.memory_similarity_threshold,
        top_k=settings.memory_assisted_top_k,
        max_age=timedelta(days=settings.memory_max_age_days),
        auto_prune=settings.memory_auto_prune,
    )


async def load_index(store: MemoryStore, embedder: Embedder, max_age: timedelta) -> VectorIndex:
    """Fill the index with every servable vector of the configured model."""
    started = time.perf_counter()
    try:
        _ = embedder.dimension
    except NotReady:
        # A remote model of unpublished width: one call tells it (the endpoint must be up at start).
        await embedder.embed(["dimension probe"])
    index = VectorIndex(embedder.model_id, embedder.dimension)
    skipped = 0
    async for row in store.index_rows(embedder.model_id):
        if row.vector.shape != (embedder.dimension,):
            skipped += 1
            continue
        aged_out = row.updated_at + max_age
        expiry = min(aged_out, row.expires_at) if row.expires_at else aged_out
        index.put(row.scope, row.id, row.vector, row.created_at.timestamp(), expiry.timestamp())
    logger.info(
        "index loaded: %d vectors of %s in %.2fs",
        len(index),
        embedder.model_id,
        time.perf_counter() - started,
    )
    if skipped:
        logger.warning("%d stored vectors have the wrong dimension; run `memory-guard reindex`", skipped)
    return index


@dataclass(slots=True)
class Services:
    settings: Settings
    db: Database
    embedder: Embedder
    chat_model: ChatModel
    judge_model: ChatModel | None  # the LLM judge's client, when the judge is enabled
    metrics: Metrics
    memory: MemoryService
    transfer: MemoryTransfer
    stats: MemoryStats
    hits: HitService
    conversations: ConversationService
    chat: ChatService
    readiness: Readiness

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        chat_model: ChatModel | None = None,
        judge_model: ChatModel | None = None,
        clock: Clock = utc_now,
    ) -> Services:
        agents = AgentDirectory.from_file(settings.agents_file)
        db = await Database.open(settings.memory_db_path)
        embedder = embedder or build_embedder(settings)
        chat_model = chat_model or build_chat_model(settings)
        # Off (the default), no judge client exists at all, so nothing can ever call it.
        if not settings.memory_judge_enabled:
            judge_model = None
        elif judge_model is None:
            judge_model = build_chat_model(settings, judge=True)
        try:
            metrics = Metrics()
            store = SqliteMemoryStore(db)
            thresholds = thresholds_of(settings)
            index = await load_index(store, embedder, thresholds.max_age)
            verifier = verifier_of(settings, embedder)
            judgements = SqliteJudgementStore(db)
            judge = LlmJudge(judge_model, judgements, clock) if judge_model is not None else None
            floors = ScopeFloors(settings.memory_max_wrong_rate) if settings.memory_scope_floors else None
            policy = policy_of(settings)
            guard = Guard(store, index, embedder, thresholds, metrics, clock, verifier, policy, judge, floors)
            hits = HitService(SqliteHitStore(db), clock, floors)
            await hits.load_floors()
            lookup_log = SqliteLookupLog(db)
            memory = MemoryService(guard, clock, SqliteAuditLog(db), lookup_log)
            price = Price(settings.memory_price_per_1k_tokens, settings.memory_price_currency)
            stats = MemoryStats(store, lookup_log, hits, judgements, judge is not None, price, clock)
            conversations = ConversationService(SqliteConversationStore(db), memory, hits)
            loop = AgentLoop(chat_model, builtin_registry(), settings.agent_max_turns, metrics)
            chat = ChatService(memory, conversations, loop, agents, settings.history_messages, clock)
        except BaseException:
            await chat_model.aclose()
            if judge_model is not None:
                await judge_model.aclose()
            await embedder.aclose()
            await db.close()
            raise
        return cls(
            settings,
            db,
            embedder,
            chat_model,
            judge_model,
            metrics,
            memory,
            MemoryTransfer(memory, DEFAULT_AGENT),
            stats,
            hits,
            conversations,
            chat,
            Readiness(embedder),
        )

    async def aclose(self) -> None:
        await self.chat_model.aclose()
        if self.judge_model is not None:
            await self.judge_model.aclose()
        await self.embedder.aclose()
        await self.db.close()
