"""The real app served by uvicorn on loopback, and an SSE reader for its chat stream."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from memory_guard.api.app import create_app
from memory_guard.embeddings.base import Embedder
from memory_guard.settings import Settings
from tests.serving import ThreadedServer


class LiveApp:
    """create_app(settings) served on loopback; `restart()` reopens it on the same port and files."""

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, cross_encoder_file: Path | None = None
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self._cross_encoder_file = cross_encoder_file
        self.port = 0
        self._server: ThreadedServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LiveApp:
        app = create_app(self.settings, embedder=self._embedder, cross_encoder_file=self._cross_encoder_file)
        self._server = ThreadedServer(app, lifespan="on", port=self.port)
        self._server.start(timeout_s=60)
        self.port = self._server.port
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
        self._server = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> LiveApp:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@dataclass
class SseEvent:
    event: str
    data: dict[str, Any]


@dataclass
class ChatReply:
    status: int
    events: list[SseEvent]
    body: Any = None

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.event == kind]

    @property
    def kinds(self) -> list[str]:
        return [e.event for e in self.events]

    @property
    def text(self) -> str:
        return "".join(d["content"] for d in self.of("text"))

    @property
    def done(self) -> dict[str, Any]:
        (done,) = self.of("done")
        return done


def parse_sse(lines: list[str]) -> list[SseEvent]:
    events: list[SseEvent] = []
    kind: str | None = None
    data: list[str] = []
    for line in [*lines, ""]:
        if line == "":
            if kind is not None or data:
                events.append(SseEvent(kind or "message", json.loads("\n".join(data))))
            kind, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            kind = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:") :].strip())
    return events


def chat(client: httpx.Client, path: str = "/chat", **body: Any) -> ChatReply:
    """POST a chat message and read the whole SSE stream (or the JSON error)."""
    with client.stream("POST", path, json=body) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            lines = [line.rstrip("\r") for line in response.iter_lines()]
            return ChatReply(response.status_code, parse_sse(lines))
        response.read()
        return ChatReply(response.status_code, [], response.json())
