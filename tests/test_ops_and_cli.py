"""Health, readiness, metrics, dev mode and the command line."""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from memory_guard.db.database import Database
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.memory.sqlite_store import SqliteMemoryStore
from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply


def test_health_and_readiness_need_no_key(live: LiveApp) -> None:
    with client_for(live, None) as anonymous:
        assert anonymous.get("/healthz").json() == {"status": "ok"}
        ready = anonymous.get("/readyz").json()
    assert ready["status"] == "ready"
    assert ready["embedder"] == HashingEmbedder().model_id


def test_metrics_count_decisions(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="Quinze jours ouvrés."))
    question = "Quel est le délai de notification d'un ordre de service ?"
    chat(acme, message=question)
    chat(acme, message=question)
    text = acme.get("/metrics").text
    assert 'memory_guard_lookups_total{decision="miss"} 1.0' in text
    assert 'memory_guard_lookups_total{decision="direct"} 1.0' in text
    assert 'memory_cache_operations_total{operation="hit",type="response"} 1.0' in text
    assert 'memory_guard_llm_calls_total{outcome="ok"} 1.0' in text
    assert 'memory_guard_verifier_verdicts_total{by="exact",verdict="exact"} 1.0' in text


def test_dev_mode_is_one_tenant_with_every_role(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(api_keys="")
    with client_for(live, None) as anyone:
        assert anyone.get("/staff/memory").status_code == 200
        created = anyone.post(
            "/staff/memory", json={"question": "Qui signe le PV ?", "answer": "Le maître d'ouvrage."}
        )
        assert created.status_code == 201


def _run_cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "MEMORY_DB_PATH": str(tmp_path / "cli.db"),
        "API_KEYS": "",
        "EMBEDDING_PROVIDER": "hashing",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "memory_guard", *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=60,
    )


def test_serve_refuses_a_public_address_in_dev_mode(tmp_path: Path) -> None:
    result = _run_cli(tmp_path, "serve", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode != 0
    assert "dev mode" in result.stderr


def test_invalid_settings_are_reported_without_a_traceback(tmp_path: Path) -> None:
    result = _run_cli(tmp_path, "serve", MEMORY_DIRECT_THRESHOLD="0.5", MEMORY_SIMILARITY_THRESHOLD="0.85")
    assert result.returncode != 0
    assert "invalid settings" in result.stderr
    assert "MEMORY_DIRECT_THRESHOLD must not be below MEMORY_SIMILARITY_THRESHOLD" in result.stderr
    assert "Traceback" not in result.stderr


async def _store_embedded_by(store: SqliteMemoryStore, embedder: HashingEmbedder, count: int) -> None:
    """`count` entries whose vectors come from `embedder` (another model than the service's)."""
    from memory_guard.core.clock import utc_now
    from memory_guard.core.scope import Scope
    from memory_guard.memory.entry import Source, Status
    from memory_guard.memory.store import NewEntry

    for n in range(count):
        question = f"question numéro {n}"
        vector = (await embedder.embed([question]))[0]
        entry = NewEntry(
            Scope("default", "default"),
            question,
            "r",
            f"k{n}",
            Status.AUTO,
            Source.LEARNED,
            vector,
            embedder.model_id,
        )
        await store.insert(entry, utc_now())


def test_reindex_reembeds_other_models_vectors(tmp_path: Path) -> None:
    async def seed() -> None:
        db = await Database.open(tmp_path / "cli.db")
        await _store_embedded_by(SqliteMemoryStore(db), HashingEmbedder(dimension=64), 5)
        await db.close()

    asyncio.run(seed())
    result = _run_cli(tmp_path, "reindex")
    assert result.returncode == 0, result.stderr
    assert "re-embedded 5 entries" in result.stdout
    assert "5/5" in result.stderr, "a progress bar is shown"

    async def models() -> set[str]:
        db = await Database.open(tmp_path / "cli.db")
        rows = await db.fetch_all("SELECT DISTINCT embedding_model FROM responses")
        await db.close()
        return {row["embedding_model"] for row in rows}

    assert asyncio.run(models()) == {HashingEmbedder().model_id}
    assert "re-embedded 0 entries" in _run_cli(tmp_path, "reindex", "--stale-only").stdout
    assert "re-embedded 5 entries" in _run_cli(tmp_path, "reindex").stdout, "by default, everything"


async def test_a_start_says_how_many_entries_another_model_embedded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from memory_guard.memory.reindex import reindex
    from memory_guard.services import Services
    from memory_guard.settings import Settings

    previous, current = HashingEmbedder(dimension=64), HashingEmbedder()
    db = await Database.open(tmp_path / "switch.db")
    store = SqliteMemoryStore(db)
    await _store_embedded_by(store, previous, 3)
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, memory_db_path=tmp_path / "switch.db", embedding_provider="hashing"
    )

    async def start_warnings() -> list[str]:
        caplog.clear()
        services = await Services.open(settings, embedder=current)
        await services.aclose()
        return [
            r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "reindex" in r.getMessage()
        ]

    with caplog.at_level("WARNING"):
        (warning,) = await start_warnings()
        assert warning.startswith(f"3 entries are not embedded with {current.model_id}")
        await reindex(store, current, everything=False)
        assert await start_warnings() == [], "re-embedded: nothing to say"
    await db.close()


