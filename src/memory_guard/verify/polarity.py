"""Negation and opposite meanings: "autorisé" / "interdit", "enable" / "disable".

Two questions that differ only by a negation or by one word of an opposite pair look alike to
an embedding model and have opposite answers. Word poles match by prefix of the folded word,
so "augmenter", "augmentation" and "augmente" all count as "increase".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from memory_guard.verify.text import Question, word_set

_NEGATIONS = word_set("pas jamais aucun aucune sans non not never without cannot nor none nothing rien")
_ENGLISH_NEGATION = re.compile(r"n't\b|\bno\s+(?!\d)")

# (name, one pole, the other pole): folded word prefixes, French and English together; a
# trailing "$" asks for the whole word ("min" must not match "minute", "cons" "conseil").
_OPPOSITES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("increase/decrease", ("augment", "hausse", "accroi", "increas", "raise", "boost"),
     ("diminu", "redui", "reduc", "baiss", "decreas", "lower")),
    ("enable/disable", ("activer", "activez", "activation", "enable"),
     ("desactiv", "disable", "deactiv")),
    ("add/remove", ("ajout", "add$", "adding$", "insert", "inser", "creer", "create", "creat"),
     ("supprim", "retir", "enlev", "remov", "delet", "drop")),
    ("import/export", ("import",), ("export",)),
    ("before/after", ("avant$", "before$", "prior$"), ("apres$", "after$")),
    ("allowed/forbidden", ("autoris", "permis", "allow", "permit"),
     ("interdi", "prohib", "forbid", "defendu")),
    ("mandatory/optional", ("obligatoir", "requis", "required", "mandatory", "compulsory"),
     ("optionnel", "facultati", "optional")),
    ("advantages/disadvantages", ("avantage", "advantage", "pros$", "benefit"),
     ("inconvenient", "disadvantage", "cons$", "drawback")),
    ("minimum/maximum", ("minim", "min$", "plancher", "lowest"),
     ("maxim", "max$", "plafond", "highest")),
    ("open/close", ("ouvrir", "ouvrez", "ouverture", "open$", "opening$"),
     ("fermer", "fermeture", "close", "closing")),
    ("start/stop", ("demarr", "start$", "starting$", "commenc", "begin"),
     ("arreter", "arret$", "stop", "halt")),
    ("encrypt/decrypt", ("chiffrer", "chiffrement", "encrypt"), ("dechiffr", "decrypt")),
    ("compress/decompress", ("compress",), ("decompress", "unzip")),
    ("upload/download", ("upload", "televers", "envoy", "send$", "sending$"),
     ("download", "telecharg", "recev", "receiv")),
    ("upstream/downstream", ("amont", "upstream"), ("aval", "downstream")),
    ("input/output", ("entree", "input", "inbound"), ("sortie", "output", "outbound")),
    ("buy/sell", ("achat", "achet", "buy", "purchas"), ("vend", "vente", "sell", "sale$")),
    ("gain/loss", ("gain", "gagn", "profit"), ("perte$", "pertes$", "loss", "lose")),
    ("include/exclude", ("inclu", "includ", "couvert", "couvre", "covered", "eligib"),
     ("exclu", "exclud", "inelig")),
    ("lengthen/shorten", ("prolong", "allong", "lengthen", "extend"), ("raccourc", "shorten")),
    ("speed up/slow down", ("acceler", "faster", "speed$"), ("ralent", "slower", "slow$")),
    ("above/below", ("superieur", "depass", "above", "exceed"), ("inferieur", "below")),
    ("risk/opportunity", ("risque", "risk", "menace", "threat"), ("opportunit",)),
    ("direct/indirect", ("direct$", "directe$", "directes$", "directs$"), ("indirect",)),
    ("upgrade/downgrade", ("upgrad",), ("downgrad", "retrograd")),
    ("install/uninstall", ("install",), ("desinstall", "uninstall")),
    ("connect/disconnect", ("connect", "connex"), ("deconnect", "disconnect", "deconnex")),
    ("accept/reject", ("accept", "approuv", "approv"), ("refus", "reject", "rejet")),
    ("success/failure", ("reussi", "success"), ("echec", "echou", "fail")),
    ("positive/negative", ("positi",), ("negati",)),
    ("credit/debit", ("credit$", "crediter"), ("debit$", "debiter")),
    ("local/remote", ("local$", "locale$", "locally$"), ("distant", "remote", "serveur", "server")),
    ("vertical/horizontal", ("vertica",), ("horizonta",)),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PolarityCheck:
    negation_differs: bool
    opposite: str  # "augmenter vs diminue", empty when none

    @property
    def reason(self) -> str:
        if self.opposite:
            return f"opposite meaning: {self.opposite}"
        if self.negation_differs:
            return "negation in one question only"
        return ""


def negated(question: Question) -> bool:
    return bool(_NEGATIONS.intersection(question.words) or _ENGLISH_NEGATION.search(question.folded))


def _pattern(prefixes: tuple[str, ...]) -> str:
    parts = [re.escape(p[:-1]) + "$" if p.endswith("$") else re.escape(p) for p in prefixes]
    return "|".join(sorted(parts, key=len, reverse=True))


# One anchored pattern for every pole: a word names at most one pole ("desactiver" is not
# "activer"), and a question's poles are found in one pass over its words.
_POLES = re.compile(
    "|".join(
        f"(?P<p{index}_{side}>{_pattern(prefixes)})"
        for index, (_name, *poles) in enumerate(_OPPOSITES)
        for side, prefixes in enumerate(poles)
    )
)


@lru_cache(maxsize=4096)  # a stored question meets many incoming ones; the result is only read
def poles_of(question: Question) -> Mapping[tuple[int, int], str]:
    """(opposite pair, side) -> the first word of the question on that side."""
    found: dict[tuple[int, int], str] = {}
    for word in question.words:
        match = _POLES.match(word)
        if match and match.lastgroup:
            index, side = match.lastgroup[1:].split("_")
            found.setdefault((int(index), int(side)), word)
    return found


def _opposite(a: Question, b: Question) -> str:
    poles_a, poles_b = poles_of(a), poles_of(b)
    for index in range(len(_OPPOSITES)):
        for side in (0, 1):
            mine, theirs = poles_a.get((index, side)), poles_b.get((index, 1 - side))
            if mine and theirs and (index, 1 - side) not in poles_a and (index, side) not in poles_b:
                return f"{mine} vs {theirs}"
    return ""


def compare_polarity(stored: Question, incoming: Question) -> PolarityCheck:
    return PolarityCheck(negated(stored) != negated(incoming), _opposite(stored, incoming))
