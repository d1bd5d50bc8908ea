"""What each arm of bench/replay.py answered, and the figures printed from it: by tenths of the
stream, side by side, and over its last half."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.replay_stream import Question, Stream

DIRECT = "direct"
GOAL_DIRECT, GOAL_WRONG = 0.70, 0.01  # issue 14: over the last half, seen needs answered direct, wrong


@dataclass(frozen=True, slots=True)
class Outcome:
    """One question's answer in one arm."""

    decision: str  # direct, assisted, miss, or error
    answer_need: int | None  # the need the answer is of (its tag), None without one
    from_memory: bool  # served direct, or a grounding answer reused (written out or through the tool)
    tokens: int  # upstream tokens spent on it (judge calls included)
    matched: str = ""  # the stored question served or reused
    action: str = ""  # what the scripted upstream did for it
    score: float | None = None
    stored_need: int | None = None  # the need of the stored question that matched, when known

    @property
    def poisoned(self) -> bool:
        """Served from an entry whose answer is not of its own question's need: one learned from
        a wrong reuse by the LLM."""
        return self.stored_need is not None and self.stored_need != self.answer_need

    def wrong(self, question: Question) -> bool:
        return self.from_memory and self.answer_need != question.need


@dataclass(slots=True)
class Tally:
    arm: str
    outcomes: list[Outcome] = field(default_factory=list)


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


@dataclass(frozen=True, slots=True)
class Figures:
    questions: int
    direct: int
    seen: int  # questions whose need was asked before
    seen_direct: int
    seen_assisted: int
    seen_miss: int
    wrong: int
    wrong_direct: int
    wrong_reused: int
    wrong_flipped: int  # served direct on a judge verdict the script flipped
    wrong_poisoned: int  # served direct from an entry learned from a wrong reuse
    near: int
    near_wrong: int
    errors: int
    tokens: int

    @staticmethod
    def of(questions: Sequence[Question], outcomes: Sequence[Outcome]) -> Figures:
        pairs = list(zip(questions, outcomes, strict=True))
        seen = [(q, o) for q, o in pairs if not q.first]
        wrong = [(q, o) for q, o in pairs if o.wrong(q)]
        return Figures(
            questions=len(pairs),
            direct=sum(o.decision == DIRECT for _, o in pairs),
            seen=len(seen),
            seen_direct=sum(o.decision == DIRECT for _, o in seen),
            seen_assisted=sum(o.decision == "assisted" for _, o in seen),
            seen_miss=sum(o.decision == "miss" for _, o in seen),
            wrong=len(wrong),
            wrong_direct=sum(o.decision == DIRECT for _, o in wrong),
            wrong_reused=sum(o.decision != DIRECT for _, o in wrong),
            wrong_flipped=sum(o.decision == DIRECT and "(flipped)" in o.action for _, o in wrong),
            wrong_poisoned=sum(o.decision == DIRECT and o.poisoned for _, o in wrong),
            near=sum(q.near_miss for q, _ in pairs),
            near_wrong=sum(q.near_miss for q, _ in wrong),
            errors=sum(o.decision == "error" for _, o in pairs),
            tokens=sum(o.tokens for _, o in pairs),
        )


TENTH_HEAD = (
    f"{'tenth':<7}{'questions':<12}{'arm':<16}{'direct':>8}{'seen->direct':>14}{'wrong/all':>11}"
    f"{'wrong/direct':>14}{'tokens':>12}{'tokens so far':>15}"
)


def tenth_lines(index: int, stream: Stream, tallies: Sequence[Tally], start: int, end: int) -> list[str]:
    """One row per arm for questions [start, end) of the stream."""
    lines = []
    for n, tally in enumerate(tallies):
        part = Figures.of(stream.questions[start:end], tally.outcomes[start:end])
        total = sum(o.tokens for o in tally.outcomes[:end])
        lines.append(
            f"{f'{index}/10' if n == 0 else '':<7}{f'{start}-{end - 1}' if n == 0 else '':<12}"
            f"{tally.arm:<16}{pct(part.direct, part.questions):>8}{pct(part.seen_direct, part.seen):>14}"
            f"{pct(part.wrong, part.questions):>11}{pct(part.wrong_direct, part.direct):>14}"
            f"{part.tokens:>12,}{total:>15,}"
        )
    return lines


