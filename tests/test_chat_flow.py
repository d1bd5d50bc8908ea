"""The chat stream end to end: miss, learn, direct, assisted, tools, history, restart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from memory_guard.embeddings.hashing import HashingEmbedder
from tests.conftest import client_for, make_settings
from tests.fakes import CountingEmbedder
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply, ToolCall

QUESTION = "Quelle est la durée de la garantie de parfait achèvement pour un chantier de VRD ?"
ANSWER = "La garantie de parfait achèvement dure un an à compter de la réception des travaux."


def test_miss_streams_the_answer_and_learns_it(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text=ANSWER, usage=(120, 30)))

    reply = chat(acme, message=QUESTION)

    assert reply.status == 200
    assert reply.kinds[-1] == "done" and reply.kinds.count("done") == 1
    assert len(reply.of("text")) > 1, "the answer must arrive in pieces"
    assert reply.text == ANSWER
    done = reply.done
    assert done["decision"] == "miss"
    assert isinstance(done["learned_entry_id"], int)
    assert done["usage"] == {"prompt_tokens": 120, "completion_tokens": 30}
    sent = fresh_upstream.requests[0]
    assert sent.body["model"] == "test-model"
    assert sent.body["messages"][0]["role"] == "system"
    assert sent.body["messages"][-1] == {"role": "user", "content": QUESTION}
    assert {t["function"]["name"] for t in sent.body["tools"]} == {"search_memory", "get_company_profile"}
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert "http-referer" in sent.headers and "x-title" in sent.headers


def test_learned_answer_is_served_direct_without_upstream_call(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER, usage=(120, 30)))
    learned = chat(acme, message=QUESTION).done["learned_entry_id"]
    calls_before = fresh_upstream.calls

    # Same question, other case, accents and punctuation: the exact key matches.
    again = chat(
        acme, message="quelle est la duree de la garantie de parfait achevement pour un chantier de VRD"
    )

    assert fresh_upstream.calls == calls_before, "a direct answer must not call the LLM"
    assert again.kinds == ["cached_response", "done"]
    cached = again.of("cached_response")[0]
    assert cached["answer"] == ANSWER
    assert cached["entry_id"] == learned
    assert cached["matched_question"] == QUESTION
    assert cached["score"] == 1.0
    assert cached["status"] == "auto"
    assert again.done["decision"] == "direct"
    assert again.done["learned_entry_id"] is None

    entry = acme_staff.get(f"/staff/memory/{learned}").json()
    assert entry["usage_count"] == 2
    stats = acme_staff.get("/staff/memory/stats").json()
    assert stats["lookups"]["direct"] == 1
    assert stats["llm_calls_avoided"] == 1
    assert stats["tokens_saved"] == 150


def test_assisted_answer_carries_the_close_matches(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(memory_similarity_threshold=0.5, memory_direct_threshold=0.99)
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        entry = staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).json()
        fresh_upstream.push(Reply(text="Un an, à compter de la réception."))

        reply = chat(acme, message="Quelle est la durée de la garantie de parfait achèvement d'un chantier ?")

        assert reply.kinds[0] == "memory_context"
        matches = reply.of("memory_context")[0]["entries"]
        assert matches[0]["entry_id"] == entry["id"]
        assert 0.5 <= matches[0]["score"] < 0.99
        assert reply.done["decision"] == "assisted"
        system_prompt = fresh_upstream.requests[-1].body["messages"][0]["content"]
        assert ANSWER in system_prompt, "the close match must be given to the LLM as grounding"
        assert staff.get(f"/staff/memory/{entry['id']}").json()["usage_count"] == 1


def test_tool_calls_run_skills_and_stream_their_events(
    acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(
        Reply(
            tool_calls=[ToolCall("get_company_profile", {}), ToolCall("search_memory", {"query": "garantie"})]
        ),
        Reply(text="Votre entreprise est éligible."),
    )
    profile = {"nom": "Sahel Agro", "pays": "Sénégal", "secteur": "agro-industrie"}

    reply = chat(acme, message="Quels financements verts pour une PME agricole ?", entreprise=profile)

    assert reply.kinds[:5] == ["status", "skill_start", "skill_result", "skill_start", "skill_result"]
    starts = reply.of("skill_start")
    assert starts[0] == {"type": "skill_start", "skill": "get_company_profile", "params": {}}
    assert starts[1]["params"] == {"query": "garantie"}
    assert "Sahel Agro" in reply.of("skill_result")[0]["result_preview"]
    assert all(len(r["result_preview"]) <= 200 for r in reply.of("skill_result"))
    assert reply.text == "Votre entreprise est éligible."
    # The answer was built on the company's own profile: it must not be learned for everyone.
    assert reply.done["learned_entry_id"] is None
    second_turn = fresh_upstream.requests[1].body["messages"]
    tool_messages = [m for m in second_turn if m["role"] == "tool"]
    assert len(tool_messages) == 2
    assert "Sahel Agro" in tool_messages[0]["content"]
    assert second_turn[-3]["tool_calls"][0]["function"]["name"] == "get_company_profile"


def test_history_is_recorded_and_sent_back(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text=ANSWER), Reply(text="Elle court à partir de la réception."))
    first = chat(acme, message=QUESTION)
    conversation = first.done["conversation_id"]

    second = chat(acme, f"/chat/{conversation}/message", message="Et à partir de quand court-elle ?")

    assert second.done["conversation_id"] == conversation
    items = acme.get(f"/chat/{conversation}/messages").json()["items"]
    assert [(m["role"], m["type"]) for m in items] == [
        ("user", "user_request"),
        ("assistant", "response"),
        ("user", "follow_up"),
        ("assistant", "response"),
    ]
    assert items[1]["content"] == ANSWER
    assert second.done["message_id"] == items[3]["id"]
    sent = fresh_upstream.requests[1].body["messages"]
    assert sent[1:] == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": "Et à partir de quand court-elle ?"},
    ]
    # A follow-up that leans on the conversation is not learned.
    assert second.done["learned_entry_id"] is None


def test_direct_answer_is_recorded_as_cached_response(
    acme: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER))
    chat(acme, message=QUESTION)
    again = chat(acme, message=QUESTION)
    items = acme.get(f"/chat/{again.done['conversation_id']}/messages").json()["items"]
    assert [(m["role"], m["type"], m["content"]) for m in items] == [
        ("user", "user_request", QUESTION),
        ("assistant", "cached_response", ANSWER),
    ]


def test_history_and_memory_survive_a_restart(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    # The checks decide the paraphrase below (the cross-encoder's verdicts: test_cross_encoder_verifier.py).
    live = app_factory(memory_cross_encoder="off")
    fresh_upstream.push(Reply(text=ANSWER))
    with client_for(live, "ka") as acme:
        first = chat(acme, message=QUESTION)
    live.restart()
    calls = fresh_upstream.calls
    with client_for(live, "ka") as acme:
        items = acme.get(f"/chat/{first.done['conversation_id']}/messages").json()["items"]
        assert [m["content"] for m in items] == [QUESTION, ANSWER]
        again = chat(acme, message=QUESTION + " ")
        # The index is rebuilt from the store: a paraphrase-free repeat is still a direct hit.
        similar = chat(acme, message=QUESTION.replace("VRD", "voirie"))
    assert again.done["decision"] == "direct"
    # Scored 0.96 by the rebuilt index, no difference found by the checks: served, no LLM call.
    assert similar.kinds == ["cached_response", "done"]
    assert similar.done["decision"] == "direct"
    served = similar.of("cached_response")[0]
    assert (served["entry_id"], served["answer"]) == (first.done["learned_entry_id"], ANSWER)
    assert served["score"] < 1.0, "served through the index, not the exact key"
    assert fresh_upstream.calls == calls


def test_exact_match_makes_no_embedding_call(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    embedder = CountingEmbedder(HashingEmbedder())
    live = LiveApp(make_settings(tmp_path, fresh_upstream), embedder=embedder).start()
    try:
        with client_for(live, "sa") as staff, client_for(live, "ka") as acme:
            staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
            before = len(embedder.texts)
            reply = chat(acme, message=QUESTION.upper())
            assert reply.done["decision"] == "direct"
            assert len(embedder.texts) == before, "an exact normalized match needs no embedding"
            chat(acme, message="Quelle est la durée de la garantie décennale ?")
            assert embedder.texts[before:] == ["Quelle est la durée de la garantie décennale ?"]
    finally:
        live.stop()


def test_long_conversation_sends_recent_messages_and_a_summary(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(history_messages=2)
    with client_for(live, "ka") as acme:
        fresh_upstream.push(*(Reply(text=f"Réponse {n}.") for n in range(4)))
        conversation = chat(acme, message="Première question sur le lot 1 ?").done["conversation_id"]
        for n in range(1, 4):
            chat(acme, f"/chat/{conversation}/message", message=f"Question numéro {n} sur le lot {n + 1} ?")
    sent = fresh_upstream.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "Question numéro 2 sur le lot 3 ?"
    assert "Résumé des échanges plus anciens" in sent[0]["content"]
    assert "Première question sur le lot 1" in sent[0]["content"]
    assert "Réponse 1." in sent[0]["content"]


def test_concurrent_runs_of_one_new_question_learn_it_once(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    fresh_upstream.push(*(Reply(text=ANSWER, chunk_delay_s=0.02) for _ in range(6)))
    with ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(lambda _: chat(acme, message=QUESTION), range(6)))
    learned = {r.done["learned_entry_id"] for r in replies}
    assert len(learned - {None}) == 1
    assert len(acme_staff.get("/staff/memory").json()["items"]) == 1


def test_an_expired_auto_entry_is_renewed_not_duplicated(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    import time

    live = app_factory(memory_max_age_days=0.00001, memory_auto_prune=False)
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        fresh_upstream.push(Reply(text="Ancienne réponse."), Reply(text=ANSWER))
        first = chat(acme, message=QUESTION).done["learned_entry_id"]
        time.sleep(1.1)
        again = chat(acme, message=QUESTION)
        assert again.done["decision"] == "miss"
        assert again.done["learned_entry_id"] == first
        assert staff.get(f"/staff/memory/{first}").json()["answer"] == ANSWER


def test_text_reaches_the_client_while_the_upstream_is_still_streaming(
    live: LiveApp, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=" ".join(["mot"] * 30), chunk_delay_s=0.05))
    with client_for(live, "ka") as acme, acme.stream("POST", "/chat", json={"message": QUESTION}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.iter_lines()
        for line in lines:
            if line.startswith("event: text"):
                # Not buffered until the end: the upstream has not finished its answer yet.
                assert not fresh_upstream.requests[0].completed
                break
        else:
            raise AssertionError("no text event")
        rest = list(lines)
    assert any(line.startswith("event: done") for line in rest)
    assert fresh_upstream.requests[0].completed
