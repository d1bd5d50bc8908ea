"""Direct hits end to end over HTTP, for each model set-up (the second part of bench/latency.py).

For each set-up (embedding model, cross-encoder on or off) `memory-guard serve` runs in its own
process (temporary SQLite file, one client and one staff key, the LOCAL models, `llm_base_url`
on a loopback port that refuses connections so an accidental LLM call fails the run). FAQ
entries are inserted through `POST /staff/memory`, then `POST /chat` is timed (keep-alive httpx
client, whole SSE stream read) for repeated questions never byte-identical to the stored one:
  (a) exact: the same question in another case or without its closing "?" (no embedding);
  (b) cosine: the question with a trailing "please"/"svp" (stripped before embedding: cosine
      about 1, but the question is embedded, searched and verified);
  (c) reworded: the question with a closing word that asks nothing more ("…, exactly?",
      "…, au juste ?"), embedded as is, so that the verifier reads a real difference.
The first asking of a cosine or reworded question (embedding included) is timed apart from its
repeats (the service has cached its embedding): see `run_setup`.
A variant is kept only when `POST /staff/memory/lookup` says `direct`, of the intended kind, on
the intended entry; every timed stream must be `cached_response` then `done` with decision
`direct`. After the hits, the service's resident memory (VmRSS, VmHWM of /proc/PID/status).
"""

from __future__ import annotations

import itertools
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from tests.server import parse_sse

from bench.figures import emit, figure
from bench.questions import Faq, Probe, faq_questions, qualify
from bench.service import memory_mib, refusing_port, service_process
from memory_guard.core.decision import Decision
from memory_guard.settings import Settings
from memory_guard.verify.configured import similarity_threshold

CLIENT_KEY = "bench-client-key"
STAFF_KEY = "bench-staff-key"
TENANT = "bench"
E5 = "multilingual-e5-small-onnx"
KINDS = ("exact", "cosine", "reworded")


@dataclass(frozen=True, slots=True)
class Setup:
    """One service configuration to time."""

    label: str
    embedding_model: str
    cross_encoder: bool

    def overrides(self) -> dict[str, Any]:
        return {
            "memory_cross_encoder": "on" if self.cross_encoder else "off",
            "embedding_model": self.embedding_model,
        }


SETUPS = {
    "e5+ce": Setup("e5+ce", E5, cross_encoder=True),
    "e5": Setup("e5", E5, cross_encoder=False),
    "minilm": Setup("minilm", "all-MiniLM-L6-v2", cross_encoder=False),
}


def timed_chat(client: httpx.Client, probe: Probe) -> float:
    """POST /chat, read the whole stream, check it is a direct answer; the seconds it took."""
    start = time.perf_counter()
    with client.stream("POST", "/chat", json={"message": probe.message}) as response:
        lines = [line.rstrip("\r") for line in response.iter_lines()]
    seconds = time.perf_counter() - start
    if response.status_code != 200:
        raise RuntimeError(f"/chat answered {response.status_code} for {probe.message!r}")
    events = parse_sse(lines)
    kinds = [event.event for event in events]
    if "cached_response" not in kinds or kinds[-1:] != ["done"]:
        raise RuntimeError(f"not a direct answer for {probe.message!r}: events {kinds} {events}")
    cached = next(event.data for event in events if event.event == "cached_response")
    done = events[-1].data
    if done.get("decision") != Decision.DIRECT or cached.get("entry_id") != probe.entry_id:
        raise RuntimeError(f"unexpected answer for {probe.message!r}: {cached} {done}")
    return seconds


def service_settings(tmp: Path, llm_port: int, setup: Setup) -> Settings:
    return Settings(
        _env_file=None,
        memory_db_path=tmp / "latency.db",
        api_keys=f"{CLIENT_KEY}:{TENANT}:client,{STAFF_KEY}:{TENANT}:staff",
        embedding_provider="local",
        llm_base_url=f"http://127.0.0.1:{llm_port}/v1",
        llm_api_key="sk-unused",
        memory_judge="off",  # no judge upstream here: what is timed is the local verifier
        llm_max_retries=0,
        llm_timeout_s=2.0,
        **setup.overrides(),
    )


def insert_faqs(staff: httpx.Client, faqs: list[Faq]) -> tuple[list[tuple[Faq, int]], list[float], str]:
    stored: list[tuple[Faq, int]] = []
    insert_s: list[float] = []
    model = "?"
    for faq in faqs:
        start = time.perf_counter()
        reply = staff.post("/staff/memory", json={"question": faq.question, "answer": faq.answer})
        insert_s.append(time.perf_counter() - start)
        if reply.status_code != 201:
            raise RuntimeError(f"POST /staff/memory answered {reply.status_code}: {reply.text}")
        entry = reply.json()
        model = entry["embedding_model"]
        stored.append((faq, int(entry["id"])))
    return stored, insert_s, model


