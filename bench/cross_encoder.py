"""The shipped cross-encoder's time per run, on 1 and on 2 intra-op threads, side by side.

Run: python bench/cross_encoder.py [--rounds 3]

Reads the held-out template pairs (`training/pairs_fr/heldout.jsonl`, stored question and new
question), and times `CrossEncoder.probabilities` as the verifier calls it: one run for the best
candidate of a question (1 pair) and one for its best 3 (3 pairs), tokenizing included. Each
round loads the model once per thread count and alternates which goes first; the table gives the
median over the rounds of each p50 and p99 (ms) and the ratio of 2 threads over 1.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from memory_guard.verify.cross_encoder import CrossEncoder

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "training" / "pairs_fr" / "heldout.jsonl"
THREADS = (1, 2)
BATCHES = (1, 3)


def pairs() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in PAIRS.read_text("utf-8").splitlines() if line.strip()]
    return [(str(row["a"]), str(row["b"])) for row in rows]


def time_runs(encoder: CrossEncoder, data: list[tuple[str, str]], batch: int) -> tuple[float, float]:
    """p50 and p99 in ms of one run over `batch` pairs, over the data in steps of 3 pairs."""
    encoder.probabilities(data[:batch])  # first run: allocations
    seconds = []
    for start in range(0, len(data) - 3, 3):
        began = time.perf_counter()
        encoder.probabilities(data[start : start + batch])
        seconds.append(time.perf_counter() - began)
    return float(np.percentile(seconds, 50) * 1e3), float(np.percentile(seconds, 99) * 1e3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=600, help="held-out pairs used per timing")
    args = parser.parse_args(argv)
    data = pairs()[: args.limit]
    figures: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for round_ in range(args.rounds):
        order = THREADS if round_ % 2 == 0 else tuple(reversed(THREADS))
        for threads in order:
            encoder = CrossEncoder.load(threads=threads)
            try:
                for batch in BATCHES:
                    p50, p99 = time_runs(encoder, data, batch)
                    figures.setdefault((threads, batch), []).append((p50, p99))
                    label = f"round {round_ + 1} threads={threads} pairs={batch}"
                    print(f"{label}: p50={p50:.2f} ms p99={p99:.2f} ms")
            finally:
                encoder.close()
    print(f"\n{'pairs per run':<14} {'1 thread p50/p99':>18} {'2 threads p50/p99':>19} {'ratio p50':>10}")
    for batch in BATCHES:
        one = np.median(np.array(figures[(1, batch)]), axis=0)
        two = np.median(np.array(figures[(2, batch)]), axis=0)
        cells = f"{one[0]:>8.2f} / {one[1]:<7.2f} {two[0]:>9.2f} / {two[1]:<7.2f}"
        print(f"{batch:<14} {cells} {two[0] / one[0]:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
