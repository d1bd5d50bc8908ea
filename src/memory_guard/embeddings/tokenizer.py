"""Pinned tokenizer files, parsed once per process and shared read-only.

The e5 embedder and the cross-encoder read the same tokenizer file; parsed, it costs about
80 MB of memory, so each file (keyed by the sha256 of its bytes) is parsed once and every user
gets the same object. Sharing is only safe if no user can reconfigure it for the others:
`tokenizers.Tokenizer` keeps padding and truncation as state on the object, and one
`enable_padding` call would silently change every other user's ids. So the shared object is
kept with padding and truncation off (whatever the file says) behind `SharedTokenizer`, which
offers encoding only; a user that needs a cut or padding does it on its own encodings.

Thread-safety: the users encode from worker threads at once. That relies on encoding being
read-only on the tokenizer (a shared borrow on the Rust side, which any number of threads may
hold), which holds because nothing mutates the object after it is built here; building and the
cache itself are under a lock.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Protocol

from tokenizers import Encoding, Tokenizer


class TextEncoder(Protocol):
    """What encoding one text needs: a `Tokenizer` or a `SharedTokenizer`."""

    def encode(self, sequence: str) -> Encoding: ...


class SharedTokenizer:
    """One parsed tokenizer file, with padding and truncation off; encodes, never changes."""

    __slots__ = ("_specials", "_tokenizer", "sha256")

    def __init__(self, tokenizer: Tokenizer, sha256: str) -> None:
        self._tokenizer = tokenizer
        self._specials: int = tokenizer.num_special_tokens_to_add(False)
        self.sha256 = sha256

    def encode(self, sequence: str) -> Encoding:
        """The ids of one text with its special tokens, uncut."""
        return self._tokenizer.encode(sequence)

    def encode_batch(self, texts: Sequence[str], max_tokens: int) -> list[Encoding]:
        """Each text with its special tokens, at most max_tokens ids, its head kept; unpadded.

        What `enable_truncation(max_tokens)` makes the tokenizer do inside `encode`: cut the
        text's own tokens to leave room for the special ones, then add those.
        """
        room = max_tokens - self._specials
        if room < 1:
            raise ValueError(f"max_tokens {max_tokens} leaves no room beside {self._specials} special tokens")
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for encoding in encodings:
            if len(encoding) > room:
                encoding.truncate(room)
        return [self._tokenizer.post_process(encoding) for encoding in encodings]


_lock = threading.Lock()
# Never emptied: a process reads at most the two tokenizer files this package ships.
_parsed: dict[str, SharedTokenizer] = {}


def shared_tokenizer(data: bytes) -> SharedTokenizer:
    """The tokenizer of these bytes (a file the caller has checked against its pin), parsed on
    the first call for their sha256 and the same object on every later one."""
    digest = hashlib.sha256(data).hexdigest()
    with _lock:
        tokenizer = _parsed.get(digest)
        if tokenizer is None:
            parsed = Tokenizer.from_str(data.decode("utf-8"))
            parsed.no_padding()
            parsed.no_truncation()
            tokenizer = _parsed[digest] = SharedTokenizer(parsed, digest)
        return tokenizer