def test_env_example_lists_every_setting_with_its_default() -> None:
    from pydantic import SecretStr

    from memory_guard.settings import Settings

    listed = {}
    for line in (Path(__file__).parent.parent / ".env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            listed[name] = value
    assert set(listed) == {name.upper() for name in Settings.model_fields}
    for name, field in Settings.model_fields.items():
        default = field.default
        if isinstance(default, SecretStr):
            default = default.get_secret_value()
        expected = (
            "" if default is None else str(default).lower() if isinstance(default, bool) else str(default)
        )
        assert listed[name.upper()] == expected, name


def test_env_example_as_is_gives_working_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_guard.settings import Settings

    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)
    settings = Settings(_env_file=Path(__file__).parent.parent / ".env.example")  # type: ignore[call-arg]
    assert settings.agents_file is None
    assert settings.embedding_model is None
    assert settings.dev_mode


def test_example_agents_file_loads() -> None:
    from memory_guard.agent.profiles import AgentDirectory

    agents = AgentDirectory.from_file(Path(__file__).parent.parent / "examples" / "agents.json")
    assert agents.resolve("esg").identity.startswith("Tu es un conseiller")
    assert agents.resolve(None).name == "default"


def test_broken_agents_file_is_one_clear_line(tmp_path: Path) -> None:
    broken = tmp_path / "agents.json"
    broken.write_text('{"esg": {"rules": ["x"]}}')
    result = _run_cli(tmp_path, "serve", "--port", "0", AGENTS_FILE=str(broken))
    assert result.returncode != 0
    assert "agent 'esg' has no identity" in result.stderr
    assert "Traceback" not in result.stderr


def test_metrics_token_guards_metrics(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(metrics_token="scrape-me")
    with client_for(live, None) as anonymous, client_for(live, "scrape-me") as scraper:
        assert anonymous.get("/metrics").status_code == 401
        assert scraper.get("/metrics").status_code == 200
        assert "memory_guard_lookups_total" in scraper.get("/metrics").text


def _preflight(browser: httpx.Client, origin: str) -> httpx.Response:
    headers = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    return browser.options("/chat", headers=headers)


def test_cors_lets_a_configured_frontend_in(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(cors_origins="https://app.example")
    with client_for(live, None) as browser:
        allowed = _preflight(browser, "https://app.example")
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"
        refused = _preflight(browser, "https://evil.example")
        assert "access-control-allow-origin" not in refused.headers


def test_cors_origins_star_lets_every_origin_in(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(cors_origins="*")
    with client_for(live, None) as browser:
        allowed = _preflight(browser, "https://anywhere.example")
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "*"


def test_serve_sets_fixed_heap_thresholds_on_glibc() -> None:
    # In a child process: the thresholds are process-wide, and this one runs other tests.
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    code = "from memory_guard.ops.heap import limit_heap_retention as f; print(f(), f())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["True", "True"]
