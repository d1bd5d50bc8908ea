"""The pairs the cross-encoder learns from, and the ones that measure it.

Training: our French/cross-lingual pairs (`training/pairs_fr/train.jsonl`), the hand-written
hard pairs (`training/pairs_hard_fr_en*.jsonl`), and, for English, the 'train' half
(`training/splits.py`) of QQP and of the mock paraphrases in the evaluation data folder: QQP
capped and balanced (as many duplicates as non-duplicates), so that it does not drown the
French pairs. Validation: `training/pairs_fr/dev.jsonl`; the report: `heldout.jsonl`.
`pairs_dev.jsonl` is never read here: it measures the shipped result.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

from training.cross_encoder.surface import surface_pairs
from training.splits import half_of

SURFACE_PAIRS = 3000  # about 8% of the pairs: enough to read a repeat as the same question

ROOT = Path(__file__).resolve().parents[2]
FR = ROOT / "training" / "pairs_fr"
FORBIDDEN = "pairs_dev.jsonl"


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    same: bool
    kind: str
    source: str


def read_pairs(path: Path, source: str) -> list[Pair]:
    if path.name == FORBIDDEN:
        raise ValueError(f"{FORBIDDEN} is a check, never training or tuning data")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [
        Pair(r["a"], r["b"], bool(r["same"]), r.get("kind") or ("same" if r["same"] else "different"), source)
        for r in rows
    ]


def _balanced(pairs: list[Pair], cap: int, rng: random.Random) -> list[Pair]:
    same = [p for p in pairs if p.same]
    different = [p for p in pairs if not p.same]
    each = min(cap // 2, len(same), len(different))
    return rng.sample(same, each) + rng.sample(different, each)


def training_pairs(data: Path, qqp_cap: int, seed: int) -> list[Pair]:
    rng = random.Random(seed)
    qqp = [p for p in read_pairs(data / "qqp_pairs.jsonl.gz", "qqp") if half_of(p.a, p.b) == "train"]
    mock = [p for p in read_pairs(data / "paraphrases_mock.jsonl", "mock") if half_of(p.a, p.b) == "train"]
    hard = [
        p
        for path in sorted((ROOT / "training").glob("pairs_hard_fr_en*.jsonl"))
        for p in read_pairs(path, "hard")
    ]
    pairs = read_pairs(FR / "train.jsonl", "fr") + hard + _balanced(qqp, qqp_cap, rng) + mock
    questions = [q for p in pairs for q in (p.a, p.b)]
    pairs += [
        Pair(a, b, True, "surface_variant", "surface")
        for a, b in surface_pairs(questions, SURFACE_PAIRS, rng)
    ]
    rng.shuffle(pairs)
    return pairs


def dev_pairs() -> list[Pair]:
    return read_pairs(FR / "dev.jsonl", "fr-dev")


def heldout_pairs() -> list[Pair]:
    return read_pairs(FR / "heldout.jsonl", "fr-heldout")
