"""Quality benchmark of the memory lookup: how often would the guard serve a right or a wrong answer?

For every pair of a data set, `a` plays the stored question and `b` the incoming one. The score
is what the guard computes: 1.0 when the normalized questions are equal (exact match, no
embedding), else the cosine of the two L2-normalized embeddings. The decision is `direct`
(stored answer served, no LLM call) at score >= the direct threshold, `assisted` (stored
answer given to the LLM as grounding) at score >= the similarity threshold, else `miss`.

Reported per data set (and for pairs_dev per kind and per language):
  * same=true pairs:  rate of correct direct answers, rate of assisted;
  * same=false pairs: rate of WRONG direct answers (another question's answer served), rate
    of assisted;
  * precision of direct answers (same among direct) with a Wilson 95% interval;
  * the median score of same vs different pairs, and a sweep of the direct threshold.

Run:  python bench/quality.py [--qqp-limit N] [--full] [--direct T] [--similar T]
                               [--provider P] [--seed S] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import math
import random
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT / "src"))

from memory_guard.embeddings.base import Embedder  # noqa: E402
from memory_guard.embeddings.factory import build_embedder  # noqa: E402
from memory_guard.memory.normalize import normalize_question  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402

Decision = Literal["direct", "assisted", "miss"]
Scores = npt.NDArray[np.float64]

BATCH_SIZE = 64
SWEEP_THRESHOLDS: tuple[float, ...] = (0.85, 0.90, 0.93, 0.95, 0.97, 0.99)
QQP_FILE = "qqp_pairs.jsonl.gz"
MOCK_FILE = "paraphrases_mock.jsonl"
DEV_FILE = "pairs_dev.jsonl"
DEFAULT_QQP_LIMIT = 10_000
WILSON_Z = 1.959963984540054  # two-sided 95%


@dataclass(frozen=True, slots=True)
class Pair:
    a: str  # the stored question
    b: str  # the incoming question
    same: bool  # would the stored answer be right for the incoming question?
    kind: str = ""
    lang: str = ""


@dataclass(frozen=True, slots=True)
class Summary:
    """Outcome counts of one group of pairs at one pair of thresholds."""

    n: int
    n_same: int
    n_diff: int
    same_direct: int  # correct direct answers
    same_assisted: int
    diff_direct: int  # WRONG direct answers
    diff_assisted: int
    exact: int  # pairs decided by the exact normalized match
    median_same: float
    median_diff: float

    @property
    def n_direct(self) -> int:
        return self.same_direct + self.diff_direct

    @property
    def direct_precision(self) -> float | None:
        return self.same_direct / self.n_direct if self.n_direct else None


# --------------------------------------------------------------------------- numeric logic


def decide(score: float, direct: float, similar: float) -> Decision:
    """The guard's decision for one score: thresholds are inclusive."""
    if score >= direct:
        return "direct"
    if score >= similar:
        return "assisted"
    return "miss"


def wilson_interval(successes: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion; (0.0, 1.0) when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], not {successes}")
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return (low, high)


def rate(count: int, total: int) -> float | None:
    return count / total if total else None


def summarize(
    scores: Scores, same: npt.NDArray[np.bool_], exact: npt.NDArray[np.bool_], direct: float, similar: float
) -> Summary:
    """Count the decisions of a group of pairs, split by their label."""
    is_direct = scores >= direct
    is_assisted = (scores >= similar) & ~is_direct
    diff = ~same
    return Summary(
        n=int(scores.size),
        n_same=int(same.sum()),
        n_diff=int(diff.sum()),
        same_direct=int((is_direct & same).sum()),
        same_assisted=int((is_assisted & same).sum()),
        diff_direct=int((is_direct & diff).sum()),
        diff_assisted=int((is_assisted & diff).sum()),
        exact=int(exact.sum()),
        median_same=float(np.median(scores[same])) if same.any() else math.nan,
        median_diff=float(np.median(scores[diff])) if diff.any() else math.nan,
    )


def exact_match(a: str, b: str) -> bool:
    """The guard's first lookup step: equal normalized questions."""
    return normalize_question(a) == normalize_question(b)


