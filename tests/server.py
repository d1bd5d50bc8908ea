"""The real app served by uvicorn on loopback, and an SSE reader for its chat stream."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
import uvicorn

from memory_guard.api.app import create_app
from memory_guard.embeddings.base import Embedder
from memory_guard.settings import Settings


class LiveApp:
    """create_app(settings) under uvicorn in a thread; `restart()` reopens it on the same files."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._embedder = embedder
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LiveApp:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        app = create_app(self.settings, embedder=self._embedder)
        config = uvicorn.Config(
            app, lifespan="on", log_config=None, access_log=False, timeout_graceful_shutdown=3
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the app failed to start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self._server = self._thread = None

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
