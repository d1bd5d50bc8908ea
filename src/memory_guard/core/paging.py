"""Keyset paging: a page is read one row past its limit, and its cursor is the last row's id."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from memory_guard.core.errors import InvalidRequest

Row = TypeVar("Row")

# Ids are signed 64-bit in SQLite: 18 digits always fit.
_MAX_ID_DIGITS = 18


def invalid_cursor() -> InvalidRequest:
    return InvalidRequest("cursor is not one this service gave out", code="invalid_cursor")


def id_cursor(cursor: str | None) -> int | None:
    """The id a page ends before: the `next_cursor` the previous page gave out."""
    if cursor is None or cursor == "":
        return None
    if not cursor.isdigit() or len(cursor) > _MAX_ID_DIGITS:
        raise invalid_cursor()
    return int(cursor)


def cut_page(rows: Sequence[Row], limit: int, id_of: Callable[[Row], int]) -> tuple[list[Row], int | None]:
    """`rows` read with `limit + 1`: the page, and the id the next one starts before (None: the last)."""
    page = list(rows[:limit])
    return page, (id_of(page[-1]) if len(rows) > limit and page else None)
