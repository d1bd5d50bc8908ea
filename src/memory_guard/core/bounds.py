"""Limits on free-form input: text that is valid Unicode, JSON values of bounded depth and size.

Both are checked where input enters (request bodies, import lines) so that nothing past the edge
meets a lone surrogate that cannot be encoded (SQLite, the upstream, the SSE writer would fail
midway) or a structure deep enough to exhaust the recursion of json or pydantic.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from memory_guard.core.clock import accepted, accepted_day

MAX_JSON_DEPTH = 32


def valid_text(value: str) -> str:
    """Refuses a string that UTF-8 cannot encode (a lone surrogate such as JSON's "\\ud800")."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"the text holds an unpaired surrogate at character {exc.start} (not valid Unicode)"
        ) from None
    return value


def bounded_json(value: Any, max_chars: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Refuses a JSON value nested deeper than `max_depth`, longer than `max_chars` once written
    as JSON, or holding text that is not valid Unicode. Walks without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str):
            valid_text(item)
    size = len(json.dumps(value, ensure_ascii=False))
    if size > max_chars:
        raise ValueError(f"{size} characters once written as JSON; the limit is {max_chars}")
    return value


# Field types for the request and import models: pydantic turns the ValueError into a 422 naming the field.
# A lone surrogate ("\\ud800" in JSON) parses, then fails wherever it is encoded (SQLite, the upstream
# request, the SSE stream), after the answer has begun: every text is checked on the way in.
Text = Annotated[str, AfterValidator(valid_text)]
Tag = Annotated[str, Field(max_length=200), AfterValidator(valid_text)]
# A moment the service can store (clock.accepted): 1970..9998 once in UTC; without an offset, UTC.
Moment = Annotated[datetime, AfterValidator(accepted)]
Day = Annotated[date, AfterValidator(accepted_day)]
