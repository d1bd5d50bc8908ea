"""What a completed answer does to memory, seen from the chat stream and the staff API.

Two rules that the unit tests of the policy cannot hold on their own: the chat run must ask
whether the answer names the asking company (the profile sits in the system prompt, so an
answer can be tailored to it without any skill being called), and learning must leave a
validated entry as staff wrote it, even when the client asks for a refresh.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import httpx
import pytest

from memory_guard.chat.learning_policy import mentions_profile
from memory_guard.embeddings.hashing import HashingEmbedder
from tests.conftest import client_for, make_settings
from tests.fakes import CountingEmbedder, UnreachableEmbedder
from tests.server import ChatReply, LiveApp, chat
from tests.upstream import FakeUpstream, Reply

PROFILE = {"nom": "Sahel Agro SARL", "pays": "Sénégal", "profil": {"ville": "Thiès", "effectifs": 42}}
QUESTION = "Quel fonds finance la transformation agricole en Afrique de l'Ouest ?"
TAILORED = "Pour Sahel Agro SARL, le fonds Vert Sahel convient : il finance les PME de Thiès."
GENERAL = "Le fonds Vert Sahel finance la transformation agricole des PME d'Afrique de l'Ouest."


def _not_learned_because(client: httpx.Client, reply: ChatReply) -> str:
    """Why the answer of `reply` was not learned, as the feedback route tells the client."""
    done = reply.done
    url = f"/chat/{done['conversation_id']}/messages/{done['message_id']}/feedback"
    refused = client.post(url, json={"validated": True})
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "nothing_learned"
    message: str = error["message"]
    return message.removeprefix("nothing was learned from this answer (reason: ").removesuffix(")")


def test_an_answer_naming_the_asking_company_is_not_learned(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=TAILORED), Reply(text=GENERAL))

    tailored = chat(acme, message=QUESTION, entreprise=PROFILE)

    assert tailored.text == TAILORED
    assert not tailored.of("skill_start"), "no company skill ran: the profile came through the prompt"
    assert tailored.done["decision"] == "miss"
    assert tailored.done["learned_entry_id"] is None
    assert _not_learned_because(acme, tailored) == "company_specific"
    assert acme_staff.get("/staff/memory").json()["items"] == []

    # The same question from another company is not served that answer: it goes to the LLM, and
    # its general answer is learned although the asker sent a profile too.
    general = chat(acme, message=QUESTION, entreprise={"nom": "Globex Mali"})

    assert general.done["decision"] == "miss"
    assert general.text == GENERAL
    learned = general.done["learned_entry_id"]
    assert isinstance(learned, int)
    assert [e["answer"] for e in acme_staff.get("/staff/memory").json()["items"]] == [GENERAL]
    assert fresh_upstream.calls == 2


def test_a_refresh_leaves_a_validated_entry_as_staff_wrote_it(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    created = acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": GENERAL})
    assert created.status_code == 201, created.text
    entry = created.json()
    fresh_upstream.push(Reply(text="Une autre réponse, venue du LLM."))

    refreshed = chat(acme, message=QUESTION, cache="refresh")

    assert refreshed.done["decision"] == "miss"
    assert refreshed.text == "Une autre réponse, venue du LLM."
    assert refreshed.done["learned_entry_id"] is None
    assert _not_learned_because(acme, refreshed) == "validated_entry_exists"
    assert acme_staff.get(f"/staff/memory/{entry['id']}").json() == entry
    assert [e["id"] for e in acme_staff.get("/staff/memory").json()["items"]] == [entry["id"]]
    history = acme_staff.get(f"/staff/memory/{entry['id']}/history").json()["items"]
    assert [h["action"] for h in history] == ["create"]

    served = chat(acme, message=QUESTION)

    assert served.kinds == ["cached_response", "done"]
    assert served.of("cached_response")[0]["answer"] == GENERAL
    assert served.of("cached_response")[0]["entry_id"] == entry["id"]
    assert fresh_upstream.calls == 1


def test_a_refresh_leaves_an_answer_staff_validated_as_it_is(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=GENERAL), Reply(text="Une autre réponse, venue du LLM."))
    learned = chat(acme, message=QUESTION).done["learned_entry_id"]
    validated = acme_staff.patch(f"/staff/memory/{learned}", json={"status": "validated"})
    assert validated.status_code == 200, validated.text

    refreshed = chat(acme, message=QUESTION, cache="refresh")

    assert refreshed.done["learned_entry_id"] is None
    assert _not_learned_because(acme, refreshed) == "validated_entry_exists"
    assert acme_staff.get(f"/staff/memory/{learned}").json() == validated.json()
    assert [e["id"] for e in acme_staff.get("/staff/memory").json()["items"]] == [learned]


def test_a_learned_miss_embeds_its_question_once_and_a_bypass_nothing(
    tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    embedder = CountingEmbedder(HashingEmbedder())
    fresh_upstream.push(Reply(text=GENERAL), Reply(text="Sans mémoire."))
    with (
        LiveApp(make_settings(tmp_path, fresh_upstream), embedder=embedder) as live,
        client_for(live, "ka") as acme,
    ):
        learned = chat(acme, message=QUESTION)
        assert isinstance(learned.done["learned_entry_id"], int)
        # The lookup's vector is the one stored: learning asks the embedder nothing more.
        assert embedder.texts == [QUESTION]

        bypass = chat(acme, message="Quel fonds finance le maraîchage ?", cache="bypass")
        assert bypass.done["learned_entry_id"] is None
        assert embedder.texts == [QUESTION], "a bypass neither looks up nor learns"


# -- which profile values make an answer company-specific -----------------------------------------


@pytest.mark.parametrize(
    ("answer", "specific"),
    [
        ("Le fonds couvre aussi Kaolack.", True),  # a value inside a list of the profile
        ("Les entreprises du Togo y ont droit.", True),  # four characters: long enough to count
        ("Le BTP en est exclu.", False),  # three: too short, it would match common words
        ("None of these funds applies here.", False),  # an empty value names nothing
        ("Oui, toutes les PME y ont droit.", False),  # a yes/no field is not a name
    ],
)
def test_profile_values_that_name_the_company(answer: str, specific: bool) -> None:
    profile = {
        "nom": "Sahel Agro SARL",
        "sites": ["Kaolack", {"ville": "Ziguinchor"}],
        "pays": "Togo",
        "secteur": "BTP",
        "site_web": None,
        "exportatrice": True,
    }
    assert mentions_profile(answer, profile) is specific


def test_an_answer_given_while_the_embeddings_are_down_says_why_it_was_not_learned(
    tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=GENERAL))
    settings = make_settings(tmp_path, fresh_upstream)
    with LiveApp(settings, embedder=UnreachableEmbedder()) as live, client_for(live, "ka") as acme:
        reply = chat(acme, message=QUESTION)
        assert (reply.text, reply.done["learned_entry_id"]) == (GENERAL, None)
        assert _not_learned_because(acme, reply) == "embedding_unavailable"


def test_the_question_keeps_the_time_it_came_in_before_its_answer(
    acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=GENERAL))
    done = chat(acme, message=QUESTION).done
    question, answer = acme.get(f"/chat/{done['conversation_id']}/messages").json()["items"]
    assert (question["role"], answer["role"]) == ("user", "assistant")
    # Received before the LLM was asked, written with its answer: its own time, not the write's.
    assert datetime.fromisoformat(question["created_at"]) < datetime.fromisoformat(answer["created_at"])
