"""Generate French, English and cross-lingual question pairs from the hand-written template bank.

One command, deterministic (every choice comes from a seeded generator):

    .venv/bin/python training/make_pairs.py [--seed 13] [--out training/pairs_fr]

writes `train.jsonl`, `dev.jsonl` and `heldout.jsonl` and prints their counts per kind and
language. The templates (`training/bank/`) are split, not the pairs: no template of the
held-out split gives a single pair to training, so the held-out figures measure how the
verifier does on questions it has never seen phrased in any way.

From one filling of a template (its slots given terms):
  * same answer: two French phrasings (`paraphrase`, fr), two English ones (`paraphrase`,
    en), a French and an English one (`cross_lingual`, mixed);
  * another answer, made by rule: one slot's term swapped for another of its list (the
    slot's kind: `entity_swap`, `number_change`, `negation_or_polarity`, `scope_change`), a hand-written
    variant on the same terms (`scope_change` or `negation_or_polarity`), and a question of
    another template of the same domain and split (`unrelated_same_domain`), mostly on the same
    term or of a template that shares many words.
Pairs of the second kind come in French, English and mixed (the two sides in two languages),
so that a change of language never stands for a change of answer. Some incoming questions
are written carelessly (lower case, no accents, no question mark), as users type them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.bank import (  # noqa: E402
    esg_finance,
    esg_reporting,
    software_delivery,
    software_services,
    works_contracts,
    works_site,
)
from training.templates import (  # noqa: E402
    CROSS_LINGUAL,
    DIFFERENT_KINDS,
    ENTITY,
    NUMBER,
    PARAPHRASE,
    POLARITY,
    SAME_KINDS,
    SCOPE,
    UNRELATED,
    Template,
    Term,
)

BANK: dict[str, tuple[Template, ...]] = {
    "public_works": works_contracts.TEMPLATES + works_site.TEMPLATES,
    "esg_finance": esg_reporting.TEMPLATES + esg_finance.TEMPLATES,
    "software": software_delivery.TEMPLATES + software_services.TEMPLATES,
}
SPLITS = ("train", "dev", "heldout")
HELDOUT_EVERY, DEV_EVERY = 5, 8  # one template in 5 is held out, one in 8 tunes; the rest trains
SEED = 13
FILLS = 10  # fillings per template; one with fewer is asked again in other words
CARELESS = 0.15  # share of incoming questions typed carelessly
OUT = ROOT / "training" / "pairs_fr"
LANGS_OF_CHANGE = ("fr", "fr", "fr", "en", "en", "mixed")  # the languages of a pair that changes the answer
MINIMAL = 0.75  # share of swaps asked in the same words, one term apart, as the hardest negatives are
NEAR = 0.8  # share of unrelated questions taken from the nearest templates rather than any

Row = dict[str, Any]


def plain(text: str) -> str:
    """Lower case without accents: how the tests find a term again in a careless question."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def careless(text: str, rng: random.Random) -> str:
    choice = rng.randrange(3)
    if choice == 0:
        return plain(text)
    if choice == 1:
        return text.lower()
    return text.rstrip(" ?").rstrip()


def changes_of(template: Template) -> tuple[bool, ...]:
    """Which answer-changing kinds a template can make, rarest first."""
    kinds = {slot.kind for slot in template.slots.values()} | {v.kind for v in template.variants}
    return tuple(kind not in kinds for kind in (NUMBER, POLARITY, SCOPE, ENTITY))


def split_templates(seed: int) -> dict[str, str]:
    """Template id -> split, drawn per domain so that every split holds every domain.

    Within a domain the templates are shuffled, then ordered by the kinds of change they make
    and dealt out in turn (one in HELDOUT_EVERY to held-out, one in DEV_EVERY to dev), so that
    each split gets its share of number changes and polarity flips, not whatever a draw gives.
    """
    result = {}
    for domain, templates in BANK.items():
        shuffled = sorted(templates, key=lambda t: t.id)
        random.Random(f"{seed}:{domain}").shuffle(shuffled)
        for i, template in enumerate(sorted(shuffled, key=changes_of)):
            held, dev = i % HELDOUT_EVERY == 0, i % DEV_EVERY == DEV_EVERY // 2
            result[template.id] = "heldout" if held else "dev" if dev else "train"
    return result


