"""Fit the cross-encoder's cut-offs on the held-out pairs and write them into its ONNX file.

    .venv/bin/python training/fit_cross_encoder.py [--model training/build/cross_encoder/cross_encoder.onnx]
        [--out src/memory_guard/verify/assets/cross_encoder.onnx] [--max-wrong 0.01] [--floor 0.85]

For each pair of `training/pairs_fr/heldout.jsonl` (templates the model never saw), it takes what
the service decides from: the cosine of the multilingual-e5-small ONNX embedder, the vetoes
(`memory_guard.verify.features.compare(...).conflict`) and the cross-encoder's probability,
read through the service's own wrapper (`memory_guard.verify.cross_encoder`). A pair is answered
direct at cut-off t when cosine >= the similarity floor, no veto fires, and p >= t.

It prints the whole curve (per pair kind: right direct for same-answer kinds, wrong direct for
the others; and the totals) and chooses `direct` = the lowest t of the grid whose held-out
wrong-direct rate is <= --max-wrong, `unsure` = min(0.5, direct). It writes the metadata entry
`memory_guard.cross_encoder` (format 1: input format, tokenizer hash, cut-offs, the fitted
figures, the training settings) into the file at --out and prints its size and sha256, which
`memory_guard.verify.cross_encoder` pins for the shipped asset. `pairs_dev.jsonl` is never read:
it checks the result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_guard.embeddings.local import E5_MODEL, LocalOnnxEmbedder  # noqa: E402
from memory_guard.verify import cross_encoder as ce  # noqa: E402
from memory_guard.verify.features import compare  # noqa: E402
from training.cross_encoder.data import FR, Pair, read_pairs  # noqa: E402

DEFAULT_MODEL = ROOT / "training" / "build" / "cross_encoder" / "cross_encoder.onnx"
DEFAULT_OUT = ROOT / "src" / "memory_guard" / "verify" / "assets" / ce.ASSET
TOKENIZER = ROOT / "src" / "memory_guard" / "embeddings" / "assets" / E5_MODEL.tokenizer_file
GRID = (
    0.5,
    0.6,
    0.7,
    0.8,
    0.85,
    0.9,
    0.91,
    0.92,
    0.93,
    0.94,
    0.95,
    0.96,
    0.97,
    0.98,
    0.985,
    0.99,
    0.993,
    0.995,
    0.998,
    0.999,
)
BATCH = 64


@dataclass(frozen=True)
class Inputs:
    """What the service decides from, per pair."""

    cosine: np.ndarray
    vetoed: np.ndarray
    probability: np.ndarray


def _metadata(
    max_len: int, cutoffs: dict[str, float], fitted: dict[str, object], training: dict[str, object]
) -> str:
    data = TOKENIZER.read_bytes()
    tokenizer = Tokenizer.from_str(data.decode("utf-8"))
    meta: dict[str, object] = {
        "format": ce.FORMAT,
        "max_len": max_len,
        "pad_id": tokenizer.token_to_id("<pad>"),
        "query_prefix": ce.QUERY_PREFIX,
        "tokenizer": TOKENIZER.name,
        "tokenizer_sha256": hashlib.sha256(data).hexdigest(),
        "cutoffs": cutoffs,
        "fitted": fitted,
        "training": training,
    }
    if "layers" in training:
        meta["model_id"] = f"local/cross-encoder-e5-{training['layers']}l"
    return json.dumps(meta, sort_keys=True)


def with_metadata(proto: onnx.ModelProto, value: str) -> onnx.ModelProto:
    props = {p.key: p.value for p in proto.metadata_props}
    onnx.helper.set_model_props(proto, {**props, ce.METADATA_KEY: value})
    return proto


def decision_inputs(model: Path, pairs: Sequence[Pair], max_len: int) -> Inputs:
    """Cosine, veto and probability for each pair, as the service computes them."""
    embedder = LocalOnnxEmbedder.load(E5_MODEL.name)
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    vectors = dict(zip(texts, embedder.embed_sync(texts), strict=True))
    cosine = np.array([float(vectors[p.a] @ vectors[p.b]) for p in pairs])
    vetoed = np.array([bool(compare(p.a, p.b, c).conflict) for p, c in zip(pairs, cosine, strict=True)])
    with tempfile.TemporaryDirectory(prefix="mg-fit-") as tmp:
        # The wrapper reads only files with metadata: unfitted cut-offs, for reading p only.
        readable = Path(tmp) / "model.onnx"
        onnx.save(
            with_metadata(onnx.load(model), _metadata(max_len, {"direct": 1.0, "unsure": 0.5}, {}, {})),
            readable,
        )
        encoder = ce.CrossEncoder.load(readable)
        probability = np.array(
            [
                p
                for i in range(0, len(pairs), BATCH)
                for p in encoder.probabilities([(q.a, q.b) for q in pairs[i : i + BATCH]])
            ]
        )
        encoder.close()
    return Inputs(cosine, vetoed, probability)


def curve(pairs: Sequence[Pair], inputs: Inputs, floor: float) -> list[dict[str, object]]:
    """Per cut-off: the share of each kind answered direct, and the right/wrong totals."""
    same = np.array([p.same for p in pairs])
    kinds = np.array([p.kind for p in pairs])
    eligible = (inputs.cosine >= floor) & ~inputs.vetoed
    rows: list[dict[str, object]] = []
    for t in GRID:
        direct = eligible & (inputs.probability >= t)
        per_kind = {str(k): float(direct[kinds == k].mean()) for k in sorted(set(kinds))}
        rows.append(
            {
                "t": t,
                "right_direct": float(direct[same].mean()) if same.any() else 0.0,
                "wrong_direct": float(direct[~same].mean()) if (~same).any() else 0.0,
                "kinds": per_kind,
            }
        )
    return rows


def print_curve(pairs: Sequence[Pair], rows: list[dict[str, object]]) -> None:
    kinds = sorted({p.kind for p in pairs})
    same = {p.kind: p.same for p in pairs}
    counts = {k: sum(p.kind == k for p in pairs) for k in kinds}
    print(f"{'held-out, answered direct':<28} {'n':>5}  " + " ".join(f"{t:>6g}" for t in GRID))
    for kind in kinds:
        label = f"{kind} ({'right' if same[kind] else 'wrong'})"
        cells = " ".join(f"{100 * row['kinds'][kind]:5.1f}%" for row in rows)  # type: ignore[index]
        print(f"{label:<28} {counts[kind]:>5}  {cells}")
    for key, label in (
        ("right_direct", "RIGHT (same-answer pairs)"),
        ("wrong_direct", "WRONG (different-answer)"),
    ):
        n = sum(p.same == (key == "right_direct") for p in pairs)
        cells = " ".join(f"{100 * float(row[key]):5.1f}%" for row in rows)  # type: ignore[arg-type]
        print(f"{label:<28} {n:>5}  {cells}")


# The lowest cosine of a pair counted direct. The shipped cut-offs were fitted at 0.85, MiniLM's
# grounding floor: more pairs than the service can serve (its direct floor is 0.90), so the fit is
# on the strict side.
FLOOR = 0.85


def fit(
    model: Path,
    out: Path,
    *,
    max_wrong: float = 0.01,
    floor: float | None = None,
    max_len: int = 64,
    training: dict[str, object] | None = None,
    limit: int | None = None,
) -> dict[str, object]:
    """Fit, print the curve, write the fitted file to `out`; returns the `fitted` figures."""
    similarity_floor = FLOOR if floor is None else floor
    pairs = read_pairs(FR / "heldout.jsonl", "fr-heldout")[:limit]
    inputs = decision_inputs(model, pairs, max_len)
    rows = curve(pairs, inputs, similarity_floor)
    print_curve(pairs, rows)
    meeting = [row for row in rows if float(row["wrong_direct"]) <= max_wrong]  # type: ignore[arg-type]
    if meeting:
        chosen = meeting[0]
        direct = float(chosen["t"])  # type: ignore[arg-type]
    else:
        # No cut-off of the grid is safe enough: nothing is served direct on the model's word.
        chosen, direct = rows[-1], 1.0
        print(f"WARNING: no cut-off keeps wrong direct <= {max_wrong:.1%}; direct = 1.0 (never)")
    cutoffs = {"direct": direct, "unsure": min(0.5, direct)}
    fitted: dict[str, object] = {
        "data": "training/pairs_fr/heldout.jsonl",
        "pairs": len(pairs),
        "similarity_floor": similarity_floor,
        "embedder": E5_MODEL.model_id,
        "max_wrong_direct": max_wrong,
        "right_direct": chosen["right_direct"],
        "wrong_direct": chosen["wrong_direct"],
        "kinds": chosen["kinds"],
    }
    proto = with_metadata(onnx.load(model), _metadata(max_len, cutoffs, fitted, training or {}))
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, out)
    data = out.read_bytes()
    print(
        f"cut-offs: direct {cutoffs['direct']:g}, unsure {cutoffs['unsure']:g} "
        f"(held-out right direct {float(chosen['right_direct']):.1%}, "  # type: ignore[arg-type]
        f"wrong direct {float(chosen['wrong_direct']):.1%})"  # type: ignore[arg-type]
    )
    print(f"wrote {out}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    return fitted


def training_info(run: dict[str, object]) -> dict[str, object]:
    """What the metadata keeps of a training run's report (train_cross_encoder.Run)."""
    settings: dict[str, object] = run.get("settings", {})  # type: ignore[assignment]
    keep = ("layers", "max_len", "epochs", "batch_size", "lr", "qqp_cap", "seed", "training_pairs", "weights")
    info: dict[str, object] = {k: settings[k] for k in keep if k in settings}
    info.update({k: run[k] for k in ("best_epoch", "minutes", "onnx_max_abs_diff") if k in run})
    return info


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the exported ONNX file")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the fitted file goes")
    p.add_argument("--max-wrong", type=float, default=0.01, help="held-out wrong-direct rate allowed")
    p.add_argument("--floor", type=float, default=None, help=f"similarity floor (default {FLOOR})")
    p.add_argument(
        "--max-len", type=int, default=None, help="tokens per pair (default: report.json's, or 64)"
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N held-out pairs (tests)")
    args = p.parse_args(argv)
    report = args.model.with_name("report.json")
    training = training_info(json.loads(report.read_text())) if report.is_file() else {}
    max_len = args.max_len or int(training.get("max_len", 64))  # type: ignore[call-overload]
    fit(
        args.model,
        args.out,
        max_wrong=args.max_wrong,
        floor=args.floor,
        max_len=max_len,
        training=training,
        limit=args.limit,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
