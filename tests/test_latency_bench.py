"""bench/latency.py: its helpers, and one quick run end to end.

The quick run starts the real service with the local models (e5 with the cross-encoder, then
MiniLM) and inserts 40 entries in each. Its figures are checked for shape only: speed is the
benchmark's to print, not a test's to assert.
"""

from __future__ import annotations

import os
import re

import httpx
import numpy as np
import pytest
from bench import figures, latency, questions
from bench.service import memory_mib

from memory_guard.core.normalize import embedding_text, normalize_question

FIGURE = re.compile(r"n=(\d+): p50=(\d+\.\d+) ms p99=(\d+\.\d+) ms$")


def _figures(lines: list[str], name: str) -> list[tuple[int, float, float]]:
    found = []
    for line in lines:
        if line.startswith(name + " "):
            match = FIGURE.search(line)
            assert match, f"no p50/p99 figure in {line!r}"
            found.append((int(match[1]), float(match[2]), float(match[3])))
    return found


def test_percentiles_are_in_milliseconds() -> None:
    p50, p99 = figures.percentiles_ms([0.001] * 99 + [0.101])
    assert p50 == pytest.approx(1.0)
    assert 1.0 < p99 <= 101.0
    with pytest.raises(ValueError, match="no measurements"):
        figures.percentiles_ms([])


def test_figure_line_format() -> None:
    line = figures.figure("x_ms", [0.002, 0.004], entries=10)
    assert line == "x_ms entries=10 n=2: p50=3.000 ms p99=3.980 ms"
    assert FIGURE.search(line)


def test_faq_questions_are_distinct_bilingual_and_seeded() -> None:
    faqs = questions.faq_questions(200)
    assert len({normalize_question(f.question) for f in faqs}) == 200
    assert {f.language for f in faqs} == {"en", "fr"}
    assert sum(f.language == "fr" for f in faqs) == 100
    assert all(f.answer for f in faqs)
    assert [f.question for f in questions.faq_questions(200)] == [f.question for f in faqs]


@pytest.mark.parametrize("n", [0, 1])
def test_exact_variant_keeps_the_normalized_key(n: int) -> None:
    question = "Quels documents faut-il fournir pour retourner un lave-linge acheté à Lyon ?"
    variant = questions.exact_variant(question, n)
    assert variant != question
    assert normalize_question(variant) == normalize_question(question)


@pytest.mark.parametrize(
    ("question", "language"), [("How long does it take?", "en"), ("Combien ça coûte ?", "fr")]
)
def test_cosine_variant_changes_the_normalized_key(question: str, language: str) -> None:
    variant = questions.cosine_variant(question, language)
    assert normalize_question(variant) != normalize_question(question)
    assert variant.endswith("?")


@pytest.mark.parametrize(
    ("question", "language"), [("How long does it take?", "en"), ("Combien ça coûte ?", "fr")]
)
def test_reworded_variant_is_embedded_as_another_text(question: str, language: str) -> None:
    variant = questions.reworded_variant(question, language)
    assert normalize_question(variant) != normalize_question(question)
    assert embedding_text(variant) != embedding_text(question)  # the closing word is embedded
    assert variant.endswith("?")


def test_memory_of_a_process_in_mib() -> None:
    memory = memory_mib(os.getpid())
    assert 0 < memory["VmRSS"] <= memory["VmHWM"]


def test_index_search_on_a_tiny_index() -> None:
    run = latency.bench_index(entries=200, scopes=4, queries=50, rng=np.random.default_rng(0))
    assert run.search_s.shape == (50,)
    assert run.live_bytes == 200 * latency.DIMENSION * 4
    assert run.allocated_bytes >= run.live_bytes
    lines = latency.index_lines(run)
    assert lines[0].startswith("index_build entries=200 scopes=4")
    assert _figures(lines, "index_search_ms")[0][0] == 50


def test_quick_run_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    lines = latency.main(["--quick", "--setups", "e5+ce,minilm"])

    printed = capsys.readouterr().out.splitlines()
    assert printed == lines
    assert lines[0].startswith("setup: cpus=")
    assert "numpy=" in lines[0]
    assert "python=" in lines[0]
    index = _figures(lines, "index_search_ms")
    assert len(index) == 3
    assert all(n == latency.QUICK.index_queries and 0 < p50 <= p99 for n, p50, p99 in index)
    assert any(line.startswith("model_files: cross-encoder cut-offs") for line in lines)
    for setup in ("e5+ce", "minilm"):
        mine = [line for line in lines if f" setup={setup} " in line]
        counts = {}
        for kind in ("exact", "cosine", "reworded"):
            # Each request is timed once: as a question's first asking, or as a repeat.
            timed = _figures(mine, f"http_direct_{kind}_ms") + _figures(mine, f"http_direct_{kind}_repeat_ms")
            assert all(0 < p50 <= p99 for _, p50, p99 in timed)
            counts[kind] = sum(n for n, _, _ in timed)
        # A kind with no variant the service answers direct is said, not timed (the cross-encoder
        # may turn the politeness variants down); the exact hits always are.
        assert counts["exact"] == latency.QUICK.chat_requests
        assert set(counts.values()) <= {0, latency.QUICK.chat_requests}
        assert counts["cosine"] + counts["reworded"] > 0
    assert any("setup=e5+ce: embedding_model=local/multilingual-e5-small" in line for line in lines)
    assert any("setup=minilm: embedding_model=local/all-MiniLM" in line for line in lines)
    assert sum(line.startswith("http_qualified") for line in lines) == 6
    assert sum(line.startswith("service_memory") and "VmRSS=" in line for line in lines) == 2


def test_a_variant_served_from_another_candidate_does_not_qualify() -> None:
    """The best-scored candidate is the intended entry, but the verifier turned it down and the
    lookup serves the next one: that variant is counted as served from ANOTHER entry."""
    faq = questions.Faq("Who do I call about a damaged boiler delivered last week?", "A", "en")

    def lookup(request: httpx.Request) -> httpx.Response:
        candidates = [
            {"entry_id": 1, "score": 1.0, "exact": False, "served": False, "by": "cross_encoder"},
            {"entry_id": 2, "score": 0.987, "exact": False, "served": True, "by": "cross_encoder"},
        ]
        return httpx.Response(
            200, json={"decision": "direct", "served_entry_id": 2, "candidates": candidates}
        )

    with httpx.Client(transport=httpx.MockTransport(lookup), base_url="http://bench") as staff:
        probes, tally = questions.qualify(staff, [(faq, 1)], "cosine")
        assert probes == []
        assert (tally.direct, tally.other_entry) == (0, 1)
        probes, tally = questions.qualify(staff, [(faq, 2)], "reworded")
        assert [p.score for p in probes] == [0.987]
        assert (tally.direct, tally.cross_encoder) == (1, 1)