@dataclass(frozen=True, slots=True)
class Filling:
    template: Template
    terms: dict[str, Term]

    def render(self, text: str, lang: str, rng: random.Random, terms: dict[str, Term] | None = None) -> str:
        """`text` with each slot given one of its term's forms in `lang`; `terms` override."""
        chosen = {**self.terms, **(terms or {})}
        filled = text.format(**{name: rng.choice(term.forms(lang)) for name, term in chosen.items()})
        return filled[0].upper() + filled[1:]


def fillings(template: Template, rng: random.Random) -> list[Filling]:
    names = sorted(template.slots)
    combos = list(itertools.product(*(range(len(template.slots[n].terms)) for n in names)))
    picked = rng.sample(combos, min(FILLS, len(combos)))
    if len(picked) < FILLS:  # a template with few fillings is asked again in other words
        picked += [rng.choice(combos) for _ in range(FILLS - len(picked))]
    return [
        Filling(template, {n: template.slots[n].terms[i] for n, i in zip(names, c, strict=True)})
        for c in picked
    ]


def pair(a: str, b: str, same: bool, kind: str, lang: str, template: Template, **extra: Any) -> Row:
    return {"a": a, "b": b, "same": same, "kind": kind, "lang": lang, "template": template.id, **extra}


def sides(lang: str, rng: random.Random) -> tuple[str, str]:
    if lang != "mixed":
        return lang, lang
    return ("fr", "en") if rng.random() < 0.5 else ("en", "fr")


def two_phrasings(
    template: Template, lang_a: str, lang_b: str, rng: random.Random, minimal: bool = False
) -> tuple[str, str]:
    """Two phrasings of the template, distinct when both are in one language unless `minimal`."""
    first = rng.choice(template.phrasings(lang_a))
    if minimal and lang_a == lang_b:
        return first, first
    others = [p for p in template.phrasings(lang_b) if lang_a != lang_b or p != first]
    return first, rng.choice(others)


def same_answer(filling: Filling, rng: random.Random) -> Iterator[Row]:
    template = filling.template
    for lang_a, lang_b, kind, lang in (
        ("fr", "fr", PARAPHRASE, "fr"),
        ("fr", "fr", PARAPHRASE, "fr"),
        ("en", "en", PARAPHRASE, "en"),
        ("fr", "en", CROSS_LINGUAL, "mixed"),
        ("en", "fr", CROSS_LINGUAL, "mixed"),
    ):
        first, second = two_phrasings(template, lang_a, lang_b, rng)
        yield pair(
            filling.render(first, lang_a, rng),
            filling.render(second, lang_b, rng),
            True,
            kind,
            lang,
            template,
        )


def swaps(filling: Filling, rng: random.Random) -> Iterator[Row]:
    """One slot's term swapped for another of its list: the swapped forms are recorded."""
    template = filling.template
    for name in sorted(template.slots):
        slot = template.slots[name]
        other = rng.choice([term for term in slot.terms if term != filling.terms[name]])
        lang = rng.choice(LANGS_OF_CHANGE)
        lang_a, lang_b = sides(lang, rng)
        first, second = two_phrasings(template, lang_a, lang_b, rng, minimal=rng.random() < MINIMAL)
        was, now = rng.choice(filling.terms[name].forms(lang_a)), rng.choice(other.forms(lang_b))
        a = filling.render(first, lang_a, rng, {name: Term((was,), (was,))})
        b = filling.render(second, lang_b, rng, {name: Term((now,), (now,))})
        yield pair(a, b, False, slot.kind, lang, template, change={"slot": name, "from": was, "to": now})


def variants(filling: Filling, rng: random.Random) -> Iterator[Row]:
    template = filling.template
    for index, variant in enumerate(template.variants):
        lang = rng.choice(LANGS_OF_CHANGE)
        lang_a, lang_b = sides(lang, rng)
        a = filling.render(rng.choice(template.phrasings(lang_a)), lang_a, rng)
        b = filling.render(variant.fr if lang_b == "fr" else variant.en, lang_b, rng)
        yield pair(a, b, False, variant.kind, lang, template, variant=index)


