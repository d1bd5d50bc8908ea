"""One access line per request (logger memory_guard.access), in JSON: request id, tenant, route
template, method, status, decision, score, verdict, latency, upstream tokens; never a key, a
secret nor the question. And the latency per decision and the tokens saved in /metrics."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from memory_guard.ops.request_log import ACCESS_LOGGER, JsonFormatter, TextFormatter
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quelle est la durée de la garantie de parfait achèvement ?"
ANSWER = "Un an à compter de la réception des travaux."
FIELDS = {
    "time",
    "level",
    "logger",
    "message",
    "request_id",
    "method",
    "route",
    "status",
    "tenant",
    "decision",
    "score",
    "verdict",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "tokens_saved",
    "error",
}


class AccessLines:
    """The access logger's lines, as LOG_FORMAT=json writes them."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(JsonFormatter())

    @property
    def raw(self) -> str:
        return self.stream.getvalue()

    def all(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.raw.splitlines()]

    def of(self, request_id: str) -> dict[str, Any]:
        (line,) = [line for line in self.all() if line["request_id"] == request_id]
        return line


@pytest.fixture
def access() -> Iterator[AccessLines]:
    lines = AccessLines()
    logger = logging.getLogger(ACCESS_LOGGER)
    logger.addHandler(lines.handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield lines
    logger.removeHandler(lines.handler)
    logger.setLevel(level)


def _asking(client: httpx.Client, request_id: str, **body: Any) -> Any:
    client.headers["X-Request-ID"] = request_id
    try:
        return chat(client, **body)
    finally:
        del client.headers["X-Request-ID"]


def test_one_json_line_per_request_with_its_fields(
    access: AccessLines, acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER, usage=(120, 30)))
    missed = _asking(acme, "ask-1", message=QUESTION)
    served = _asking(acme, "ask-2", message=QUESTION)
    assert (missed.done["decision"], served.done["decision"]) == ("miss", "direct")
    # Written before the answer's last byte: whoever read the answer finds its line.
    assert [line["request_id"] for line in access.all()] == ["ask-1", "ask-2"]

    miss = access.of("ask-1")
    assert set(miss) == FIELDS
    assert miss["logger"] == ACCESS_LOGGER and miss["level"] == "INFO"
    assert miss["message"] == "POST /chat 200"
    assert (miss["method"], miss["route"], miss["status"], miss["tenant"]) == ("POST", "/chat", 200, "acme")
    assert (miss["decision"], miss["score"], miss["verdict"], miss["error"]) == ("miss", None, None, None)
    assert (miss["prompt_tokens"], miss["completion_tokens"], miss["tokens_saved"]) == (120, 30, 0)
    assert miss["latency_ms"] >= 0

    direct = access.of("ask-2")
    assert (direct["decision"], direct["score"], direct["verdict"]) == ("direct", 1.0, "exact")
    # No upstream call; what the answer cost when it was learned is saved.
    assert (direct["prompt_tokens"], direct["completion_tokens"], direct["tokens_saved"]) == (0, 0, 150)


def test_the_route_is_the_template_never_the_path(
    access: AccessLines, acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER), Reply(text="Et pour la décennale, dix ans."))
    first = _asking(acme, "first", message=QUESTION)
    conversation = first.done["conversation_id"]
    _asking(acme, "follow", path=f"/chat/{conversation}/message", message="Et la décennale ?")
    acme.headers["X-Request-ID"] = "history"
    acme.get(f"/chat/{conversation}/messages")
    acme.headers["X-Request-ID"] = "unknown"
    acme.get("/no/such/thing")
    assert access.of("follow")["route"] == "/chat/{conversation_id}/message"
    assert access.of("history")["route"] == "/chat/{conversation_id}/messages"
    unknown = access.of("unknown")
    assert (unknown["status"], unknown["route"]) == (404, None), "an unknown path is not logged"
    assert "/no/such" not in access.raw
    assert conversation not in access.raw


