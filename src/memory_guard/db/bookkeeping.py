"""Bookkeeping written after the answer: the lookup log, usage counts and a direct hit's history.

An answer already decided must never wait for, nor fail on, the single writer (an import
holding it, another process holding the SQLite lock). So the hot path only reserves the ids
the answer names (its lookup and message ids) and queues the rows; one background task writes
them in batches, one transaction per batch. A batch the database refuses (locked, busy) is
retried for a while; a row it can never take is logged and dropped, never raised into an answer.
The queue is bounded: when the writer falls that far behind, new answers wait for room (they
slow down, they do not fail, and memory does not grow without end). Closing writes what is
queued. The stats and the history are read from the database: `flush()` makes them current
(the API does it before any request other than a chat turn, see `api/freshness.py`).

Work a lookup finds to do (pruning expired entries) is queued the same way, as a `Chore`.

What is queued but not written is readable without waiting (`unwritten`): a follow-up is
answered from its conversation's queued messages even while the writer is blocked.

The queue knows no table: each kind of row comes with its `RowWriter`, and one batch writes every
kind it holds in one transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memory_guard.db.backend import Backend
from memory_guard.ops.metrics import Metrics

T = TypeVar("T")

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Chore:
    """Work a lookup found to do that no answer should wait for (pruning what it found expired)."""

    name: str
    run: Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class RowWriter:
    """How rows of one kind are written: `write` gets a batch of them, inside the batch's transaction."""

    kind: type
    write: Callable[[Sequence[Any]], Awaitable[object]]


Item = object  # a row of a kind some RowWriter takes, or a Chore

# How long the writer lets a first queued row wait for others before writing, unless a reader is
# waiting for it (`flush`): the answer that queued it is still being sent, and a write at that very
# moment takes CPU and the GIL from it (about 1 ms of a miss's time to first token); under load it
# also gathers more rows per transaction.
_LINGER_S = 0.02
_FIRST_RETRY_S = 0.05
_LAST_RETRY_S = 2.0
# How long a batch the database keeps refusing as locked or busy is retried before it is dropped
# (each try itself waits out the busy timeout): long enough for an import or a backup, bounded
# so that a stop does not hang on a database another process never lets go of.
_RETRY_FOR_S = 120.0


# Not settings: sized for the writer, not for a deployment. The queue holds minutes of answers at
# the single writer's pace before an answer waits for room; one batch is one short transaction.
QUEUE_CAPACITY = 10_000
BATCH_ROWS = 256


class Bookkeeping:
    def __init__(
        self,
        db: Backend,
        writers: Sequence[RowWriter],
        metrics: Metrics,
        *,
        capacity: int = QUEUE_CAPACITY,
        batch: int = BATCH_ROWS,
    ) -> None:
        self._db = db
        self._writers = {writer.kind: writer for writer in writers}
        self._metrics = metrics
        self._batch = batch
        self._queue: asyncio.Queue[Item] = asyncio.Queue(maxsize=capacity)
        self._unwritten: deque[Item] = deque()  # queued or being written, oldest first
        self._queued = 0  # items ever queued
        self._settled = 0  # items ever written or dropped
        self._progress = asyncio.Condition()
        self._flushing = 0  # readers waiting in `flush`
        self._flush_asked = asyncio.Event()  # set while any is: the writer stops lingering
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="bookkeeping")

    async def close(self) -> None:
        """Write everything queued, then stop."""
        if self._task is None:
            return
        await self.flush()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def put(self, item: Item) -> None:
        """Queue rows to write; waits only when the queue is full."""
        if not isinstance(item, Chore) and type(item) not in self._writers:
            raise TypeError(f"no RowWriter takes {type(item).__name__}")
        if self._task is None:  # not started (a tool that never answers): write at once
            await self._write([item])
            return
        await self._queue.put(item)
        self._unwritten.append(item)
        self._queued += 1

    async def flush(self) -> None:
        """Wait until every item queued before this call is written (or dropped)."""
        target = self._queued
        self._flushing += 1
        self._flush_asked.set()
        try:
            async with self._progress:
                await self._progress.wait_for(lambda: self._settled >= target or self._task is None)
        finally:
            self._flushing -= 1
            if not self._flushing:
                self._flush_asked.clear()

    def unwritten(self, kind: type[T]) -> list[T]:
        """The queued rows of `kind` not written yet, oldest first."""
        return [item for item in tuple(self._unwritten) if isinstance(item, kind)]

    async def _run(self) -> None:
        while True:
            items = [await self._queue.get()]
            if not self._flush_asked.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._flush_asked.wait(), _LINGER_S)
            while len(items) < self._batch and not self._queue.empty():
                items.append(self._queue.get_nowait())
            await self._write(items)
            for _ in items:
                self._unwritten.popleft()
                self._queue.task_done()
            async with self._progress:
                self._settled += len(items)
                self._progress.notify_all()

    async def _write(self, items: Sequence[Item]) -> None:
        rows = [item for item in items if not isinstance(item, Chore)]
        if rows:
            await self._write_rows(rows)
        for chore in items:
            if isinstance(chore, Chore):
                try:
                    await chore.run()
                except Exception:
                    logger.exception("bookkeeping chore %s failed", chore.name)

    async def _write_rows(self, items: Sequence[Item]) -> None:
        delay = _FIRST_RETRY_S
        give_up = time.monotonic() + _RETRY_FOR_S
        attempt = 0
        while True:
            attempt += 1
            try:
                await self._store(items)
            except self._db.transient as exc:  # locked, busy, a lost connection: it may take it later
                if time.monotonic() >= give_up:
                    logger.error("bookkeeping: %d rows dropped after %d tries: %s", len(items), attempt, exc)
                    self._metrics.bookkeeping.labels(outcome="dropped").inc(len(items))
                    return
                logger.warning("bookkeeping of %d rows delayed (try %d): %s", len(items), attempt, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, _LAST_RETRY_S)
                continue
            except Exception:
                logger.exception("bookkeeping batch of %d rows refused; writing them one by one", len(items))
                break
            self._metrics.bookkeeping.labels(outcome="written").inc(len(items))
            return
        for item in items:  # one bad row must not take the others with it
            try:
                await self._store([item])
            except Exception:
                logger.exception("bookkeeping row dropped: %r", item)
                self._metrics.bookkeeping.labels(outcome="dropped").inc()
            else:
                self._metrics.bookkeeping.labels(outcome="written").inc()

    async def _store(self, items: Sequence[Item]) -> None:
        by_kind: dict[type, list[Item]] = {}
        for item in items:
            by_kind.setdefault(type(item), []).append(item)
        async with self._db.transaction():
            for kind, rows in by_kind.items():
                await self._writers[kind].write(rows)
