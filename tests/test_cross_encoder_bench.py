"""bench/cross_encoder.py: the cross-encoder timed on 1 and 2 threads, side by side."""

from __future__ import annotations

import pytest
from bench import cross_encoder


def test_a_tiny_run_prints_both_thread_counts_and_their_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert cross_encoder.main(["--rounds", "2", "--limit", "12"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 2 * 2 * 2, "each round times both thread counts and both batch sizes"
    assert {line.split()[2] for line in rounds} == {"threads=1", "threads=2"}
    table = lines[lines.index("") + 2 :]
    assert [row.split()[0] for row in table] == ["1", "3"]
    for row in table:
        cells = row.split()
        one, two, ratio = float(cells[1]), float(cells[4]), float(cells[-1])
        assert one > 0 and two > 0 and ratio == pytest.approx(two / one, abs=0.006)
