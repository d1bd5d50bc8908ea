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
    """SHA-256 over the scope and the normalized question: the entry's `key_hash`."""
    material = "\x1f".join((tenant, agent, project, phase, normalize_question(question)))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


# Greetings and politeness around a question ask nothing: "…, svp ?", "Bonjour, …", "…, please?".
_GREETING = re.compile(r"^\s*(?:bonjour|bonsoir|salut|hello|hi)\b[\s,!.:;-]*", re.IGNORECASE)
_POLITENESS = re.compile(
    r"[\s,;-]*\b(?:s['’]il (?:vous|te) pla[iî]t|svp|stp|please|pls|merci(?: d['’]avance| beaucoup)?"
    r"|thanks(?: in advance)?|thank you)\b(?=[\s!.?…]*$)",
    re.IGNORECASE,
)


_DANGLING = re.compile(r"([?.])[\s!.]+$")  # "? !" left by "? Merci !"


def embedding_text(question: str) -> str:
    """The question as it is embedded: without the greetings and politeness that ask nothing.

    MiniLM scores "…Strasbourg svp ?" about 0.90 against "…Strasbourg ?": below the direct
    threshold for a question that is the same. The stored text and the exact-match key keep
    the words; only the vector ignores them.
    """
    stripped = _GREETING.sub("", question, count=1)
    for _ in range(3):  # "svp merci", "please, thanks"
        stripped = _POLITENESS.sub("", stripped, count=1)
    stripped = _DANGLING.sub(r"\1", stripped.strip())
    return stripped or question


def same_question(stored: str, incoming: str) -> bool:
    """Whether the two questions are the same once case, accents, spacing, the closing mark,
    greetings and politeness are set aside: nothing is left for a model to read."""
    return normalize_question(embedding_text(stored)) == normalize_question(embedding_text(incoming))
