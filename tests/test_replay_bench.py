"""bench/replay.py: its question stream, its scripted upstream (over real HTTP, read by the openai
SDK as the service reads it) and one quick run through the real service."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.replay import arms_of, replay
from bench.replay_stream import Stream, build_stream
from bench.replay_upstream import Script, ScriptedUpstream, need_in
from openai import OpenAI
from training.make_pairs import split_templates
from training.splits import half_of

from memory_guard.agent.profiles import AgentDirectory
from memory_guard.agent.prompt import Grounding, build_system_prompt
from memory_guard.core.normalize import normalize_question

# ----------------------------------------------------------------------------------- the stream


def eval_pair(stem: str, other: str, start: int = 0) -> tuple[str, str]:
    """Two questions on `stem` and `other` whose pair falls in QQP's eval half."""
    for n in range(start, start + 200):
        a, b = f"How do I {stem} number {n}?", f"What is the way to {other} number {n}?"
        if half_of(a, b) == "eval":
            return a, b
    raise AssertionError("no eval pair found")


def write_qqp(folder: Path) -> dict[str, list[str]]:
    """A small QQP file: three duplicate components of the eval half, a non-duplicate pair on
    one of them, and a train-half duplicate pair that must never be used."""
    rows, components = [], {}
    for name in ("learn chess", "bake bread", "fix a bike"):
        a, b = eval_pair(name, name)
        c = f"{a[:-1]} quickly?"
        while half_of(b, c) != "eval":
            c = c[:-1] + " quickly?"
        rows += [{"a": a, "b": b, "same": True}, {"a": b, "b": c, "same": True}]
        components[name] = [a, b, c]
    first = components["learn chess"][0]
    near = next(
        f"How do I learn checkers {n}?"
        for n in range(500)
        if half_of(first, f"How do I learn checkers {n}?") == "eval"
    )
    rows.append({"a": first, "b": near, "same": False})
    train = next(
        (f"Who wrote book {n}?", f"Who is the author of book {n}?")
        for n in range(500)
        if half_of(f"Who wrote book {n}?", f"Who is the author of book {n}?") == "train"
    )
    rows.append({"a": train[0], "b": train[1], "same": True})
    components["near"], components["train"] = [near], list(train)
    with gzip.open(folder / "qqp_pairs.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return components


def test_stream_size_order_and_near_misses() -> None:
    stream = build_stream(300, seed=3, data_dir=None)
    questions = stream.questions
    assert 250 <= len(questions) <= 400
    assert [q.index for q in questions] == list(range(len(questions)))
    first_at: dict[int, int] = {}
    for q in questions:
        assert q.first == (q.need not in first_at)
        if q.first:  # a need is first asked in its first wording, the others come later
            assert q.text == stream.needs[q.need].wordings[0]
        first_at.setdefault(q.need, q.index)
    assert set(first_at) == set(stream.needs)
    traps = [need for need in stream.needs.values() if need.trap]
    assert traps
    for need in traps:  # a near miss made as one is asked after a need it is near to
        assert first_at[need.id] > min(first_at[n] for n in need.near)
    assert sum(not q.first for q in questions) > len(questions) / 2  # needs come back
    near = [q for q in questions if q.near_miss]
    assert len(near) >= 10
    for q in near:  # a near miss follows a need it is near to, which has another answer
        assert q.first
        assert any(first_at[n] < q.index for n in stream.needs[q.need].near)
        assert stream.needs[q.need].answer != stream.needs[stream.needs[q.need].near[0]].answer
    keys = [normalize_question(q.text) for q in questions]
    assert len(set(keys)) == len(keys)  # always new words, never the same ones
    for need in stream.needs.values():
        assert need_in(need.answer) == need.id


def test_stream_uses_held_out_templates_only() -> None:
    split = split_templates(13)
    stream = build_stream(2000, seed=3, data_dir=None)
    templates = {need.label.split("[")[0] for need in stream.needs.values()}
    assert templates
    assert all(split[t] == "heldout" for t in templates), templates
    assert len(templates) == sum(s == "heldout" for s in split.values())  # room for all of them


def test_stream_is_seeded() -> None:
    def texts(stream: Stream) -> list[tuple[str, int]]:
        return [(q.text, q.need) for q in stream.questions]

    assert texts(build_stream(300, 5, None)) == texts(build_stream(300, 5, None))
    assert texts(build_stream(300, 5, None)) != texts(build_stream(300, 6, None))


def test_stream_takes_qqp_components_of_the_eval_half(tmp_path: Path) -> None:
    components = write_qqp(tmp_path)
    stream = build_stream(400, seed=1, data_dir=tmp_path)
    by_text = stream.need_of()
    for name in ("learn chess", "bake bread", "fix a bike"):
        needs = {by_text[text] for text in components[name]}
        assert len(needs) == 1, name  # one component, one need
    assert not set(components["train"]) & set(by_text)
    near_need = stream.needs[by_text[components["near"][0]]]
    assert near_need.near == [by_text[components["learn chess"][0]]]
    assert next(q for q in stream.questions if q.need == near_need.id).near_miss


# ------------------------------------------------------------------------- the scripted upstream

WORDINGS = {
    "Quelle est la durée de la GPA ?": 1,
    "How long does the GPA last?": 1,
    "Quelle est la durée de la garantie décennale ?": 2,
    "Qui signe le PV de réception ?": 3,
}
ANSWERS = {1: "[need 1] Un an.", 2: "[need 2] Dix ans.", 3: "[need 3] Le maître d'ouvrage."}
TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "use_memory_answer",
        "description": "Serve a stored answer as it stands.",
        "parameters": {
            "type": "object",
            "properties": {"entry_id": {"type": "integer"}},
            "required": ["entry_id"],
        },
    },
}


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    server = ScriptedUpstream(Script(dict(WORDINGS), dict(ANSWERS), seed=11)).start()
    try:
        yield server
    finally:
        server.stop()