async def embed_unique(
    texts: Iterable[str], embedder: Embedder, batch_size: int = BATCH_SIZE, progress: bool = True
) -> dict[str, npt.NDArray[np.float32]]:
    """Embed each distinct text once, in batches; return text -> unit vector.

    Texts go by increasing length so that a batch pads its short texts little.
    """
    unique = sorted(dict.fromkeys(texts), key=len)
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    if not unique:
        return vectors
    with tqdm(total=len(unique), desc="embedding", unit="text", file=sys.stderr, disable=not progress) as bar:
        for start in range(0, len(unique), batch_size):
            batch = unique[start : start + batch_size]
            rows = await embedder.embed(batch)
            if rows.shape[0] != len(batch):
                raise RuntimeError(f"embedder returned {rows.shape[0]} rows for {len(batch)} texts")
            for text, row in zip(batch, rows, strict=True):
                vectors[text] = row
            bar.update(len(batch))
    return vectors


async def score_pairs(
    pairs: Sequence[Pair], embedder: Embedder, batch_size: int = BATCH_SIZE, progress: bool = True
) -> tuple[Scores, npt.NDArray[np.bool_]]:
    """Score every pair as the guard would; return (scores, was-exact-match)."""
    exact = np.array([exact_match(p.a, p.b) for p in pairs], dtype=np.bool_)
    to_embed = (text for p, is_exact in zip(pairs, exact, strict=True) if not is_exact for text in (p.a, p.b))
    vectors = await embed_unique(to_embed, embedder, batch_size, progress)
    scores = np.ones(len(pairs), dtype=np.float64)
    for i, (pair, is_exact) in enumerate(zip(pairs, exact, strict=True)):
        if not is_exact:
            scores[i] = float(np.dot(vectors[pair.a], vectors[pair.b]))
    return scores, exact


# --------------------------------------------------------------------------- data


def open_text(path: Path) -> TextIO:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def read_jsonl(path: Path) -> list[Pair]:
    pairs: list[Pair] = []
    with open_text(path) as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                pairs.append(
                    Pair(
                        a=row["a"],
                        b=row["b"],
                        same=bool(row["same"]),
                        kind=str(row.get("kind", "")),
                        lang=str(row.get("lang", "")),
                    )
                )
    return pairs


def stratified_sample(pairs: Sequence[Pair], limit: int, seed: int) -> list[Pair]:
    """A seeded random sample of `limit` pairs keeping the same/different ratio; order preserved."""
    if limit >= len(pairs):
        return list(pairs)
    rng = random.Random(seed)
    same_idx = [i for i, p in enumerate(pairs) if p.same]
    diff_idx = [i for i, p in enumerate(pairs) if not p.same]
    n_same = round(limit * len(same_idx) / len(pairs))
    chosen = rng.sample(same_idx, n_same) + rng.sample(diff_idx, limit - n_same)
    return [pairs[i] for i in sorted(chosen)]


# --------------------------------------------------------------------------- report


def pct(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:5.1f}%"


def num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def precision_cell(summary: Summary) -> str:
    if not summary.n_direct:
        return "-"
    low, high = wilson_interval(summary.same_direct, summary.n_direct)
    return f"{pct(summary.direct_precision)} [{100 * low:4.1f}-{100 * high:5.1f}]"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> None:
    """Fixed-width table; the first `left` columns are left-aligned, the rest right-aligned."""
    widths = [max(len(headers[c]), *(len(r[c]) for r in rows)) for c in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(widths[c]) if c < left else cell.rjust(widths[c]) for c, cell in enumerate(cells)
        ).rstrip()

    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


@dataclass(frozen=True, slots=True)
class Group:
    label: str
    scores: Scores
    same: npt.NDArray[np.bool_]
    exact: npt.NDArray[np.bool_]