def test_no_key_secret_nor_question_is_logged(
    access: AccessLines, app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(metrics_token="metrics-secret-token", llm_api_key="sk-upstream-secret")
    headers = {"Authorization": "Bearer ka"}
    with httpx.Client(base_url=live.base_url, headers=headers, timeout=10) as acme:
        fresh_upstream.push(Reply(text=ANSWER))
        chat(acme, message=QUESTION)
        chat(acme, message=QUESTION)
        chat(acme, message="x" * 20_000)  # 422, the question is not quoted
        acme.get("/metrics", headers={"Authorization": "Bearer metrics-secret-token"})
    with httpx.Client(base_url=live.base_url, headers={"Authorization": "Bearer wrong-key"}) as stranger:
        stranger.get("/staff/memory")
    lines = access.all()
    assert [line["status"] for line in lines] == [200, 200, 422, 200, 401]
    for secret in ("Bearer", "ka", "wrong-key", "metrics-secret-token", "sk-upstream-secret"):
        assert all(secret not in json.dumps(list(line.values())) for line in lines), secret
    for said in (QUESTION, ANSWER, "garantie", "xxxxxxxx"):
        assert said not in access.raw
    assert lines[-1]["tenant"] is None, "a refused key names no tenant"


def test_a_failed_run_logs_its_error_code(
    access: AccessLines, acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(status=500))
    reply = _asking(acme, "broken", message=QUESTION)
    assert reply.of("error")[0]["code"] == "upstream_error"
    line = access.of("broken")
    assert (line["status"], line["decision"], line["error"]) == (200, "miss", "upstream_error")


def test_staff_requests_name_their_tenant(access: AccessLines, acme_staff: httpx.Client) -> None:
    acme_staff.headers["X-Request-ID"] = "staff-1"
    assert acme_staff.get("/staff/memory/stats").status_code == 200
    line = access.of("staff-1")
    assert (line["tenant"], line["route"], line["decision"]) == ("acme", "/staff/memory/stats", None)


def test_the_text_format_keeps_one_line_per_request() -> None:
    record = logging.LogRecord(ACCESS_LOGGER, logging.INFO, __file__, 1, "POST %s %d", ("/chat", 200), None)
    record.fields = {"request_id": "r1", "tenant": "acme corp", "decision": None, "error": 'a"b\nc'}
    line = TextFormatter().format(record)
    assert "\n" not in line
    assert line.endswith('POST /chat 200 request_id=r1 tenant="acme corp" decision=- error="a\\"b\\nc"')


def _metric(client: httpx.Client, name: str) -> float:
    text = client.get("/metrics").text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert found, f"{name} is not in /metrics"
    return float(found.group(1))


def test_metrics_count_latency_per_decision_and_tokens_saved(
    acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    direct = 'memory_guard_request_seconds_count{decision="direct"}'
    miss = 'memory_guard_request_seconds_count{decision="miss"}'
    saved = "memory_guard_upstream_tokens_saved_total"
    assert (_metric(acme, direct), _metric(acme, miss), _metric(acme, saved)) == (0, 0, 0)
    fresh_upstream.push(Reply(text=ANSWER, usage=(200, 40)))
    chat(acme, message=QUESTION)
    assert (_metric(acme, direct), _metric(acme, miss), _metric(acme, saved)) == (0, 1, 0)
    chat(acme, message=QUESTION)
    chat(acme, message=QUESTION)
    assert (_metric(acme, direct), _metric(acme, miss)) == (2, 1)
    assert _metric(acme, saved) == 2 * 240, "each direct answer saves what the answer cost"
    assert _metric(acme, 'memory_guard_request_seconds_bucket{decision="direct",le="+Inf"}') == 2


def test_the_openai_endpoint_is_logged_and_timed_the_same_way(
    access: AccessLines, live: LiveApp, fresh_upstream: FakeUpstream
) -> None:
    import openai

    client = openai.OpenAI(
        base_url=f"{live.base_url}/v1", api_key="ka", max_retries=0, default_headers={"X-Request-ID": "v1-a"}
    )
    fresh_upstream.push(Reply(text=ANSWER, usage=(50, 8)))
    asked = [{"role": "user", "content": QUESTION}]
    first = client.chat.completions.with_raw_response.create(model="any", messages=asked)
    client = client.with_options(default_headers={"X-Request-ID": "v1-b"})
    second = client.chat.completions.with_raw_response.create(model="any", messages=asked, stream=True)
    list(second.parse())
    assert (first.headers["x-request-id"], second.headers["x-request-id"]) == ("v1-a", "v1-b")
    miss, direct = access.of("v1-a"), access.of("v1-b")
    assert (miss["route"], miss["tenant"], miss["decision"]) == ("/v1/chat/completions", "acme", "miss")
    assert (miss["prompt_tokens"], miss["completion_tokens"]) == (50, 8)
    assert (direct["decision"], direct["tokens_saved"]) == ("direct", 58)
    with httpx.Client(base_url=live.base_url) as scraper:
        assert _metric(scraper, 'memory_guard_request_seconds_count{decision="direct"}') == 1
        assert _metric(scraper, "memory_guard_upstream_tokens_saved_total") == 58
