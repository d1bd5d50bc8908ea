"""`memory-guard serve` in a child process, as an operator starts it: for the tests of what the
command itself does (its log, its key file), which an app served in the test's own process cannot
show."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

START_S = 120  # the models load at start


@dataclass
class ServedProcess:
    url: str
    process: subprocess.Popen[str]
    output: str = ""  # everything it printed, once it has stopped


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def served_process(args: Sequence[str], env: Mapping[str, str], cwd: Path) -> Iterator[ServedProcess]:
    """`python -m memory_guard serve --port P *args`, yielded once /healthz answers; stopped on
    exit, its output then in `output`."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "memory_guard", "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(env),
        cwd=cwd,
    )
    served = ServedProcess(f"http://127.0.0.1:{port}", process)
    try:
        deadline = time.monotonic() + START_S
        while True:
            assert process.poll() is None, "the service stopped"
            assert time.monotonic() < deadline, "the service did not start"
            try:
                if httpx.get(f"{served.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield served
    finally:
        process.terminate()
        served.output, _ = process.communicate(timeout=30)
