"""Fuzz the whole HTTP API from its OpenAPI document with schemathesis; any 5xx fails the run, and so
does an answer the document does not describe (its status, its media type, or its body: each JSON
answer against its model, each event of a stream against its event model).

    .venv/bin/python -m tests.fuzz.run_schemathesis [--examples N] [--seed S]

The real app runs on loopback with a temporary SQLite file, the hashing embedder and an LLM upstream
that refuses connections (so every miss ends in a clean `upstream_error` event, or a 502 for a
non-streamed `/v1` answer, and any other 5xx can only be the service's own). It is fuzzed twice: with a
staff key (every route) and with a client key (the chat and /v1 routes answer, the staff ones must
refuse). `.ci/run` calls it; the default pytest run does not.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.settings import Settings
from tests.server import LiveApp

KEYS = {"staff": "fuzz-staff-key", "client": "fuzz-client-key"}
# An OpenAI client expects a non-streamed answer the upstream failed to be a 502, not a 200: with the
# upstream refusing connections, that is /v1's documented answer to every miss, not a server error.
CONFIG = """
[[operations]]
include-path = "/v1/chat/completions"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "502"]
"""


def _refused_url() -> str:
    """A loopback URL nothing listens on: the port was free a moment ago and is closed again."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _settings(folder: Path) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        memory_db_path=folder / "fuzz.db",
        embedding_provider="hashing",
        llm_base_url=_refused_url(),
        llm_api_key="sk-fuzz",
        llm_timeout_s=2.0,
        llm_max_retries=0,
        api_keys=f"{KEYS['client']}:acme:client,{KEYS['staff']}:acme:staff",
    )


def _seed(base_url: str) -> None:
    """A few entries, their audit events and one served answer, so that the small ids the fuzzer
    tries (1, 2...) reach real rows of every table, not only 404s."""
    headers = {"Authorization": f"Bearer {KEYS['staff']}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=20) as staff:
        for number in range(1, 6):
            question = f"Quel est le délai de paiement numéro {number} ?"
            staff.post("/staff/memory", json={"question": question, "answer": f"{number * 10} jours"})
        staff.patch("/staff/memory/1", json={"tags": ["fuzz"], "expires_at": "2099-01-01T00:00:00Z"})
        with staff.stream(
            "POST", "/chat", json={"message": "Quel est le délai de paiement numéro 1 ?"}
        ) as reply:
            reply.read()


def _st() -> str:
    """The schemathesis command of this interpreter's environment (the dev extra installs it)."""
    beside = Path(sys.executable).with_name("st")
    found = str(beside) if beside.exists() else shutil.which("st")
    if found is None:
        raise SystemExit("schemathesis is not installed: pip install -e '.[dev]'")
    return found


def _run(base_url: str, role: str, examples: int, seed: int, report: Path) -> dict[str, Any]:
    config = report.with_suffix(".toml")
    config.write_text(CONFIG)
    command = [
        _st(),
        "--config-file",
        str(config),
        "run",
        f"{base_url}/openapi.json",
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(examples),
        "--seed",
        str(seed),
        # One worker: Hypothesis's lambda descriptions are not thread-safe ("AST constructor recursion
        # depth mismatch"), a tool error that would fail the run with no server error behind it.
        "--workers",
        "1",
        "--header",
        f"Authorization: Bearer {KEYS[role]}",
        "--request-timeout",
        "20",
        "--suppress-health-check",
        "all",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    if role == "client":
        command += ["--include-path-regex", "^/(chat|v1)"]
    started = time.monotonic()
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        print(completed.stdout + completed.stderr)  # each failure with its curl line to replay it
    return {"role": role, "code": completed.returncode, "seconds": time.monotonic() - started}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20, help="examples per operation and phase")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    args = parser.parse_args()
    # Refused upstream calls and malformed requests are expected by the thousand: only errors are news.
    for name in ("memory_guard", "uvicorn.error"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as folder, LiveApp(_settings(Path(folder)), HashingEmbedder()) as live:
        _seed(live.base_url)
        results = [
            _run(live.base_url, role, args.examples, args.seed, Path(folder) / f"{role}.json")
            for role in ("staff", "client")
        ]
        reports = [Path(folder) / f"{r['role']}.json" for r in results]
        summaries = [json.loads(p.read_text()) if p.exists() else {} for p in reports]
    failed = [r for r in results if r["code"] != 0]
    total = 0
    for result, summary in zip(results, summaries, strict=True):
        cases = summary.get("test_cases", {})
        total += cases.get("generated", 0)
        print(
            f"schemathesis {result['role']} key: {cases.get('generated', '?')} requests, "
            f"{cases.get('with_failures', '?')} failed, {cases.get('errored', '?')} errored, "
            f"{len(summary.get('errors', []))} errors, "
            f"exit {result['code']}, {result['seconds']:.0f} s"
        )
    verdict = "FAILED (see above)" if failed else "0 server errors, every answer as documented"
    print(f"schemathesis: {total} requests over the OpenAPI, seed {args.seed}: {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
