"""Entries as JSON Lines: what `export` writes and `import` reads, one entry per line.

A line carries an entry's texts, status, source, scope, tags, metadata and explicit expiry.
The tenant never travels in a file (it comes from the key or the command line), nor does
the vector: an import re-embeds with the configured model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory_guard.clock import to_text
from memory_guard.memory.entry import Entry, Scope, Source, Status

_NAME = Field(default="", max_length=200)


class _Line(BaseModel):
    # Unknown fields are refused so that a misspelt one ("answr") is an error, not lost data.
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=16_000)
    answer: str = Field(min_length=1, max_length=100_000)
    status: Status = Status.VALIDATED
    source: Source = Source.STAFF
    agent: str = _NAME
    project: str = _NAME
    phase: str = _NAME
    tags: list[str] = Field(default_factory=list, max_length=50)
    metadata: dict[str, Any] = Field(default_factory=dict)
    expires_at: datetime | None = None
    # Written by `export` for the reader's information; an import sets its own.
    id: int | None = None
    usage_count: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    last_used_at: str | None = None
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    message: str

    def to_public(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message}


@dataclass(frozen=True, slots=True)
class ImportLine:
    line: int
    scope: Scope
    question: str
    answer: str
    status: Status
    source: Source
    tags: list[str]
    metadata: dict[str, Any]
    expires_at: datetime | None


def export_line(entry: Entry) -> str:
    return json.dumps(
        {
            "id": entry.id,
            "question": entry.question,
            "answer": entry.answer,
            "status": entry.status.value,
            "source": entry.source.value,
            "agent": entry.scope.agent,
            "project": entry.scope.project,
            "phase": entry.scope.phase,
            "tags": list(entry.tags),
            "metadata": dict(entry.metadata),
            "expires_at": to_text(entry.expires_at) if entry.expires_at else None,
            "usage_count": entry.usage_count,
            "created_at": to_text(entry.created_at),
            "updated_at": to_text(entry.updated_at),
        },
        ensure_ascii=False,
    )


def parse_lines(
    lines: Iterable[str], tenant: str, default_agent: str
) -> tuple[list[ImportLine], list[LineError]]:
    """Every well-formed line, and what is wrong with each other one (numbered from 1)."""
    parsed: list[ImportLine] = []
    errors: list[LineError] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            parsed.append(_parse(number, text, tenant, default_agent))
        except ValueError as exc:
            errors.append(LineError(number, str(exc)))
    return parsed, errors


def _parse(number: int, text: str, tenant: str, default_agent: str) -> ImportLine:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise ValueError("a line must be a JSON object")
    raw.pop("tenant", None)  # the tenant comes from the key, never from the file
    try:
        line = _Line.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(_describe(exc)) from None
    if not line.question.strip() or not line.answer.strip():
        raise ValueError("question and answer must not be blank")
    expiry = line.expires_at
    if expiry is not None and expiry.tzinfo is None:
        expiry = expiry.replace(tzinfo=UTC)
    return ImportLine(
        line=number,
        scope=Scope(tenant, line.agent or default_agent, line.project, line.phase),
        question=line.question,
        answer=line.answer,
        status=line.status,
        source=line.source,
        tags=[tag.strip() for tag in line.tags if tag.strip()],
        metadata=line.metadata,
        expires_at=expiry,
    )


def _describe(exc: ValidationError) -> str:
    problems = []
    for problem in exc.errors():
        field = ".".join(str(part) for part in problem.get("loc", ())) or "line"
        problems.append(f"{field}: {problem.get('msg', 'invalid')}")
    return "; ".join(problems)
