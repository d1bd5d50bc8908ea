"""`memory-guard serve` as an operator runs it: every line of its log in LOG_FORMAT, one access line
per request and none of uvicorn's own, no key in it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx

from tests.served_process import served_process

KEY = "k-serve-secret-0123456789"


def _serve_and_ask(tmp_path: Path, log_format: str) -> str:
    """Starts the service, sends three requests (ids srv-1..srv-3), stops it; its whole log."""
    env = {
        **os.environ,
        "MEMORY_DB_PATH": str(tmp_path / "serve.db"),
        "API_KEYS": f"{KEY}:acme:staff",
        "EMBEDDING_PROVIDER": "hashing",
        "LOG_LEVEL": "INFO",
        "LOG_FORMAT": log_format,
    }
    with served_process((), env, tmp_path) as served:
        url = served.url
        auth = {"Authorization": f"Bearer {KEY}"}
        assert httpx.get(f"{url}/healthz", headers={"X-Request-ID": "srv-1"}).status_code == 200
        assert httpx.get(f"{url}/staff/memory", headers={**auth, "X-Request-ID": "srv-2"}).status_code == 200
        assert httpx.get(f"{url}/nowhere", headers={"X-Request-ID": "srv-3"}).status_code == 404
    return served.output


def test_json_logs_one_access_line_per_request_and_no_uvicorn_duplicate(tmp_path: Path) -> None:
    log = _serve_and_ask(tmp_path, "json")
    lines = [json.loads(line) for line in log.splitlines()]  # every line is JSON
    access = [line for line in lines if line["logger"] == "memory_guard.access"]
    by_id = {line["request_id"]: line for line in access}
    assert [line["request_id"] for line in access].count("srv-2") == 1
    assert {key: by_id["srv-2"][key] for key in ("route", "status", "tenant")} == {
        "route": "/staff/memory",
        "status": 200,
        "tenant": "acme",
    }
    assert by_id["srv-3"]["status"] == 404 and by_id["srv-1"]["route"] == "/healthz"
    assert not [line for line in lines if line["logger"] == "uvicorn.access"], "uvicorn's access line is off"
    assert any(line["logger"].startswith("uvicorn") for line in lines), "uvicorn's own lines come as JSON"
    assert KEY not in log


def test_text_logs_carry_the_same_fields_as_key_value(tmp_path: Path) -> None:
    log = _serve_and_ask(tmp_path, "text")
    (line,) = [line for line in log.splitlines() if "request_id=srv-2" in line]
    assert "memory_guard.access: GET /staff/memory 200" in line
    assert "tenant=acme" in line and "route=/staff/memory" in line
    assert '"GET /staff/memory HTTP/1.1" 200' not in log, "no uvicorn access line"
    assert KEY not in log
