"""Train the verifier's pair classifier and write `src/memory_guard/verify/pair_model.json`.

One command, reproducible (seeded samples, seeded initial weights, full-batch steps):

    .venv/bin/python training/train_verifier.py [--model multilingual-e5-small] [--linear] [--data DIR]

Training data: the 'train' half (see `training/splits.py`) of the QQP pairs and of the mock
paraphrases in the evaluation data folder given by --data (docs/DEVELOPMENT.md, "Evaluation
data"), and our hand-written French/English hard pairs in
`training/pairs_hard_fr_en*.jsonl`. `pairs_dev.jsonl` and `bench/data/pairs_holdout.jsonl`
are never read here: they measure the result (`bench/quality.py`). Each source weighs a set
share of the loss, so that the hand-written pairs are not drowned by QQP. Pairs that a check
already rejects are left out: the classifier only ever sees the others.
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

from bench.pairs import (  # noqa: E402
    Compared,
    compare_pairs,
    score_pairs,
)
from bench.quality import DEFAULT_DATA, read_jsonl  # noqa: E402
from bench.quality_stats import Pair  # noqa: E402

from memory_guard.embeddings.factory import build_embedder  # noqa: E402
from memory_guard.settings import Settings  # noqa: E402
from memory_guard.verify.features import FEATURES  # noqa: E402
from memory_guard.verify.model import DEFAULT_CUTOFFS, MODEL_FILE, Cutoffs, PairModel  # noqa: E402
from training.fit import fit_logistic, fit_network  # noqa: E402
from training.splits import half_of  # noqa: E402

OUTPUT = ROOT / "src" / "memory_guard" / "verify" / MODEL_FILE
SHARES = {"qqp": 0.4, "mock": 0.1, "hard": 0.5}
Floats = npt.NDArray[np.float64]


def training_pairs(data: Path, qqp_limit: int, seed: int) -> dict[str, list[Pair]]:
    rng = random.Random(seed)
    qqp = [p for p in read_jsonl(data / "qqp_pairs.jsonl.gz") if half_of(p.a, p.b) == "train"]
    mock = [p for p in read_jsonl(data / "paraphrases_mock.jsonl") if half_of(p.a, p.b) == "train"]
    hard = [
        p for path in sorted((ROOT / "training").glob("pairs_hard_fr_en*.jsonl")) for p in read_jsonl(path)
    ]
    return {"qqp": rng.sample(qqp, min(qqp_limit, len(qqp))), "mock": mock, "hard": hard}


async def compared(
    sources: dict[str, list[Pair]], settings: Settings
) -> tuple[str, dict[str, list[Compared]]]:
    """The embedding model's id and every pair compared as the guard would."""
    embedder = build_embedder(settings)
    try:
        result = {}
        for name, pairs in sources.items():
            scores, _ = await score_pairs(pairs, embedder)
            result[name] = await compare_pairs(pairs, scores, embedder)
    finally:
        await embedder.aclose()
    return embedder.model_id, result


def design(sources: dict[str, list[Compared]], columns: list[int]) -> tuple[Floats, Floats, Floats]:
    """Features, labels and weights of the pairs no check rejects."""
    rows, labels, weights = [], [], []
    for name, items in sources.items():
        kept = [c for c in items if not c.comparison.conflict]
        rows += [c.comparison.vector(c.residual)[columns] for c in kept]
        labels += [1.0 if c.pair.same else 0.0 for c in kept]
        weights += [SHARES[name] / len(kept)] * len(kept)
    w = np.asarray(weights)
    return np.vstack(rows), np.asarray(labels), w / w.mean()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--provider", default="local")
    parser.add_argument("--model", default=None, help="embedding model (default: the settings' default)")
    parser.add_argument("--qqp-limit", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--linear", action="store_true", help="logistic regression instead of the network")
    parser.add_argument("--no-residual", action="store_true", help="leave out the leftover-words features")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"evaluation data folder (default {DEFAULT_DATA})"
    )
    args = parser.parse_args(argv)
    overrides = {"embedding_provider": args.provider}
    if args.model:
        overrides["embedding_model"] = args.model
    settings = Settings(_env_file=None, **overrides)  # type: ignore[call-arg]
    sources = training_pairs(args.data, args.qqp_limit, args.seed)
    model_id, items = asyncio.run(compared(sources, settings))
    residual = {"residual_similarity", "leftover_sides", "leftover_stored", "leftover_incoming"}
    names = tuple(n for n in FEATURES if not (args.no_residual and n in residual))
    x, y, w = design(items, [FEATURES.index(n) for n in names])
    mean = np.average(x, axis=0, weights=w)
    scale = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=w))
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    document = json.loads(args.output.read_text("utf-8")) if args.output.exists() else {"models": {}}
    # A retrained model keeps the cut-offs chosen for it; they are revisited with bench/quality.py.
    previous = document["models"].get(model_id, {}).get("cutoffs")
    cutoffs = Cutoffs(**previous) if previous else DEFAULT_CUTOFFS
    if args.linear:
        weights, bias = fit_logistic(z, y, w)
        model = PairModel(model_id, names, mean, scale, weights, bias, cutoffs)
    else:
        hidden_w, hidden_b, weights, bias = fit_network(z, y, w, seed=args.seed)
        model = PairModel(model_id, names, mean, scale, weights, bias, cutoffs, hidden_w, hidden_b)
    document["models"][model_id] = model.to_json()
    args.output.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
    for name, group in items.items():
        kept = sum(not c.comparison.conflict for c in group)
        print(f"{name}: {len(group)} pairs, {kept} past the checks")
    print(f"{'network' if not args.linear else 'logistic'} on {len(names)} features for {model_id}")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
