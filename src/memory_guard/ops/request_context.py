"""What one request did, gathered while it runs, for its log line, its metrics and its trace.

The HTTP layer opens a `RequestFacts` per request and binds it to a context variable; the layers
below (the chat run, the agent loop, the key ring) note what they learn through the functions
here, without knowing about HTTP. Outside a request (a command, a benchmark driving the services
directly) nothing is bound and every `note_*` is a no-op.

The object is mutable and shared on purpose: a streamed answer runs in a task that copies the
context, so a value set there would never reach the middleware, while a change to the bound
object does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol


class RequestSpan(Protocol):
    """The request's trace span, when tracing is on (ops/tracing.py)."""

    def set_attribute(self, key: str, value: str | int | float | bool) -> None: ...


@dataclass(slots=True)
class RequestFacts:
    request_id: str
    method: str
    route: str | None = None  # the route's template (/chat/{conversation_id}/message), never the path
    tenant: str | None = None
    decision: str | None = None
    score: float | None = None  # the served or best candidate's
    verdict: str | None = None  # the verifier's on that candidate
    prompt_tokens: int = 0  # what the answering model reported, every turn of the run
    completion_tokens: int = 0
    tokens_saved: int = 0  # upstream tokens an answer from memory spared (ops/metrics.py says how)
    error: str | None = None  # the code of the run's `error` event, when it failed
    span: RequestSpan | None = None


_current: ContextVar[RequestFacts | None] = ContextVar("memory_guard_request", default=None)


def current() -> RequestFacts | None:
    return _current.get()


@contextmanager
def bound(facts: RequestFacts) -> Iterator[RequestFacts]:
    token = _current.set(facts)
    try:
        yield facts
    finally:
        _current.reset(token)


def note_tenant(tenant: str) -> None:
    if (facts := _current.get()) is not None:
        facts.tenant = tenant


def note_decision(decision: str, score: float | None, verdict: str | None) -> None:
    if (facts := _current.get()) is not None:
        facts.decision, facts.score, facts.verdict = decision, score, verdict


def note_tokens(prompt: int, completion: int) -> None:
    if (facts := _current.get()) is not None:
        facts.prompt_tokens += prompt
        facts.completion_tokens += completion


def note_tokens_saved(tokens: int) -> None:
    if (facts := _current.get()) is not None:
        facts.tokens_saved += tokens


def note_error(code: str) -> None:
    if (facts := _current.get()) is not None:
        facts.error = code