def make_groups(
    name: str, pairs: Sequence[Pair], scores: Scores, exact: npt.NDArray[np.bool_]
) -> list[Group]:
    same = np.array([p.same for p in pairs], dtype=np.bool_)
    groups = [Group(name, scores, same, exact)]
    for attr in ("kind", "lang"):
        values = sorted({getattr(p, attr) for p in pairs if getattr(p, attr)})
        for value in values:
            mask = np.array([getattr(p, attr) == value for p in pairs], dtype=np.bool_)
            groups.append(Group(f"  {attr}={value}", scores[mask], same[mask], exact[mask]))
    return groups


def print_report(datasets: Sequence[tuple[str, list[Group]]], direct: float, similar: float) -> None:
    print()
    print(f"== Decisions at direct >= {direct:.2f}, assisted >= {similar:.2f}")
    print("   same=true:  'direct' = correct direct answers, 'assisted' = grounded LLM answers")
    print("   same=false: 'WRONG dir' = another question's answer served with no LLM call")
    print("   precision = same among direct, [Wilson 95% interval]; exact = normalized exact matches")
    headers = [
        "group", "pairs", "exact", "same", "direct", "assisted", "diff", "WRONG dir", "assisted",
        "direct precision",
    ]  # fmt: skip
    rows: list[list[str]] = []
    for _, groups in datasets:
        for g in groups:
            s = summarize(g.scores, g.same, g.exact, direct, similar)
            rows.append(
                [
                    g.label,
                    str(s.n),
                    str(s.exact),
                    str(s.n_same),
                    pct(rate(s.same_direct, s.n_same)),
                    pct(rate(s.same_assisted, s.n_same)),
                    str(s.n_diff),
                    pct(rate(s.diff_direct, s.n_diff)),
                    pct(rate(s.diff_assisted, s.n_diff)),
                    precision_cell(s),
                ]
            )
    print_table(headers, rows)

    print()
    print("== Score distribution (cosine; exact matches count as 1.0)")
    dist_rows: list[list[str]] = []
    for _, groups in datasets:
        for g in groups:
            same_scores, diff_scores = g.scores[g.same], g.scores[~g.same]
            dist_rows.append(
                [
                    g.label,
                    num(float(np.percentile(same_scores, 10))) if same_scores.size else "-",
                    num(float(np.median(same_scores))) if same_scores.size else "-",
                    num(float(np.median(diff_scores))) if diff_scores.size else "-",
                    num(float(np.percentile(diff_scores, 90))) if diff_scores.size else "-",
                    num(float(diff_scores.max())) if diff_scores.size else "-",
                ]
            )
    print_table(["group", "same p10", "same median", "diff median", "diff p90", "diff max"], dist_rows)

    print()
    print("== Sweep of the direct threshold: correct direct (same=true) / WRONG direct (same=false)")
    sweep_headers = ["direct >="]
    for name, _ in datasets:
        sweep_headers += [f"{name} correct", f"{name} WRONG"]
    sweep_rows: list[list[str]] = []
    for threshold in sorted({*SWEEP_THRESHOLDS, direct}):
        marker = " *" if math.isclose(threshold, direct) else "  "
        row = [f"{threshold:.2f}{marker}"]
        for _, groups in datasets:
            s = summarize(
                groups[0].scores, groups[0].same, groups[0].exact, threshold, min(similar, threshold)
            )
            row += [pct(rate(s.same_direct, s.n_same)), pct(rate(s.diff_direct, s.n_diff))]
        sweep_rows.append(row)
    print_table(sweep_headers, sweep_rows)
    print("   (* = the configured direct threshold)")


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--qqp-limit", type=int, default=DEFAULT_QQP_LIMIT, help="QQP sample size (stratified)"
    )
    parser.add_argument("--full", action="store_true", help="use all QQP pairs")
    parser.add_argument("--direct", type=float, default=None, help="direct threshold (default: Settings)")
    parser.add_argument("--similar", type=float, default=None, help="assisted threshold (default: Settings)")
    parser.add_argument("--provider", choices=["local", "openai", "hashing"], default=None, help="embedder")
    parser.add_argument("--seed", type=int, default=0, help="seed of the QQP sample")
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT.parent / "shared" / "data", help="evaluation data folder"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.qqp_limit < 1:
        parser.error("--qqp-limit must be positive")
    return args


