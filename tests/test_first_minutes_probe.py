"""The upstream check behind /readyz: asked once per interval, shared by callers at the same
moment, never holding /readyz long, bounded as a whole. Against the fake upstream on loopback."""

from __future__ import annotations

import asyncio

from memory_guard.settings import OPENROUTER_URL
from memory_guard.upstream.probe import FRESH_FOR_S, UpstreamProbe
from tests.upstream import FakeUpstream, Reply


def checks(upstream: FakeUpstream) -> int:
    return sum(1 for r in upstream.requests if r.path == "/v1/models")


async def test_the_upstream_is_asked_once_per_interval(fresh_upstream: FakeUpstream) -> None:
    now = [0.0]
    probe = UpstreamProbe(fresh_upstream.base_url, "sk-test", wait_s=60, clock=lambda: now[0])
    try:
        states = await asyncio.gather(*(probe.state() for _ in range(5)))
        states.append(await probe.state())
        assert {(s.reachable, s.detail) for s in states} == {(True, "it answered (HTTP 200)")}
        assert checks(fresh_upstream) == 1, "callers at the same moment share one request"

        now[0] += FRESH_FOR_S - 0.1
        await probe.state()
        assert checks(fresh_upstream) == 1
        now[0] += 0.1
        fresh_upstream.push_models(Reply(status=500))
        assert (await probe.state()).reachable is False
        assert checks(fresh_upstream) == 2
    finally:
        await probe.aclose()


async def test_a_hanging_upstream_never_holds_readiness(fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push_models(Reply(hang_before_headers=True))
    # No key: a server of one's own, asked without an Authorization header.
    probe = UpstreamProbe(fresh_upstream.base_url, "", wait_s=0.05, timeout_s=60)
    try:
        first = await probe.state()
        assert (first.reachable, first.detail) == (None, "the first check is running")
        fresh_upstream.release()
        for _ in range(600):  # the check ends soon after the release
            if (state := await probe.state()).reachable is not None:
                break
        assert state.reachable is True
        assert "authorization" not in fresh_upstream.requests[0].headers, "no key, no header"
    finally:
        await probe.aclose()


async def test_a_check_is_bounded_as_a_whole(fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push_models(Reply(hang_before_headers=True))
    probe = UpstreamProbe(fresh_upstream.base_url, "k", wait_s=60, timeout_s=0.2)
    try:
        state = await probe.state()
    finally:
        await probe.aclose()
    assert (state.reachable, state.detail) == (False, "it did not answer within 0.2 s")


async def test_nothing_configured_asks_nothing() -> None:
    probe = UpstreamProbe(OPENROUTER_URL, "")  # no key for OpenRouter: no LLM
    try:
        state = await probe.state()
    finally:
        await probe.aclose()
    assert (state.configured, state.reachable) == (False, None)
    assert "LLM_API_KEY" in state.detail