def clients(base_url: str) -> tuple[httpx.Client, httpx.Client]:
    """(staff, client) keep-alive clients of the service."""
    return (
        httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {STAFF_KEY}"}, timeout=30),
        httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {CLIENT_KEY}"}, timeout=30),
    )


def prepare(
    setup: Setup, settings: Settings, faq_entries: int, out: list[str]
) -> tuple[dict[str, list[Probe]], str]:
    """Store the FAQ, and find the variants of each kind the service answers direct; and the
    embedding model id."""
    with service_process(settings) as server:
        staff, client = clients(server.base_url)
        with staff, client:
            started = time.perf_counter()
            stored, insert_s, model = insert_faqs(staff, faq_questions(faq_entries))
            emit(
                out,
                f"http_setup setup={setup.label}: embedding_model={model} "
                f"cross_encoder={'on' if setup.cross_encoder else 'off'} "
                f"entries={len(stored)} inserted in {time.perf_counter() - started:.1f} s "
                f"direct_threshold={settings.memory_direct_threshold} "
                f"verified_direct_threshold={settings.memory_verified_direct_threshold} "
                f"similarity_threshold={similarity_threshold(settings, model)} "
                f"top_k={settings.memory_assisted_top_k}",
                figure("http_insert_ms", insert_s, setup=setup.label, route="POST/staff/memory"),
            )
            probes: dict[str, list[Probe]] = {}
            for kind in KINDS:
                found, tally = qualify(staff, stored, kind)
                scores = np.array(tally.scores or [math.nan])
                emit(
                    out,
                    f"http_qualified setup={setup.label} kind={kind}: {tally.direct} of {tally.tried} "
                    f"variants answered direct from their own entry ({tally.languages()}); "
                    f"{tally.cross_encoder} of them read by the cross-encoder; {tally.other_entry} direct "
                    f"from ANOTHER entry; {tally.below} not direct; {tally.wrong_kind} of the other "
                    f"match kind; best score min={scores.min():.4f} median={float(np.median(scores)):.4f}",
                )
                if found:
                    probes[kind] = found
    if "exact" not in probes or len(probes) < 2:
        raise RuntimeError(f"setup {setup.label}: no qualifying question for exact or cosine hits")
    return probes, model


def run_setup(setup: Setup, faq_entries: int, requests: int, warmup: int, out: list[str]) -> None:
    """Every figure of one set-up; a kind with no qualifying variant is said, not timed.

    The variants are found on one service process and timed on a second one over the same
    database: the service keeps the embeddings of recent questions (embeddings/cache.py), so a
    question it was asked before skips its embedding. The first asking of a question is timed
    apart (`*_ms`, embedding included) from its repeats (`*_repeat_ms`, embedding cached).
    """
    with tempfile.TemporaryDirectory(prefix="mg-latency-") as tmp, refusing_port() as llm_port:
        settings = service_settings(Path(tmp), llm_port, setup)
        probes, model = prepare(setup, settings, faq_entries, out)
        with service_process(settings) as server:
            staff, client = clients(server.base_url)
            with staff, client:
                # Warm-up: exact hits (no embedding) and the last variant of each other kind,
                # which is then no longer a first asking.
                asked: set[str] = set()
                warm = list(probes["exact"][-warmup:])
                warm += [found[-1] for kind, found in probes.items() if kind != "exact"]
                for probe in warm:
                    timed_chat(client, probe)
                    asked.add(probe.message)
                # Timed: the kinds interleaved so that drift hits all alike.
                first: dict[str, list[float]] = {kind: [] for kind in probes}
                again: dict[str, list[float]] = {kind: [] for kind in probes}
                cycles = {kind: itertools.cycle(found) for kind, found in probes.items()}
                for _ in range(requests):
                    for kind, cycle in cycles.items():
                        probe = next(cycle)
                        seconds = timed_chat(client, probe)
                        (again if probe.message in asked else first)[kind].append(seconds)
                        asked.add(probe.message)
                lines = []
                for kind in probes:
                    for suffix, timings in (("", first[kind]), ("_repeat", again[kind])):
                        if timings:
                            name = f"http_direct_{kind}{suffix}_ms"
                            lines.append(figure(name, timings, setup=setup.label, model=model))
                emit(out, *lines)
                memory = memory_mib(server.pid)
                emit(
                    out,
                    f"service_memory setup={setup.label}: VmRSS={memory.get('VmRSS', math.nan):.1f} MiB "
                    f"VmHWM={memory.get('VmHWM', math.nan):.1f} MiB (after loading {faq_entries} entries "
                    f"and {requests * len(probes) + len(warm)} hits)",
                )
