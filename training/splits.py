"""Which public pairs train the verifier and which ones measure it.

A pair's half depends only on its text, so the split is the same on every machine and in
every run, and `bench/quality.py` never measures on a pair the classifier was trained on.
"""

from __future__ import annotations

import hashlib


def half_of(a: str, b: str) -> str:
    """'train' or 'eval' for a pair, whichever order its questions come in."""
    first, second = sorted((a, b))
    digest = hashlib.sha256(f"{first}\x1f{second}".encode()).digest()
    return "train" if digest[0] % 2 == 0 else "eval"
