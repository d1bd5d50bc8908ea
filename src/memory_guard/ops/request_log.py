"""The service's log lines: one access line per request, and the two formats (LOG_FORMAT).

The access line (logger `memory_guard.access`) carries its values as a `fields` mapping on the
record, never inside the message, so that each format renders them its own way: `json` as keys of
the line's object, `text` as `key=value` pairs after the message. It names the request, its route
template, tenant, status, the guard's decision, score and verdict, the latency and the upstream
tokens; never a key, a header, a setting's secret nor the question, which are not in the facts it
is built from.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from memory_guard.ops.request_context import RequestFacts

ACCESS_LOGGER = "memory_guard.access"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

LogFormat = Literal["json", "text"]

access_logger = logging.getLogger(ACCESS_LOGGER)


def access_fields(facts: RequestFacts, status: int, latency_ms: float) -> dict[str, Any]:
    return {
        "request_id": facts.request_id,
        "method": facts.method,
        "route": facts.route,
        "status": status,
        "tenant": facts.tenant,
        "decision": facts.decision,
        "score": round(facts.score, 4) if facts.score is not None else None,
        "verdict": facts.verdict,
        "latency_ms": round(latency_ms, 1),
        "prompt_tokens": facts.prompt_tokens,
        "completion_tokens": facts.completion_tokens,
        "tokens_saved": facts.tokens_saved,
        "error": facts.error,
    }


def log_request(facts: RequestFacts, status: int, latency_ms: float) -> None:
    if not access_logger.isEnabledFor(logging.INFO):
        return  # not even the fields are gathered: this runs on every request
    access_logger.info(
        "%s %s %d",
        facts.method,
        facts.route or "-",
        status,
        extra={"fields": access_fields(facts, status, latency_ms)},
    )


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the record's fields, and the
    exception's traceback when there is one (escaped into the line, never over several)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """The classic line, with the record's fields appended as `key=value` (JSON-quoted when a
    value holds a space, a quote or a line break, so that a line stays one line)."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = super().formatMessage(record)
        fields = getattr(record, "fields", None)
        if not fields:
            return message
        return message + " " + " ".join(f"{key}={_text_value(value)}" for key, value in fields.items())


def _text_value(value: Any) -> str:
    if value is None:
        return "-"
    text = str(value)
    if not text or any(c.isspace() or c in '"=' for c in text):
        return json.dumps(text, ensure_ascii=False)
    return text


def configure_logging(level: str, log_format: LogFormat) -> None:
    """Every logger of the process (uvicorn's included, which must then run with log_config=None)
    writes through one handler on stderr in the chosen format."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
