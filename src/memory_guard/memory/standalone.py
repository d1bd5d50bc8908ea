"""Does a follow-up stand on its own, or does it lean on the turns before it?

A question like "et pour le Sénégal ?" or "what about the second one?" means nothing
outside its conversation: answering it from memory, or learning an answer for it,
would pair the answer with the wrong question. The test is deliberately cautious:
when in doubt, the message is treated as not standing alone.
"""

from __future__ import annotations

import re

from memory_guard.core.normalize import normalize_question

_LEADING = (
    "et ",
    "mais ",
    "alors ",
    "donc ",
    "aussi ",
    "pareil",
    "idem",
    "meme chose",
    "et si ",
    "ou ",
    "sinon",
    "and ",
    "but ",
    "also ",
    "what about",
    "how about",
    "same ",
    "or ",
    "then ",
    "so ",
)
_REFERRING = re.compile(
    r"\b(ca|cela|ceci|celui|celle|ceux|celles|celui-ci|celle-ci|le meme|la meme|les memes|"
    r"ci-dessus|precedent|precedente|dernier point|ce point|cette option|"
    r"it|its|that|this|these|those|them|they|above|previous|former|latter|the same)\b"
)
_MIN_WORDS = 4


def stands_alone(message: str) -> bool:
    text = normalize_question(message)
    words = text.split()
    if len(words) < _MIN_WORDS:
        return False
    if any(text.startswith(prefix) for prefix in _LEADING):
        return False
    return _REFERRING.search(text) is None
