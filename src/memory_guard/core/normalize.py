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


# Greetings, lead-ins and politeness around a question ask nothing: "…, svp ?", "Bonjour, …",
# "Petite question : …", "…, please?".
_GREETING = re.compile(r"^\s*(?:bonjour|bonsoir|salut|hello|hi)\b[\s,!.:;-]*", re.IGNORECASE)
# A lead-in counts only when a comma or a colon closes it, so that it cannot be the question's own
# words ("Dites-moi si …" stays). Never "et, …" or "sinon, …": they lean on what came before.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:petite|une|juste une|simple) question|question(?: rapide)?|(?:a )?quick question"
    r"|one question|excusez-moi|excuse-moi|excuse me|pardon|dites-moi|dis-moi|tell me|au fait"
    r"|by the way|btw|just wondering|i was wondering|je me demandais)\s*[:,]\s*",
    re.IGNORECASE,
)
_POLITENESS = re.compile(
    r"[\s,;-]*\b(?:s['’]il (?:vous|te) pla[iî]t|svp|stp|please|pls|merci(?: d['’]avance| beaucoup)?"
    r"|thanks(?: in advance)?|thank you)\b(?=[\s!.?…]*$)",
    re.IGNORECASE,
)


_DANGLING = re.compile(r"([?.])[\s!.]+$")  # "? !" left by "? Merci !"


def embedding_text(question: str) -> str:
    """The question as it is embedded: without the greetings, lead-ins and politeness that ask
    nothing.

    MiniLM scores "…Strasbourg svp ?" about 0.90 against "…Strasbourg ?": below the direct
    threshold for a question that is the same. The stored text and the exact-match key keep
    the words; only the vector ignores them.
    """
    stripped = _LEAD_IN.sub("", _GREETING.sub("", question, count=1), count=1)
    for _ in range(3):  # "svp merci", "please, thanks"
        stripped = _POLITENESS.sub("", stripped, count=1)
    stripped = _DANGLING.sub(r"\1", stripped.strip())
    return stripped or question


def same_question(stored: str, incoming: str) -> bool:
    """Whether the two questions are the same once case, accents, spacing, the closing mark,
    greetings, lead-ins and politeness are set aside: nothing is left for a model to read."""
    return normalize_question(embedding_text(stored)) == normalize_question(embedding_text(incoming))