def summary_lines(stream: Stream, tallies: Sequence[Tally], kinds: dict[str, Counter[str]]) -> list[str]:
    half = len(stream.questions) // 2
    questions = stream.questions[half:]
    lines = [f"summary over the last half of the stream (questions {half}-{len(stream.questions) - 1}):"]
    baseline = next((t for t in tallies if t.arm == "no-memory"), None)
    base_tokens = sum(o.tokens for o in baseline.outcomes[half:]) if baseline else 0
    for tally in tallies:
        f = Figures.of(questions, tally.outcomes[half:])
        change = "fewer" if f.tokens <= base_tokens else "more"
        saved = (
            f" ({pct(abs(base_tokens - f.tokens), base_tokens)} {change} than no-memory)"
            if base_tokens
            else ""
        )
        reached = f.seen and f.seen_direct / f.seen >= GOAL_DIRECT
        clean = f.questions and f.wrong / f.questions <= GOAL_WRONG
        clean_direct = f.questions and f.wrong_direct / f.questions <= GOAL_WRONG
        upstream = dict(sorted(kinds.get(tally.arm, Counter()).items()))
        lines += [
            f"  {tally.arm}:",
            f"    questions whose need was seen before: {f.seen} of {f.questions}; answered direct "
            f"{f.seen_direct} ({pct(f.seen_direct, f.seen)}), assisted {f.seen_assisted} "
            f"({pct(f.seen_assisted, f.seen)}), miss {f.seen_miss} ({pct(f.seen_miss, f.seen)})",
            f"    answered direct: {f.direct} ({pct(f.direct, f.questions)} of all questions)",
            f"    wrong answers from memory: {f.wrong} ({pct(f.wrong, f.questions)} of all, "
            f"{pct(f.wrong_direct, f.direct)} of direct answers): {f.wrong_direct} served direct "
            f"({f.wrong_poisoned} from entries learned from a wrong reuse, {f.wrong_flipped} on a flipped "
            f"judge verdict), {f.wrong_reused} reused from grounding by the LLM; near misses {f.near}, "
            f"answered wrong {f.near_wrong}",
            f"    upstream tokens: {f.tokens:,}{saved}; errors: {f.errors}",
            *_by_source(questions, tally.outcomes[half:]),
            f"    goal: seen needs direct >= 70% {'met' if reached else 'NOT met'}; wrong from memory "
            f"<= 1% of all {'met' if clean else 'NOT met'} (counting only those served direct: "
            f"{pct(f.wrong_direct, f.questions)}, {'met' if clean_direct else 'NOT met'})",
            f"    scripted upstream over the whole stream: {upstream}",
        ]
    return lines


def _by_source(questions: Sequence[Question], outcomes: Sequence[Outcome]) -> list[str]:
    """The figures of the template bank (whose needs are exact) apart from QQP's, whose duplicate
    components miss many true duplicates: two of its needs may be one question in fact."""
    cells = []
    for source in ("bank", "qqp"):
        picked = [(q, o) for q, o in zip(questions, outcomes, strict=True) if q.source == source]
        if picked:
            f = Figures.of([q for q, _ in picked], [o for _, o in picked])
            cells.append(
                f"{source}: {f.questions} questions, seen needs direct {pct(f.seen_direct, f.seen)}, "
                f"wrong served direct {f.wrong_direct} of {f.direct} direct, wrong reused {f.wrong_reused}"
            )
    return [f"    by source: {'; '.join(cells)}"] if cells else []


def wrong_examples(stream: Stream, tally: Tally, limit: int) -> list[str]:
    """The first wrong answers from memory, `limit` served direct and `limit` reused by the LLM:
    the question asked and the stored one served or reused."""
    lines: list[str] = []
    for served_direct in (True, False):
        shown = 0
        for question, outcome in zip(stream.questions, tally.outcomes, strict=True):
            if shown == limit:
                break
            if outcome.wrong(question) and (outcome.decision == DIRECT) == served_direct:
                shown += 1
                lines += _example(stream, tally.arm, question, outcome)
    return lines


def _example(stream: Stream, arm: str, question: Question, outcome: Outcome) -> list[str]:
    served = stream.needs.get(outcome.answer_need or 0)
    learned = ", an entry learned from a wrong reuse" if outcome.poisoned else ""
    score = f" score={outcome.score:.4f}" if outcome.score is not None else ""
    return [
        f"  [{arm}] #{question.index} {outcome.decision}{score} {outcome.action}: asked "
        f"{question.text!r} (need {question.need}, {stream.needs[question.need].label!r})",
        f"      served the answer of {outcome.matched!r} "
        f"(need {outcome.answer_need}, {served.label if served else '?'!r}{learned})",
    ]
