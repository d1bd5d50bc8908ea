"""Question normalization and the exact-match key of a scope."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACES = re.compile(r"\s+")
# Typographic variants of the same character: French typing mixes them freely.
_VARIANTS = str.maketrans(
    {"’": "'", "‘": "'", "`": "'", "«": '"', "»": '"', "“": '"', "”": '"', "–": "-", "—": "-"}
)
# French puts a space before ? ! : ; where English does not.
_SPACE_BEFORE_MARK = re.compile(r"\s+([?!:;])")
# Only the sentence's closing marks go; symbols inside a question ("#" vs "##", "=" vs "==",
# "1.5" vs "15") change what is asked and must stay in the key.
_TRAILING_MARKS = re.compile(r"[\s?!.…;:]+$")


def normalize_question(text: str) -> str:
    """Case, accents, spacing and the closing mark do not change what is asked."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    unified = stripped.casefold().translate(_VARIANTS)
    collapsed = _SPACE_BEFORE_MARK.sub(r"\1", _SPACES.sub(" ", unified).strip())
    return _TRAILING_MARKS.sub("", collapsed)


def key_hash(tenant: str, agent: str, project: str, phase: str, question: str) -> str:
    """SHA-256 over the scope and the normalized question (seed 000's key_hash)."""
    material = "\x1f".join((tenant, agent, project, phase, normalize_question(question)))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()
