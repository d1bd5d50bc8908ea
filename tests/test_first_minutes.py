"""The first ten minutes of a new user: no LLM configured, a server of one's own that takes no key,
what /readyz says of the upstream, and CORS_ORIGINS. The real app, the fake upstream on loopback."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from memory_guard.settings import OPENROUTER_URL, Settings
from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le délai de la garantie de parfait achèvement ?"
ANSWER = "Un an à compter de la réception."
# Left at its defaults: no key, and OpenRouter, which takes none.
NO_LLM = {"llm_api_key": "", "llm_base_url": OPENROUTER_URL}


def ready(client: httpx.Client) -> dict[str, Any]:
    """/readyz once its first upstream check is done (it answers before a slow check ends)."""
    deadline = time.monotonic() + 30
    while True:
        answer = client.get("/readyz")
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        if body["upstream"]["reachable"] is not None or not body["upstream"]["configured"]:
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.05)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("key", "base_url", "configured"),
    [
        ("", OPENROUTER_URL, False),
        ("", OPENROUTER_URL + "/", False),
        ("sk-or-1", OPENROUTER_URL, True),
        ("", "http://localhost:11434/v1", True),  # Ollama, vLLM, llama.cpp: no key needed
    ],
)
def test_no_key_on_the_default_upstream_is_no_llm(key: str, base_url: str, configured: bool) -> None:
    settings = Settings(_env_file=None, llm_api_key=key, llm_base_url=base_url)  # type: ignore[call-arg]
    assert settings.llm_configured is configured


def test_a_miss_without_an_llm_says_what_to_set_and_writes_nothing(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(**NO_LLM)
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        assert staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).status_code == 201
        served = chat(acme, message=QUESTION)
        assert served.kinds == ["cached_response", "done"], "memory answers need no LLM"
        conversation = served.done["conversation_id"]

        failed = chat(acme, f"/chat/{conversation}/message", message="Qui signe le procès-verbal ?")

        assert failed.status == 200
        assert failed.kinds == ["error"]
        error = failed.of("error")[0]
        assert error["code"] == "llm_not_configured"
        assert "LLM_API_KEY" in error["message"] and "LLM_BASE_URL" in error["message"]
        assert fresh_upstream.calls == 0
        entries = staff.get("/staff/memory").json()["items"]
        assert [e["question"] for e in entries] == [QUESTION], "the question is not learned"
        history = acme.get(f"/chat/{conversation}/messages").json()["items"]
        assert [m["content"] for m in history] == [QUESTION, ANSWER], "nor written to the conversation"


def test_a_server_of_ones_own_answers_without_a_key(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(llm_api_key="")  # LLM_BASE_URL is the fake upstream's: a server of one's own
    fresh_upstream.push(Reply(text="Le maître d'ouvrage."))
    with client_for(live, "ka") as acme:
        answered = chat(acme, message="Qui signe le procès-verbal ?")
        assert answered.text == "Le maître d'ouvrage."
        assert answered.done["learned_entry_id"] is not None
        assert ready(acme)["upstream"]["configured"] is True
    assert fresh_upstream.calls == 1


def test_readyz_says_the_upstream_answers(live: LiveApp, fresh_upstream: FakeUpstream) -> None:
    with client_for(live, None) as anonymous:
        body = ready(anonymous)
    assert body["status"] == "ready"
    assert body["upstream"] == {"configured": True, "reachable": True, "detail": "it answered (HTTP 200)"}
    (check,) = [r for r in fresh_upstream.requests if r.path == "/v1/models"]
    assert check.headers["authorization"] == "Bearer sk-test"


def test_readyz_without_an_llm_is_ready_and_says_what_to_set(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(**NO_LLM)
    with client_for(live, None) as anonymous:
        answer = anonymous.get("/readyz")
    assert answer.status_code == 200
    upstream = answer.json()["upstream"]
    assert (upstream["configured"], upstream["reachable"]) == (False, None)
    assert "LLM_API_KEY" in upstream["detail"] and "LLM_BASE_URL" in upstream["detail"]
    assert fresh_upstream.requests == [], "nothing to ask"


@pytest.mark.parametrize(
    ("status", "said"),
    [(401, "refused the service's credentials (HTTP 401)"), (503, "internal error (HTTP 503)")],
)
def test_readyz_says_the_upstream_fails_and_stays_ready(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream, status: int, said: str
) -> None:
    fresh_upstream.push_models(Reply(status=status, error_message="sk-test is wrong"))
    live = app_factory()
    with client_for(live, None) as anonymous:
        upstream = ready(anonymous)["upstream"]
    assert upstream["reachable"] is False
    assert said in upstream["detail"]
    assert "sk-test" not in upstream["detail"], "never the upstream's own text"


def test_readyz_says_an_unreachable_upstream_and_stays_ready(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(llm_base_url=f"http://127.0.0.1:{closed_port()}/v1")
    with client_for(live, None) as anonymous:
        upstream = ready(anonymous)["upstream"]
    assert upstream["reachable"] is False
    assert upstream["detail"].startswith("it could not be reached")
