"""Train the verifier's pair classifier and write `src/memory_guard/verify/pair_model.json`.

One command, reproducible (seeded samples, deterministic Newton steps):

    .venv/bin/python training/train_verifier.py [--provider local] [--model NAME]

Training data: the 'train' half (see `training/splits.py`) of the QQP pairs and of the mock
paraphrases in ../shared/data, and our hand-written French/English hard pairs in
`training/pairs_hard_fr_en.jsonl`. `pairs_dev.jsonl` and `bench/data/pairs_holdout.jsonl`
are never read here: they measure the result (`bench/quality.py`). Each source weighs a set
share of the loss, so that the 600 hand-written pairs are not drowned by QQP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "src"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from bench.quality import read_jsonl, score_pairs  # noqa: E402
from bench.quality_stats import Pair  # noqa: E402

from memory_guard.embeddings.factory import build_embedder  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402
from memory_guard.verify.features import FEATURES, compare  # noqa: E402
from memory_guard.verify.model import MODEL_FILE, PairModel  # noqa: E402
from training.splits import half_of  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
HARD_PAIRS = ROOT / "training" / "pairs_hard_fr_en.jsonl"
OUTPUT = ROOT / "src" / "memory_guard" / "verify" / MODEL_FILE
SHARES = {"qqp": 0.4, "mock": 0.1, "hard": 0.5}
L2 = 1.0


def training_pairs(qqp_limit: int, seed: int) -> dict[str, list[Pair]]:
    rng = random.Random(seed)
    qqp = [p for p in read_jsonl(DATA / "qqp_pairs.jsonl.gz") if half_of(p.a, p.b) == "train"]
    mock = [p for p in read_jsonl(DATA / "paraphrases_mock.jsonl") if half_of(p.a, p.b) == "train"]
    return {"qqp": rng.sample(qqp, min(qqp_limit, len(qqp))), "mock": mock, "hard": read_jsonl(HARD_PAIRS)}


def fit_logistic(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], w: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], float, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Weighted L2 logistic regression by Newton's method on standardized features."""
    mean = np.average(x, axis=0, weights=w)
    scale = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=w))
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], L2 / w.sum())
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        gradient = z.T @ (w * (p - y)) / w.sum() + penalty * beta
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z / w.sum() + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1]), mean, scale


async def featurize(pairs: Sequence[Pair], settings: Settings) -> tuple[str, npt.NDArray[np.float64]]:
    """The embedding model's id and the feature rows of the pairs."""
    embedder = build_embedder(settings)
    try:
        scores, _ = await score_pairs(pairs, embedder)
    finally:
        await embedder.aclose()
    rows = [compare(p.a, p.b, float(s)).vector for p, s in zip(pairs, scores, strict=True)]
    return embedder.model_id, np.vstack(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--provider", default="local")
    parser.add_argument("--model", default=None, help="embedding model (default: the settings' default)")
    parser.add_argument("--qqp-limit", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    overrides = {"embedding_provider": args.provider}
    if args.model:
        overrides["embedding_model"] = args.model
    settings = Settings(_env_file=None, **overrides)  # type: ignore[call-arg]
    sources = training_pairs(args.qqp_limit, args.seed)
    pairs = [p for group in sources.values() for p in group]
    weights = np.concatenate([np.full(len(g), SHARES[name] / len(g)) for name, g in sources.items()])
    model_id, x = asyncio.run(featurize(pairs, settings))
    y = np.array([1.0 if p.same else 0.0 for p in pairs])
    coefficients, bias, mean, scale = fit_logistic(x, y, weights * len(pairs))
    model = PairModel(model_id, coefficients, bias, mean, scale)
    document = json.loads(args.output.read_text("utf-8")) if args.output.exists() else {"models": {}}
    document["models"][model_id] = model.to_json()
    args.output.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
    for name, weight in zip(FEATURES, coefficients, strict=True):
        print(f"{name:>22} {weight:+.3f}")
    print(f"{'bias':>22} {bias:+.3f}")
    for name, group in sources.items():
        print(f"{name}: {len(group)} pairs")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