def system_with(*needs: int, ids: tuple[int, ...] = ()) -> str:
    """The service's own system prompt with the answers of `needs` as grounding; with `ids`, each
    block names its entry (built by the service itself when its Grounding carries the id)."""
    names = {f.name for f in dataclasses.fields(Grounding)}
    grounding = []
    for n, entry_id in zip(needs, ids or [0] * len(needs), strict=True):
        values: dict[str, Any] = {"question": f"question of need {n}", "answer": ANSWERS[n], "score": 0.9}
        if "entry_id" in names:
            values["entry_id"] = entry_id
        grounding.append(Grounding(**values))
    system = build_system_prompt(AgentDirectory().resolve(None), None, [], grounding)
    if ids and "entry_id" not in names:
        for entry_id in ids:
            system = system.replace("### Question proche", f"### Entrée {entry_id} : question proche", 1)
    if not ids:  # no id at all in the prompt
        system = re.sub(r"Entrée \d+ : ", "", system)
    return system


def complete(
    server: ScriptedUpstream, question: str, system: str, tools: list[Any] | None = None
) -> dict[str, Any]:
    """One streamed completion read with the openai SDK: its text, tool calls, finish and usage."""
    client = OpenAI(base_url=server.base_url("arm"), api_key="sk-test", max_retries=0)
    extra: dict[str, Any] = {"tools": tools} if tools else {}
    stream = client.chat.completions.create(
        model="scripted",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
        stream=True,
        stream_options={"include_usage": True},
        **extra,
    )
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish, usage = None, None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                entry["name"] += call.function.name or "" if call.function else ""
                entry["arguments"] += call.function.arguments or "" if call.function else ""
            finish = choice.finish_reason or finish
    return {"text": "".join(text), "calls": list(calls.values()), "finish": finish, "usage": usage}


def test_upstream_answers_a_miss_with_the_needs_answer(upstream: ScriptedUpstream) -> None:
    reply = complete(upstream, "Quelle est la durée de la garantie décennale ?", system_with())
    assert reply["text"] == ANSWERS[2]
    assert reply["finish"] == "stop"
    state = upstream.arms["arm"]
    assert reply["usage"].prompt_tokens > 0
    assert state.tokens == reply["usage"].prompt_tokens + reply["usage"].completion_tokens
    assert state.kinds == {"fresh": 1}


def test_upstream_reuses_the_right_grounding_answer(upstream: ScriptedUpstream) -> None:
    script = upstream.script
    question = next(
        q for q, n in WORDINGS.items() if n == 1 and not script.errs("reuse", q, script.error_rate)
    )
    reply = complete(upstream, question, system_with(3, 1, 2))
    assert reply["text"] == ANSWERS[1]
    assert upstream.arms["arm"].last[question].kind == "reuse_right"


