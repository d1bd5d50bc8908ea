"""Key terms: the names that make two look-alike questions different questions.

A key term is a name the answer depends on: an acronym ("CCTP", "UEMOA"), a product or code
name ("PostgreSQL", "psycopg2", "@classmethod"), a proper noun in the middle of a sentence
("Verra", "Abidjan"), or a word of a small domain lexicon of look-alike siblings (the
guarantees of a works contract, the networks of a site, currencies, countries, databases,
units). Translations and expansions share one canonical form ("FCFA" = "XOF",
"GPA" = "garantie de parfait achèvement", "Ivory Coast" = "Côte d'Ivoire").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory_guard.verify.numbers import is_number_word
from memory_guard.verify.text import STOP_WORDS, Question, fold, word_set

_RAW_WORD = re.compile(r"[@#]?\w[\w.+#-]*\w|[@#]?\w")

# Folded spellings -> one canonical form; both languages and the usual expansions.
_SYNONYMS = {
    "fcfa": "xof", "franc cfa": "xof", "francs cfa": "xof", "cfa": "xof",
    "eur": "euro", "euros": "euro", "€": "euro", "usd": "dollar", "dollars": "dollar",
    "ifc": "sfi", "ghg": "ges", "greenhouse gas": "ges", "gaz a effet de serre": "ges",
    "postgres": "postgresql", "psql": "postgresql", "k8s": "kubernetes", "py": "python",
    "gpa": "parfait achevement", "garantie de parfait achevement": "parfait achevement",
    "garantie decennale": "decennale", "garantie biennale": "biennale",
    "doe": "dossier des ouvrages executes", "dgd": "decompte general et definitif",
    "aep": "eau potable", "drinking water": "eau potable", "potable water": "eau potable",
    "wastewater": "eaux usees", "stormwater": "eaux pluviales", "rainwater": "eaux pluviales",
    "street lighting": "eclairage public", "gas": "gaz",
    "ivory coast": "cote d'ivoire", "senegal": "senegal", "cameroon": "cameroun",
    "morocco": "maroc", "tunisia": "tunisie", "algeria": "algerie", "chad": "tchad",
    "guinea": "guinee", "west africa": "afrique de l'ouest", "ecowas": "cedeao",
    "afdb": "bad", "day": "jour", "days": "jour", "jours": "jour", "week": "semaine",
    "weeks": "semaine", "semaines": "semaine", "month": "mois", "months": "mois",
    "year": "annee", "years": "annee", "ans": "annee", "annees": "annee", "hour": "heure",
    "hours": "heure", "heures": "heure", "h": "heure", "sme": "pme", "smes": "pme",
    "pmes": "pme", "collectivites": "collectivite",
    "works": "travaux", "supplies": "fournitures", "public works": "travaux",
}  # fmt: skip

# Lower-case names that are key terms even when typed without capitals.
_LEXICON = word_set(
    """
    parfait_achevement biennale decennale bon_fonctionnement eau_potable gaz assainissement
    eaux_usees eaux_pluviales eclairage_public electricite telecom fibre travaux fournitures
    services prestations_intellectuelles collectivite collectivites etat
    etablissement_public commune region departement euro dollar xof xaf naira cedi yen yuan
    livre gri sasb tcfd issb csrd esrs cdp sbti gold_standard verra python java javascript
    typescript rust php ruby golang c# c++ postgresql mysql sqlite sql_server oracle mongodb
    redis mariadb fastapi flask django express docker kubernetes podman gunicorn uvicorn
    nginx apache psycopg psycopg2 sqlalchemy asyncpg alembic react vue angular svelte pandas
    numpy polars git github gitlab bitbucket aws azure gcp linux windows macos pip poetry
    conda pytest senegal cote_d'ivoire mali burkina_faso niger togo benin cameroun gabon
    congo tchad maroc tunisie algerie nigeria ghana kenya france abidjan dakar lome cotonou
    ouagadougou bamako niamey douala yaounde libreville uemoa cemac cedeao bceao beac boad
    bad cctp ccap ccag bpu dqe dpgf dce aipr moe moa opc sps ppsps
    """
)
# Units are key terms only right after a number: "10 jours" vs "10 mois", not "mettre à jour".
_UNITS = word_set(
    """
    kwh mwh gwh kw mw kwc tco2e km m m2 m3 mm cm ha tonne jour semaine mois annee heure
    """
)
_LEXICON_PHRASES = sorted(
    {p.replace("_", " ") for p in (*_LEXICON, *_SYNONYMS) if "_" in p or " " in p},
    key=len,
    reverse=True,
)


def _canonical(term: str) -> str:
    term = term.replace("_", " ")
    return _SYNONYMS.get(term, term)


def _looks_like_name(word: str, at_start: bool) -> bool:
    if word.startswith(("@", "#")) or "_" in word or "." in word.strip("."):
        return True
    letters = [c for c in word if c.isalpha()]
    if len(letters) >= 2 and any(c.isupper() for c in letters[1:]):
        return True  # CCTP, FastAPI, PostgreSQL
    if letters and any(c.isdigit() for c in word):
        return True  # psycopg2, T3
    if len(word) == 1:
        return not at_start and word.isupper() and word != "I"  # "group A" vs "group B"
    return bool(not at_start and letters and word[0].isupper())


@lru_cache(maxsize=4096)  # a stored question's terms are asked for at each of its hits
def key_terms(question: Question) -> frozenset[str]:
    """Canonical key terms of a question."""
    terms: set[str] = set()
    text = question.text
    for match in _RAW_WORD.finditer(text):
        word = match.group(0)
        before = text[: match.start()].rstrip()
        at_start = not before or before[-1] in ".?!:;("
        if _looks_like_name(word, at_start):
            terms.add(_canonical(fold(word)))
    folded = f" {' '.join(question.words)} "
    for phrase in _LEXICON_PHRASES:
        if f" {phrase} " in folded:
            terms.add(_canonical(phrase))
            folded = folded.replace(f" {phrase} ", " | ")
    words = folded.split()
    for position, word in enumerate(words):
        canonical = _canonical(word)
        after_number = position > 0 and is_number_word(words[position - 1])
        if canonical.replace(" ", "_") in _LEXICON or (canonical in _UNITS and after_number):
            terms.add(canonical)
    return frozenset(terms)


@dataclass(frozen=True, slots=True)
class TermCheck:
    only_stored: tuple[str, ...]
    only_incoming: tuple[str, ...]

    @property
    def swapped(self) -> bool:
        """Each question names something the other does not: one thing put for another."""
        return bool(self.only_stored and self.only_incoming)

    @property
    def one_sided(self) -> bool:
        return bool(self.only_stored) != bool(self.only_incoming)

    @property
    def reason(self) -> str:
        if not self.swapped:
            return ""
        return f"key term differs: {', '.join(self.only_stored)} vs {', '.join(self.only_incoming)}"


def _mentioned(term: str, other: Question, other_terms: frozenset[str]) -> bool:
    if term in other_terms:
        return True
    folded = f" {' '.join(other.words)} "
    return f" {term} " in folded


def _expansion(acronym: str, other: Question) -> frozenset[str]:
    """The words of `other` that spell `acronym` out ("DGD" = "décompte général et définitif")."""
    if not (2 <= len(acronym) <= 6 and acronym.isalpha()):
        return frozenset()
    parts = [p for w in other.words for p in w.split("-") if p and p not in STOP_WORDS]
    for start in range(len(parts) - len(acronym) + 1):
        run = parts[start : start + len(acronym)]
        if "".join(p[0] for p in run) == acronym:
            return frozenset(run)
    return frozenset()


def _unexpanded(mine: set[str], theirs: set[str], other: Question) -> None:
    """Drop from both sides an acronym of `mine` that `other` spells out, with its words."""
    for term in sorted(mine):
        spelled = _expansion(term, other)
        if spelled:
            mine.discard(term)
            theirs.difference_update(spelled)


def compare_terms(stored: Question, incoming: Question) -> TermCheck:
    a, b = key_terms(stored), key_terms(incoming)
    only_a = {t for t in a if not _mentioned(t, incoming, b)}
    only_b = {t for t in b if not _mentioned(t, stored, a)}
    _unexpanded(only_a, only_b, incoming)
    _unexpanded(only_b, only_a, stored)
    return TermCheck(tuple(sorted(only_a)), tuple(sorted(only_b)))
