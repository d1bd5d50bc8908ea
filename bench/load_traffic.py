"""The traffic of the load benchmark, over HTTP only: hits from N concurrent clients, a burst of
streams timed to their first event, misses timed to their first token, and hits paced while an
import runs. Every answer is read whole and checked; nothing here knows a tree's internals."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.load_data import HitMix, Probe
from bench.questions import Faq

TENANT = "bench"
CLIENT_KEY = "bench-load-client"
STAFF_KEY = "bench-load-staff"
API_KEYS = f"{CLIENT_KEY}:{TENANT}:client,{STAFF_KEY}:{TENANT}:staff:bench"


class BenchFailure(RuntimeError):
    """An answer that was not what the benchmark asked for: the run stops, figures would lie."""


@dataclass(frozen=True, slots=True)
class Event:
    name: str
    data: dict[str, Any]


def sse_events(lines: Sequence[str]) -> list[Event]:
    """The events of an SSE body (comments and pings left out)."""
    events: list[Event] = []
    name = "message"
    data: list[str] = []
    for raw in [*lines, ""]:
        line = raw.rstrip("\r")
        if not line:
            if data:
                events.append(Event(name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    return events


def outcome(events: Sequence[Event], probe: Probe) -> str:
    """ "direct" for `cached_response` + `done` direct from the probe's entry; for a cosine
    variant answered otherwise, "other entry" (direct from another) or "not direct" (another
    decision); BenchFailure for anything else."""
    kinds = [event.name for event in events]
    if kinds == ["cached_response", "done"] and events[1].data.get("decision") == "direct":
        if events[0].data.get("entry_id") == probe.entry_id:
            return "direct"
        if probe.kind == "cosine":
            return "other entry"
    elif probe.kind == "cosine" and kinds[-1:] == ["done"] and "error" not in kinds:
        return "not direct"
    raise BenchFailure(
        f"{probe.kind} hit {probe.message!r} (entry {probe.entry_id}) answered {kinds}: {events}"
    )


def client(base_url: str, key: str, connections: int = 1, timeout_s: float = 60) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=base_url,
        headers={"Authorization": f"Bearer {key}"},
        timeout=httpx.Timeout(timeout_s),
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
    )


async def ask(http: httpx.AsyncClient, probe: Probe) -> tuple[int, list[Event]]:
    """POST /chat and read the whole stream."""
    response = await http.post("/chat", json={"message": probe.message})
    return response.status_code, sse_events(response.text.split("\n")) if response.status_code == 200 else []


async def ask_checked(http: httpx.AsyncClient, probe: Probe) -> str:
    status, events = await ask(http, probe)
    if status != 200:
        raise BenchFailure(f"/chat answered {status} for {probe.message!r}")
    return outcome(events, probe)


async def store_faqs(base_url: str, faqs: Sequence[Faq]) -> list[tuple[Faq, int]]:
    """Each FAQ entry through `POST /staff/memory`, with the id the service gave it."""
    stored: list[tuple[Faq, int]] = []
    async with client(base_url, STAFF_KEY) as staff:
        for faq in faqs:
            reply = await staff.post("/staff/memory", json={"question": faq.question, "answer": faq.answer})
            if reply.status_code != 201:
                raise BenchFailure(f"POST /staff/memory answered {reply.status_code}: {reply.text[:300]}")
            stored.append((faq, int(reply.json()["id"])))
    return stored


# ------------------------------------------------------------------ a) hits per second


@dataclass(frozen=True, slots=True)
class RateRun:
    hits: int
    not_direct: int
    other_entry: int
    seconds: float
    client_cpu_s: float  # CPU this (client) process spent in the timed window

    @property
    def per_second(self) -> float:
        return self.hits / self.seconds


async def _drive(pool: Sequence[httpx.AsyncClient], mix: HitMix, kind: str, seconds: float) -> dict[str, int]:
    deadline = time.perf_counter() + seconds
    counts = {"direct": 0, "not direct": 0, "other entry": 0}

    async def worker(http: httpx.AsyncClient) -> None:
        while time.perf_counter() < deadline:
            probe = mix.next(kind)
            got = await ask_checked(http, probe)
            counts[got] += 1
            if got != "direct":
                mix.refuse(probe)

    await asyncio.gather(*(worker(http) for http in pool))
    return counts


async def hit_rate(
    base_url: str, mix: HitMix, kind: str, clients: int, seconds: float, warmup_s: float
) -> RateRun:
    """Direct hits of one kind per second from `clients` keep-alive clients asking back to back
    (each its own connection), after `warmup_s` of the same; the window closes when the last
    request in flight at its deadline is answered."""
    pool = [client(base_url, CLIENT_KEY) for _ in range(clients)]
    try:
        await _drive(pool, mix, kind, warmup_s)
        cpu = time.process_time()
        start = time.perf_counter()
        counts = await _drive(pool, mix, kind, seconds)
        elapsed = time.perf_counter() - start
        return RateRun(
            counts["direct"], counts["not direct"], counts["other entry"], elapsed, time.process_time() - cpu
        )
    finally:
        for http in pool:
            await http.aclose()


# ------------------------------------------------------------------ b) first event of a burst


@dataclass(frozen=True, slots=True)
class BurstRun:
    first_event_s: list[float]  # from the burst's start to each stream's first event
    whole_s: list[float]  # to each stream's end
    not_direct: int  # another entry included


async def _timed_stream(http: httpx.AsyncClient, probe: Probe, start: float) -> tuple[float, float, str]:
    first: float | None = None
    lines: list[str] = []
    async with http.stream("POST", "/chat", json={"message": probe.message}) as response:
        if response.status_code != 200:
            raise BenchFailure(f"/chat answered {response.status_code} for {probe.message!r}")
        async for line in response.aiter_lines():
            if first is None and line.startswith("data:"):
                first = time.perf_counter() - start
            lines.append(line)
    whole = time.perf_counter() - start
    if first is None:
        raise BenchFailure(f"no event for {probe.message!r}")
    return first, whole, outcome(sse_events(lines), probe)


async def first_event_burst(base_url: str, mix: HitMix, streams: int) -> BurstRun:
    """`streams` /chat streams of memory hits (exact and cosine in turn) sent at once, each on
    a connection of its own opened then (as many clients arriving together); when each one's
    first event arrives. (Connections opened beforehand would sit idle while the others open,
    and a server may close an idle one just as the burst uses it.)"""
    async with client(base_url, CLIENT_KEY, connections=streams) as http:
        probes = [mix.alternate(n) for n in range(streams)]
        start = time.perf_counter()
        results = await asyncio.gather(*(_timed_stream(http, probe, start) for probe in probes))
    for probe, (_, _, got) in zip(probes, results, strict=True):
        if got != "direct":
            mix.refuse(probe)
    return BurstRun([r[0] for r in results], [r[1] for r in results], sum(r[2] != "direct" for r in results))


# ------------------------------------------------------------------ c) time to first token on a miss


async def guard_ttft(http: httpx.AsyncClient, question: str) -> tuple[float, str, int | None]:
    """Seconds to the first `text` event of a /chat stream, the decision its `done` gave and the
    entry it learned, if any."""
    first: float | None = None
    lines: list[str] = []
    event = ""
    start = time.perf_counter()
    async with http.stream("POST", "/chat", json={"message": question}) as response:
        if response.status_code != 200:
            raise BenchFailure(f"/chat answered {response.status_code} for {question!r}")
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif first is None and event == "text" and line.startswith("data:"):
                first = time.perf_counter() - start
            lines.append(line)
    events = sse_events(lines)
    if first is None or not events or events[-1].name != "done":
        raise BenchFailure(f"miss {question!r} streamed {[e.name for e in events]}: {events[-1:]}")
    learned = events[-1].data.get("learned_entry_id")
    return first, str(events[-1].data.get("decision")), None if learned is None else int(learned)


async def forget(staff: httpx.AsyncClient, entry_id: int | None) -> None:
    """Delete an entry the service learned, so that the next question meets the FAQ only."""
    if entry_id is not None:
        reply = await staff.delete(f"/staff/memory/{entry_id}")
        if reply.status_code != 204:
            raise BenchFailure(f"DELETE /staff/memory/{entry_id} answered {reply.status_code}")


async def upstream_ttft(http: httpx.AsyncClient, question: str) -> float:
    """Seconds to the first content chunk when the upstream is called straight, streaming."""
    body = {
        "model": "bench-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "system", "content": "You answer the questions of the bench."},
            {"role": "user", "content": question},
        ],
    }
    first: float | None = None
    start = time.perf_counter()
    async with http.stream("POST", "/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if first is None and line.startswith("data: {"):
                choices = json.loads(line[6:]).get("choices") or []
                if any((choice.get("delta") or {}).get("content") for choice in choices):
                    first = time.perf_counter() - start
    if first is None:
        raise BenchFailure("the upstream streamed no content")
    return first


# ------------------------------------------------------------------ d) hits while an import runs


@dataclass(slots=True)
class ImportRun:
    latencies_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    not_direct: int = 0  # another entry included
    import_s: float = 0.0
    imported: int = 0


async def _paced_hits(
    base_url: str, mix: HitMix, rate: float, workers: int, done: asyncio.Event, run: ImportRun
) -> None:
    interval = workers / rate

    async def worker(n: int) -> None:
        async with client(base_url, CLIENT_KEY, timeout_s=120) as http:
            next_at = time.perf_counter() + n * interval / workers
            turn = n
            while not done.is_set():
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                if done.is_set():
                    return
                next_at = max(next_at + interval, time.perf_counter())
                probe = mix.alternate(turn)
                turn += 1
                start = time.perf_counter()
                try:
                    status, events = await ask(http, probe)
                except httpx.HTTPError as exc:
                    run.latencies_s.append(time.perf_counter() - start)
                    run.failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                run.latencies_s.append(time.perf_counter() - start)
                if status != 200:
                    run.failures.append(f"HTTP {status}")
                    continue
                try:
                    got = outcome(events, probe)
                except BenchFailure:
                    failed = [e.data for e in events if e.name == "error"]
                    run.failures.append(f"events {[e.name for e in events]} {failed}")
                    continue
                if got != "direct":
                    run.not_direct += 1
                    mix.refuse(probe)

    await asyncio.gather(*(worker(n) for n in range(workers)))


async def hits_during_import(
    base_url: str, mix: HitMix, lines: Sequence[str], rate: float, workers: int
) -> ImportRun:
    """`POST /staff/memory/import` of `lines` while `workers` clients ask hits, `rate` per second
    in all, until the import has answered; every hit's latency and every failed one."""
    run = ImportRun()
    done = asyncio.Event()
    body = ("\n".join(lines) + "\n").encode()

    async def do_import() -> None:
        async with client(base_url, STAFF_KEY, timeout_s=1800) as staff:
            start = time.perf_counter()
            try:
                reply = await staff.post(
                    "/staff/memory/import", content=body, headers={"Content-Type": "application/x-ndjson"}
                )
            finally:
                run.import_s = time.perf_counter() - start
                done.set()
        if reply.status_code != 200:
            raise BenchFailure(f"the import answered {reply.status_code}: {reply.text[:500]}")
        run.imported = int(reply.json().get("imported", -1))

    await asyncio.gather(do_import(), _paced_hits(base_url, mix, rate, workers, done, run))
    if run.imported != len(lines):
        raise BenchFailure(f"the import stored {run.imported} of {len(lines)} entries")
    return run
