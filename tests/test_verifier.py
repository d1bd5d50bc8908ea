"""The offline verifier's checks, on hand-written French and English cases.

Each check has cases that only it catches: removing the check makes its test fail. The
classifier is left out (no model): these tests pin the rules.
"""

from __future__ import annotations

import pytest

from memory_guard.core.verdict import Verdict
from memory_guard.verify.features import compare
from memory_guard.verify.numbers import compare_numbers, numbers_in
from memory_guard.verify.verifier import OfflineVerifier

RULES_ONLY = OfflineVerifier(None)


def verdict(stored: str, incoming: str) -> tuple[Verdict, str]:
    result = RULES_ONLY.verify(stored, incoming, 0.97)
    return result.verdict, result.reason


@pytest.mark.parametrize(
    ("stored", "incoming", "shown"),
    [
        ("Convertir 30 000 € en FCFA", "Convertir 150 000 € en FCFA", "30 000 vs 150 000"),
        (
            "Quel taux d'intérêts moratoires en 2023 ?",
            "Quel taux d'intérêts moratoires en 2025 ?",
            "2023 vs 2025",
        ),
        (
            "Structure de chaussée pour un trafic T3 ?",
            "Structure de chaussée pour un trafic T1 ?",
            "t3 vs t1",
        ),
        ("What changed in Python 3.11?", "What changed in Python 3.12?", "3.11 vs 3.12"),
        ("Pénalités pour 10 jours de retard", "Pénalités pour 15 jours de retard", "10 vs 15"),
        ("SQL query for the top 5 customers", "SQL query for the top 50 customers", "5 vs 50"),
    ],
)
def test_numbers_that_differ_reject(stored: str, incoming: str, shown: str) -> None:
    result, reason = verdict(stored, incoming)
    assert result is Verdict.REJECT
    assert reason == f"numbers differ: {shown}"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Convertir 1 500 € en FCFA", "Convertir 1500€ en FCFA"),
        ("Un budget de 1,5 M€", "Un budget de 1 500 000 €"),
        ("Pénalités pour dix jours de retard", "Pénalités pour 10 jours de retard"),
        ("A 1,500,000 USD loan", "A 1.5 million USD loan"),
        ("Un taux de 3,5 %", "Un taux de 3.5%"),
    ],
)
def test_same_amount_written_two_ways_is_one_number(a: str, b: str) -> None:
    assert not compare_numbers(a, b).differ
    assert numbers_in(a)


@pytest.mark.parametrize(
    ("stored", "incoming"),
    [
        (
            "Les travaux peuvent-ils commencer avec un permis ?",
            "Les travaux peuvent-ils commencer sans permis ?",
        ),
        ("Pourquoi le serveur démarre-t-il ?", "Pourquoi le serveur ne démarre-t-il pas ?"),
        ("Why does the migration run?", "Why doesn't the migration run?"),
        ("Which tests run with coverage?", "Which tests run without coverage?"),
    ],
)
def test_negation_in_one_question_only_rejects(stored: str, incoming: str) -> None:
    assert verdict(stored, incoming) == (Verdict.REJECT, "negation in one question only")


@pytest.mark.parametrize(
    ("stored", "incoming", "words"),
    [
        (
            "Comment augmenter la portance d'un sol ?",
            "Comment réduire la portance d'un sol ?",
            "augmenter vs reduire",
        ),
        ("L'avenant est-il autorisé ici ?", "L'avenant est-il interdit ici ?", "autorise vs interdit"),
        ("Vérifications avant la réception", "Vérifications après la réception", "avant vs apres"),
        (
            "How do I enable autocommit in psycopg2?",
            "How do I disable autocommit in psycopg2?",
            "enable vs disable",
        ),
        ("How to export a table to CSV?", "How to import a table from CSV?", "export vs import"),
        ("Champ obligatoire dans Pydantic", "Champ facultatif dans Pydantic", "obligatoire vs facultatif"),
        (
            "How to stack two numpy arrays vertically?",
            "How to stack two numpy arrays horizontally?",
            "vertically vs horizontally",
        ),
    ],
)
def test_opposite_words_reject(stored: str, incoming: str, words: str) -> None:
    assert verdict(stored, incoming) == (Verdict.REJECT, f"opposite meaning: {words}")


@pytest.mark.parametrize(
    ("stored", "incoming", "terms"),
    [
        (
            "Quelle est la durée de la garantie décennale ?",
            "Quelle est la durée de la garantie biennale ?",
            "decennale vs biennale",
        ),
        ("Quels pays sont membres de l'UEMOA ?", "Quels pays sont membres de la CEMAC ?", "uemoa vs cemac"),
        ("Que contient le CCTP ?", "Que contient le CCAP ?", "cctp vs ccap"),
        (
            "How do I deploy FastAPI with Docker?",
            "How do I deploy FastAPI with Kubernetes?",
            "docker vs kubernetes",
        ),
        (
            "Diamètre d'un collecteur d'eaux usées",
            "Diamètre d'un collecteur d'eaux pluviales",
            "eaux usees vs eaux pluviales",
        ),
        (
            "Comment créer un index en PostgreSQL ?",
            "Comment créer un index en MySQL ?",
            "postgresql vs mysql",
        ),
    ],
)
def test_swapped_key_term_rejects(stored: str, incoming: str, terms: str) -> None:
    assert verdict(stored, incoming) == (Verdict.REJECT, f"key term differs: {terms}")


