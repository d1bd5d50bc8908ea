from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.settings import Settings
from tests.postgres import any_database, postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.server import LiveApp
from tests.upstream import FakeUpstream

KEYS = "ka:acme:client,sa:acme:staff,kb:globex:client,sb:globex:staff"


@pytest.fixture(scope="session")
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


@pytest.fixture
def fresh_upstream(upstream: FakeUpstream) -> FakeUpstream:
    upstream.reset()
    return upstream


def make_settings(tmp_path: Path, upstream: FakeUpstream, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "memory_db_path": tmp_path / "memory.db",
        "llm_base_url": upstream.base_url,
        "llm_api_key": "sk-test",
        "llm_model": "test-model",
        "llm_timeout_s": 2.0,
        "llm_max_retries": 0,
        "embedding_provider": "hashing",
        "api_keys": KEYS,
    }
    # The judge as it was before MEMORY_JUDGE=auto: off unless a test turns it on, so that no test
    # meets a judge call it did not script (with the key above, auto would turn it on).
    if not {"memory_judge", "memory_judge_enabled"} & overrides.keys():
        values["memory_judge"] = "off"
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
def app_factory(tmp_path: Path, fresh_upstream: FakeUpstream) -> Iterator[Callable[..., LiveApp]]:
    started: list[LiveApp] = []

    def factory(**overrides: Any) -> LiveApp:
        live = LiveApp(
            make_settings(tmp_path, fresh_upstream, **overrides), embedder=HashingEmbedder()
        ).start()
        started.append(live)
        return live

    yield factory
    for live in started:
        live.stop()


@pytest.fixture
def live(app_factory: Callable[..., LiveApp]) -> LiveApp:
    return app_factory()


def client_for(live: LiveApp, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=live.base_url, headers=headers, timeout=10)


@pytest.fixture
def acme(live: LiveApp) -> Iterator[httpx.Client]:
    with client_for(live, "ka") as client:
        yield client


@pytest.fixture
def acme_staff(live: LiveApp) -> Iterator[httpx.Client]:
    with client_for(live, "sa") as client:
        yield client


@pytest.fixture
def globex(live: LiveApp) -> Iterator[httpx.Client]:
    with client_for(live, "kb") as client:
        yield client


@pytest.fixture
def globex_staff(live: LiveApp) -> Iterator[httpx.Client]:
    with client_for(live, "sb") as client:
        yield client
