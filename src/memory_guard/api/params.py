"""Path and query parameters shared by the routers, bounded where they enter.

SQLite integers are signed 64-bit: a larger id would raise OverflowError deep in the driver, so ids
and cursors are held to that range here and answer 422 instead.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Depends, Path, Query

from memory_guard.core.errors import InvalidRequest

MAX_ID = 2**63 - 1

Id = Annotated[int, Path(ge=1, le=MAX_ID)]
OptionalId = Annotated[int | None, Query(ge=1, le=MAX_ID)]
ConversationId = Annotated[str, Path(min_length=1, max_length=200)]
# The cursors this service gives out are decimal integers; at most 18 digits stays below 2**63. A
# semantic search's is two of them, `score:id` (its ranking is by score, then id). ASCII digits only:
# str.isdigit() takes "²", which int() then refuses.
_CURSOR = re.compile(r"[0-9]{1,18}(:[0-9]{1,18})?")


def _cursor(
    cursor: Annotated[
        str | None, Query(max_length=40, description="the next_cursor of the previous page, as given")
    ] = None,
) -> str | None:
    if cursor and not _CURSOR.fullmatch(cursor):
        raise InvalidRequest("cursor is not one this service gave out", code="invalid_cursor")
    return cursor


Cursor = Annotated[str | None, Depends(_cursor)]
