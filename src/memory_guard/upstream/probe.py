"""Whether the LLM upstream is configured and answers, for /readyz.

One `GET {LLM_BASE_URL}/models`, whose body is never read (OpenRouter's list is large), bounded as
a whole by a short timeout. Its result is kept a few seconds, so that a readiness probe polled every
second asks the upstream once in that time, and callers at the same moment share one request.
/readyz waits for a check a moment only: memory answers work without the LLM, so a slow upstream
must not make the service's own readiness time out. Past that moment the last state known is
answered while the check goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from memory_guard.settings import llm_upstream_configured

logger = logging.getLogger(__name__)

CHECK_TIMEOUT_S = 2.0
FRESH_FOR_S = 10.0
WAIT_S = 0.5

NOT_CONFIGURED = (
    "no LLM is configured: set LLM_API_KEY, or LLM_BASE_URL to a self-hosted OpenAI-compatible "
    "server that takes no key; only questions answered from memory are answered"
)


@dataclass(frozen=True, slots=True)
class UpstreamState:
    configured: bool
    reachable: bool | None  # None: not checked, as nothing is configured or the first check runs
    detail: str  # for a person; never the upstream's own text, which may quote a key


class UpstreamProbe:
    """The state of one LLM upstream, configured (Settings.llm_configured's rule) or not."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout_s: float = CHECK_TIMEOUT_S,
        fresh_for_s: float = FRESH_FOR_S,
        wait_s: float = WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = base_url.rstrip("/") + "/models"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._configured = llm_upstream_configured(base_url, api_key)
        self._timeout_s = timeout_s
        self._fresh_for_s = fresh_for_s
        self._wait_s = wait_s
        self._clock = clock
        self._client = httpx.AsyncClient(timeout=timeout_s)
        self._state = UpstreamState(True, None, "the first check is running")
        self._checked_at: float | None = None
        self._check: asyncio.Task[None] | None = None

    async def state(self) -> UpstreamState:
        if not self._configured:
            return UpstreamState(False, None, NOT_CONFIGURED)
        if self._checked_at is not None and self._clock() - self._checked_at < self._fresh_for_s:
            return self._state
        check = self._check
        if check is None:
            check = self._check = asyncio.create_task(self._refresh())
        # Not cancelled on timeout: the check goes on and the next caller reads its result.
        await asyncio.wait({check}, timeout=self._wait_s)
        return self._state

    async def aclose(self) -> None:
        if self._check is not None:
            self._check.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._check
        await self._client.aclose()

    async def _refresh(self) -> None:
        try:
            state = await self._ask()
            if state.reachable != self._state.reachable:
                level = logging.INFO if state.reachable else logging.WARNING
                logger.log(level, "the LLM upstream check: %s", state.detail)
            self._state = state
            self._checked_at = self._clock()
        finally:
            self._check = None

    async def _ask(self) -> UpstreamState:
        try:
            async with (
                asyncio.timeout(self._timeout_s),
                self._client.stream("GET", self._url, headers=self._headers) as response,
            ):
                status = response.status_code
        except (TimeoutError, httpx.TimeoutException):
            return UpstreamState(True, False, f"it did not answer within {self._timeout_s:g} s")
        except Exception as exc:  # connection refused, a malformed LLM_BASE_URL: all say the same
            return UpstreamState(True, False, f"it could not be reached ({type(exc).__name__})")
        return UpstreamState(True, *_judge(status))


def _judge(status: int) -> tuple[bool, str]:
    """Whether an answer of `status` to GET /models shows an upstream that can answer, and why."""
    if status < 400:
        return True, f"it answered (HTTP {status})"
    if status in (401, 403):
        return False, f"it refused the service's credentials (HTTP {status}): check LLM_API_KEY"
    if status >= 500:
        return False, f"it had an internal error (HTTP {status})"
    if status == 429:
        return True, "it answered, and is rate limiting the service (HTTP 429)"
    # A server without the models route (404, 405) is up all the same.
    return True, f"it answered, without a list of models (HTTP {status})"
