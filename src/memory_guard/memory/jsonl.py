"""Entries as JSON Lines: what `export` writes and `import` reads, one entry per line.

A line carries an entry's texts, status, source, scope, tags, metadata and explicit expiry, and
its question variants (`variants`, present when it has some: each variant's wording, status,
origin and confirmations). The tenant never travels in a file (it comes from the key or the
command line), nor do the vectors: an import re-embeds with the configured model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from memory_guard.core.bounds import Moment, Tag, Text, bounded_json
from memory_guard.core.clock import to_text
from memory_guard.core.field_errors import describe_field_errors
from memory_guard.core.scope import Scope
from memory_guard.memory.entry import Entry, Source, Status, clean_tags
from memory_guard.memory.variant import MAX_VARIANTS, Variant, VariantOrigin, VariantStatus

_NAME = Field(default="", max_length=200)
# Metadata is stored and exported as it came: kept to a size and depth a real entry never reaches.
MAX_METADATA_CHARS = 20_000
Metadata = Annotated[dict[str, Any], AfterValidator(lambda value: bounded_json(value, MAX_METADATA_CHARS))]


class _VariantLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Text = Field(min_length=1, max_length=16_000)
    status: VariantStatus = VariantStatus.VALIDATED
    origin: VariantOrigin = VariantOrigin.STAFF
    confirmations: int = Field(default=1, ge=0, le=1_000_000)


class _Line(BaseModel):
    # Unknown fields are refused so that a misspelt one ("answr") is an error, not lost data.
    model_config = ConfigDict(extra="forbid")

    question: Text = Field(min_length=1, max_length=16_000)
    answer: Text = Field(min_length=1, max_length=100_000)
    status: Status = Status.VALIDATED
    source: Source = Source.STAFF
    agent: Text = _NAME
    project: Text = _NAME
    phase: Text = _NAME
    tags: list[Tag] = Field(default_factory=list, max_length=50)
    metadata: Metadata = Field(default_factory=dict)
    expires_at: Moment | None = None
    variants: list[_VariantLine] = Field(default_factory=list, max_length=MAX_VARIANTS)
    # Written by `export` for the reader's information; an import sets its own.
    id: int | None = None
    usage_count: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    last_used_at: str | None = None
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class LineError:
    """What is wrong with a line: in English, and as a stable code with its parameters, which the
    staff page words in its own language."""

    line: int
    message: str
    code: str = "invalid_line"
    params: dict[str, Any] = field(default_factory=dict)

    def to_public(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message, "code": self.code, "params": self.params}


class LineProblem(ValueError):
    def __init__(self, message: str, code: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@dataclass(frozen=True, slots=True)
class LineVariant:
    question: str
    status: VariantStatus
    origin: VariantOrigin
    confirmations: int


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
    variants: list[LineVariant] = field(default_factory=list)


def export_line(entry: Entry, variants: Sequence[Variant] = ()) -> str:
    wordings = [
        {
            "question": v.question,
            "status": v.status.value,
            "origin": v.origin.value,
            "confirmations": v.confirmations,
        }
        for v in variants
    ]
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
            **({"variants": wordings} if wordings else {}),
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
        except LineProblem as exc:
            errors.append(LineError(number, str(exc), exc.code, exc.params))
        except ValueError as exc:
            errors.append(LineError(number, str(exc)))
    return parsed, errors


def _parse(number: int, text: str, tenant: str, default_agent: str) -> ImportLine:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineProblem(
            f"not valid JSON ({exc.msg}, column {exc.colno})", "invalid_json", column=exc.colno
        ) from None
    except RecursionError:
        raise LineProblem("the JSON is nested too deeply", "too_deep") from None
    if not isinstance(raw, dict):
        raise LineProblem("a line must be a JSON object", "not_an_object")
    raw.pop("tenant", None)  # the tenant comes from the key, never from the file
    try:
        line = _Line.model_validate(raw)
    except ValidationError as exc:
        fields = dict.fromkeys(str(p["loc"][0]) if p.get("loc") else "line" for p in exc.errors())
        problems = describe_field_errors(exc.errors(), unnamed="line")
        raise LineProblem(problems, "invalid_fields", fields=", ".join(fields)) from None
    if not line.question.strip() or not line.answer.strip():
        raise LineProblem("question and answer must not be blank", "blank_text")
    if any(not variant.question.strip() for variant in line.variants):
        raise LineProblem("a variant's question must not be blank", "blank_variant")
    return ImportLine(
        line=number,
        scope=Scope(tenant, line.agent or default_agent, line.project, line.phase),
        question=line.question,
        answer=line.answer,
        status=line.status,
        source=line.source,
        tags=clean_tags(line.tags),
        metadata=line.metadata,
        expires_at=line.expires_at,
        variants=[LineVariant(v.question, v.status, v.origin, v.confirmations) for v in line.variants],
    )
