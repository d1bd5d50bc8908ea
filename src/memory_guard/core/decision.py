"""What the guard does with a question: answer from memory, ground the LLM, or neither."""

from __future__ import annotations

from enum import StrEnum


class Decision(StrEnum):
    DIRECT = "direct"
    ASSISTED = "assisted"
    MISS = "miss"


DECISIONS = tuple(d.value for d in Decision)  # the stats' and the log's order
