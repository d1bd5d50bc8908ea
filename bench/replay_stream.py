"""The question stream of bench/replay.py: needs asked again over time in new words, and near misses.

A need is one answer. Its wordings are the questions that ask for it:
  * the template bank, HELD-OUT templates only (training/make_pairs.py `split_templates`, the
    ones behind training/pairs_fr/heldout.jsonl, which the cross-encoder never trained on): one
    template with its slots filled is a need, its French and English phrasings (each slot in
    each of its forms) are the wordings; another filling (a slot swapped) and a hand-written
    variant on the same terms are near-miss needs, with another answer;
  * QQP, the "eval" half only (training/splits.py): a connected component of duplicate pairs is
    a need (a component that a non-duplicate pair splits is dropped as contradictory); the
    other side of a non-duplicate pair is a near-miss need of the component it was paired with.
No two wordings of the stream share a normalized key (the service's exact-match key): a need
comes back in other words, never in the same ones.

Order: each need is born at a seeded time (a near miss after the need it is near to) and its
other wordings come at later times, so every need's first asking comes before its repeats and
the share of questions whose need was seen before grows along the stream.
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from training.make_pairs import BANK, CARELESS, SEED, careless, split_templates
from training.splits import half_of
from training.templates import Template, Term

from memory_guard.core.normalize import normalize_question

QQP_FILE = "qqp_pairs.jsonl.gz"
MAX_WORDINGS = 10  # askings of one need at most
MAX_COMPONENT = 12  # QQP duplicate components larger than this are chained drift, not one answer
NEAR_SHARE = 0.15  # share of the QQP questions that are near misses
BANK_SHARE = 0.4  # most of the stream the template bank may fill when QQP is there too
LAST_BIRTH = 0.9  # no need is born in the last tenth: its repeats would have no room
# A need from a source, a label and wordings; None when every wording belongs to another need.
_Adder = Callable[[str, str, Sequence[str]], "Need | None"]
_FILLER = (
    "délai contrat garantie retenue pénalité réception marché titulaire article clause montant "
    "report émission scope audit taxonomie version release deploy review support service "
    "the contract applies within days under the terms of the agreement as stated in section"
)


@dataclass(slots=True)
class Need:
    id: int
    source: str  # "bank" or "qqp"
    label: str  # what it is, for the report: template id and terms, or the QQP component's first question
    wordings: list[str]
    near: list[int] = field(default_factory=list)  # the needs it is a near miss of
    trap: bool = False  # made as a near miss of `near`: born after them
    answer: str = ""


@dataclass(frozen=True, slots=True)
class Question:
    index: int
    text: str
    need: int
    first: bool  # the first asking of its need
    near_miss: bool  # a first asking whose need is near one asked before: answering it from memory is wrong
    source: str


@dataclass(frozen=True, slots=True)
class Stream:
    needs: dict[int, Need]
    questions: list[Question]

    def need_of(self) -> dict[str, int]:
        """Question text -> need id: the table the scripted upstream answers from."""
        return {q.text: q.need for q in self.questions}

    def describe(self) -> str:
        firsts = sum(q.first for q in self.questions)
        near = sum(q.near_miss for q in self.questions)
        by_source = {s: sum(q.source == s for q in self.questions) for s in ("bank", "qqp")}
        return (
            f"stream: {len(self.questions)} questions, {len(self.needs)} needs "
            f"(bank {by_source['bank']} questions, qqp {by_source['qqp']}); {firsts} first askings, "
            f"{len(self.questions) - firsts} repeats in new words, {near} near misses"
        )


class _Keys:
    """Normalized keys already given to a need: one wording belongs to one need only."""

    def __init__(self) -> None:
        self.owner: dict[str, int] = {}

    def take(self, need: int, texts: Sequence[str]) -> list[str]:
        kept = []
        for text in texts:
            key = normalize_question(text)
            if key and key not in self.owner:
                self.owner[key] = need
                kept.append(text)
        return kept


def _renderings(text: str, terms: dict[str, Term], lang: str) -> list[str]:
    names = sorted(terms)
    out = []
    for forms in itertools.product(*(terms[n].forms(lang) for n in names)):
        filled = text.format(**dict(zip(names, forms, strict=True)))
        out.append(filled[0].upper() + filled[1:])
    return out


def _wordings(fr: Sequence[str], en: Sequence[str], terms: dict[str, Term], rng: random.Random) -> list[str]:
    """Every rendering, capped at MAX_WORDINGS with both languages kept; some typed carelessly."""
    french = [w for text in fr for w in _renderings(text, terms, "fr")]
    english = [w for text in en for w in _renderings(text, terms, "en")]
    rng.shuffle(french)
    rng.shuffle(english)
    half = MAX_WORDINGS // 2
    picked = (
        french[: max(half, MAX_WORDINGS - len(english))] + english[: max(half, MAX_WORDINGS - len(french))]
    )
    picked = picked[:MAX_WORDINGS]
    rng.shuffle(picked)
    return [careless(w, rng) if i and rng.random() < CARELESS else w for i, w in enumerate(picked)]


def _bank_groups(rng: random.Random) -> list[list[tuple[str, list[str], tuple[str, ...]]]]:
    """Per held-out template, its needs as (label, wordings, near labels)."""
    split_of = split_templates(SEED)  # the split the shipped cross-encoder was trained with
    groups = []
    for templates in BANK.values():
        for template in templates:
            if split_of[template.id] == "heldout":
                groups.append(_template_needs(template, rng))
    return groups


def _template_needs(template: Template, rng: random.Random) -> list[tuple[str, list[str], tuple[str, ...]]]:
    names = sorted(template.slots)
    combos = list(itertools.product(*(range(len(template.slots[n].terms)) for n in names)))
    out = []
    for combo in combos:
        terms = {n: template.slots[n].terms[i] for n, i in zip(names, combo, strict=True)}
        label = f"{template.id}{list(combo)}"
        swaps = tuple(
            f"{template.id}{list(other)}"
            for other in combos
            if sum(a != b for a, b in zip(other, combo, strict=True)) == 1
        )
        out.append((label, _wordings(template.fr, template.en, terms, rng), swaps))
        for v, variant in enumerate(template.variants):
            wordings = _wordings((variant.fr,), (variant.en,), terms, rng)
            out.append((f"{label} variant {v}", wordings, (label,)))
    return out


def _qqp_components(data_dir: Path) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """The eval half's duplicate components (consistent ones, 2 to MAX_COMPONENT questions, in
    file order) and its non-duplicate pairs."""
    parent: dict[str, str] = {}
    text_of: dict[str, str] = {}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    different: list[tuple[str, str]] = []
    with gzip.open(data_dir / QQP_FILE, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            a, b = str(row["a"]), str(row["b"])
            if half_of(a, b) != "eval":
                continue
            ka, kb = normalize_question(a), normalize_question(b)
            for key, text in ((ka, a), (kb, b)):
                parent.setdefault(key, key)
                text_of.setdefault(key, text)
            if row["same"]:
                parent[root(ka)] = root(kb)
            else:
                different.append((ka, kb))
    members: dict[str, list[str]] = defaultdict(list)
    for key in parent:
        members[root(key)].append(key)
    split = {root(a) for a, b in different if root(a) == root(b)}
    components = [
        [text_of[k] for k in keys]
        for r, keys in members.items()
        if 2 <= len(keys) <= MAX_COMPONENT and r not in split
    ]
    pairs = [(text_of[a], text_of[b]) for a, b in different]
    return components, pairs


def _questions(needs: dict[int, Need], rng: random.Random) -> list[Question]:
    """The askings in time order: a need is born at a seeded time (a near miss after the need it
    is near to), its other wordings come later."""
    birth: dict[int, float] = {}
    timed: list[tuple[float, int, str]] = []
    for need in sorted(needs.values(), key=lambda n: n.trap):
        after = max((birth[n] for n in need.near if n in birth), default=None) if need.trap else None
        born = rng.uniform(after, LAST_BIRTH) if after is not None and after < LAST_BIRTH else None
        birth[need.id] = born if born is not None else rng.uniform(0.0, LAST_BIRTH)
        timed.append((birth[need.id], need.id, need.wordings[0]))
        timed += [(rng.uniform(birth[need.id], 1.0), need.id, w) for w in need.wordings[1:]]
    timed.sort()
    asked: set[int] = set()
    questions = []
    for index, (_, need_id, text) in enumerate(timed):
        need = needs[need_id]
        first = need_id not in asked
        near_miss = first and any(n in asked for n in need.near)
        asked.add(need_id)
        questions.append(Question(index, text, need_id, first, near_miss, need.source))
    return questions


def _answer(need: Need, rng: random.Random) -> str:
    words = _FILLER.split(" ")
    body = " ".join(rng.choice(words) for _ in range(rng.randrange(40, 120)))
    return f"[need {need.id}] Réponse à « {need.wordings[0]} » : {body}."


def build_stream(size: int, seed: int, data_dir: Path | None) -> Stream:
    """About `size` questions (fewer when the sources run out), the same for the same seed and data."""
    rng = random.Random(f"replay:{seed}")
    keys = _Keys()
    needs: dict[int, Need] = {}
    by_label: dict[str, int] = {}

    def add(source: str, label: str, wordings: Sequence[str]) -> Need | None:
        kept = keys.take(len(needs) + 1, wordings)
        if not kept:
            return None
        need = Need(len(needs) + 1, source, label, kept)
        needs[need.id] = need
        by_label[label] = need.id
        return need

    groups = _bank_groups(rng)
    rng.shuffle(groups)
    bank_cap = size if data_dir is None else int(size * BANK_SHARE)
    links: list[tuple[int, tuple[str, ...]]] = []
    for group in groups:
        if _asked(needs) >= bank_cap:
            break
        for label, wordings, near in group:
            if (made := add("bank", label, wordings)) is not None:
                links.append((made.id, near))
    for need_id, near in links:
        needs[need_id].near = [by_label[label] for label in near if label in by_label]
        needs[need_id].trap = " variant " in needs[need_id].label
    if data_dir is not None:
        _add_qqp(needs, add, data_dir, size, rng)
    for need in needs.values():
        need.answer = _answer(need, random.Random(f"answer:{seed}:{need.id}"))
    return Stream(needs, _questions(needs, rng))


def _add_qqp(needs: dict[int, Need], add: _Adder, data_dir: Path, size: int, rng: random.Random) -> None:
    """Duplicate components, then near misses of them, then more components up to `size`."""
    components, different = _qqp_components(data_dir)
    rng.shuffle(components)
    rng.shuffle(different)
    near_room = int((size - _asked(needs)) * NEAR_SHARE)
    taken: dict[str, int] = {}  # normalized question -> the QQP need holding it
    left = iter(components)
    for goal in (size - near_room, size):
        for component in left:
            if _asked(needs) >= goal:
                break
            if (made := add("qqp", component[0], component[:MAX_WORDINGS])) is not None:
                taken.update((normalize_question(w), made.id) for w in made.wordings)
        for a, b in _near_pairs(different, taken):
            if near_room <= 0:
                break
            if (made := add("qqp", b, [b])) is not None:
                made.near, made.trap = [taken[normalize_question(a)]], True
                near_room -= 1


def _asked(needs: dict[int, Need]) -> int:
    return sum(len(n.wordings) for n in needs.values())


def _near_pairs(pairs: Sequence[tuple[str, str]], taken: dict[str, int]) -> Iterator[tuple[str, str]]:
    """(a, b) with `a` a question of the stream and `b` of none of its needs."""
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            if normalize_question(x) in taken and normalize_question(y) not in taken:
                yield x, y
                break
