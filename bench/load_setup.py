"""The frame of the load benchmark: the trees under test (a commit checked out as a git worktree,
or any directory), their settings, the fake upstream's process, and the report with its table."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from bench.load_traffic import API_KEYS
from bench.service import free_port, imported_from

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Tree:
    name: str
    path: Path
    describe: str
    embedding_model: str | None = None  # EMBEDDING_MODEL for its service; None: the tree's default


class Report:
    """The raw lines as measured, and the figures each tree got, for the closing table."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.lines: list[str] = []
        self.figures: dict[str, tuple[str, dict[str, list[float]]]] = {}

    def emit(self, *lines: str) -> None:
        for line in lines:
            print(line, flush=True)
            self.lines.append(line)

    def add(self, figure: str, unit: str, tree: str, value: float) -> None:
        self.figures.setdefault(figure, (unit, {}))[1].setdefault(tree, []).append(value)

    def table(self) -> list[str]:
        head = ["figure", "unit", *self.names]
        if len(self.names) > 1:
            head.append(f"{self.names[-1]} / {self.names[0]}")
        rows = [head]
        for figure, (unit, values) in self.figures.items():
            medians = [statistics.median(values[n]) if n in values else None for n in self.names]
            row = [figure, unit, *("-" if m is None else f"{m:.4g}" for m in medians)]
            if len(self.names) > 1:
                first, last = medians[0], medians[-1]
                row.append(f"{last / first:.2f}" if first and last is not None else "-")
            rows.append(row)
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        return [
            "  ".join(
                cell.ljust(w) if i < 2 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
            for row in rows
        ]


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(seconds, dtype=np.float64) * 1000.0, q))


# ------------------------------------------------------------------ trees and processes


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@contextmanager
def checkout(commit: str, tmp: Path) -> Iterator[Path]:
    """`commit` as a detached git worktree under `tmp`, removed (and pruned) afterwards."""
    path = tmp / f"tree-{commit}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(path), commit], check=True
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)


def resolve_trees(specs: Sequence[str], base: str, tmp: Path, stack: ExitStack) -> list[Tree]:
    trees: list[Tree] = []
    for spec in specs:
        path = stack.enter_context(checkout(base, tmp)) if spec == "base" else Path(spec).resolve()
        try:
            head = _git(path, "rev-parse", "--short", "HEAD")
            changed = bool(_git(path, "status", "--porcelain", "--", "src"))
            name = f"{head}+changes" if changed else head
            state = f"HEAD {head}{', src/ changed' if changed else ''}"
        except (OSError, subprocess.CalledProcessError):
            name, state = path.name, "not a git checkout"
        while name in {t.name for t in trees}:
            name += "'"
        found = imported_from(path, tmp)
        trees.append(Tree(name, path, f"{name}: {path} ({state}), imports {found}"))
    return trees


def service_env(database: Path, upstream_url: str, embedding_model: str | None = None) -> dict[str, str]:
    """A tree's settings. Only variables every tree of this bench knows: a tree ignores unknown
    ones, but would then run something else than the figures say."""
    model = {} if embedding_model is None else {"EMBEDDING_MODEL": embedding_model}
    return model | {
        "MEMORY_DB_PATH": str(database),
        "API_KEYS": API_KEYS,
        "EMBEDDING_PROVIDER": "local",
        "LLM_BASE_URL": upstream_url,
        "LLM_API_KEY": "sk-bench-unused",
        "LLM_MAX_RETRIES": "0",
        "LLM_TIMEOUT_S": "20",
    }


@contextmanager
def fake_upstream(tmp: Path) -> Iterator[str]:
    """bench/upstream.py in its own process; its base URL."""
    port = free_port()
    log = (tmp / "upstream.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "upstream.py"), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"messages": []}, timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the fake upstream did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
