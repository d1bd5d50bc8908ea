"""The conversation as the LLM sees it: recent messages verbatim, older ones summarized.

The summary is extractive (the opening of each older message) rather than written by
the LLM: it costs no extra paid call, and it is the same every time it is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_guard.conversations.store import Message
from memory_guard.core.shorten import shorten
from memory_guard.upstream.llm import ChatMessage

_LINE_CHARS = 160
_SUMMARY_CHARS = 3000


@dataclass(frozen=True, slots=True)
class History:
    summary: str | None
    recent: list[ChatMessage]


def build_history(messages: Sequence[Message], keep: int) -> History:
    older = messages[: max(0, len(messages) - keep)]
    recent = messages[len(older) :]
    return History(_summarize(older), [{"role": m.role, "content": m.content} for m in recent])


def _summarize(older: Sequence[Message]) -> str | None:
    if not older:
        return None
    lines: list[str] = []
    budget = _SUMMARY_CHARS
    # Newest first, so that when the budget runs out it is the oldest turns that go.
    for message in reversed(older):
        text = shorten(" ".join(message.content.split()), _LINE_CHARS)
        line = f"- {'Utilisateur' if message.role == 'user' else 'Assistant'} : {text}"
        if len(line) > budget:
            break
        lines.append(line)
        budget -= len(line) + 1
    return "\n".join(reversed(lines))
