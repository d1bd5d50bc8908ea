"""Text cut to a number of characters, the cut marked with an ellipsis."""

from __future__ import annotations

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its first `limit - 1` and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
