"""An ASGI app served by uvicorn on a free loopback port, in a daemon thread."""

from __future__ import annotations

import socket
import threading
import time
from typing import Literal

import uvicorn
from starlette.types import ASGIApp


class ThreadedServer:
    def __init__(self, app: ASGIApp, *, lifespan: Literal["on", "off"] = "off", port: int = 0) -> None:
        self.app = app
        self.lifespan = lifespan
        self.port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout_s: float = 20.0) -> None:
        # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on accepted sockets whose
        # proto is TCP, and they inherit it from this one. Without it every response waits ~40 ms.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            http="h11",
            lifespan=self.lifespan,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on port {self.port} failed to start")
            time.sleep(0.005)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self._server = self._thread = None
