"""DATABASE_URL: SQLite by default, another SQLite file by URL, and PostgreSQL refused at start,
naming what is missing, until every store runs on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_guard.db.backend import (
    POSTGRES_MISSING,
    BackendNotComplete,
    PostgresTarget,
    SqliteTarget,
    open_database,
    target_of,
)
from memory_guard.services import Services
from memory_guard.settings import Settings


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, embedding_provider="hashing", **values)  # type: ignore[call-arg]


def test_unset_is_memory_db_path(tmp_path: Path) -> None:
    assert target_of(settings(memory_db_path=tmp_path / "m.db")) == SqliteTarget(tmp_path / "m.db")
    assert target_of(settings()) == SqliteTarget(Path("data/agents_memory.db"))


def test_a_sqlite_url_names_the_file() -> None:
    assert target_of(settings(database_url="sqlite:///data/x.db")) == SqliteTarget(Path("data/x.db"))
    assert target_of(settings(database_url="sqlite:////srv/x.db")) == SqliteTarget(Path("/srv/x.db"))
    # The same file twice is no conflict.
    same = settings(database_url="sqlite:///data/x.db", memory_db_path="data/x.db")
    assert target_of(same) == SqliteTarget(Path("data/x.db"))


def test_two_different_files_or_an_unknown_scheme_are_refused() -> None:
    with pytest.raises(ValueError, match="set one of them"):
        target_of(settings(database_url="sqlite:///a.db", memory_db_path="b.db"))
    with pytest.raises(ValueError, match="names no file"):
        target_of(settings(database_url="sqlite:///"))
    with pytest.raises(ValueError, match=r"scheme 'mysql'") as refused:
        target_of(settings(database_url="mysql://root:hunter2@db/memory"))
    assert "hunter2" not in str(refused.value)


def test_a_postgresql_url_is_postgresql() -> None:
    for url in ("postgresql://mg:pw@db:5432/memory", "postgres://mg@db/memory"):
        assert target_of(settings(database_url=url)) == PostgresTarget(url)


async def test_the_service_refuses_to_start_on_postgresql_and_writes_no_sqlite_file(tmp_path: Path) -> None:
    configured = settings(
        database_url="postgresql://mg:hunter2@127.0.0.1:1/memory", memory_db_path=tmp_path / "m.db"
    )
    with pytest.raises(BackendNotComplete) as refused:
        await Services.open(configured)
    message = str(refused.value)
    assert "the PostgreSQL backend is not complete yet" in message
    assert all(store in message for store in POSTGRES_MISSING)
    assert "hunter2" not in message
    assert not (tmp_path / "m.db").exists(), "nothing is kept on SQLite meanwhile"


async def test_the_sqlite_url_is_the_file_the_service_opens(tmp_path: Path) -> None:
    db = await open_database(settings(database_url=f"sqlite:///{tmp_path / 'via-url.db'}"))
    try:
        assert await db.ping()
    finally:
        await db.close()
    assert (tmp_path / "via-url.db").exists()


def test_serve_on_postgresql_stops_at_once_with_one_clear_line(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": "postgresql://mg:hunter2@127.0.0.1:1/memory",
        "EMBEDDING_PROVIDER": "hashing",
    }
    done = subprocess.run(
        [sys.executable, "-m", "memory_guard", "serve", "--port", "0"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "memory-guard: DATABASE_URL names a PostgreSQL database, but the PostgreSQL"
    )
    assert "Traceback" not in done.stderr and "hunter2" not in done.stderr
    assert not (tmp_path / "data").exists()
