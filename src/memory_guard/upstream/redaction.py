"""Secrets out of the upstream text we log.

An upstream's error text may quote the key it was sent ("Incorrect API key provided: sk-…"), a
proxy may echo a header back. Before such text reaches a log, every configured secret and anything
shaped like an API key or a bearer token is replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory_guard.core.shorten import shorten

REDACTED = "[redacted]"
# Shorter configured secrets are left alone: replacing every "ab" would garble the text and hide nothing.
MIN_SECRET_CHARS = 4
MAX_LOGGED_CHARS = 500

# `sk-…` keys (OpenAI, OpenRouter, Anthropic, masked ones with `*`) and bearer tokens.
_KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_*\-]{3,}|\b[Bb]earer\s+[A-Za-z0-9._~+/=*\-]+")


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so that a key containing another one is replaced whole.
        kept = sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self._secrets = re.compile("|".join(re.escape(s) for s in kept)) if kept else None

    def __call__(self, text: object, limit: int = MAX_LOGGED_CHARS) -> str:
        """`text` (any object, as str) without secrets, cut to `limit` characters."""
        clean = str(text)
        if self._secrets is not None:
            clean = self._secrets.sub(REDACTED, clean)
        clean = _KEY_SHAPED.sub(REDACTED, clean)
        # Cut after redacting: a cut through a secret would leave a piece the patterns no longer match.
        return shorten(clean, limit)
