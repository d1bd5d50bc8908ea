"""The LLM judge: a cheap model asked whether a stored answer serves a new question.

Only the candidates the offline verifier is unsure of reach it (`judge_switch.py` says when it
runs). Its verdicts are cached per (entry text, normalized question), so each pair costs one call
at most; an edited entry has another key and is judged anew. A reply that is not a clear YES or
NO, or a failed call, gives no verdict: the candidate stays unsure and is never served on it.
Every call is counted, verdict or not, with the tokens and the cost its upstream reported.
"""

from __future__ import annotations

import hashlib
import logging
import re

from memory_guard.core.clock import Clock
from memory_guard.core.errors import UpstreamError
from memory_guard.core.normalize import normalize_question
from memory_guard.core.verdict import Verdict, Verification
from memory_guard.upstream.llm import ANSWER_CAP, ChatMessage, ChatModel, TextDelta, TurnEnd
from memory_guard.upstream.redaction import Redactor
from memory_guard.verify.judge import JudgeCall, Judgement, JudgementStore, JudgeOutcome, StoredAnswer

logger = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 1500
MAX_REASON_CHARS = 120
# The most a judge's reply may stream: a verdict is a word and a dozen more. The judge's client
# also ends its whole turn by MEMORY_JUDGE_TIMEOUT_S, so a reply without end costs no more.
JUDGE_MAX_ANSWER_CHARS = 1000
# Completion budget of one verdict: YES or NO and a reason of a dozen words.
JUDGE_MAX_TOKENS = 16

SYSTEM_PROMPT = (
    "You decide whether a stored answer can be served unchanged for a new question. "
    "Different numbers, entities, negation, scope or kind of question mean NO. "
    'Reply exactly "YES" or "NO", then a reason of at most 12 words.'
)

_redact = Redactor()

# "YES", "Yes: same question", "NO - another year"; not "NOT SURE" nor "Yesterday".
_VERDICT = re.compile(r"^\s*(yes|no)\b[\s:.,;!\-–—]*(.*)$", re.IGNORECASE | re.DOTALL)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_key(stored: StoredAnswer) -> str:
    return _sha256(f"{stored.question}\x1f{stored.answer}")


def question_key(question: str) -> str:
    return _sha256(normalize_question(question))


def prompt(stored: StoredAnswer, question: str) -> list[ChatMessage]:
    user = (
        f"Stored question: {stored.question}\n"
        f"Stored answer: {stored.answer[:MAX_ANSWER_CHARS]}\n"
        f"New question: {question}"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse(text: str) -> tuple[bool, str] | None:
    """(serves, reason) from the judge's reply, or None when it is neither YES nor NO."""
    match = _VERDICT.match(text)
    if match is None:
        return None
    reason = " ".join(match.group(2).split())[:MAX_REASON_CHARS]
    return match.group(1).lower() == "yes", reason


def verification_of(judgement: Judgement) -> Verification:
    verdict = Verdict.ACCEPT if judgement.serves else Verdict.REJECT
    return Verification(verdict, f"judge: {judgement.reason or 'no reason given'}", None, by="judge")


class LlmJudge:
    def __init__(self, chat_model: ChatModel, store: JudgementStore, clock: Clock) -> None:
        self._chat_model = chat_model
        self._store = store
        self._clock = clock

    async def judge(
        self, tenant: str, stored: StoredAnswer, question: str, *, call: bool
    ) -> Verification | None:
        keys = (tenant, stored.id, entry_key(stored), question_key(question))
        cached = await self._store.get(*keys)
        if cached is not None:
            return verification_of(cached)
        if not call:
            return None
        asked, judgement = await self._ask(stored, question)
        if judgement is None:
            await self._store.count(tenant, asked, self._clock())
            return None
        await self._store.put(*keys, judgement, asked, self._clock())
        return verification_of(judgement)

    async def _ask(self, stored: StoredAnswer, question: str) -> tuple[JudgeCall, Judgement | None]:
        """The call as it is counted, and its verdict if it gave one."""
        model = self._chat_model.model
        pieces: list[str] = []
        end: TurnEnd | None = None
        try:
            async for item in self._chat_model.stream(prompt(stored, question), tools=[]):
                if isinstance(item, TextDelta):
                    pieces.append(item.text)
                elif isinstance(item, TurnEnd):
                    end = item
        except UpstreamError as exc:
            logger.warning("the LLM judge failed on entry %d: %s", stored.id, exc.message)
            return JudgeCall(model, "failed"), None
        if end is None:  # a model that ends every turn with a TurnEnd or an error does not get here
            return JudgeCall(model, "failed"), None
        text = "".join(pieces)
        parsed = parse(text) if end.finish_reason != ANSWER_CAP else None
        outcome: JudgeOutcome = "unclear" if parsed is None else "yes" if parsed[0] else "no"
        asked = JudgeCall(model, outcome, end.prompt_tokens, end.completion_tokens, end.cost)
        if end.finish_reason == ANSWER_CAP:
            logger.warning("the LLM judge's reply on entry %d was cut at its length cap", stored.id)
        elif parsed is None:
            logger.warning("the LLM judge gave no YES or NO on entry %d: %r", stored.id, _redact(text, 80))
        if parsed is None:
            return asked, None
        return asked, Judgement(serves=parsed[0], reason=parsed[1])
