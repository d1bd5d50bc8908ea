"""Bilingual FAQ questions for the latency benchmark, and variants of them that the guard
should answer direct: exact (same normalized key), cosine (a trailing politeness word, which the
guard strips before embedding) and reworded (a closing word the guard does embed)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from memory_guard.core.decision import Decision
from memory_guard.core.normalize import normalize_question

SEED = 20240611


EN_TEMPLATES = (
    "How long does delivery of a {item} to {place} usually take when it is ordered {when}?",
    "What documents do I need to return a {item} that was bought {when} in our {place} shop?",
    "Can I change the delivery address of my {item} order for {place} after paying {when}?",
    "Is a warranty extension available for a {item} shipped to {place} {when}?",
    "Who should I contact about a damaged {item} that was delivered in {place} {when}?",
    "How much does it cost to have a {item} installed at home in {place} if I order {when}?",
    "Why was my refund for a {item} sent back from {place} still not paid after I returned it {when}?",
    "Can I pay for a {item} in three instalments when I order it for {place} {when}?",
)
EN_ITEMS = (
    "washing machine", "laptop", "garden table", "office chair", "electric bike",
    "coffee machine", "set of winter tyres", "bookshelf", "gas boiler", "solar panel kit",
)  # fmt: skip
EN_PLACES = (
    "Canada", "Belgium", "Switzerland", "Lyon", "Marseille",
    "Germany", "Spain", "Quebec", "Brussels", "Geneva",
)  # fmt: skip
EN_WHEN = (
    "last week",
    "during the sales",
    "on a public holiday",
    "with a gift card",
    "through the mobile app",
)

FR_TEMPLATES = (
    "Combien de temps faut-il pour livrer {item} à {place} quand la commande est passée {when} ?",
    "Quels documents faut-il fournir pour retourner {item} acheté {when} dans notre magasin de {place} ?",
    "Puis-je modifier l'adresse de livraison de ma commande de {item} pour {place} après avoir payé {when} ?",
    "Existe-t-il une extension de garantie pour {item} expédié à {place} {when} ?",
    "Qui dois-je contacter pour {item} abîmé livré à {place} {when} ?",
    "Combien coûte l'installation à domicile d'{item} à {place} si je commande {when} ?",
    "Pourquoi mon remboursement pour {item} renvoyé depuis {place} n'est-il toujours pas versé "
    "alors que je l'ai retourné {when} ?",
    "Puis-je payer {item} en trois fois quand je le commande pour {place} {when} ?",
)
FR_ITEMS = (
    "un lave-linge", "un ordinateur portable", "une table de jardin", "un fauteuil de bureau",
    "un vélo électrique", "une machine à café", "un jeu de pneus neige", "une bibliothèque",
    "une chaudière à gaz", "un kit de panneaux solaires",
)  # fmt: skip
FR_PLACES = (
    "Montréal", "Bruxelles", "Genève", "Lyon", "Marseille",
    "Toulouse", "Bordeaux", "Nantes", "Lille", "Strasbourg",
)  # fmt: skip
FR_WHEN = (
    "la semaine dernière",
    "pendant les soldes",
    "un jour férié",
    "avec une carte cadeau",
    "via l'appli",
)


@dataclass(frozen=True, slots=True)
class Faq:
    question: str
    answer: str
    language: str


def faq_questions(count: int, seed: int = SEED) -> list[Faq]:
    """`count` distinct questions, half French and half English, from templates (seeded)."""
    rng = random.Random(seed)
    pools: dict[str, list[str]] = {}
    for language, templates, items, places, whens in (
        ("en", EN_TEMPLATES, EN_ITEMS, EN_PLACES, EN_WHEN),
        ("fr", FR_TEMPLATES, FR_ITEMS, FR_PLACES, FR_WHEN),
    ):
        combos = list(itertools.product(templates, items, places, whens))
        rng.shuffle(combos)
        pools[language] = [t.format(item=i, place=p, when=w) for t, i, p, w in combos]
    french = count // 2
    english = count - french
    if english > len(pools["en"]) or french > len(pools["fr"]):
        raise ValueError(f"the templates give at most {2 * len(pools['fr'])} distinct questions")
    chosen = [Faq(q, "", "en") for q in pools["en"][:english]] + [
        Faq(q, "", "fr") for q in pools["fr"][:french]
    ]
    rng.shuffle(chosen)
    return [
        Faq(
            f.question,
            f"Réponse FAQ n°{n} : voir la fiche {n}." if f.language == "fr" else f"FAQ answer #{n}.",
            f.language,
        )
        for n, f in enumerate(chosen)
    ]


def exact_variant(question: str, n: int) -> str:
    """The same question, not byte-identical: other case, or without its closing mark."""
    return question.upper() if n % 2 else question.rstrip().rstrip("?").rstrip().lower()


def cosine_variant(question: str, language: str) -> str:
    """The question with a trailing politeness word: another normalized key, cosine near 1."""
    word = "svp" if language == "fr" else "please"
    body = question.rstrip().rstrip("?").rstrip()
    return f"{body} {word} ?" if language == "fr" else f"{body}, {word}?"


def reworded_variant(question: str, language: str) -> str:
    """The question with a closing word that asks nothing more ("…, au juste ?", "…, exactly?"):
    embedded as is (unlike a greeting, a lead-in or politeness), so its cosine to the stored
    question is below 1 and the verifier (cross-encoder included) reads a real difference."""
    body = question.rstrip().rstrip("?").rstrip()
    return f"{body}, au juste ?" if language == "fr" else f"{body}, exactly?"


def variant(kind: str, faq: Faq, n: int) -> str:
    if kind == "exact":
        return exact_variant(faq.question, n)
    if kind == "cosine":
        return cosine_variant(faq.question, faq.language)
    if kind == "reworded":
        return reworded_variant(faq.question, faq.language)
    raise ValueError(f"unknown variant kind {kind!r}")


@dataclass(frozen=True, slots=True)
class Probe:
    """A question to time, the entry it must hit and the score the lookup gave it."""

    message: str
    entry_id: int
    score: float


@dataclass(slots=True)
class Qualifying:
    tried: int = 0
    direct: int = 0
    other_entry: int = 0
    below: int = 0
    wrong_kind: int = 0  # direct from the right entry, but exact when a cosine hit was wanted (or back)
    cross_encoder: int = 0  # qualified probes whose served candidate the cross-encoder read
    scores: list[float] = field(default_factory=list)
    qualified_by_language: dict[str, int] = field(default_factory=dict)
    tried_by_language: dict[str, int] = field(default_factory=dict)

    def languages(self) -> str:
        return " ".join(
            f"{language}={self.qualified_by_language.get(language, 0)}/{tried}"
            for language, tried in sorted(self.tried_by_language.items())
        )


def qualify(
    staff: httpx.Client, stored: Sequence[tuple[Faq, int]], kind: str
) -> tuple[list[Probe], Qualifying]:
    """Variants of the stored questions that the guard answers `direct` from the intended entry."""
    probes: list[Probe] = []
    tally = Qualifying()
    for n, (faq, entry_id) in enumerate(stored):
        message = variant(kind, faq, n)
        if message == faq.question:
            raise RuntimeError(f"variant is byte-identical: {message!r}")
        same_key = normalize_question(message) == normalize_question(faq.question)
        if same_key != (kind == "exact"):
            raise RuntimeError(f"{kind} variant {message!r} has the wrong normalized key")
        reply = staff.post("/staff/memory/lookup", json={"question": message})
        reply.raise_for_status()
        body = reply.json()
        tally.tried += 1
        tally.tried_by_language[faq.language] = tally.tried_by_language.get(faq.language, 0) + 1
        best = body["candidates"][0] if body["candidates"] else None
        if best is not None:
            tally.scores.append(float(best["score"]))
        # The entry served: the first candidate that serves, not always the best-scored one (a
        # verifier may turn that one down and serve the next).
        served = next((c for c in body["candidates"] if c.get("served")), None)
        if body["decision"] != Decision.DIRECT or served is None:
            tally.below += 1
        elif served["entry_id"] != entry_id:
            tally.other_entry += 1
        elif bool(served.get("exact")) != (kind == "exact"):
            tally.wrong_kind += 1
        else:
            tally.direct += 1
            tally.qualified_by_language[faq.language] = tally.qualified_by_language.get(faq.language, 0) + 1
            probes.append(Probe(message, entry_id, float(served["score"])))
            if served.get("cross_encoder_probability") is not None or served.get("by") == "cross_encoder":
                tally.cross_encoder += 1
    return probes, tally
