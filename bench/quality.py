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

With `--cross-encoder on` (bench/quality_ce.py) the candidates that pass the vetoes are read by
the shipped cross-encoder instead of the pair classifier, and the report adds the curve of
correct vs WRONG direct answers across its cut-offs for every data set.

Run:  python bench/quality.py [--qqp-limit N] [--full] [--direct T] [--similar T]
                               [--verifier offline|off] [--accept P] [--verified-direct T]
                               [--provider P] [--embedding-model M] [--cross-encoder on|off]
                               [--seed S] [--data DIR]

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
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "src"):  # run from a checkout, installed or not
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from training.splits import half_of  # noqa: E402

from bench.model_files import header_lines  # noqa: E402
from bench.pairs import BATCH_SIZE, score_pairs  # noqa: E402
from bench.quality_ce import (  # noqa: E402
    ce_policy,
    decide_with_cross_encoder,
    print_cross_encoder_summary,
    print_curve,
    run_cross_encoder,
)
from bench.quality_report import pct, print_audited_precision, print_report, print_wrong  # noqa: E402
from bench.quality_stats import (  # noqa: E402
    Pair,
    make_groups,
    rate,
    summarize,
)
from bench.quality_verify import time_with_embedding, verify_pairs  # noqa: E402
from memory_guard.core.decision import Decision  # noqa: E402
from memory_guard.embeddings.factory import build_embedder  # noqa: E402
from memory_guard.hits.accuracy import wilson_interval  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402
from memory_guard.verify.configured import policy_of, runs_cross_encoder, verifier_of  # noqa: E402
from memory_guard.verify.cross_encoder import CrossEncoder  # noqa: E402

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
    parser.add_argument(
        "--embedding-model",
        "--model",
        dest="model",
        default=None,
        help="embedding model, e.g. multilingual-e5-small-onnx (default: Settings)",
    )
    parser.add_argument(
        "--cross-encoder",
        choices=["auto", "on", "off"],
        default="auto",
        help="the local cross-encoder reads the candidates that pass the vetoes (default auto, as the "
        "service: on with the multilingual-e5-small embedders)",
    )
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
    if args.cross_encoder == "on" and args.verifier == "off":
        parser.error("--cross-encoder on needs the verifier (its vetoes run first)")
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
    overrides["memory_cross_encoder"] = args.cross_encoder
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
        policy = policy_of(settings, verifier, model_id)
        embedded = time.perf_counter()
        encoder, ce = None, None
        if runs_cross_encoder(settings, model_id):  # as the service decides
            encoder = CrossEncoder.load()  # the shipped file, checked against its pinned hash
            ce = run_cross_encoder(
                encoder, all_pairs, scores, exact, policy.verify_from(), progress=not args.no_progress
            )
            direct, unsure = encoder.cutoffs.direct, encoder.cutoffs.unsure
            decisions = decide_with_cross_encoder(policy, scores, exact, ce, direct, unsure)
            timings = with_embedding = np.array([], dtype=np.float64)
        else:
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
    elif encoder is not None:
        classifier = "replaced by the cross-encoder"
    else:
        classifier = "none (checks only)" if verifier.model is None else "trained for this model"
    shown = policy if encoder is None else ce_policy(policy, encoder.cutoffs.direct)
    print("memory-guard quality benchmark")
    for line in header_lines():
        print(f"  {line}")
    print(f"  embedding provider : {settings.embedding_provider}")
    print(f"  embedding model id : {model_id}")
    print(f"  verifier           : {settings.memory_verifier}; pair classifier: {classifier}")
    print(
        f"  thresholds         : candidates >= {shown.similar:.2f}; direct on a yes >= {shown.direct:.2f}, "
        f"on a confident yes (p >= {shown.confident:.3f}) >= {shown.verified_direct:.2f}"
    )
    if encoder is not None and ce is not None:
        print_cross_encoder_summary(encoder, ce, policy.verify_from(), len(all_pairs))
    print(f"  data dir           : {data_dir}")
    print(f"  qqp                : {qqp_note}; same={qqp_same:,} diff={len(qqp) - qqp_same:,}")
    print(f"  paraphrases_mock   : {len(mock):,} pairs ('eval' half)")
    print(f"  pairs_dev          : {len(dev):,} pairs")
    print(f"  pairs_holdout      : {len(holdout):,} pairs (bench/data, never trained on)")
    print(f"  templates_heldout  : {len(templates):,} pairs (training/pairs_fr, held-out templates)")
    print(f"  texts embedded     : {n_texts:,} unique, batches of {BATCH_SIZE}")

    verifier_name = settings.memory_verifier + ("+cross-encoder" if encoder is not None else "")
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
    print_report(datasets, shown, verifier_name)
    if encoder is not None and ce is not None:
        slices = [slice(int(bounds[i]), int(bounds[i + 1])) for i in range(len(names)) if parts[i]]
        tops = [(name, groups[0]) for name, groups in datasets]
        print_curve(tops, slices, ce, policy, encoder.cutoffs.direct, encoder.cutoffs.unsure)
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
        print_audited_precision(qqp, served[: len(qqp)], AUDIT_FILE)
        print(
            f"QQP duplicates answered direct: {s.same_direct:,}/{s.n_same:,} = "
            f"{pct(rate(s.same_direct, s.n_same)).strip()}"
        )
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


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
