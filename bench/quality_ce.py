"""The cross-encoder's part of bench/quality.py: its probabilities, its verdicts, its curve.

As in the service (the cross-encoder contract of issue 13): a pair whose stored question is a
candidate the verifier would look at (score >= the policy's lowest direct floor, not an exact
match) first meets the cheap checks of `features.compare`; a conflict is a REJECT and the
cross-encoder does not run. The others are read by the cross-encoder, here in batches (the
service reads at most its top 3 candidates per question in one run; a pair of this bench has one
candidate). From the file's cut-offs: p >= direct is a confident yes, p < unsure a REJECT, in
between UNSURE; the serve policy, with the direct cut-off as its `confident`, decides.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from bench.quality_report import pct, print_table
from bench.quality_stats import Decisions, Group, Pair, Scores, decide_pairs, rate, summarize
from memory_guard.core.normalize import same_question
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import Verdict, Verification
from memory_guard.verify.cross_encoder import CrossEncoder, CrossEncoderCutoffs
from memory_guard.verify.features import compare
from memory_guard.verify.verifier import cross_encoder_verdict

CURVE_CUTOFFS: tuple[float, ...] = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.997, 0.999)
CE_BATCH = 64


class PairReader(Protocol):
    """What the bench needs of `verify.cross_encoder.CrossEncoder`."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class CrossEncoderPass:
    """What the verifier sees of each pair with the cross-encoder on."""

    probabilities: npt.NDArray[np.float64]  # NaN where the cross-encoder did not run
    conflicts: list[str]  # the veto's reason, "" when none (or not looked at)
    seconds: float  # the cross-encoder's runs alone
    batches: int

    @property
    def ran(self) -> int:
        return int(np.isfinite(self.probabilities).sum())

    @property
    def vetoed(self) -> int:
        return sum(bool(c) for c in self.conflicts)


def run_cross_encoder(
    encoder: PairReader,
    pairs: Sequence[Pair],
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    floor: float,
    batch_size: int = CE_BATCH,
    progress: bool = True,
) -> CrossEncoderPass:
    """Vetoes on every candidate from `floor`, then the cross-encoder on what they leave."""
    conflicts = [""] * len(pairs)
    todo: list[int] = []
    for i, (pair, score, is_exact) in enumerate(zip(pairs, scores, exact, strict=True)):
        if is_exact or score < floor:
            continue
        conflict = compare(pair.a, pair.b, float(score)).conflict
        if conflict:
            conflicts[i] = conflict
        elif not same_question(pair.a, pair.b):
            todo.append(i)
    probabilities = np.full(len(pairs), math.nan, dtype=np.float64)
    # As the verifier: the same question once politeness is set aside is accepted unread (counted
    # here as a probability of 1).
    for i, (pair, score, is_exact) in enumerate(zip(pairs, scores, exact, strict=True)):
        if not is_exact and score >= floor and not conflicts[i] and same_question(pair.a, pair.b):
            probabilities[i] = 1.0
    # Short pairs together: a batch pads to its longest pair.
    todo.sort(key=lambda i: len(pairs[i].a) + len(pairs[i].b))
    seconds, batches = 0.0, 0
    with tqdm(
        total=len(todo), desc="cross-encoder", unit="pair", file=sys.stderr, disable=not progress
    ) as bar:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            started = time.perf_counter()
            found = encoder.probabilities([(pairs[i].a, pairs[i].b) for i in chunk])
            seconds += time.perf_counter() - started
            batches += 1
            if len(found) != len(chunk):
                raise RuntimeError(
                    f"cross-encoder returned {len(found)} probabilities for {len(chunk)} pairs"
                )
            probabilities[chunk] = found
            bar.update(len(chunk))
    return CrossEncoderPass(probabilities, conflicts, seconds, batches)


def verifications(ce: CrossEncoderPass, direct: float, unsure: float) -> list[Verification | None]:
    """One verdict per pair; None where the verifier does not look (exact match, below the floor)."""
    out: list[Verification | None] = []
    for p, conflict in zip(ce.probabilities, ce.conflicts, strict=True):
        if conflict:
            out.append(Verification(Verdict.REJECT, conflict, 0.0))
        elif math.isnan(p):
            out.append(None)
        else:
            out.append(
                cross_encoder_verdict(
                    float(p), CrossEncoderCutoffs(direct=direct, unsure=min(unsure, direct))
                )
            )
    return out


def ce_policy(policy: ServePolicy, direct: float) -> ServePolicy:
    """The serve policy when the cross-encoder runs: its direct cut-off makes a yes confident."""
    return ServePolicy(
        similar=policy.similar, direct=policy.direct, verified_direct=policy.verified_direct, confident=direct
    )


def decide_with_cross_encoder(
    policy: ServePolicy,
    scores: Scores,
    exact: npt.NDArray[np.bool_],
    ce: CrossEncoderPass,
    direct: float,
    unsure: float,
) -> Decisions:
    return decide_pairs(ce_policy(policy, direct), scores, exact, verifications(ce, direct, unsure))


def print_cross_encoder_summary(
    encoder: CrossEncoder, ce: CrossEncoderPass, floor: float, total: int
) -> None:
    cutoffs = encoder.cutoffs
    rate_s = ce.ran / ce.seconds if ce.seconds else math.nan
    print(
        f"  cross-encoder      : {encoder.model_id}, cut-offs direct {cutoffs.direct} / "
        f"unsure {cutoffs.unsure}; "
        f"read {ce.ran:,} of {total:,} pairs (not exact, score >= {floor:.2f}, {ce.vetoed:,} vetoed first) "
        f"in {ce.seconds:.1f} s, {ce.batches} batches of <= {CE_BATCH} ({rate_s:.0f} pairs/s)"
    )


def print_curve(
    datasets: Sequence[tuple[str, Group]],
    slices: Sequence[slice],
    ce: CrossEncoderPass,
    policy: ServePolicy,
    shipped_direct: float,
    unsure: float,
) -> None:
    """Right direct / WRONG direct of each data set at every cross-encoder cut-off."""
    print()
    print(
        "== Cross-encoder cut-off sweep: correct direct / WRONG direct (exact matches count as direct; "
        f"the cross-encoder reads candidates from {policy.verify_from():.2f} that pass the vetoes)"
    )
    headers = ["p >="]
    for name, _ in datasets:
        headers += [f"{name} correct", f"{name} WRONG"]
    rows: list[list[str]] = []
    for cutoff in sorted({*CURVE_CUTOFFS, shipped_direct}):
        marker = " *" if math.isclose(cutoff, shipped_direct) else "  "
        row = [f"{cutoff:.3f}{marker}"]
        for (_, g), part in zip(datasets, slices, strict=True):
            sub = CrossEncoderPass(ce.probabilities[part], ce.conflicts[part], 0.0, 0)
            decided = decide_with_cross_encoder(policy, g.scores, g.exact, sub, cutoff, unsure)
            s = summarize(g.scores, g.same, g.exact, decided)
            row += [pct(rate(s.same_direct, s.n_same)), pct(rate(s.diff_direct, s.n_diff))]
        rows.append(row)
    print_table(headers, rows)
    print("   (* = the cut-off shipped in the cross-encoder file)")
