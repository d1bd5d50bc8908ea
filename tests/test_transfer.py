"""Import and export of entries as JSON Lines, through the API and the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx

from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.memory.sqlite_store import SqliteMemoryStore
from memory_guard.services import Services
from memory_guard.settings import Settings
from tests.conftest import client_for
from tests.server import LiveApp, chat, parse_sse
from tests.test_ops_and_cli import _run_cli

NDJSON = {"Content-Type": "application/x-ndjson"}
LINES = [
    {"question": "Quel est le taux de la retenue de garantie ?", "answer": "5 %", "tags": ["marchés"]},
    {
        "question": "Qui signe le procès-verbal de réception ?",
        "answer": "Le maître d'ouvrage.\nAvec réserves si besoin.",
        "project": "P1",
        "status": "auto",
        "source": "learned",
        "metadata": {"origin": "staging"},
    },
    {"question": "Combien de temps dure la garantie décennale ?", "answer": "Dix ans.", "status": "obsolete"},
]


def _jsonl(rows: list[object]) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows).encode()


def _import(staff: httpx.Client, body: bytes, **params: object) -> httpx.Response:
    return staff.post("/staff/memory/import", content=body, headers=NDJSON, params=params)


def _entries(staff: httpx.Client) -> list[dict]:
    return list(staff.get("/staff/memory", params={"limit": 200}).json()["items"])


def test_export_then_import_moves_a_memory_to_another_tenant(live: LiveApp) -> None:
    with (
        client_for(live, "sa") as acme_staff,
        client_for(live, "sb") as globex_staff,
        client_for(live, "kb") as globex,
    ):
        assert _import(acme_staff, _jsonl(LINES)).json() == {
            "imported": 3,
            "already_present": 0,
            "skipped": [],
        }
        exported = acme_staff.get("/staff/memory/export")
        assert exported.status_code == 200
        assert exported.headers["content-type"].startswith("application/x-ndjson")
        lines = exported.text.splitlines()
        assert len(lines) == 3

        assert _import(globex_staff, exported.content).json()["imported"] == 3
        moved = {e["question"]: e for e in _entries(globex_staff)}
        for original in LINES:
            entry = moved[str(original["question"])]
            assert entry["answer"] == original["answer"]
            assert entry["status"] == original.get("status", "validated")
            assert entry["tags"] == original.get("tags", [])
        assert moved[str(LINES[1]["question"])]["metadata"] == {"origin": "staging"}
        assert moved[str(LINES[1]["question"])]["project"] == "P1"
        served = chat(globex, message=str(LINES[0]["question"])).of("cached_response")
        assert served and served[0]["answer"] == "5 %", "imported entries are served at once"

        only_validated = acme_staff.get("/staff/memory/export", params={"status": "validated"})
        assert [json.loads(line)["answer"] for line in only_validated.text.splitlines()] == ["5 %"]
        history = globex_staff.get("/staff/memory/audit", params={"action": "import"}).json()["items"]
        assert len(history) == 3 and history[0]["after"] is not None


def test_a_streamed_import_reports_its_progress_then_the_report(acme_staff: httpx.Client) -> None:
    rows = [{"question": f"Quel est le délai du lot n° {n} ?", "answer": f"{n} jours"} for n in range(150)]
    headers = {**NDJSON, "Accept": "text/event-stream"}
    with acme_staff.stream("POST", "/staff/memory/import", content=_jsonl(rows), headers=headers) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse([line.rstrip("\r") for line in response.iter_lines()])
    progress = [e.data for e in events if e.event == "progress"]
    assert [(p["done"], p["total"]) for p in progress] == [(0, 150), (64, 150), (128, 150), (150, 150)]
    assert [e.event for e in events][-1] == "done"
    assert events[-1].data == {"type": "done", "imported": 150, "already_present": 0, "skipped": []}
    assert len(acme_staff.get("/staff/memory", params={"limit": 200}).json()["items"]) == 150

    # A bad file is refused before any event, with the same error as without streaming.
    refused = acme_staff.post("/staff/memory/import", content=b"{oops", headers=headers)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_import"


def test_imported_questions_are_re_embedded_with_the_configured_model(acme_staff: httpx.Client) -> None:
    line = {**LINES[0], "embedding_model": "text-embedding-3-large", "id": 77, "usage_count": 9}
    assert _import(acme_staff, _jsonl([line])).json()["imported"] == 1
    entry = _entries(acme_staff)[0]
    assert entry["embedding_model"] == HashingEmbedder().model_id
    assert entry["usage_count"] == 0 and entry["id"] != 77
    near = acme_staff.post(
        "/staff/memory/lookup", json={"question": "Quel est le taux de retenue de garantie ?"}
    ).json()
    assert near["candidates"] and near["candidates"][0]["entry_id"] == entry["id"]


def test_a_bad_line_imports_nothing_and_names_every_bad_line(acme_staff: httpx.Client) -> None:
    body = _jsonl(
        [
            LINES[0],
            "{not json",
            LINES[1],
            {"question": "Sans réponse ?"},
            {"question": "Q ?", "answer": "R", "answr": "typo"},
            "[1, 2]",
            {"question": "Q2 ?", "answer": "R", "status": "maybe"},
            "",
            LINES[0],
        ]
    )
    response = _import(acme_staff, body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_import"
    assert [line["line"] for line in error["lines"]] == [2, 4, 5, 6, 7, 9]
    by_line = {line["line"]: line["message"] for line in error["lines"]}
    assert "not valid JSON" in by_line[2]
    assert "answer" in by_line[4]
    assert "answr" in by_line[5]
    assert "JSON object" in by_line[6]
    assert "status" in by_line[7]
    assert "line 1" in by_line[9], "a repeated question names the line it repeats"
    assert "nothing was imported" in error["message"]
    assert _entries(acme_staff) == []

    skipped = _import(acme_staff, body, skip_bad_lines=True).json()
    assert skipped["imported"] == 2
    assert [line["line"] for line in skipped["skipped"]] == [2, 4, 5, 6, 7, 9]
    assert len(_entries(acme_staff)) == 2


def test_importing_the_same_file_twice_changes_nothing(acme_staff: httpx.Client) -> None:
    body = _jsonl(LINES)
    assert _import(acme_staff, body).json()["imported"] == 3
    again = _import(acme_staff, body).json()
    assert again == {"imported": 0, "already_present": 3, "skipped": []}
    assert len(_entries(acme_staff)) == 3


def test_the_tenant_comes_from_the_key_never_from_the_file(live: LiveApp) -> None:
    with client_for(live, "sa") as acme_staff, client_for(live, "sb") as globex_staff:
        _import(acme_staff, _jsonl([{**LINES[0], "tenant": "globex"}])).raise_for_status()
        assert len(_entries(acme_staff)) == 1
        assert _entries(globex_staff) == []


def test_import_refuses_empty_oversized_and_non_utf8_files(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(import_max_bytes=4096, max_body_bytes=2048)
    with client_for(live, "sa") as staff, client_for(live, "ka") as client:
        assert _import(staff, b"\n\n").json()["error"]["code"] == "empty_import"
        assert _import(staff, "é".encode("latin-1")).json()["error"]["code"] == "invalid_encoding"
        big = _jsonl([{**LINES[0], "answer": "x" * 5000}])
        too_big = _import(staff, big)
        assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "payload_too_large"
        # Between the general body limit and the import limit: only the import route takes it.
        mid = _jsonl([{**LINES[0], "answer": "x" * 3000}])
        assert _import(staff, mid).json()["imported"] == 1
        assert staff.post("/staff/memory", content=mid, headers=NDJSON).status_code == 413
        assert _import(client, _jsonl(LINES)).status_code == 403


def test_command_line_export_and_import_with_a_progress_bar(tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text(_jsonl(LINES).decode(), encoding="utf-8")
    result = _run_cli(tmp_path, "import", str(source), "--tenant", "acme")
    assert result.returncode == 0, result.stderr
    assert "imported 3 entries, 0 already present" in result.stdout
    assert "3/3" in result.stderr, "a progress bar is shown"

    out = tmp_path / "out.jsonl"
    result = _run_cli(tmp_path, "export", "--tenant", "acme", "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(json.loads(line)["question"] for line in out.read_text().splitlines()) == sorted(
        str(line["question"]) for line in LINES
    )
    nothing = _run_cli(tmp_path, "export", "--tenant", "globex")
    assert nothing.stdout == "" and "exported 0 entries" in nothing.stderr

    bad = tmp_path / "bad.jsonl"
    bad.write_text(_jsonl([LINES[0], "{oops"]).decode(), encoding="utf-8")
    refused = _run_cli(tmp_path, "import", str(bad), "--tenant", "globex")
    assert refused.returncode != 0
    assert "line 2: not valid JSON" in refused.stderr and "Traceback" not in refused.stderr
    skipped = _run_cli(tmp_path, "import", str(bad), "--tenant", "globex", "--skip-bad-lines")
    assert skipped.returncode == 0 and "imported 1 entries" in skipped.stdout
    missing = _run_cli(tmp_path, "import", str(tmp_path / "absent.jsonl"))
    assert missing.returncode != 0 and "cannot read" in missing.stderr
    unwritable = _run_cli(tmp_path, "export", "-o", str(tmp_path / "no-such-dir" / "out.jsonl"))
    assert unwritable.returncode != 0 and "cannot write" in unwritable.stderr
    assert "Traceback" not in unwritable.stderr


async def test_an_import_stopped_midway_stores_nothing(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, memory_db_path=tmp_path / "m.db", embedding_provider="hashing")  # type: ignore[call-arg]
    services = await Services.open(settings, embedder=HashingEmbedder())
    try:
        rows = [{"question": f"Question numéro {n} ?", "answer": "r"} for n in range(200)]
        lines = _jsonl(rows).decode().split("\n")
        plan = await services.transfer.plan_import("acme", lines)
        steps = services.transfer.run_import(plan, "test")
        assert (await anext(steps)).done == 0
        assert (await anext(steps)).done == 64
        await steps.aclose()  # what a closed event stream or Ctrl-C does
        assert await SqliteMemoryStore(services.db).count_by("acme", "status") == {
            "auto": 0,
            "validated": 0,
            "obsolete": 0,
        }
        assert len(services.guard.index) == 0
        report = await services.transfer.import_lines("acme", lines, "test")
        assert report.imported == 200, "nothing was left half-stored: run again, it stores everything"
    finally:
        await services.aclose()


def test_the_transfer_bench_prints_its_figures() -> None:
    from bench.transfer import main

    lines = main(["--entries", "12"])
    assert lines[0].startswith("transfer_setup: model=local/")
    assert lines[1].startswith("import_new: 12 entries in ")
    assert lines[2].startswith("import_again: 12 already present, 0 imported")
    assert lines[3].startswith("export: 12 entries in ")
