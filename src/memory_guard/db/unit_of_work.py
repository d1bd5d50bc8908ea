"""The transaction the current task holds, shared by both backends.

A transaction opened while the same task already holds one of the same database joins it (a unit
of work): the store calls of one logical change commit together without passing the connection
around. What must happen only once the change is durable (the in-memory index showing it) is
queued with `after_commit`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Unit:
    database: object
    connection: Any  # the backend's connection, handed again to a transaction that joins
    open: bool = True
    on_commit: list[Callable[[], None]] = field(default_factory=list)


_unit: ContextVar[Unit | None] = ContextVar("memory_guard_unit_of_work", default=None)


def joinable(database: object) -> Unit | None:
    """The current task's open transaction on `database`, if it holds one."""
    unit = _unit.get()
    return unit if unit is not None and unit.open and unit.database is database else None


@contextmanager
def holding(database: object, connection: Any) -> Iterator[Unit]:
    """Mark the current task as holding a transaction of `database` on `connection`; the caller
    commits or rolls back, then runs `unit.on_commit` once committed."""
    unit = Unit(database, connection)
    token = _unit.set(unit)
    try:
        yield unit
    finally:
        unit.open = False
        _unit.reset(token)


def after_commit(action: Callable[[], None]) -> None:
    """Run `action` once the current task's transaction commits (never if it rolls back), or now
    when none is open: in-memory state (the index) must not show what the database may undo."""
    unit = _unit.get()
    if unit is not None and unit.open:
        unit.on_commit.append(action)
    else:
        action()
