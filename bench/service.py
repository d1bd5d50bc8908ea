"""`memory-guard serve` in its own process, for benchmarks that time it from outside.

`service_process` runs the installed code with a `Settings`; `tree_process` runs the code of any
source tree (another commit checked out elsewhere) with the current interpreter and
`PYTHONPATH=<tree>/src`, configured only through environment variables, and says how long the
process took from its start to its first ready `/readyz`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from memory_guard.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Service:
    base_url: str
    pid: int  # of the `memory-guard serve` process, for its /proc/PID/status


def memory_mib(pid: int) -> dict[str, float]:
    """VmRSS (resident now) and VmHWM (resident peak) of a Linux process, in MiB."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024  # the kernel says kB
    return found


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
        wait_ready(process, base_url, timeout_s=60, poll_s=0.1)
        yield Service(base_url, process.pid)
    finally:
        process.terminate()
        process.wait(timeout=15)


def wait_ready(process: subprocess.Popen[bytes], base_url: str, *, timeout_s: float, poll_s: float) -> None:
    """Poll `/readyz` until it answers 200; raise if the process exits or the time runs out."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=2) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"memory-guard serve exited with {process.returncode}")
            try:
                if client.get(f"{base_url}/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"memory-guard serve did not become ready in {timeout_s:.0f} s")
            time.sleep(poll_s)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tree_env(tree: Path, values: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any memory-guard setting, with `values` and the
    tree's sources first on the import path."""
    ours = {name.upper() for name in Settings.model_fields}
    env = {name: value for name, value in os.environ.items() if name not in ours}
    env["PYTHONPATH"] = str(tree / "src")
    env.update(values)
    return env


def imported_from(tree: Path, workdir: Path) -> Path:
    """Where the interpreter finds `memory_guard` when run for `tree`; raise if not in it."""
    probe = subprocess.run(
        [sys.executable, "-c", "import memory_guard; print(memory_guard.__file__)"],
        env=tree_env(tree, {}),
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    found = Path(probe.stdout.strip()).resolve()
    if not found.is_relative_to((tree / "src").resolve()):
        raise RuntimeError(f"memory_guard for {tree} is imported from {found}, not from that tree")
    return found


@dataclass(frozen=True, slots=True)
class TreeService:
    base_url: str
    ready_s: float  # from the process's start to the first 200 of /readyz
    log: Path


@contextmanager
def tree_process(
    tree: Path, values: Mapping[str, str], workdir: Path, *, ready_timeout_s: float = 180
) -> Iterator[TreeService]:
    """`memory-guard serve` from `tree`'s sources, run in `workdir` (no `.env` there), its
    settings given as environment variables (`values`), its output kept in a log file."""
    port = free_port()
    log = workdir / f"serve-{port}.log"
    base_url = f"http://127.0.0.1:{port}"
    with log.open("wb") as sink:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "memory_guard", "serve", "--port", str(port)],
            env=tree_env(tree, {"LOG_LEVEL": "WARNING", **values}),
            cwd=workdir,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_ready(process, base_url, timeout_s=ready_timeout_s, poll_s=0.01)
            yield TreeService(base_url, time.perf_counter() - started, log)
        except BaseException:
            tail = log.read_text(errors="replace")[-3000:]
            print(f"memory-guard serve ({tree}) logged, to its end:\n{tail}", file=sys.stderr, flush=True)
            raise
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


@contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port bound but not listening: a connection to it is refused at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])
    finally:
        sock.close()
