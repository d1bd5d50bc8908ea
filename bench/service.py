"""`memory-guard serve` in its own process, for benchmarks that time it from outside."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from memory_guard.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Service:
    base_url: str


@contextmanager
def service_process(settings: Settings) -> Iterator[Service]:
    """`memory-guard serve` in its own process, as in production: the timing client does not
    share its GIL. The settings travel as environment variables."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ)
    for name, value in settings.model_dump().items():
        raw = value.get_secret_value() if hasattr(value, "get_secret_value") else value
        env[name.upper()] = "" if raw is None else str(raw).lower() if isinstance(raw, bool) else str(raw)
    env["LOG_LEVEL"] = "WARNING"
    process = subprocess.Popen(
        [sys.executable, "-m", "memory_guard", "serve", "--port", str(port)], env=env, cwd=ROOT
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"memory-guard serve exited with {process.returncode}")
            try:
                if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("memory-guard serve did not become ready in 60 s")
            time.sleep(0.1)
        yield Service(base_url)
    finally:
        process.terminate()
        process.wait(timeout=15)


@contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port bound but not listening: a connection to it is refused at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])
    finally:
        sock.close()
