"""Normalization, the learning policy, follow-ups, company-specific answers and history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_guard.agent.history import build_history
from memory_guard.chat.learning_policy import CacheMode, Outcome, mentions_profile, skip_reason
from memory_guard.conversations.store import Message
from memory_guard.core.normalize import embedding_text, key_hash, normalize_question
from memory_guard.memory.standalone import stands_alone


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Quelle est la garantie décennale ?", "quelle est la garantie decennale"),
        ("What is ESG?", "  what   is esg ?  "),
        ("Qu’est-ce qu'un DOE ?", "Qu'est-ce qu'un DOE"),
    ],
)
def test_same_question_same_key(a: str, b: str) -> None:
    assert key_hash("t", "a", "", "", a) == key_hash("t", "a", "", "", b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("difference between # and ## in python?", "difference between ( and ) in python?"),
        ("what is = and == ?", "what is == and = ?"),
        ("un taux de 1.5 %", "un taux de 15 %"),
        ("garantie de 30 000 FCFA", "garantie de 150 000 FCFA"),
    ],
)
def test_symbols_and_numbers_stay_in_the_key(a: str, b: str) -> None:
    assert normalize_question(a) != normalize_question(b)


@pytest.mark.parametrize(
    ("asked", "embedded"),
    [
        ("Quels documents pour la réception svp ?", "Quels documents pour la réception ?"),
        ("Bonjour, quelle garantie pour un pont ?", "quelle garantie pour un pont ?"),
        ("What is the GIL, please?", "What is the GIL?"),
        ("Quelle est la durée de la GPA ? Merci d'avance !", "Quelle est la durée de la GPA ?"),
        ("Comment faire un merge stp merci ?", "Comment faire un merge ?"),
        ("Is please a keyword in Python?", "Is please a keyword in Python?"),
        ("Merci", "Merci"),
        ("Petite question : quel délai pour la GPA ?", "quel délai pour la GPA ?"),
        ("Bonjour, petite question : quel délai ?", "quel délai ?"),
        ("Quick question: what is the GIL?", "what is the GIL?"),
        ("Excusez-moi, où est le PV de réception ?", "où est le PV de réception ?"),
        # Not a lead-in: no comma or colon closes it, or it leans on the conversation.
        ("Dites-moi si la GPA couvre les fissures ?", "Dites-moi si la GPA couvre les fissures ?"),
        ("Et, pour le Sénégal ?", "Et, pour le Sénégal ?"),
        ("Questionnaire : qui le remplit ?", "Questionnaire : qui le remplit ?"),
    ],
)
def test_greetings_and_politeness_are_not_embedded(asked: str, embedded: str) -> None:
    assert embedding_text(asked) == embedded


def test_scope_is_part_of_the_key() -> None:
    assert key_hash("t1", "a", "", "", "q") != key_hash("t2", "a", "", "", "q")
    assert key_hash("t", "a", "p", "", "q") != key_hash("t", "a", "", "p", "q")


def _outcome(**changes: object) -> Outcome:
    values: dict[str, object] = {
        "answer": "Une réponse complète.",
        "truncated": False,
        "cache": CacheMode.USE,
        "standalone": True,
        "company_specific": False,
    }
    values.update(changes)
    return Outcome(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({}, None),
        ({"cache": CacheMode.REFRESH}, None),
        ({"cache": CacheMode.BYPASS}, "cache_bypass"),
        ({"cache": CacheMode.NO_STORE}, "cache_no_store"),
        ({"answer": "  "}, "empty_answer"),
        ({"answer": "<NON VALIDE> désolé"}, "marked_invalid"),
        ({"truncated": True}, "truncated"),
        ({"standalone": False}, "follow_up_not_standalone"),
        ({"company_specific": True}, "company_specific"),
    ],
)
def test_learning_policy(changes: dict[str, object], reason: str | None) -> None:
    assert skip_reason(_outcome(**changes)) == reason


@pytest.mark.parametrize(
    "message",
    [
        "Et pour le Sénégal ?",
        "What about the second one?",
        "Pareil pour la phase DCE",
        "Peux-tu détailler cela ?",
        "Why is that?",
        "ok merci",
    ],
)
def test_follow_ups_that_lean_on_context(message: str) -> None:
    assert not stands_alone(message)


@pytest.mark.parametrize(
    "message",
    [
        "Quelle est la durée de la garantie de parfait achèvement ?",
        "How is the carbon footprint of an SME computed under the GHG protocol?",
    ],
)
def test_follow_ups_that_stand_alone(message: str) -> None:
    assert stands_alone(message)


def test_answer_naming_the_company_is_company_specific() -> None:
    profile = {"nom": "Sahel Agro SARL", "pays": "Sénégal", "effectifs": 42, "profil": {"ville": "Thiès"}}
    assert mentions_profile("Pour Sahel Agro SARL, le fonds X convient.", profile)
    assert mentions_profile("Les PME de Thiès peuvent candidater.", profile)
    assert not mentions_profile("Le fonds X finance les PME agricoles d'Afrique de l'Ouest.", profile)
    assert not mentions_profile("Toute réponse.", None)


def _message(i: int, role: str, content: str) -> Message:
    return Message(i, "c", role, "response", content, datetime(2026, 1, 1, tzinfo=UTC))


def test_history_keeps_recent_verbatim_and_summarizes_older() -> None:
    messages = [
        _message(i, "user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 300) for i in range(30)
    ]
    history = build_history(messages, keep=20)
    assert len(history.recent) == 20
    assert history.recent[0]["content"] == messages[10].content
    assert history.summary is not None
    assert history.summary.count("\n") == 9
    assert "message 0" in history.summary and "message 9" in history.summary
    assert build_history(messages[:5], keep=20).summary is None