def words(template: Template) -> set[str]:
    """The template's own words (four letters or more, slots left out), to find its neighbours."""
    texts = (re.sub(r"\{\w+\}", " ", text) for text in (*template.fr, *template.en))
    return {word for text in texts for word in re.findall(r"\w{4,}", plain(text))}


def unrelated(filling: Filling, partners: Sequence[Template], rng: random.Random) -> Iterator[Row]:
    """A question of another template of the domain and split: mostly one on the same term (when a
    slot list is shared) or one of the two that share the most words, as the hardest are."""
    template = filling.template
    own = words(template)
    sharing = [p for p in partners if any(s in template.slots.values() for s in p.slots.values())]
    nearest = sorted(partners, key=lambda p: (-len(own & words(p)), p.id))[:2]
    other = rng.choice((sharing or nearest) if rng.random() < NEAR else partners)
    shared = {
        n: filling.terms[m] for n, s in other.slots.items() for m, s2 in template.slots.items() if s == s2
    }
    terms = {n: shared.get(n, rng.choice(s.terms)) for n, s in sorted(other.slots.items())}
    lang = rng.choice(LANGS_OF_CHANGE)
    lang_a, lang_b = sides(lang, rng)
    a = filling.render(rng.choice(template.phrasings(lang_a)), lang_a, rng)
    b = Filling(other, terms).render(rng.choice(other.phrasings(lang_b)), lang_b, rng)
    yield pair(a, b, False, UNRELATED, lang, template, other=other.id)


def finish(row: Row, domain: str, rng: random.Random) -> Row:
    """Either side may be the stored one; some incoming questions are typed carelessly."""
    if rng.random() < 0.5:
        row["a"], row["b"] = row["b"], row["a"]
        if "change" in row:
            row["change"] = {**row["change"], "from": row["change"]["to"], "to": row["change"]["from"]}
    if rng.random() < CARELESS:
        row["b"] = careless(row["b"], rng)
    row["domain"] = domain
    return row


def generate(seed: int = SEED) -> dict[str, list[Row]]:
    """Every split's pairs, the same for the same seed and bank."""
    split_of = split_templates(seed)
    result: dict[str, list[Row]] = {name: [] for name in SPLITS}
    for domain, templates in BANK.items():
        for template in templates:
            rng = random.Random(f"{seed}:{template.id}")
            split = split_of[template.id]
            partners = [t for t in templates if t.id != template.id and split_of[t.id] == split]
            seen = {(plain(r["a"]), plain(r["b"])) for r in result[split]}
            for filling in fillings(template, rng):
                made = [*same_answer(filling, rng), *swaps(filling, rng), *variants(filling, rng)]
                made += list(unrelated(filling, partners, rng))
                for row in made:
                    row = finish(row, domain, rng)
                    key = (plain(row["a"]), plain(row["b"]))
                    if key[0] != key[1] and key not in seen and key[::-1] not in seen:
                        seen.add(key)
                        result[split].append(row)
    return result


def write(splits: dict[str, list[Row]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in splits.items():
        lines = (json.dumps(row, ensure_ascii=False) for row in rows)
        (out / f"{name}.jsonl").write_text("".join(f"{line}\n" for line in lines), "utf-8")


def print_counts(splits: dict[str, list[Row]]) -> None:
    for name, rows in splits.items():
        templates = len({r["template"] for r in rows})
        same = sum(r["same"] for r in rows)
        print(
            f"{name}: {len(rows)} pairs from {templates} templates, same={same} different={len(rows) - same}"
        )
        counts = Counter((r["kind"], r["lang"]) for r in rows)
        for kind in (*SAME_KINDS, *DIFFERENT_KINDS):
            cells = "  ".join(f"{lang}={counts[(kind, lang)]}" for lang in ("fr", "en", "mixed"))
            print(f"  {kind:<24}{cells}")
        domains = Counter(r["domain"] for r in rows)
        print("  " + "  ".join(f"{d}={domains[d]}" for d in BANK))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    args = parser.parse_args(argv)
    splits = generate(args.seed)
    write(splits, args.out)
    print_counts(splits)
    print(f"wrote {', '.join(f'{n}.jsonl' for n in SPLITS)} in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