@pytest.mark.parametrize(
    ("stored", "incoming", "kinds"),
    [
        ("Qu'est-ce qu'une DICT ?", "Combien coûte une DICT ?", "define vs cost"),
        (
            "Qu'est-ce qu'une noue d'infiltration ?",
            "Comment dimensionner une noue d'infiltration ?",
            "define vs how",
        ),
        ("Comment rédiger le CCTP de voirie ?", "Qui doit rédiger le CCTP de voirie ?", "how vs who"),
        ("What is double materiality?", "How do I run a double materiality assessment?", "define vs how"),
        ("How does JWT authentication work?", "When does a JWT expire?", "explain vs when"),
    ],
)
def test_another_kind_of_answer_rejects(stored: str, incoming: str, kinds: str) -> None:
    assert verdict(stored, incoming) == (Verdict.REJECT, f"asks for another kind of answer: {kinds}")


@pytest.mark.parametrize(
    ("stored", "incoming"),
    [
        ("Qu'est-ce que le DGD ?", "Que signifie décompte général et définitif ?"),
        ("Qu'est-ce que la GPA ?", "C'est quoi la garantie de parfait achèvement ?"),
        ("Quel est le taux de change entre l'euro et le FCFA ?", "Taux de change euro XOF ?"),
        (
            "Comment convertir une chaîne en date en Python ?",
            "How do I convert a string to a date in Python?",
        ),
        (
            "Comment réaliser un essai d'étanchéité sur un réseau ?",
            "reseau : comment faire un essai d'etancheite",
        ),
        ("What is the GIL in Python?", "What's the Global Interpreter Lock in Python?"),
        ("Qu'est-ce que la garantie décennale ?", "What is the decennial guarantee (garantie décennale)?"),
    ],
)
def test_paraphrases_pass_every_check(stored: str, incoming: str) -> None:
    comparison = compare(stored, incoming, 0.97)
    assert comparison.conflict == ""
    assert verdict(stored, incoming)[0] is Verdict.ACCEPT


def test_reason_names_what_differs_for_staff() -> None:
    result = RULES_ONLY.verify("Retenue de garantie sur 30 000 €", "Retenue de garantie sur 150 000 €", 0.99)
    assert result.to_json() == {
        "verdict": "reject",
        "reason": "numbers differ: 30 000 vs 150 000",
        "probability": 0.0,
        "cross_encoder_probability": None,
        "by": "offline",
        "reason_code": "numbers_differ",
        "reason_params": {"stored": "30 000", "incoming": "150 000"},
    }


@pytest.mark.parametrize(
    ("stored", "incoming", "words"),
    [
        ("How do you convert ethane to ethene?", "How do you convert ethene to ethane?", "ethane … ethene"),
        (
            "Mon script marche en local mais pas sur le serveur",
            "Mon script marche sur le serveur mais pas en local",
            "local … serveur",
        ),
        (
            "Comment migrer de MySQL vers PostgreSQL ?",
            "Comment migrer de PostgreSQL vers MySQL ?",
            "mysql … postgresql",
        ),
        (  # names of several words trade places as a whole
            "Should I prefer a heat pump over a gas boiler?",
            "Should I prefer a gas boiler over a heat pump?",
            "heat pump … gas boiler",
        ),
        (
            "Faut-il choisir la géothermie plutôt qu'une pompe à chaleur air-eau ?",
            "Faut-il choisir une pompe à chaleur air-eau plutôt que la géothermie ?",
            "geothermie … pompe a chaleur air-eau",
        ),
    ],
)
def test_words_that_traded_places_reject(stored: str, incoming: str, words: str) -> None:
    first, second = words.split(" … ")
    assert verdict(stored, incoming) == (
        Verdict.REJECT,
        f"word order differs: {first} … {second} vs {second} … {first}",
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Quelle est la différence entre un BPU et un DQE ?",
            "Quelle est la différence entre un DQE et un BPU ?",
        ),
        ("Difference between speed and velocity?", "Difference between velocity and speed?"),
        (
            "Différence entre une pompe à chaleur et une chaudière gaz ?",
            "Différence entre une chaudière gaz et une pompe à chaleur ?",
        ),
        # A topic put first is not a swap.
        ("Python : lire un fichier JSON", "Lire un fichier JSON en Python"),
        ("Lire un fichier JSON en Python", "Python : lire un fichier JSON"),
        ("How to read a JSON file in Python?", "Python: how to read a JSON file?"),
    ],
)
def test_order_of_words_joined_by_and_does_not_matter(a: str, b: str) -> None:
    assert compare(a, b, 0.99).conflict == ""


def test_decades_and_single_letter_names_count() -> None:
    assert verdict("Life in your forties?", "Life in your fifties?") == (
        Verdict.REJECT,
        "numbers differ: forties vs fifties",
    )
    assert verdict("Quelle est la note du lot A ?", "Quelle est la note du lot B ?") == (
        Verdict.REJECT,
        "key term differs: a vs b",
    )


def test_metres_are_not_millions() -> None:
    assert not compare_numbers("Tranchée de 10 m", "Tranchée de 10 mètres").differ
    assert not compare_numbers("Un budget de 1,5 M€", "Un budget de 1 500 000 €").differ
