"""One call to an OpenAI-compatible upstream: bounded by a deadline, retried within it, failing with
a fixed message.

What a client is told names the kind of failure and at most the upstream's HTTP status. The
upstream's own text, which may quote our key, goes to the log only, redacted. The SDK's exceptions
are not chained to ours (`from None`): a traceback printed later would carry their text.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import openai

from memory_guard.core.errors import UpstreamError, UpstreamTimeout
from memory_guard.upstream.redaction import Redactor

T = TypeVar("T")

logger = logging.getLogger(__name__)

# The openai SDK's own backoff, so that taking retries over from it changes nothing else.
INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 8.0
MAX_RETRY_AFTER_S = 60.0
_RETRIED_STATUSES = frozenset({408, 409, 429})


class Upstream:
    """Names one upstream (`the LLM upstream`) for its messages and holds how it is retried."""

    def __init__(self, name: str, redact: Redactor, max_retries: int) -> None:
        self.name = name
        self.redact = redact
        self._max_retries = max_retries

    async def call(self, attempt: Callable[[], Awaitable[T]], deadline: float) -> T:
        """`attempt()` until it succeeds, with retries that start only if they can before `deadline`
        (event-loop time); the whole, retries and waits included, ends by `deadline`."""
        loop = asyncio.get_running_loop()
        retries = 0
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    return await attempt()
            except TimeoutError:
                raise self.timeout() from None
            except (openai.OpenAIError, ValueError) as exc:
                delay = self._retry_delay(exc, retries)
                if delay is None or loop.time() + delay >= deadline:
                    raise self.failure(exc) from None
                logger.info("%s: retry %d of %d in %.2fs", self.name, retries + 1, self._max_retries, delay)
            retries += 1
            await asyncio.sleep(delay)

    def timeout(self) -> UpstreamTimeout:
        return UpstreamTimeout(f"the {self.name} did not answer in time")

    def malformed(self, detail: object) -> UpstreamError:
        logger.warning("%s sent a malformed response: %s", self.name, self.redact(detail))
        return UpstreamError(f"the {self.name} failed: it sent a malformed response")

    def failure(self, exc: BaseException, *, mid_answer: bool = False) -> UpstreamError:
        """The fixed error for a failure of the SDK or of the deadline; the details are logged."""
        if isinstance(exc, TimeoutError | openai.APITimeoutError):
            return self.timeout()
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            logger.warning("%s answered HTTP %d: %s", self.name, status, self.redact(exc.body or exc.message))
            return UpstreamError(f"the {self.name} failed: {_status_kind(status)} (HTTP {status})")
        if isinstance(exc, openai.APIConnectionError):
            cause = type(exc.__cause__).__name__ if exc.__cause__ else type(exc).__name__
            logger.warning("%s connection failed: %s", self.name, cause)
            if mid_answer:
                return UpstreamError(f"the {self.name} failed: the connection broke off mid-answer")
            return UpstreamError(f"the {self.name} failed: it could not be reached")
        if isinstance(exc, openai.APIResponseValidationError):
            return self.malformed(exc.body)
        if isinstance(exc, openai.APIError):
            # An `error` object sent in place of a chunk, mid-stream (OpenRouter does this).
            logger.warning("%s reported an error: %s", self.name, self.redact(exc.body or exc.message))
            return UpstreamError(f"the {self.name} failed: it reported an error mid-answer")
        if isinstance(exc, ValueError):
            return self.malformed(getattr(exc, "doc", exc))
        logger.warning("%s failed: %s", self.name, type(exc).__name__)
        return UpstreamError(f"the {self.name} failed: {type(exc).__name__}")

    def _retry_delay(self, exc: Exception, retries: int) -> float | None:
        """Seconds to wait before retrying after `exc`, or None when it is not retried."""
        if retries >= self._max_retries:
            return None
        if isinstance(exc, openai.APIStatusError):
            headers = exc.response.headers
            told = headers.get("x-should-retry")
            status = exc.status_code
            if told == "false" or (told != "true" and status not in _RETRIED_STATUSES and status < 500):
                return None
            after = _retry_after(headers.get("retry-after-ms"), 1000) or _retry_after(
                headers.get("retry-after"), 1
            )
            if after is not None:
                return after if after <= MAX_RETRY_AFTER_S else None
        elif not isinstance(exc, openai.APIConnectionError):
            return None
        backoff = min(INITIAL_RETRY_DELAY_S * 2.0**retries, MAX_RETRY_DELAY_S)
        return backoff * (1 - 0.25 * random.random())


def _retry_after(value: str | None, divisor: float) -> float | None:
    try:
        seconds = float(value) / divisor if value is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def _status_kind(status: int) -> str:
    if status in (401, 403):
        return "it refused the service's credentials"
    if status == 429:
        return "it is rate limiting the service; try again later"
    if status >= 500:
        return "it had an internal error"
    return "it rejected the request"
