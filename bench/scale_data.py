"""Real question vectors for bench/scale.py: QQP questions embedded by the default embedder.

The stored questions are unique QQP questions; the near-duplicate queries are the other side of
a duplicate pair whose first side is stored (a paraphrase the memory has never seen). Embedding
runs in batches and its vectors are cached in the temporary directory (embedding 100,000
questions takes minutes on a small machine), keyed by the model, the file and the count.
Sizes beyond the real questions are filled with real vectors plus small seeded noise,
renormalized (`grow`).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory_guard.core.normalize import embedding_text
from memory_guard.embeddings.local import LocalOnnxEmbedder

QQP_FILE = "qqp_pairs.jsonl.gz"
MODEL = "multilingual-e5-small-onnx"
BATCH = 256
# The noise that turns a real vector into a new row (cosine about 0.92 to its source): new
# rows stay in the real vectors' neighbourhoods without copying them.
GROW_NOISE = 0.4

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class RealVectors:
    stored: Matrix  # one row per unique stored question
    paraphrases: Matrix  # held-out duplicates of stored questions
    model_id: str


def read_questions(data: Path, count: int, queries: int) -> tuple[list[str], list[str]]:
    """`count` unique questions to store and up to `queries` held-out paraphrases of them."""
    stored: dict[str, None] = {}
    held: list[str] = []
    with gzip.open(data / QQP_FILE, "rt", encoding="utf-8") as lines:
        for line in lines:
            pair = json.loads(line)
            a, b = pair["a"].strip(), pair["b"].strip()
            if pair["same"] and len(held) < queries and a not in stored and b not in stored and a != b:
                stored[a] = None
                held.append(b)
            else:
                for question in (a, b):
                    if question not in held and len(stored) < count:
                        stored.setdefault(question, None)
            if len(stored) >= count and len(held) >= queries:
                break
    return list(stored)[:count], held


def _embed(embedder: LocalOnnxEmbedder, texts: list[str], label: str) -> Matrix:
    rows: list[Matrix] = []
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        batch = [embedding_text(text) for text in texts[start : start + BATCH]]
        rows.append(np.asarray(asyncio.run(embedder.embed(batch)), dtype=np.float32))
        done = start + len(batch)
        rate = done / max(time.perf_counter() - started, 1e-9)
        print(f"\r  embedding {label}: {done:,}/{len(texts):,} ({rate:.0f}/s)", end="", file=sys.stderr)
    print(file=sys.stderr)
    return np.concatenate(rows) if rows else np.zeros((0, 384), dtype=np.float32)


def real_vectors(data: Path, count: int, queries: int, cache: Path | None = None) -> RealVectors:
    """The embedded questions, from the cache when an earlier run made them."""
    source = data / QQP_FILE
    key = hashlib.sha256(f"{MODEL}:{source.stat().st_size}:{count}:{queries}".encode()).hexdigest()[:16]
    folder = cache or Path(tempfile.gettempdir())
    path = folder / f"memory-guard-scale-{key}.npz"
    if path.exists():
        cached = np.load(path)
        return RealVectors(cached["stored"], cached["paraphrases"], str(cached["model_id"]))
    stored_texts, held = read_questions(data, count, queries)
    embedder = LocalOnnxEmbedder.load(MODEL)
    paraphrases = _embed(embedder, held, "paraphrases")
    stored = _embed(embedder, stored_texts, "stored questions")
    np.savez(path, stored=stored, paraphrases=paraphrases, model_id=np.asarray(embedder.model_id))
    return RealVectors(stored, paraphrases, embedder.model_id)


def normalized(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def grow(real: Matrix, size: int, seed: int) -> Matrix:
    """`size` rows: the real ones first, then real rows plus seeded noise, renormalized."""
    if size <= len(real):
        return real[:size].copy()
    rng = np.random.default_rng(seed)
    out = np.empty((size, real.shape[1]), dtype=np.float32)
    out[: len(real)] = real
    step = 100_000
    for start in range(len(real), size, step):
        end = min(size, start + step)
        sources = real[rng.integers(0, len(real), end - start)]
        noise = rng.standard_normal(sources.shape, dtype=np.float32) * (GROW_NOISE / np.sqrt(real.shape[1]))
        out[start:end] = normalized(sources + noise)
    return out


def perturbed(rows: Matrix, count: int, noise: float, seed: int) -> Matrix:
    """Near-duplicate queries: copies of `count` stored rows with a little noise, renormalized."""
    rng = np.random.default_rng(seed)
    picked = rows[rng.integers(0, len(rows), count)]
    jitter = rng.standard_normal(picked.shape, dtype=np.float32) * (noise / np.sqrt(rows.shape[1]))
    return normalized(picked + jitter)
