"""bench/scale.py run tiny end to end: a small QQP-shaped file of its own, the real embedder, two
sizes, the exact and faiss arms, the start-up processes. Figures are checked for shape only
(speed is the benchmark's to print, not a test's to assert); recall is 1.0 for the exact arm by
definition, which checks that the bench's truth is the service's exact search."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = re.compile(
    r"^  (\w+) +build +[\d.]+ s +p50 +[\d.]+ ms +p99 +[\d.]+ ms +recall@1 ([\d.]+) "
    r"\(paraphrases [\d.]+, perturbed copies [\d.]+\)$"
)


def _pairs(folder: Path) -> None:
    topics = ["delivery", "refund", "invoice", "password", "warranty", "contract", "visa", "shipping"]
    with gzip.open(folder / "qqp_pairs.jsonl.gz", "wt", encoding="utf-8") as out:
        for n in range(150):
            topic = topics[n % len(topics)]
            a = f"How long does the {topic} number {n} take in city {n * 7}?"
            b = f"What is the time needed for {topic} {n} to city {n * 7}?"
            out.write(json.dumps({"a": a, "b": b, "same": n % 3 == 0}) + "\n")


def test_tiny_run_prints_every_figure(tmp_path: Path) -> None:
    _pairs(tmp_path)
    tiny = ["--data", str(tmp_path), "--sizes", "200,500", "--queries", "20", "--real", "150"]
    done = subprocess.run(
        [sys.executable, "bench/scale.py", *tiny, "--paraphrases", "10", "--arms", "exact,faiss"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # the embeddings' cache
    )

    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("150 real QQP questions embedded by local/multilingual-e5-small")
    assert "500 rows in one scope (350 of them real vectors plus noise, renormalized)" in done.stdout
    arms = [match.groups() for line in lines if (match := FIGURES.match(line))]
    assert [name for name, _ in arms] == ["exact", "faiss", "exact", "faiss"]
    assert all(float(recall) == 1.0 for name, recall in arms if name == "exact")
    assert all(0.0 <= float(recall) <= 1.0 for _, recall in arms)
    startup = [line for line in lines if line.startswith("  start-up, ")]
    assert len(startup) == 2, done.stdout
    assert "read 0, built 1" in startup[0] and "read 1, built 0" in startup[1]
    assert list(tmp_path.glob("memory-guard-scale-*.npz"))  # cached for the next run
