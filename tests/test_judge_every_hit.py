"""The judge on every hit (MEMORY_JUDGE_READS=every_hit) through the real app: its no on the best
candidate leaves the next ones to their own verdicts, never to their score alone."""

from __future__ import annotations

from pathlib import Path

from tests.server import chat
from tests.test_judge_auto import ANSWER, NEAR, QUESTION, served
from tests.upstream import FakeUpstream, Reply

OTHER_ANSWER = "Autre réponse : la garantie biennale court deux ans."
# Scored 0.954 against NEAR[0] by the test embedder, QUESTION 0.968: both above the direct threshold.
SECOND = "Quelle est la durée de la garantie de parfait achèvement d'un chantier de VRD ?"


def test_a_judges_no_on_the_best_candidate_does_not_serve_the_next_on_its_score(
    tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="NO, another need"), Reply(text="NO, another need"), Reply(text="Un an."))
    with served(tmp_path, fresh_upstream, unsure=False, memory_judge="auto") as (_, client, staff):
        staff.post("/staff/memory", json={"question": SECOND, "answer": OTHER_ANSWER}).raise_for_status()
        lookup = staff.post("/staff/memory/lookup", json={"question": NEAR[0]}).json()
        assert [c["score"] >= 0.95 for c in lookup["candidates"][:2]] == [True, True]

        reply = chat(client, message=NEAR[0])

        assert reply.done["decision"] == "miss"
        assert reply.text == "Un an."
        judged = [r for r in fresh_upstream.requests if r.body["model"] == "judge-model"]
        assert len(judged) == 2  # each candidate judged, neither served on its score
        assert [c["matched_question"] for c in lookup["candidates"][:2]] == [QUESTION, SECOND]
        assert ANSWER not in str(fresh_upstream.requests[-1].body)
