"""Words of a question, as the verifier compares them.

The verifier looks at what two questions ask, not at how they are typed: accents, case,
apostrophes and French elision ("l'", "d'", "qu'") do not count; stop words of French and
English do not either. Words keep their digits and code symbols ("psycopg2", "@classmethod").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache

# Letters, digits and the symbols that belong to code names, kept inside a word.
_WORD = re.compile(r"[@#]?[\w][\w.+#/-]*[\w+#]|[@#]?\w")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'"})


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of a literal list."""
    return frozenset(text.split())


STOP_WORDS = word_set(
    """
    a au aux avec ce ces cet cette c ca d de des du elle en est et etre il ils je la le les
    leur leurs l lui ma mais me mes mon n ne nos notre nous on ou par pour qu que qui s sa
    se ses son sont sur ta te tes ton tu un une vos votre vous y peut peuvent faut doit
    doivent dois quel quelle quels quelles quoi comment combien pourquoi quand ou est-ce
    ce-que faire fait-on t-il t-elle qu'est-ce il-y-a j'ai ai as avez avons ont sera etait
    svp stp merci bonjour alors donc dans chez entre vers selon afin the a an of to in on
    for and or is are was were be been do does did i my we our you your it its this that
    these those what which who whom how why when where with by at from as can could should
    would will shall may might must there their they them me us please thanks hi hello about
    into than then so if any some
    """
)


def fold(text: str) -> str:
    """Lower case without accents, with one kind of apostrophe."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_APOSTROPHES))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def split_words(text: str) -> list[str]:
    """Folded words; an apostrophe splits ("l'essai" -> "l", "essai")."""
    return _folded_words(fold(text))


def _folded_words(folded: str) -> list[str]:
    return [word.strip("./-") for word in _WORD.findall(folded) if word.strip("./-")]


@lru_cache(maxsize=65536)  # the words of questions are few, and each is stemmed again and again
def stem(word: str) -> str:
    """A crude stem shared by French and English plurals and a few endings."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for ending in ("ements", "ement", "ations", "ation", "ions", "ion", "ies", "es", "s", "e"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


@dataclass(frozen=True)
class Question:
    """One question, with the views of it that the checks use."""

    text: str

    @cached_property
    def folded(self) -> str:
        return fold(self.text)

    @cached_property
    def words(self) -> tuple[str, ...]:
        return tuple(_folded_words(self.folded))

    @cached_property
    def content(self) -> frozenset[str]:
        """Stems of the words that carry meaning."""
        return frozenset(stem(w) for w in self.words if w not in STOP_WORDS)

    @cached_property
    def trigrams(self) -> frozenset[str]:
        joined = " ".join(w for w in self.words if w not in STOP_WORDS)
        return frozenset(joined[i : i + 3] for i in range(max(len(joined) - 2, 0)))
