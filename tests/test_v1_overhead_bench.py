"""bench/v1_overhead.py run tiny end to end: the real service and the bench's upstream in their own
processes, the hashing embedder, three questions. Its figures are checked for shape only (speed is the
benchmark's to print, not a test's to assert); the bench itself checks that each /v1 answer streamed
content, and that the repeated question was answered direct."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bench.v1_overhead import Run, Timings, report

ROOT = Path(__file__).resolve().parents[1]
SPREAD = re.compile(r"p50=(\d+\.\d+) ms p90=(\d+\.\d+) ms \(n=(\d+)\)$")


def _spread(lines: list[str], head: str) -> tuple[float, float, int]:
    found = [line for line in lines if line.startswith(head)]
    assert len(found) == 1, f"{head!r} in {lines}"
    match = SPREAD.search(found[0])
    assert match, found[0]
    return float(match[1]), float(match[2]), int(match[3])


def test_tiny_run_prints_every_figure_and_exits_0() -> None:
    tiny = ["--n", "3", "--warmup", "1", "--entries", "4", "--embedder", "hashing"]
    done = subprocess.run(
        [sys.executable, "bench/v1_overhead.py", *tiny],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("setup: cpus=")
    assert lines[1].startswith("setup: embedder=hashing/") and " entries=4 " in lines[1]
    for head in ("a upstream straight: first token", "embedding in this process (hashing/"):
        p50, p90, n = _spread(lines, head)
        assert n == 3 and 0 < p50 <= p90
    assert not any("unavailable" in line for line in lines), lines
    # All three new questions miss (no FAQ entry shares their words): every /v1 line is `miss`.
    assert _spread(lines, "b /v1 miss: first token")[2] == 3
    assert [line for line in lines if line.startswith("b /v1 ")] == [
        line for line in lines if line.startswith("b /v1 miss:")
    ]
    assert any(re.match(r"b the service's own lookups .*: \d+\.\d+ ms \(n=3\)$", line) for line in lines)
    assert any(line.startswith("added first token p50 (b miss - a): ") for line in lines)
    assert any(line.startswith("median of the paired differences") for line in lines)
    beyond = re.compile(r"added beyond one embedding, p50: -?\d+\.\d+ ms, aim <= 2 ms: (within|over)$")
    assert any(beyond.match(line) for line in lines)
    assert _spread(lines, "c /v1 direct hit, the same question repeated: first token")[2] == 3


def test_report_without_the_v1_route_gives_the_direct_arm_only() -> None:
    run = Run(
        straight=[0.001, 0.002], embed=[0.0005, 0.0006], v1_missing="POST /v1/chat/completions answered 404"
    )

    lines = report(run, "hashing/char3-384")

    assert lines[0] == "a upstream straight: first token p50=1.50 ms p90=1.90 ms (n=2)"
    assert lines[-1] == "b /v1: unavailable, POST /v1/chat/completions answered 404; no /v1 figure"
    assert len(lines) == 3


def test_report_says_when_no_question_missed() -> None:
    run = Run(straight=[0.001], embed=[0.0005], via=Timings({"assisted": [0.004]}))

    lines = report(run, "hashing/char3-384")

    assert "b /v1 assisted: first token p50=4.00 ms p90=4.00 ms (n=1)" in lines
    assert "added: no question was a miss through /v1; no added figure" in lines
