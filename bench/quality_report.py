"""The fixed-width report of bench/quality.py."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.quality_stats import Group, Pair, Scores, Summary, cosine_alone, decide_pairs, rate, summarize
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.hits.accuracy import wilson_interval

SWEEP_THRESHOLDS: tuple[float, ...] = (0.85, 0.90, 0.93, 0.95, 0.97, 0.99)


def pct(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:5.1f}%"


def num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def precision_cell(summary: Summary) -> str:
    if not summary.n_direct:
        return "-"
    low, high = wilson_interval(summary.same_direct, summary.n_direct)
    return f"{pct(summary.direct_precision)} [{100 * low:4.1f}-{100 * high:5.1f}]"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> None:
    """Fixed-width table; the first `left` columns are left-aligned, the rest right-aligned."""
    widths = [max(len(headers[c]), *(len(r[c]) for r in rows)) for c in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(widths[c]) if c < left else cell.rjust(widths[c]) for c, cell in enumerate(cells)
        ).rstrip()

    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


def print_report(datasets: Sequence[tuple[str, list[Group]]], policy: ServePolicy, verifier: str) -> None:
    print()
    print(f"== Decisions with the verifier {verifier!r}, candidates from >= {policy.similar:.2f}")
    print("   same=true:  'direct' = correct direct answers, 'assisted' = grounded LLM answers")
    print("   same=false: 'WRONG dir' = another question's answer served with no LLM call")
    print("   precision = same among direct, [Wilson 95% interval]; exact = normalized exact matches")
    headers = [
        "group", "pairs", "exact", "same", "direct", "assisted", "diff", "WRONG dir", "assisted",
        "direct precision",
    ]  # fmt: skip
    rows: list[list[str]] = []
    for _, groups in datasets:
        for g in groups:
            s = summarize(g.scores, g.same, g.exact, g.decisions)
            rows.append(
                [
                    g.label,
                    str(s.n),
                    str(s.exact),
                    str(s.n_same),
                    pct(rate(s.same_direct, s.n_same)),
                    pct(rate(s.same_assisted, s.n_same)),
                    str(s.n_diff),
                    pct(rate(s.diff_direct, s.n_diff)),
                    pct(rate(s.diff_assisted, s.n_diff)),
                    precision_cell(s),
                ]
            )
    print_table(headers, rows)

    print()
    print("== Score distribution (cosine; exact matches count as 1.0)")
    dist_rows: list[list[str]] = []
    for _, groups in datasets:
        for g in groups:
            same_scores, diff_scores = g.scores[g.same], g.scores[~g.same]
            dist_rows.append(
                [
                    g.label,
                    num(float(np.percentile(same_scores, 10))) if same_scores.size else "-",
                    num(float(np.median(same_scores))) if same_scores.size else "-",
                    num(float(np.median(diff_scores))) if diff_scores.size else "-",
                    num(float(np.percentile(diff_scores, 90))) if diff_scores.size else "-",
                    num(float(diff_scores.max())) if diff_scores.size else "-",
                ]
            )
    print_table(["group", "same p10", "same median", "diff median", "diff p90", "diff max"], dist_rows)

    print()
    print("== Cosine alone (no verifier), sweep of the direct threshold: correct direct / WRONG direct")
    sweep_headers = ["direct >="]
    for name, _ in datasets:
        sweep_headers += [f"{name} correct", f"{name} WRONG"]
    sweep_rows: list[list[str]] = []
    for threshold in sorted({*SWEEP_THRESHOLDS, policy.direct}):
        marker = " *" if math.isclose(threshold, policy.direct) else "  "
        row = [f"{threshold:.2f}{marker}"]
        swept = cosine_alone(policy, threshold)
        for _, groups in datasets:
            g = groups[0]
            s = summarize(g.scores, g.same, g.exact, decide_pairs(swept, g.scores, g.exact))
            row += [pct(rate(s.same_direct, s.n_same)), pct(rate(s.diff_direct, s.n_diff))]
        sweep_rows.append(row)
    print_table(sweep_headers, sweep_rows)
    print("   (* = the configured direct threshold)")


# --------------------------------------------------------------------------- main


def print_wrong(name: str, pairs: Sequence[Pair], scores: Scores, served: npt.NDArray[np.bool_]) -> None:
    """Every pair of `name` served direct against its label, to be read one by one."""
    wrong = [(p, float(s)) for p, s, hit in zip(pairs, scores, served, strict=True) if hit and not p.same]
    if not wrong:
        return
    print(f"\nWRONG direct answers of {name} ({len(wrong)}):")
    for pair, score in wrong:
        print(f"  {score:.3f} [{pair.kind or '-'}] {pair.a!r} -> {pair.b!r}")


def print_audited_precision(qqp: Sequence[Pair], served: npt.NDArray[np.bool_], audit_file: Path) -> None:
    """Precision once the QQP labels of the served "different" pairs are read by a person.

    QQP's labels are a few % noisy ("How do I get in Harvard?" / "How do I get into
    Harvard?" is labelled different). `bench/data/qqp_audit.jsonl` records, for each pair we
    served against its label, whether the stored answer really serves the question. A served
    pair missing from the audit counts as wrong.
    """
    audit = {}
    if audit_file.is_file():
        for line in audit_file.read_text("utf-8").splitlines():
            row = json.loads(line)
            audit[(row["a"], row["b"])] = bool(row["serves"])
    against = [p for p, hit in zip(qqp, served, strict=True) if hit and not p.same]
    right = int(sum(p.same for p, hit in zip(qqp, served, strict=True) if hit))
    relabelled = sum(audit.get((p.a, p.b), False) for p in against)
    unaudited = sum((p.a, p.b) not in audit for p in against)
    n, good = right + len(against), right + relabelled
    low, high = wilson_interval(good, n)
    print(
        f"QQP direct precision, audited: {good:,}/{n:,} = {100 * good / n:.1f}% "
        f"(Wilson 95%: {100 * low:.1f}%-{100 * high:.1f}%); of the {len(against)} served pairs labelled "
        f"different, {relabelled} are label errors per {audit_file.name}, {unaudited} not audited "
        "(counted wrong)"
    )
    for p in against:
        if (p.a, p.b) not in audit:
            print(f"  not audited: {p.a!r} -> {p.b!r}")
