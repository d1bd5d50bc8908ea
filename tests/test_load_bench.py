"""bench/load.py: its building blocks, and its tiny mode end to end against this working tree only.

The tiny run starts the real service (local model) in its own process from `src/`, in front of the
bench's fake upstream, and goes through every figure with counts far too small to measure anything.
Its figures are checked for shape only (speed is the benchmark's to print, not a test's to assert);
every answer it got was checked by the bench itself to be of the kind asked for.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from bench import load, load_data, load_qualify, load_setup
from bench.load_traffic import BenchFailure, Event, outcome, sse_events
from bench.questions import faq_questions

from memory_guard.core.normalize import embedding_text, normalize_question, same_question

ROOT = Path(__file__).resolve().parents[1]


def test_cosine_variants_reach_the_verifiers_model() -> None:
    """Each variant changes the key and the embedded text, and is not the stored question once
    greetings, lead-ins and politeness are set aside (that one is served without any model)."""
    for faq in faq_questions(40):
        variants = load_qualify.cosine_variants(faq)
        assert len({text for _, text in variants}) == len(load_qualify.COSINE_FORMS[faq.language])
        for _, variant in variants:
            assert normalize_question(variant) != normalize_question(faq.question)
            assert embedding_text(variant) != embedding_text(faq.question)
            assert not same_question(faq.question, variant)


def test_lookup_outcomes_keep_only_variants_served_direct_from_their_entry() -> None:
    probe = load_data.Probe("q", 3, "cosine")

    def body(decision: str, *candidates: tuple[int, bool, str]) -> dict[str, object]:
        return {
            "decision": decision,
            "candidates": [
                {"entry_id": e, "served": served, "exact": False, "by": by} for e, served, by in candidates
            ],
        }

    # the served candidate decides, not the best-scored one
    assert load_qualify.outcome_of(
        body("direct", (5, False, "cross_encoder"), (3, True, "cross_encoder")), probe
    ) == (
        "direct",
        True,
    )
    assert load_qualify.outcome_of(body("direct", (3, True, "offline")), probe) == ("direct", False)
    assert load_qualify.outcome_of(body("direct", (5, True, "offline")), probe) == ("other entry", False)
    assert load_qualify.outcome_of(body("assisted", (3, False, "cross_encoder")), probe) == (
        "not direct",
        False,
    )
    assert load_qualify.outcome_of(body("miss"), probe) == ("not direct", False)
    tally = load_qualify.Qualified(
        by_form={"{b}, exactly?": {"direct": 2, "not direct": 5, "other entry": 1}}
    )
    (head, form) = tally.lines("t")
    assert "2 of 8 (25%) direct" in head and "1 from ANOTHER entry, 5 not direct" in head
    assert form.endswith("direct 2, other entry 1, not direct 5")


def test_hit_mix_repeats_the_share_asked_and_drops_refused_texts() -> None:
    stored = [(faq, n + 1) for n, faq in enumerate(faq_questions(50))]
    pool = [probe for _, probe in load_qualify.sample(stored)]
    assert len(pool) == 200 and len({p.message for p in pool}) == 200
    mix = load_data.HitMix(stored, pool, repeat=0.5)
    asked = [mix.cosine() for _ in range(400)]
    repeats = [probe for probe in asked if probe.repeat]
    assert 150 < len(repeats) < 250
    assert {p.message for p in repeats} <= {p.message for p in asked if not p.repeat}
    assert mix.fresh_asked + mix.repeats_asked == 400
    refused = asked[0]
    mix.refuse(refused)
    assert all(mix.cosine().message != refused.message for _ in range(300))
    exact = [mix.exact() for _ in range(4)]
    assert all(
        normalize_question(p.message) == normalize_question(stored[n][0].question)
        for n, p in enumerate(exact)
    )
    assert len({p.message for p in exact}) == 4
    assert [p.kind for p in (mix.alternate(0), mix.alternate(1))] == ["exact", "cosine"]
    empty = load_data.HitMix(stored, [], repeat=0.5)
    assert not empty.has_cosine and empty.alternate(1).kind == "exact"


def test_miss_questions_and_import_lines_are_distinct() -> None:
    misses = load_data.miss_questions(300)
    assert len({normalize_question(q) for q in misses}) == 300
    lines = load_data.import_lines(500)
    questions = [json.loads(line)["question"] for line in lines]
    assert len({normalize_question(q) for q in questions}) == 500


def test_sse_events_and_the_direct_check() -> None:
    body = (
        'event: cached_response\r\ndata: {"entry_id": 3}\r\n\r\n: ping\r\n\r\n'
        'event: done\r\ndata: {"decision": "direct"}\r\n\r\n'
    )
    events = sse_events(body.split("\n"))
    assert events == [Event("cached_response", {"entry_id": 3}), Event("done", {"decision": "direct"})]
    assert outcome(events, load_data.Probe("q", 3, "exact")) == "direct"
    assert outcome(events, load_data.Probe("q", 4, "cosine")) == "other entry"
    with pytest.raises(BenchFailure):
        outcome(events, load_data.Probe("q", 4, "exact"))
    assisted = [Event("text", {"content": "x"}), Event("done", {"decision": "assisted"})]
    assert outcome(assisted, load_data.Probe("q", 3, "cosine")) == "not direct"
    with pytest.raises(BenchFailure):
        outcome(assisted, load_data.Probe("q", 3, "exact"))
    with pytest.raises(BenchFailure):
        outcome([Event("error", {"code": "internal_error"})], load_data.Probe("q", 3, "cosine"))


def test_clone_entries_keeps_the_format_of_each_column(tmp_path: Path) -> None:
    database = tmp_path / "clone.db"
    with sqlite3.connect(database) as db:
        db.execute(
            "CREATE TABLE responses (id INTEGER PRIMARY KEY, key_hash TEXT, question TEXT, embedding BLOB, "
            "embedding_model TEXT, created_at TEXT, updated_at REAL, expires_at TEXT)"
        )
        vector = (np.ones(8) / np.sqrt(8)).astype("<f4")
        db.execute(
            "INSERT INTO responses VALUES "
            "(1, 'k', 'Q ?', ?, 'local/m', '2026-01-02T03:04:05.123456Z', 17.5, NULL)",
            (vector.tobytes(),),
        )
    assert load_data.clone_entries(database, 30) == ("local/m", 8)
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT key_hash, created_at, updated_at, expires_at, embedding FROM responses"
        ).fetchall()
    assert len(rows) == 31
    assert len({row[0] for row in rows}) == 31
    assert len({row[1] for row in rows}) == 31
    assert all(re.fullmatch(r"2026-01-02T03:04:05\.\d{6}Z", row[1]) for row in rows)
    assert all(isinstance(row[2], float) and row[3] is None for row in rows)
    norms = [float(np.linalg.norm(np.frombuffer(row[4], dtype="<f4"))) for row in rows]
    assert norms == pytest.approx([1.0] * 31, abs=1e-5)


def test_table_gives_the_ratio_of_the_last_tree_over_the_first() -> None:
    report = load_setup.Report(["old", "new"])
    for value in (100.0, 120.0, 110.0):
        report.add("a hits", "hits/s", "old", value)
        report.add("a hits", "hits/s", "new", 2 * value)
    report.add("d failed", "count", "old", 3)
    report.add("d failed", "count", "new", 0)
    table = report.table()
    assert table[0].split() == ["figure", "unit", "old", "new", "new", "/", "old"]
    assert table[1].split()[-3:] == ["110", "220", "2.00"]
    assert table[2].split()[-3:] == ["3", "0", "0.00"]


def test_embedding_model_is_set_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    database = Path("memory.db")
    assert "EMBEDDING_MODEL" not in load_setup.service_env(database, "http://127.0.0.1:1/v1")
    env = load_setup.service_env(database, "http://127.0.0.1:1/v1", "all-MiniLM-L6-v2")
    assert env["EMBEDDING_MODEL"] == "all-MiniLM-L6-v2"
    with pytest.raises(SystemExit):
        load.main(["--tree", "a", "--tree", "b", *["--embedding-model", "x"] * 3])
    assert "once, or once per tree" in capsys.readouterr().err


def test_tiny_run_against_the_working_tree(capsys: pytest.CaptureFixture[str]) -> None:
    lines = load.main(["--tiny", "--tree", str(ROOT)])

    assert capsys.readouterr().out.splitlines() == lines
    assert lines[0].startswith("setup: cpus=")
    assert lines[1].startswith("tree ") and f"imports {ROOT / 'src'}" in lines[1]
    # the variants tried are all counted, and only those served direct are timed
    (tried,) = [line for line in lines if re.match(r"a cosine variants tree=\S+: ", line)]
    counts = re.search(r": (\d+) of (\d+) .* (\d+) from ANOTHER entry, (\d+) not direct", tried)
    assert counts, tried
    direct_n, tried_n, other_n, below_n = (int(g) for g in counts.groups())
    assert tried_n == direct_n + other_n + below_n and direct_n > 0
    # tried until enough were served, or all of them
    assert direct_n >= load.TINY.variants or tried_n == 4 * load.TINY.faq_entries
    forms = [line for line in lines if line.startswith("a cosine variants") and " form " in line]
    assert sum(int(n) for line in forms for n in re.findall(r"(?:direct|other entry) (\d+)", line)) == tried_n
    timed = [line for line in lines if re.match(r"(a \w+ direct hits/s|b burst)[^:]* tree=", line)]
    assert len(timed) == 2 * len(load.TINY.concurrency) + 1
    assert all("not direct 0" in line for line in timed)
    assert all("other entry 0" in line for line in timed if line.startswith("a "))
    assert any(line.startswith("a cosine mix") and "repeated" in line for line in lines)
    misses = [line for line in lines if line.startswith(("c miss", "c assisted"))]
    assert sum(int(n) for n in re.findall(r"'(?:miss|assisted)': (\d+)", misses[0])) == load.TINY.misses
    (during,) = [line for line in lines if line.startswith("d import")]
    assert f"{load.TINY.import_entries} entries in" in during and "failed 0 []" in during
    assert any(line.startswith("e database") and "local/" in line for line in lines)
    table = lines[lines.index(next(line for line in lines if line.startswith("measured in"))) + 1 :]
    assert table[0].split()[:3] == ["figure", "unit", lines[1].split()[1].rstrip(":")]
    figures = {row.rsplit(maxsplit=2)[0]: row.split()[-1] for row in table[1:]}
    for prefix in (
        "a exact",
        "a cosine direct",
        "a cosine variants served direct",
        "a cosine hits repeating",
        "b first event p50",
        "b first event p99",
        "c added beyond",
        "d worst",
        "e start-up",
    ):
        found = [value for name, value in figures.items() if name.startswith(prefix)]
        assert found, f"no {prefix!r} figure in {table}"
        assert all(re.fullmatch(r"-?\d+(\.\d+)?(e[-+]\d+)?", value) for value in found), found
