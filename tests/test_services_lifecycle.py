"""Opening and closing every resource: a start-up that fails midway leaves nothing open."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from memory_guard.embeddings.base import Vectors
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.services import Services
from memory_guard.settings import Settings
from tests.fakes import ScriptedChatModel


class ClosingChatModel(ScriptedChatModel):
    def __init__(self, closed: list[str]) -> None:
        super().__init__([])
        self._closed = closed

    async def aclose(self) -> None:
        self._closed.append("chat model")


class ClosingEmbedder:
    """A hashing embedder that says when it is closed; `broken`: its width cannot be known."""

    def __init__(self, closed: list[str], broken: bool = False) -> None:
        self._inner = HashingEmbedder()
        self._closed = closed
        self._broken = broken
        self.model_id = self._inner.model_id

    @property
    def dimension(self) -> int:
        if self._broken:
            raise RuntimeError("the model file is damaged")
        return self._inner.dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await self._inner.embed(texts)

    async def aclose(self) -> None:
        self._closed.append("embedder")


def _open_files(path: Path) -> list[str]:
    """This process's open file descriptors on the database file or its WAL and shared memory."""
    fds = Path("/proc/self/fd")
    found = []
    for fd in os.listdir(fds):
        try:
            target = os.readlink(fds / fd)
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return Settings(_env_file=None, memory_db_path=tmp_path / "m.db", **overrides)  # type: ignore[call-arg]


async def test_an_embedder_failing_at_start_up_leaves_nothing_open(tmp_path: Path) -> None:
    closed: list[str] = []
    with pytest.raises(RuntimeError, match="damaged"):
        await Services.open(
            _settings(tmp_path),
            embedder=ClosingEmbedder(closed, broken=True),  # type: ignore[arg-type]
            chat_model=ClosingChatModel(closed),
        )
    assert closed == ["chat model", "embedder"]
    assert _open_files(tmp_path / "m.db") == []


async def test_a_broken_agents_file_leaves_nothing_open(tmp_path: Path) -> None:
    agents = tmp_path / "agents.json"
    agents.write_text("{not json", encoding="utf-8")
    closed: list[str] = []
    with pytest.raises(ValueError, match="AGENTS_FILE"):
        await Services.open(
            _settings(tmp_path, agents_file=agents),
            embedder=ClosingEmbedder(closed),  # type: ignore[arg-type]
            chat_model=ClosingChatModel(closed),
        )
    assert closed == ["chat model", "embedder"]
    assert _open_files(tmp_path / "m.db") == []


async def test_closing_releases_the_database_last(tmp_path: Path) -> None:
    closed: list[str] = []
    services = await Services.open(
        _settings(tmp_path),
        embedder=ClosingEmbedder(closed),  # type: ignore[arg-type]
        chat_model=ClosingChatModel(closed),
    )
    assert _open_files(tmp_path / "m.db") != []
    await services.aclose()
    assert closed == ["chat model", "embedder"]
    assert _open_files(tmp_path / "m.db") == []
