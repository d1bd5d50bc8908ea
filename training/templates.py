"""The shape of the hand-written question templates that `training/make_pairs.py` turns into pairs.

A template is one question, written several ways in French and in English, with slots
(`{name}`) filled from term lists. Two fillings of the same template with the same terms ask
the same thing; swapping one slot's term for another of its list asks something else, and the
slot says which kind of change that is (another guarantee is an entity swap, another year a
number change, "autorisé" for "interdit" a polarity flip, one site for the whole group a
narrower scope). Variants are hand-written questions on the same terms whose answer differs
(another aspect of the subject, the opposite question).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PARAPHRASE = "paraphrase"
CROSS_LINGUAL = "cross_lingual"
ENTITY = "entity_swap"
NUMBER = "number_change"
POLARITY = "negation_or_polarity"
SCOPE = "scope_change"
UNRELATED = "unrelated_same_domain"

SAME_KINDS = (PARAPHRASE, CROSS_LINGUAL)
DIFFERENT_KINDS = (ENTITY, NUMBER, POLARITY, SCOPE, UNRELATED)


@dataclass(frozen=True, slots=True)
class Term:
    """One value of a slot: its French and English surface forms (the first is the usual one;
    the others, acronyms or synonyms, mean the same)."""

    fr: tuple[str, ...]
    en: tuple[str, ...]

    def forms(self, lang: str) -> tuple[str, ...]:
        return self.fr if lang == "fr" else self.en


@dataclass(frozen=True, slots=True)
class Slot:
    kind: str  # the pair kind a swap of this slot's term makes
    terms: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Variant:
    """A question on the same terms whose answer is not the template's."""

    kind: str
    fr: str
    en: str


@dataclass(frozen=True, slots=True)
class Template:
    id: str
    fr: tuple[str, ...]
    en: tuple[str, ...]
    slots: dict[str, Slot] = field(default_factory=dict)
    variants: tuple[Variant, ...] = ()

    def phrasings(self, lang: str) -> tuple[str, ...]:
        return self.fr if lang == "fr" else self.en


def t(fr: str, en: str | None = None) -> Term:
    """A term; alternatives are separated by '|'; an English form left out is the French one."""
    return Term(tuple(fr.split("|")), tuple((en if en is not None else fr).split("|")))


def entity(*terms: Term) -> Slot:
    return Slot(ENTITY, terms)


def number(*terms: Term) -> Slot:
    return Slot(NUMBER, terms)


def polarity(yes: Term, no: Term) -> Slot:
    return Slot(POLARITY, (yes, no))


def extent(*terms: Term) -> Slot:
    """Terms that narrow or widen what is asked about (one site, the whole group)."""
    return Slot(SCOPE, terms)


def scope(fr: str, en: str) -> Variant:
    return Variant(SCOPE, fr, en)


def opposite(fr: str, en: str) -> Variant:
    return Variant(POLARITY, fr, en)


def q(
    id: str,
    fr: list[str],
    en: list[str],
    slots: dict[str, Slot] | None = None,
    variants: list[Variant] | None = None,
) -> Template:
    return Template(id, tuple(fr), tuple(en), dict(slots or {}), tuple(variants or ()))
