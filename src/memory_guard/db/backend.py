"""Which database the service uses (`DATABASE_URL`), and the surface both backends offer.

SQLite (db/database.py) is the default and the only backend the service runs on today.
PostgreSQL (db/postgres.py) has its database layer and migrations, but not yet its stores: until
`POSTGRES_MISSING` is empty, a `postgresql://` URL stops the start with the list of what is
missing, rather than run a service that keeps part of its state in a SQLite file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memory_guard.db.database import Database
from memory_guard.db.migrations import Dialect
from memory_guard.settings import Settings

# The stores that have no PostgreSQL version yet (docs/DEVELOPMENT.md, "PostgreSQL backend": how
# to port one). A store leaves this list when it runs on both and its tests do.
POSTGRES_MISSING: tuple[str, ...] = (
    "memory entries (memory/sqlite_store.py)",
    "question variants (memory/variant_store.py)",
    "audit log (memory/audit_store.py)",
    "import staging (memory/import_store.py)",
    "lookup log (memory/lookup_store.py)",
    "feedback proposals (memory/proposal_store.py)",
    "conversations (conversations/sqlite_store.py)",
    "served hits (hits/sqlite_store.py)",
)


class BackendNotComplete(ValueError):
    """The configured backend cannot run the service yet."""


class Connection(Protocol):
    """The connection a transaction hands a store, on either backend: `?` placeholders; read the
    cursor `execute` gives with `await cursor.fetchone()` / `fetchall()`, and its `rowcount`."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Awaitable[Any]: ...
    def executemany(self, sql: str, params: Sequence[Sequence[Any]], /) -> Awaitable[Any]: ...


class Backend(Protocol):
    """What the stores and the bookkeeping use of a database, on either backend."""

    dialect: Dialect
    transient: tuple[type[Exception], ...]

    def transaction(self) -> AbstractAsyncContextManager[Connection]: ...
    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    async def fetch_all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...
    async def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> Any | None: ...
    def iterate(self, sql: str, params: Sequence[Any] = (), batch: int = 1000) -> AsyncIterator[Any]: ...
    def batches(
        self, sql: str, params: Sequence[Any] = (), batch: int = 1000
    ) -> AsyncIterator[list[Any]]: ...
    async def reserve_id(self, table: str) -> int: ...
    async def ping(self) -> bool: ...
    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SqliteTarget:
    path: Path


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    url: str  # holds the password when the URL does: never log it


_SQLITE = "sqlite:///"
_POSTGRES = ("postgresql://", "postgres://")


def target_of(settings: Settings) -> SqliteTarget | PostgresTarget:
    """The database `DATABASE_URL` names; unset, MEMORY_DB_PATH's SQLite file."""
    url = settings.database_url.get_secret_value().strip()
    if not url:
        return SqliteTarget(settings.memory_db_path)
    if url.startswith(_SQLITE):
        # sqlite:///data/x.db is relative, sqlite:////srv/x.db absolute (SQLAlchemy's reading).
        path = Path(url.removeprefix(_SQLITE))
        if not url.removeprefix(_SQLITE):
            raise ValueError("DATABASE_URL=sqlite:/// names no file: write sqlite:///PATH")
        if "memory_db_path" in settings.model_fields_set and path != settings.memory_db_path:
            raise ValueError(
                f"DATABASE_URL names the SQLite file {path} and MEMORY_DB_PATH {settings.memory_db_path}: "
                "set one of them"
            )
        return SqliteTarget(path)
    if url.startswith(_POSTGRES):
        return PostgresTarget(url)
    scheme = url.split(":", 1)[0] if ":" in url else "none"
    raise ValueError(
        f"DATABASE_URL must be sqlite:///PATH or postgresql://USER@HOST/DATABASE (scheme {scheme!r})"
    )


def supported_target(settings: Settings) -> SqliteTarget:
    """The database to open, or a ValueError saying why the service cannot run on it."""
    target = target_of(settings)
    if isinstance(target, PostgresTarget):
        raise BackendNotComplete(
            "DATABASE_URL names a PostgreSQL database, but the PostgreSQL backend is not complete yet: "
            f"these stores have no PostgreSQL version: {', '.join(POSTGRES_MISSING)}. "
            "Unset DATABASE_URL (or use sqlite:///PATH) to run on SQLite."
        )
    return target


async def open_database(settings: Settings) -> Database:
    """The service's database, migrated; SQLite only until the PostgreSQL stores exist."""
    return await Database.open(supported_target(settings).path)
