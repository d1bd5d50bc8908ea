"""Load time and per-question latency of the local embedding models.

Run: python bench/embedder.py [--loads 5] [--calls 200] [--threads N] [--model NAME ...]
Prints one line per figure and model. Latency is measured through `embed()`, the path the
service takes (worker thread included), one question per call as a chat turn sends. With
several models (by default every local ONNX model), the calls alternate between
them in rounds of 10, so that the drift of a shared machine touches both alike; the last
line is the ratio of their medians.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import time

import numpy as np

from memory_guard.embeddings.local import SUPPORTED_MODELS, LocalOnnxEmbedder

ROUND = 10

QUESTIONS = (
    "How do I reset my password if I no longer have access to my email?",
    "What is the difference between a fixed-rate and a variable-rate mortgage?",
    "Can you summarize the main points of the last quarterly report?",
    "Why does my Python script fail with a ModuleNotFoundError after upgrading?",
    "Which countries in Europe require a visa for a short business trip?",
    "How long does it take to ship an order to Canada?",
    "What are the opening hours of the support team during public holidays?",
    "Is it possible to change the delivery address after the order has been placed?",
    "Comment réinitialiser mon mot de passe si je n'ai plus accès à ma boîte mail ?",
    "Quelle est la différence entre un prêt à taux fixe et un prêt à taux variable ?",
    "Peux-tu résumer les points principaux du dernier rapport trimestriel ?",
    "Pourquoi mon script Python échoue-t-il avec une ModuleNotFoundError après la mise à jour ?",
    "Quels documents faut-il fournir pour ouvrir un compte professionnel ?",
    "Combien de temps faut-il pour livrer une commande au Canada ?",
    "Quels sont les horaires du service client pendant les jours fériés ?",
    "Est-il possible de modifier l'adresse de livraison après avoir passé commande ?",
)


def measure_loads(model: str, count: int, threads: int | None) -> list[float]:
    seconds = []
    for _ in range(count):
        start = time.perf_counter()
        LocalOnnxEmbedder.load(model, intra_op_threads=threads)
        seconds.append(time.perf_counter() - start)
    return seconds


async def measure_calls(embedders: list[LocalOnnxEmbedder], count: int, warmup: int) -> list[list[float]]:
    for embedder in embedders:
        for question in itertools.islice(itertools.cycle(QUESTIONS), warmup):
            await embedder.embed([question])
    seconds: list[list[float]] = [[] for _ in embedders]
    questions = list(itertools.islice(itertools.cycle(QUESTIONS), count))
    for start in range(0, count, ROUND):
        for embedder, timings in zip(embedders, seconds, strict=True):
            for question in questions[start : start + ROUND]:
                began = time.perf_counter()
                await embedder.embed([question])
                timings.append(time.perf_counter() - began)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads (default: min(2, cpus))")
    parser.add_argument("--model", action="append", choices=SUPPORTED_MODELS, help="default: all")
    args = parser.parse_args()
    models: list[str] = args.model or list(SUPPORTED_MODELS)

    threads = args.threads or min(2, os.cpu_count() or 1)
    print(f"setup: {os.cpu_count()} cpus, intra_op_threads={threads}")
    embedders = [LocalOnnxEmbedder.load(model, intra_op_threads=args.threads) for model in models]
    calls = asyncio.run(measure_calls(embedders, args.calls, args.warmup))
    medians = []
    for model, embedder, timings in zip(models, embedders, calls, strict=True):
        loads = measure_loads(model, args.loads, args.threads)
        p50, p99 = np.percentile(np.array(timings) * 1000, [50, 99])
        medians.append(p50)
        load_ms = statistics.median(loads) * 1000
        print(f"{model} ({embedder.model_id}): load_ms_median_of_{args.loads} {load_ms:.1f}")
        print(f"{model}: embed_ms_p50_over_{args.calls} {p50:.2f}, embed_ms_p99 {p99:.2f}")
    if len(models) == 2:
        print(f"ratio of the medians, {models[1]} / {models[0]}: {medians[1] / medians[0]:.2f}")


if __name__ == "__main__":
    main()
