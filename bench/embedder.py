"""Load time and per-question latency of the local embedding model.

Run: python bench/embedder.py [--loads 5] [--calls 200] [--threads N]
Prints one line per figure. Latency is measured through `embed()`, the path the
service takes (worker thread included), one question per call as a chat turn sends.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import time

import numpy as np

from memory_guard.embeddings.local import LocalOnnxEmbedder

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


def measure_loads(count: int, threads: int | None) -> list[float]:
    seconds = []
    for _ in range(count):
        start = time.perf_counter()
        LocalOnnxEmbedder.load(intra_op_threads=threads)
        seconds.append(time.perf_counter() - start)
    return seconds


async def measure_calls(embedder: LocalOnnxEmbedder, count: int, warmup: int) -> list[float]:
    questions = itertools.cycle(QUESTIONS)
    for question in itertools.islice(questions, warmup):
        await embedder.embed([question])
    seconds = []
    for question in itertools.islice(questions, count):
        start = time.perf_counter()
        await embedder.embed([question])
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads (default: min(2, cpus))")
    args = parser.parse_args()

    loads = measure_loads(args.loads, args.threads)
    embedder = LocalOnnxEmbedder.load(intra_op_threads=args.threads)
    calls = asyncio.run(measure_calls(embedder, args.calls, args.warmup))
    p50, p99 = np.percentile(np.array(calls) * 1000, [50, 99])

    threads = args.threads or min(2, os.cpu_count() or 1)
    print(f"setup: {os.cpu_count()} cpus, intra_op_threads={threads}, model {embedder.model_id}")
    print(f"load_ms_median_of_{args.loads}: {statistics.median(loads) * 1000:.1f}")
    print(f"embed_ms_p50_over_{args.calls}: {p50:.2f}")
    print(f"embed_ms_p99_over_{args.calls}: {p99:.2f}")


if __name__ == "__main__":
    main()