def build_settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if args.direct is not None:
        overrides["memory_direct_threshold"] = args.direct
    if args.similar is not None:
        overrides["memory_similarity_threshold"] = args.similar
    if args.provider is not None:
        overrides["embedding_provider"] = args.provider
    return Settings(**overrides)


async def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        settings = build_settings(args)
    except ValidationError as exc:
        print(f"invalid settings: {exc}", file=sys.stderr)
        return 2
    direct, similar = settings.memory_direct_threshold, settings.memory_similarity_threshold
    data_dir: Path = args.data_dir
    missing = [f for f in (QQP_FILE, MOCK_FILE, DEV_FILE) if not (data_dir / f).is_file()]
    if missing:
        print(f"missing data in {data_dir}: {', '.join(missing)} (see --data-dir)", file=sys.stderr)
        return 2

    qqp_all = read_jsonl(data_dir / QQP_FILE)
    qqp = qqp_all if args.full else stratified_sample(qqp_all, args.qqp_limit, args.seed)
    mock = read_jsonl(data_dir / MOCK_FILE)
    dev = read_jsonl(data_dir / DEV_FILE)
    loaded = time.perf_counter()

    embedder = build_embedder(settings)  # the local model is loaded and verified here
    model_loaded = time.perf_counter()
    try:
        all_pairs = [*qqp, *mock, *dev]
        scores, exact = await score_pairs(all_pairs, embedder, BATCH_SIZE, progress=not args.no_progress)
        model_id = embedder.model_id
    finally:
        await embedder.aclose()
    embedded = time.perf_counter()

    n_texts = len({t for p, e in zip(all_pairs, exact, strict=True) if not e for t in (p.a, p.b)})
    qqp_same = sum(p.same for p in qqp)
    if args.full or len(qqp) == len(qqp_all):
        qqp_note = f"all {len(qqp_all):,} pairs (--full)" if args.full else f"all {len(qqp_all):,} pairs"
    else:
        qqp_note = (
            f"seeded stratified random sample of {len(qqp):,} / {len(qqp_all):,} pairs (seed {args.seed})"
        )
    print("memory-guard quality benchmark")
    print(f"  embedding provider : {settings.embedding_provider}")
    print(f"  embedding model id : {model_id}")
    print(f"  thresholds         : direct >= {direct:.2f}, assisted >= {similar:.2f}")
    print(f"  data dir           : {data_dir}")
    print(f"  qqp                : {qqp_note}; same={qqp_same:,} diff={len(qqp) - qqp_same:,}")
    print(f"  paraphrases_mock   : {len(mock):,} pairs")
    print(f"  pairs_dev          : {len(dev):,} pairs")
    print(f"  texts embedded     : {n_texts:,} unique, batches of {BATCH_SIZE}")

    a, b = len(qqp), len(qqp) + len(mock)
    qqp_name = "qqp" if len(qqp) == len(qqp_all) else f"qqp[{len(qqp)}]"
    datasets = [
        (qqp_name, make_groups(qqp_name, qqp, scores[:a], exact[:a])),
        ("mock", make_groups("paraphrases_mock", mock, scores[a:b], exact[a:b])),
        ("dev", make_groups("pairs_dev", dev, scores[b:], exact[b:])),
    ]
    print_report(datasets, direct, similar)

    s = summarize(scores[:a], datasets[0][1][0].same, exact[:a], direct, similar)
    low, high = wilson_interval(s.same_direct, s.n_direct)
    print()
    if s.n_direct:
        print(
            f"QQP direct precision: {s.same_direct:,}/{s.n_direct:,} = {pct(s.direct_precision).strip()} "
            f"(Wilson 95%: {100 * low:.1f}%-{100 * high:.1f}%); QQP labels carry a few % noise."
        )
    else:
        print("QQP direct precision: no direct answers at this threshold.")
    finished = time.perf_counter()
    print(
        f"Total time {finished - started:.1f} s (data {loaded - started:.1f} s, "
        f"model {model_loaded - loaded:.1f} s, embed+score {embedded - model_loaded:.1f} s "
        f"= {n_texts / max(embedded - model_loaded, 1e-9):.0f} texts/s)"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