def test_upstream_picks_a_wrong_entry_five_percent_of_the_time() -> None:
    script = Script({f"q{i}": 1 for i in range(4000)}, dict(ANSWERS), seed=11)
    erring = [q for q in script.need_of if script.errs("reuse", q, script.error_rate)]
    assert 0.04 <= len(erring) / 4000 <= 0.06
    server = ScriptedUpstream(Script({**WORDINGS, erring[0]: 1, "q0": 1}, dict(ANSWERS), seed=11)).start()
    try:
        wrong = complete(server, erring[0], system_with(2, 1))
        assert need_in(wrong["text"]) == 2
        assert server.arms["arm"].last[erring[0]].kind == "reuse_wrong"
        alone = complete(server, erring[0] + " ", system_with(1))  # no wrong entry given: no wrong reuse
        assert need_in(alone["text"]) == 1
    finally:
        server.stop()


def test_upstream_calls_the_tool_when_it_is_offered(upstream: ScriptedUpstream) -> None:
    script = upstream.script
    question = next(
        q for q, n in WORDINGS.items() if n == 1 and not script.errs("reuse", q, script.error_rate)
    )
    reply = complete(upstream, question, system_with(2, 1, ids=(41, 42)), tools=[TOOL])
    assert reply["finish"] == "tool_calls"
    assert reply["text"] == ""
    assert reply["calls"] == [{"name": "use_memory_answer", "arguments": json.dumps({"entry_id": 42})}]
    # Without an id in the prompt, the id of an entry learned with that answer.
    upstream.arms["arm"].entries[ANSWERS[1]] = 7
    again = complete(upstream, "How long does the GPA last?", system_with(1), tools=[TOOL])
    assert json.loads(again["calls"][0]["arguments"]) == {"entry_id": 7}
    # The tool not offered: the answer is written out.
    plain = complete(
        upstream,
        "How long does the GPA last?",
        system_with(1),
        tools=[{**TOOL, "function": {**TOOL["function"], "name": "search_memory"}}],
    )
    assert plain["text"] == ANSWERS[1] and not plain["calls"]


def test_upstream_judges_by_need(upstream: ScriptedUpstream) -> None:
    script = upstream.script
    expected = []
    for question, need in WORDINGS.items():
        for stored in ANSWERS:
            user = f"Stored question: q\nStored answer: {ANSWERS[stored]}\nNew question: {question}"
            reply = complete(upstream, user, "You decide whether a stored answer can be served.")["text"]
            flipped = script.errs("judge", f"{question}\x1f{ANSWERS[stored][:40]}", script.judge_error)
            expected.append("YES" if (stored == need) != flipped else "NO")
            assert reply.split(":")[0] == expected[-1], (question, stored, flipped)
    assert {"YES", "NO"} <= set(expected)
    assert [a.kind for a in upstream.arms["arm"].judged] == [f"judge_{e.lower()}" for e in expected]
    flips = sum(script.errs("judge", f"q{i}", script.judge_error) for i in range(4000))
    assert 0.04 <= flips / 4000 <= 0.06


# ------------------------------------------------------------------------------- one quick run


def test_quick_run_through_the_service() -> None:
    stream = build_stream(150, seed=2, data_dir=None)
    answers = {need.id: need.answer for need in stream.needs.values()}
    script = Script(stream.need_of(), answers, seed=2)
    memory, bypass = replay(
        stream, arms_of(["memory-guard", "no-memory"], {}), script, {"EMBEDDING_PROVIDER": "local"}
    )
    assert len(memory.outcomes) == len(bypass.outcomes) == len(stream.questions)
    assert {o.decision for o in bypass.outcomes} == {"miss"}
    assert all(o.tokens > 0 and not o.from_memory for o in bypass.outcomes)
    assert {o.decision for o in memory.outcomes} <= {"direct", "assisted", "miss"}
    seen = [o for q, o in zip(stream.questions, memory.outcomes, strict=True) if not q.first]
    assert sum(o.decision == "direct" for o in seen) >= len(seen) / 5
    asked: set[str] = set()
    for question, outcome in zip(stream.questions, memory.outcomes, strict=True):
        if outcome.decision == "direct":
            assert outcome.tokens == 0 or "judge" in outcome.action
            assert outcome.matched in asked  # memory holds only what earlier questions taught it
            if question.first:  # nothing of its need was stored yet: served direct means wrong
                assert outcome.wrong(question)
        asked.add(question.text)
