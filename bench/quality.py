"""Quality benchmark of the memory lookup: how often would the guard serve a right or a wrong answer?

For every pair of a data set, `a` plays the stored question and `b` the incoming one. The score
is what the guard computes: 1.0 when the normalized questions are equal (exact match, no
embedding), else the cosine of the two L2-normalized embeddings. The decision is the guard's
own serve policy's (core/serve_policy.py), with `a` the only candidate: `direct` (stored answer
served, no LLM call) when the verifier's verdict and the score serve it, `assisted` (stored
answer given to the LLM as grounding) at score >= the similarity threshold, else `miss`.

Reported per data set (and for pairs_dev per kind and per language):
  * same=true pairs:  rate of correct direct answers, rate of assisted;
  * same=false pairs: rate of WRONG direct answers (another question's answer served), rate
    of assisted;
  * precision of direct answers (same among direct) with a Wilson 95% interval;
  * the median score of same vs different pairs, and a sweep of the direct threshold.

Run:  python bench/quality.py [--qqp-limit N] [--full] [--direct T] [--similar T]
                               [--verifier offline|off] [--accept P] [--verified-direct T]
                               [--provider P] [--model M] [--seed S] [--data DIR]

The evaluation data (what it is and where it comes from: docs/DEVELOPMENT.md, "Evaluation
data") is read from the folder given by --data.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "src"):  # run from a checkout, installed or not
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from training.splits import half_of  # noqa: E402

from bench.pairs import BATCH_SIZE, compare_pairs, score_pairs  # noqa: E402
from bench.quality_report import pct, print_report, print_wrong  # noqa: E402
from bench.quality_stats import (  # noqa: E402
    Decisions,
    Pair,
    Scores,
    decide_pairs,
    make_groups,
    summarize,
)
from memory_guard.core.decision import Decision  # noqa: E402
from memory_guard.core.serve_policy import ServePolicy  # noqa: E402
from memory_guard.core.verdict import Verification  # noqa: E402
from memory_guard.embeddings.base import Embedder  # noqa: E402
from memory_guard.embeddings.factory import build_embedder  # noqa: E402
from memory_guard.hits.accuracy import wilson_interval  # noqa: E402
from memory_guard.services import policy_of, verifier_of  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402
from memory_guard.verify.features import compare, forget_comparisons  # noqa: E402
from memory_guard.verify.verifier import OfflineVerifier  # noqa: E402

QQP_FILE = "qqp_pairs.jsonl.gz"
MOCK_FILE = "paraphrases_mock.jsonl"
DEV_FILE = "pairs_dev.jsonl"
DEFAULT_DATA = ROOT.parent / "shared" / "data"  # where a development checkout keeps the evaluation data
HOLDOUT_FILE = ROOT / "bench" / "data" / "pairs_holdout.jsonl"
TEMPLATES_FILE = ROOT / "training" / "pairs_fr" / "heldout.jsonl"  # templates never trained on
AUDIT_FILE = ROOT / "bench" / "data" / "qqp_audit.jsonl"
DEFAULT_QQP_LIMIT = 10_000


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
    parser.add_argument("--model", default=None, help="embedding model (default: Settings)")
    parser.add_argument("--verifier", choices=["offline", "off"], default=None, help="hit verifier")
    parser.add_argument(
        "--accept", type=float, default=None, help="classifier yes cut-off (default: the model's own)"
    )
    parser.add_argument(
        "--verified-direct",
        type=float,
        default=None,
        help="direct floor on a confident yes (default: Settings)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the QQP sample")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"evaluation data folder (default {DEFAULT_DATA})"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.qqp_limit < 1:
        parser.error("--qqp-limit must be positive")
    return args


# Command-line option -> the setting it overrides.
_OVERRIDES = {
    "direct": "memory_direct_threshold",
    "similar": "memory_similarity_threshold",
    "provider": "embedding_provider",
    "model": "embedding_model",
    "verifier": "memory_verifier",
    "verified_direct": "memory_verified_direct_threshold",
}


def build_settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {
        setting: getattr(args, option)
        for option, setting in _OVERRIDES.items()
        if getattr(args, option) is not None
    }
    return Settings(**overrides)


async def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        settings = build_settings(args)
    except ValidationError as exc:
        print(f"invalid settings: {exc}", file=sys.stderr)
        return 2
    data_dir: Path = args.data
    missing = [f for f in (QQP_FILE, MOCK_FILE, DEV_FILE) if not (data_dir / f).is_file()]
    if missing:
        print(f"missing data in {data_dir}: {', '.join(missing)} (see --data)", file=sys.stderr)
        return 2

    qqp_all = [p for p in read_jsonl(data_dir / QQP_FILE) if half_of(p.a, p.b) == "eval"]
    qqp = qqp_all if args.full else stratified_sample(qqp_all, args.qqp_limit, args.seed)
    mock = [p for p in read_jsonl(data_dir / MOCK_FILE) if half_of(p.a, p.b) == "eval"]
    dev = read_jsonl(data_dir / DEV_FILE)
    holdout = read_jsonl(HOLDOUT_FILE) if HOLDOUT_FILE.is_file() else []
    templates = read_jsonl(TEMPLATES_FILE) if TEMPLATES_FILE.is_file() else []
    loaded = time.perf_counter()

    embedder = build_embedder(settings)  # the local model is loaded and verified here
    model_loaded = time.perf_counter()
    try:
        all_pairs = [*qqp, *mock, *dev, *holdout, *templates]
        scores, exact = await score_pairs(all_pairs, embedder, BATCH_SIZE, progress=not args.no_progress)
        model_id = embedder.model_id
        verifier = verifier_of(settings, embedder)
        if args.accept is not None and verifier is not None and verifier.model is not None:
            cutoffs = replace(verifier.model.cutoffs, accept=args.accept)
            verifier.model = replace(verifier.model, cutoffs=cutoffs)
        policy = policy_of(settings, verifier)
        embedded = time.perf_counter()
        decisions, timings = await verify_pairs(all_pairs, scores, exact, embedder, verifier, policy)
        with_embedding = await time_with_embedding(all_pairs, scores, exact, verifier, policy)
    finally:
        await embedder.aclose()

    n_texts = len({t for p, e in zip(all_pairs, exact, strict=True) if not e for t in (p.a, p.b)})
    qqp_same = sum(p.same for p in qqp)
    half = f"the {len(qqp_all):,} pairs of the 'eval' half (training/splits.py)"
    qqp_note = half if len(qqp) == len(qqp_all) else f"seeded stratified sample of {len(qqp):,} of {half}"
    if verifier is None:
        classifier = "not used"
    else:
        classifier = "none (checks only)" if verifier.model is None else "trained for this model"
    print("memory-guard quality benchmark")
    print(f"  embedding provider : {settings.embedding_provider}")
    print(f"  embedding model id : {model_id}")
    print(f"  verifier           : {settings.memory_verifier}; pair classifier: {classifier}")
    print(
        f"  thresholds         : candidates >= {policy.similar:.2f}; direct on a yes >= {policy.direct:.2f}, "
        f"on a confident yes (p >= {policy.confident:.2f}) >= {policy.verified_direct:.2f}"
    )
    print(f"  data dir           : {data_dir}")
    print(f"  qqp                : {qqp_note}; same={qqp_same:,} diff={len(qqp) - qqp_same:,}")
    print(f"  paraphrases_mock   : {len(mock):,} pairs ('eval' half)")
    print(f"  pairs_dev          : {len(dev):,} pairs")
    print(f"  pairs_holdout      : {len(holdout):,} pairs (bench/data, never trained on)")
    print(f"  templates_heldout  : {len(templates):,} pairs (training/pairs_fr, held-out templates)")
    print(f"  texts embedded     : {n_texts:,} unique, batches of {BATCH_SIZE}")

    bounds = np.cumsum([0, len(qqp), len(mock), len(dev), len(holdout), len(templates)])
    names = ["qqp", "mock", "dev", "holdout", "templates"]
    labels = [f"qqp[{len(qqp)}]", "paraphrases_mock", "pairs_dev", "pairs_holdout", "templates_heldout"]
    parts = [all_pairs[bounds[i] : bounds[i + 1]] for i in range(len(names))]
    datasets = [
        (
            names[i],
            make_groups(
                labels[i],
                parts[i],
                scores[bounds[i] : bounds[i + 1]],
                exact[bounds[i] : bounds[i + 1]],
                decisions[bounds[i] : bounds[i + 1]],
            ),
        )
        for i in range(len(names))
        if parts[i]
    ]
    print_report(datasets, policy, settings.memory_verifier)
    served = decisions == Decision.DIRECT.value
    for i in (2, 3, 4):
        print_wrong(labels[i], parts[i], scores[bounds[i] : bounds[i + 1]], served[bounds[i] : bounds[i + 1]])

    qqp_group = datasets[0][1][0]
    s = summarize(qqp_group.scores, qqp_group.same, qqp_group.exact, qqp_group.decisions)
    low, high = wilson_interval(s.same_direct, s.n_direct)
    print()
    if s.n_direct:
        print(
            f"QQP direct precision, labels as given: {s.same_direct:,}/{s.n_direct:,} = "
            f"{pct(s.direct_precision).strip()} (Wilson 95%: {100 * low:.1f}%-{100 * high:.1f}%)"
        )
        print_audited_precision(qqp, served[: len(qqp)])
    else:
        print("QQP direct precision: no direct answers.")
    if timings.size:
        print(
            f"Verifier cost per candidate: p50 {np.percentile(timings, 50) * 1e3:.3f} ms, "
            f"p99 {np.percentile(timings, 99) * 1e3:.3f} ms over {timings.size:,} candidates"
        )
    if with_embedding.size:
        print(
            "Verifier cost per candidate that needs its leftover words embedded (one call, as in the "
            f"service): p50 {np.percentile(with_embedding, 50) * 1e3:.3f} ms, "
            f"p99 {np.percentile(with_embedding, 99) * 1e3:.3f} ms over {with_embedding.size:,} candidates"
        )
    finished = time.perf_counter()
    print(
        f"Total time {finished - started:.1f} s (data {loaded - started:.1f} s, "
        f"model {model_loaded - loaded:.1f} s, embed+score {embedded - model_loaded:.1f} s "
        f"= {n_texts / max(embedded - model_loaded, 1e-9):.0f} texts/s)"
    )
    return 0


def print_audited_precision(qqp: Sequence[Pair], served: npt.NDArray[np.bool_]) -> None:
    """Precision once the QQP labels of the served "different" pairs are read by a person.

    QQP's labels are a few % noisy ("How do I get in Harvard?" / "How do I get into
    Harvard?" is labelled different). `bench/data/qqp_audit.jsonl` records, for each pair we
    served against its label, whether the stored answer really serves the question. A served
    pair missing from the audit counts as wrong.
    """
    audit = {}
    if AUDIT_FILE.is_file():
        for line in AUDIT_FILE.read_text("utf-8").splitlines():
            row = json.loads(line)
            audit[(row["a"], row["b"])] = bool(row["serves"])
    against = [p for p, hit in zip(qqp, served, strict=True) if hit and not p.same]
    right = int(sum(p.same for p, hit in zip(qqp, served, strict=True) if hit))
    relabelled = sum(audit.get((p.a, p.b), False) for p in against)
    unaudited = sum((p.a, p.b) not in audit for p in against)
    n, good = right + len(against), right + relabelled
    low, high = wilson_interval(good, n)
    print(
        f"QQP direct precision, audited: {good:,}/{n:,} = {100 * good / n:.1f}% "
        f"(Wilson 95%: {100 * low:.1f}%-{100 * high:.1f}%); of the {len(against)} served pairs labelled "
        f"different, {relabelled} are label errors per {AUDIT_FILE.name}, {unaudited} not audited "
        "(counted wrong)"
    )
    for p in against:
        if (p.a, p.b) not in audit:
            print(f"  not audited: {p.a!r} -> {p.b!r}")


async def time_with_embedding(
    pairs: Sequence[Pair],
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    verifier: OfflineVerifier | None,
    policy: ServePolicy,
    limit: int = 300,
) -> npt.NDArray[np.float64]:
    """`verify_many` timed one candidate at a time on the candidates whose decision takes the
    embedding of their leftover words (seconds)."""
    timings: list[float] = []
    if verifier is None:
        return np.array(timings)
    for pair, score, is_exact in zip(pairs, scores, exact, strict=True):
        if len(timings) >= limit:
            break
        if (
            is_exact
            or score < policy.similar
            or not verifier.needs_residual(compare(pair.a, pair.b, float(score)))
        ):
            continue
        forget_comparisons()
        started = time.perf_counter()
        await verifier.verify_many(pair.b, [(pair.a, float(score))])
        timings.append(time.perf_counter() - started)
    return np.array(timings)


async def verify_pairs(
    pairs: Sequence[Pair],
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    embedder: Embedder,
    verifier: OfflineVerifier | None,
    policy: ServePolicy,
) -> tuple[Decisions, npt.NDArray[np.float64]]:
    """The guard's decision for each pair, and the verifier's time per candidate (seconds).

    As in a lookup, only a candidate whose score a verdict can serve is verified. The leftover
    words are embedded in batches first, as `compare_pairs` does; the time per candidate is the
    checks and the classifier (`bench/latency.py` measures the whole path).
    """
    verifications: list[Verification | None] = [None] * len(pairs)
    timings: list[float] = []
    if verifier is None:
        return decide_pairs(policy, scores, exact, verifications), np.array(timings)
    todo = [i for i in range(len(pairs)) if not exact[i] and scores[i] >= policy.verify_from()]
    compared = await compare_pairs([pairs[i] for i in todo], scores[todo], embedder)
    for i, item in zip(todo, compared, strict=True):
        # The pair was compared while its leftover words were embedded: time the checks, not the cache.
        forget_comparisons()
        started = time.perf_counter()
        verifications[i] = verifier.verify(item.pair.a, item.pair.b, float(scores[i]), item.residual)
        timings.append(time.perf_counter() - started)
    return decide_pairs(policy, scores, exact, verifications), np.array(timings)


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
