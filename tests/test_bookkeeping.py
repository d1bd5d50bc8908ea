"""Bookkeeping after the answer: a decided answer never waits for, nor fails on, the writer.

The lookup log, usage counts and a direct hit's history are queued and written in batches after
the answer; reads that need them (stats, usage, history, feedback) see them; a clean stop loses
none. Learning and the conversation history are one transaction (finding 8).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai

from memory_guard.chat.request import ChatRequest
from memory_guard.conversations.sqlite_store import SqliteConversationStore
from memory_guard.conversations.store import Exchange, NewMessage
from memory_guard.core.clock import utc_now
from memory_guard.core.errors import DuplicateQuestion
from memory_guard.core.scope import Scope
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.services import Services
from memory_guard.settings import Settings
from memory_guard.upstream.llm import TextDelta, TurnEnd
from tests.conftest import client_for
from tests.fakes import ScriptedChatModel
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le délai de la garantie de parfait achèvement ?"
ANSWER = "Un an à compter de la réception."
# Longer than the writer's busy timeout (5 s): before the fix, a hit waiting on it failed.
HELD_S = 6.5
SCOPE = Scope("acme", "assistant")


@contextmanager
def another_process_holds_the_write_lock(path: Path) -> Iterator[None]:
    """A second SQLite connection holding the write lock (what another process, a CLI import or a
    backup tool does), released once the block is done and HELD_S has passed."""
    holder = sqlite3.connect(path, isolation_level=None, timeout=10)
    holder.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    try:
        yield
        time.sleep(max(0.0, HELD_S - (time.monotonic() - started)))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_v1_hits_are_answered_while_another_process_holds_the_write_lock(
    live: LiveApp, acme_staff: httpx.Client
) -> None:
    """The OpenAI-compatible route is a chat turn too: it never waits for the bookkeeping."""
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).raise_for_status()
    client = openai.OpenAI(base_url=f"{live.base_url}/v1", api_key="ka", max_retries=0, timeout=HELD_S / 3)
    with another_process_holds_the_write_lock(live.settings.memory_db_path):
        for _ in range(3):
            raw = client.chat.completions.with_raw_response.create(
                model="any", messages=[{"role": "user", "content": QUESTION}]
            )
            assert raw.headers["x-memory-guard-decision"] == "direct"
            assert raw.parse().choices[0].message.content == ANSWER


def _direct(client: httpx.Client, **body: object) -> dict[str, object]:
    reply = chat(client, message=QUESTION, **body)
    assert reply.status == 200
    assert reply.kinds == ["cached_response", "done"], reply.events
    assert reply.of("cached_response")[0]["answer"] == ANSWER
    return reply.done


def test_hits_are_answered_while_another_process_holds_the_write_lock(
    live: LiveApp, acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    entry = acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).json()
    with another_process_holds_the_write_lock(live.settings.memory_db_path):
        first = _direct(acme)
        # A follow-up in the same conversation reads its history, not yet written.
        follow = _direct(acme, conversation_id=first["conversation_id"])
        others = [_direct(acme) for _ in range(3)]
        # The staff page's files hold no data: they load without waiting for the bookkeeping.
        page = httpx.get(f"{live.base_url}/staff/memory/ui", timeout=HELD_S / 2)
        assert page.status_code == 200 and "<html" in page.text.lower()
        # Nor do the API docs and their document.
        for path in ("/docs", "/docs/docs.js", "/openapi.json"):
            assert httpx.get(f"{live.base_url}{path}", timeout=HELD_S / 2).status_code == 200, path
    # The lock is gone: the staff reads wait for what was answered to be written.
    usage = acme_staff.get(f"/staff/memory/{entry['id']}/usage").json()
    assert usage["lookups"]["direct"] == 5
    assert usage["usage_count"] == 10, "direct answers count twice"
    assert acme_staff.get("/staff/memory/stats").json()["served"]["total"] == 5
    history = acme.get(f"/chat/{first['conversation_id']}/messages").json()["items"]
    assert [m["id"] for m in history] == [
        first["message_id"] - 1,
        first["message_id"],
        follow["message_id"] - 1,
        follow["message_id"],
    ]
    assert [m["type"] for m in history] == ["user_request", "cached_response", "follow_up", "cached_response"]
    ids = {int(str(d["message_id"])) for d in (first, follow, *others)}
    assert len(ids) == 5, "every answer has its own message id"


def test_feedback_on_an_answer_just_served_finds_it(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    done = _direct(acme)
    feedback = acme.post(
        f"/chat/{done['conversation_id']}/messages/{done['message_id']}/feedback", json={"validated": False}
    )
    assert feedback.status_code == 200, feedback.text
    hits = acme_staff.get("/staff/memory/hits").json()["items"]
    assert [h["review"] for h in hits] == ["wrong"], "the served answer's lookup was there to review"


def test_a_hit_during_an_api_import_is_answered(
    live: LiveApp, acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    lines = "\n".join(
        f'{{"question": "Question importée numéro {n} ?", "answer": "Réponse {n}."}}' for n in range(3000)
    )
    imported: list[httpx.Response] = []

    def run_import() -> None:
        with client_for(live, "sa") as staff:
            imported.append(
                staff.post(
                    "/staff/memory/import",
                    content=lines.encode(),
                    headers={"Content-Type": "application/x-ndjson"},
                    timeout=120,
                )
            )

    worker = threading.Thread(target=run_import)
    worker.start()
    served = 0
    while worker.is_alive() or served < 3:
        _direct(acme)
        served += 1
    worker.join()
    assert imported[0].status_code == 200 and imported[0].json()["imported"] == 3000
    assert acme_staff.get("/staff/memory/stats").json()["served"]["total"] == served


def test_learning_and_its_history_are_one_transaction(
    live: LiveApp, acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    """The history write fails after the answer was learned: nothing may stay learned."""
    with sqlite3.connect(live.settings.memory_db_path) as db:
        db.execute(
            "CREATE TRIGGER refuse_history BEFORE INSERT ON messages "
            "BEGIN SELECT RAISE(ABORT, 'history refused'); END"
        )
    fresh_upstream.push(Reply(text="La réponse du modèle."))
    reply = chat(acme, message=QUESTION)
    assert reply.kinds[-1] == "error"
    assert acme_staff.get("/staff/memory").json()["items"] == [], "no entry without its message"
    assert acme_staff.get("/staff/memory/audit").json()["items"] == [], "nor its audit event"

    with sqlite3.connect(live.settings.memory_db_path) as db:
        db.execute("DROP TRIGGER refuse_history")
    fresh_upstream.push(Reply(text="La réponse du modèle."))
    again = chat(acme, message=QUESTION)
    assert again.done["decision"] == "miss", "the rolled-back entry was never put in the index"
    assert again.done["learned_entry_id"] is not None
    (entry,) = acme_staff.get("/staff/memory").json()["items"]
    assert entry["id"] == again.done["learned_entry_id"]


async def _services(tmp_path: Path, **overrides: object) -> Services:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, memory_db_path=tmp_path / "m.db", embedding_provider="hashing", **overrides
    )
    return await Services.open(settings, embedder=HashingEmbedder())


async def test_a_clean_stop_writes_everything_queued(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    entry = await services.entries.create_faq(SCOPE, QUESTION, ANSWER, (), "staff")
    for _ in range(50):
        found = await services.guard.lookup(SCOPE, QUESTION)
        assert found.served is not None and found.lookup_id is not None
    await services.aclose()

    services = await _services(tmp_path)
    try:
        usage = await services.search.usage("acme", entry.id)
        assert usage[1].by_decision["direct"] == 50
        assert usage[0].usage_count == 100
    finally:
        await services.aclose()


async def test_a_row_the_database_refuses_is_dropped_alone_and_never_raised(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    try:
        store = SqliteConversationStore(services.db)
        good = Exchange(
            "acme",
            "c1",
            NewMessage("user", "user_request", "q"),
            NewMessage("assistant", "response", "a"),
            store.reserve_ids(),
            utc_now(),
        )
        # The messages table refuses this role: the batch fails, then each row is tried alone.
        bad = Exchange(
            "acme",
            "c2",
            NewMessage("robot", "user_request", "q"),
            NewMessage("assistant", "response", "a"),
            store.reserve_ids(),
            utc_now(),
        )
        await services.bookkeeping.put(good)
        await services.bookkeeping.put(bad)
        await services.bookkeeping.flush()
        assert [m.content for m in await store.messages("c1")] == ["q", "a"]
        assert await store.messages("c2") == []
        assert b'memory_guard_bookkeeping_rows_total{outcome="dropped"} 1.0' in services.metrics.render()
    finally:
        await services.aclose()


async def test_a_staff_write_and_learning_of_the_same_question_at_once_both_finish(tmp_path: Path) -> None:
    """Learning takes the question's lock before the writer, as a staff write does: the other order
    deadlocked when each held what the other waited for."""
    model = ScriptedChatModel([[TextDelta("Un an."), TurnEnd("stop", 10, 2)]])
    settings = Settings(_env_file=None, memory_db_path=tmp_path / "m.db", embedding_provider="hashing")  # type: ignore[call-arg]
    services = await Services.open(settings, embedder=HashingEmbedder(), chat_model=model)
    scope = Scope("acme", "default")
    writer_free = asyncio.Event()

    async def hold_the_writer() -> None:
        async with services.db.transaction():
            await writer_free.wait()

    async def answer() -> list[str]:
        run = await services.chat.open("acme", ChatRequest(message=QUESTION))
        return [event.type async for event in run.events()]

    async def write_faq() -> str:
        try:
            await services.entries.create_faq(scope, QUESTION, ANSWER, (), "staff")
        except DuplicateQuestion:
            return "refused: the learned entry holds the question"
        return "written"

    try:
        holder = asyncio.create_task(hold_the_writer())
        await asyncio.sleep(0.05)
        learning = asyncio.create_task(answer())  # streams, then waits for the writer to learn
        await asyncio.sleep(0.2)
        staff = asyncio.create_task(write_faq())  # waits for the question's lock, or the writer
        await asyncio.sleep(0.2)
        writer_free.set()
        # A deadlock would never finish: the bound only turns a hang into a failure.
        kinds, outcome = await asyncio.wait_for(asyncio.gather(learning, staff), timeout=30)
        await holder
        assert kinds[-1] == "done"
        assert outcome in {"written", "refused: the learned entry holds the question"}
    finally:
        await services.aclose()
