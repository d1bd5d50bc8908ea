"""bench/latency.py: its helpers, and one quick run end to end.

The quick run starts the real service with the local model and inserts 40 entries. Its figures
are checked for shape only: speed is the benchmark's to print, not a test's to assert.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from bench import latency, questions

from memory_guard.core.normalize import normalize_question

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
    p50, p99 = latency.percentiles_ms([0.001] * 99 + [0.101])
    assert p50 == pytest.approx(1.0)
    assert 1.0 < p99 <= 101.0
    with pytest.raises(ValueError, match="no measurements"):
        latency.percentiles_ms([])


def test_figure_line_format() -> None:
    line = latency.figure("x_ms", [0.002, 0.004], entries=10)
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


def test_index_search_on_a_tiny_index() -> None:
    run = latency.bench_index(entries=200, scopes=4, queries=50, rng=np.random.default_rng(0))
    assert run.search_s.shape == (50,)
    assert run.live_bytes == 200 * latency.DIMENSION * 4
    assert run.allocated_bytes >= run.live_bytes
    lines = latency.index_lines(run)
    assert lines[0].startswith("index_build entries=200 scopes=4")
    assert _figures(lines, "index_search_ms")[0][0] == 50


def test_quick_run_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    lines = latency.main(["--quick"])

    printed = capsys.readouterr().out.splitlines()
    assert printed == lines
    assert lines[0].startswith("setup: cpus=")
    assert "numpy=" in lines[0]
    assert "python=" in lines[0]
    index = _figures(lines, "index_search_ms")
    assert len(index) == 3
    assert all(n == latency.QUICK.index_queries and 0 < p50 <= p99 for n, p50, p99 in index)
    for name in ("http_direct_exact_ms", "http_direct_cosine_ms"):
        ((n, p50, p99),) = _figures(lines, name)
        assert n == latency.QUICK.chat_requests
        assert 0 < p50 <= p99
    assert any("embedding_model=local/" in line for line in lines)
    assert sum(line.startswith("http_qualified") for line in lines) == 2
