"""The numeric logic of bench/quality.py."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from bench import pairs as bench_pairs
from bench import quality
from bench import quality_stats as stats

from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import Verdict, Verification
from memory_guard.hits.accuracy import wilson_interval
from memory_guard.verify.configured import runs_cross_encoder

# No verdict: the score alone decides, as with the verifier off.
COSINE = ServePolicy(similar=0.85, direct=0.95, verified_direct=0.95, confident=0.95)


class RaisingEmbedder:
    """Fails the test if the benchmark asks it for any embedding."""

    model_id = "raising/0"
    dimension = 4

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise AssertionError(f"embedder called with {list(texts)!r}")

    async def aclose(self) -> None:
        return None


class FixedEmbedder:
    """Maps known texts to given vectors and counts the texts it embeds."""

    model_id = "fixed/0"
    dimension = 2

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        unit: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return unit

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (1.0, "direct"),
        (0.95, "direct"),
        (np.nextafter(0.95, 0.0), "assisted"),
        (0.85, "assisted"),
        (np.nextafter(0.85, 0.0), "miss"),
        (-1.0, "miss"),
    ],
)
def test_decide_thresholds_are_inclusive(score: float, expected: str) -> None:
    assert stats.decide_pairs(COSINE, np.array([score]), np.array([False])).tolist() == [expected]


def test_decide_equal_thresholds_never_assisted() -> None:
    policy = ServePolicy(similar=0.9, direct=0.9, verified_direct=0.9, confident=0.95)
    decided = stats.decide_pairs(policy, np.array([0.9, 0.89]), np.array([False, False]))
    assert decided.tolist() == ["direct", "miss"]


def test_decide_pairs_follows_the_verdicts() -> None:
    """The bench decides as the guard does: a verdict, not the score alone, serves a candidate."""
    policy = ServePolicy(similar=0.85, direct=0.95, verified_direct=0.90, confident=0.95)
    scores = np.array([0.99, 0.91, 0.91, 0.5, 1.0])
    exact = np.array([False, False, False, False, True])
    verifications = [
        Verification(Verdict.REJECT, "number differs"),
        Verification(Verdict.ACCEPT, "classifier", probability=0.96),
        Verification(Verdict.ACCEPT, "classifier", probability=0.80),
        None,
        None,
    ]
    decided = stats.decide_pairs(policy, scores, exact, verifications)
    # A rejected candidate grounds nothing either (ServePolicy.grounding): a miss.
    assert decided.tolist() == ["miss", "direct", "assisted", "miss", "direct"]


def test_the_sweep_judges_on_the_score_alone() -> None:
    swept = stats.cosine_alone(COSINE, 0.80)
    assert (swept.similar, swept.direct) == (0.80, 0.80)
    assert stats.cosine_alone(COSINE, 0.97).similar == 0.85


def test_wilson_interval_known_value() -> None:
    low, high = wilson_interval(95, 100)
    assert low == pytest.approx(0.8882, abs=5e-4)
    assert high == pytest.approx(0.9785, abs=5e-4)


def test_wilson_interval_edges() -> None:
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert 0.25 < high < 0.35
    low, high = wilson_interval(10, 10)
    assert 0.65 < low < 0.75
    assert high == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


def test_summarize_counts_by_label() -> None:
    scores = np.array([1.0, 0.95, 0.9, 0.5, 0.96, 0.86, 0.2])
    same = np.array([True, True, True, True, False, False, False])
    exact = np.array([True, False, False, False, False, False, False])
    s = stats.summarize(scores, same, exact, stats.decide_pairs(COSINE, scores, exact))
    assert (s.n, s.n_same, s.n_diff, s.exact) == (7, 4, 3, 1)
    assert (s.same_direct, s.same_assisted) == (2, 1)
    assert (s.diff_direct, s.diff_assisted) == (1, 1)
    assert s.direct_precision == pytest.approx(2 / 3)
    assert s.median_same == pytest.approx(0.925)
    assert s.median_diff == pytest.approx(0.86)


async def test_exact_normalized_match_scores_one_without_embedding() -> None:
    pairs = [
        stats.Pair(a="Qu'est-ce que le DOE ?", b="qu’est-ce que le doe", same=True),
        stats.Pair(a="Délai de paiement ?", b="DELAI   de paiement!", same=True),
    ]
    scores, exact = await bench_pairs.score_pairs(pairs, RaisingEmbedder(), progress=False)
    assert scores.tolist() == [1.0, 1.0]
    assert exact.tolist() == [True, True]


async def test_other_pairs_use_cosine_and_embed_each_text_once() -> None:
    embedder = FixedEmbedder({"x": [1.0, 0.0], "y": [0.0, 1.0], "z": [1.0, 1.0]})
    pairs = [
        stats.Pair(a="x", b="y", same=False),
        stats.Pair(a="x", b="z", same=True),
        stats.Pair(a="X!", b="x", same=True),  # exact after normalization: not embedded
    ]
    scores, exact = await bench_pairs.score_pairs(pairs, embedder, batch_size=2, progress=False)
    assert scores == pytest.approx([0.0, 2**-0.5, 1.0], abs=1e-6)
    assert exact.tolist() == [False, False, True]
    assert embedder.calls == [["x", "y"], ["z"]]


def test_stratified_sample_keeps_ratio_and_is_seeded() -> None:
    pairs = [stats.Pair(a=str(i), b=str(i), same=i % 4 == 0) for i in range(1000)]
    sample = quality.stratified_sample(pairs, 100, seed=3)
    assert len(sample) == 100
    assert sum(p.same for p in sample) == 25
    assert sample == quality.stratified_sample(pairs, 100, seed=3)
    assert sample != quality.stratified_sample(pairs, 100, seed=4)
    assert quality.stratified_sample(pairs, 5000, seed=3) == pairs


def test_every_wrong_direct_answer_is_listed_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.quality_report import print_wrong

    pairs = [
        stats.Pair("Garantie décennale ?", "Garantie biennale ?", False, "entity_swap"),
        stats.Pair("Durée de la GPA ?", "La GPA dure combien ?", True, "paraphrase"),
        stats.Pair("Avant la réception ?", "Après la réception ?", False, "negation_or_polarity"),
    ]
    served = np.array([True, True, False])
    print_wrong("pairs_dev", pairs, np.array([0.97, 0.96, 0.99]), served)
    out = capsys.readouterr().out
    assert "WRONG direct answers of pairs_dev (1):" in out
    assert "0.970 [entity_swap] 'Garantie décennale ?' -> 'Garantie biennale ?'" in out
    assert "GPA" not in out and "réception" not in out
    print_wrong("pairs_dev", pairs, np.array([0.97, 0.96, 0.99]), np.array([False, True, False]))
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------- the cross-encoder


class TableReader:
    """A cross-encoder that answers a given probability per (stored, incoming) pair and records
    the batches it reads."""

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table
        self.batches: list[list[tuple[str, str]]] = []

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.batches.append(list(pairs))
        return [self.table[pair] for pair in pairs]


CE_PAIRS = [
    stats.Pair("Délai de la GPA ?", "délai de la GPA", True),  # exact after normalization
    stats.Pair("Quel est le délai de paiement ?", "Le délai de paiement, c'est combien ?", True),
    stats.Pair("Taux de TVA en 2023 ?", "Taux de TVA en 2024 ?", False),  # vetoed: another year
    stats.Pair("Qui signe le PV de réception ?", "Qui rédige le PV de réception ?", False),
    stats.Pair("Durée de la garantie décennale ?", "Combien dure la décennale ?", True),
    stats.Pair("Où déposer le DOE ?", "Quand commence le chantier ?", False),  # below the floor
]
CE_SCORES = np.array([1.0, 0.93, 0.99, 0.97, 0.91, 0.6])
CE_EXACT = np.array([True, False, False, False, False, False])
CE_TABLE = {
    (CE_PAIRS[1].a, CE_PAIRS[1].b): 0.995,
    (CE_PAIRS[3].a, CE_PAIRS[3].b): 0.7,
    (CE_PAIRS[4].a, CE_PAIRS[4].b): 0.2,
}
CE_POLICY = ServePolicy(similar=0.85, direct=0.95, verified_direct=0.90, confident=0.95)


def test_the_cross_encoder_reads_only_what_the_vetoes_leave_in_batches() -> None:
    from bench import quality_ce

    reader = TableReader(CE_TABLE)
    ce = quality_ce.run_cross_encoder(
        reader, CE_PAIRS, CE_SCORES, CE_EXACT, floor=0.90, batch_size=2, progress=False
    )
    read = [pair for batch in reader.batches for pair in batch]
    assert sorted(read) == sorted(CE_TABLE)  # not the exact match, the vetoed pair, the far one
    assert [len(batch) for batch in reader.batches] == [2, 1]
    assert (ce.ran, ce.vetoed, ce.batches) == (3, 1, 2)
    assert ce.conflicts[2] and not any(ce.conflicts[i] for i in (0, 1, 3, 4, 5))
    assert ce.probabilities[[1, 3, 4]].tolist() == [0.995, 0.7, 0.2]
    assert np.isnan(ce.probabilities[[0, 2, 5]]).all()


def test_cross_encoder_decisions_follow_the_cut_offs_through_the_serve_policy() -> None:
    from bench import quality_ce

    ce = quality_ce.run_cross_encoder(
        TableReader(CE_TABLE), CE_PAIRS, CE_SCORES, CE_EXACT, 0.90, progress=False
    )
    decided = quality_ce.decide_with_cross_encoder(
        CE_POLICY, CE_SCORES, CE_EXACT, ce, direct=0.99, unsure=0.5
    )
    # exact; p >= direct; vetoed; unsure; p < unsure; below the candidates' floor (a rejected
    # candidate grounds nothing: a miss)
    assert decided.tolist() == ["direct", "direct", "miss", "assisted", "miss", "miss"]
    lower = quality_ce.decide_with_cross_encoder(CE_POLICY, CE_SCORES, CE_EXACT, ce, direct=0.6, unsure=0.5)
    assert lower.tolist() == ["direct", "direct", "miss", "direct", "miss", "miss"]
    verdicts = quality_ce.verifications(ce, 0.99, 0.5)
    assert [v.verdict if v else None for v in verdicts] == [
        None, Verdict.ACCEPT, Verdict.REJECT, Verdict.UNSURE, Verdict.REJECT, None,
    ]  # fmt: skip
    assert verdicts[1] is not None and verdicts[1].by == "cross_encoder" and verdicts[1].probability == 0.995


def test_the_curve_marks_the_shipped_cut_off(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import quality_ce

    ce = quality_ce.run_cross_encoder(
        TableReader(CE_TABLE), CE_PAIRS, CE_SCORES, CE_EXACT, 0.90, progress=False
    )
    group = stats.make_groups("dev", CE_PAIRS, CE_SCORES, CE_EXACT, np.array(["miss"] * 6))[0]
    quality_ce.print_curve([("dev", group)], [slice(0, 6)], ce, CE_POLICY, shipped_direct=0.96, unsure=0.5)
    rows = {
        line.split()[0]: line.split()[1:]
        for line in capsys.readouterr().out.splitlines()
        if line[:1].isdigit()
    }
    assert rows["0.960"][0] == "*"
    # 3 same pairs: the exact one always, the p=0.995 one up to 0.995; 3 different: p=0.7 one up to 0.7.
    assert rows["0.500"] == ["66.7%", "33.3%"]
    assert rows["0.960"][1:] == ["66.7%", "0.0%"]
    assert rows["0.999"] == ["33.3%", "0.0%"]


def test_model_file_lines_say_sizes_and_the_cross_encoder_metadata() -> None:
    from bench import model_files

    lines = model_files.size_lines()
    assert any(line.startswith("e5 (default) model") and "MiB" in line for line in lines)
    assert any("cross_encoder.onnx" in line for line in lines)
    meta = {
        "cutoffs": {"direct": 0.93, "unsure": 0.5},
        "fitted": {"pairs": 10, "kinds": {"paraphrase": 0.25}},
    }
    shown = "\n".join(model_files.metadata_lines(meta))
    assert '"direct": 0.93' in shown and '"paraphrase": 0.25' in shown and '"pairs": 10' in shown
    assert "none" in model_files.metadata_lines(None)[0]


def test_quality_options_pick_the_embedder_and_the_cross_encoder() -> None:
    args = quality.parse_args(["--embedding-model", "multilingual-e5-small-onnx", "--cross-encoder", "on"])
    assert (args.model, args.cross_encoder) == ("multilingual-e5-small-onnx", "on")
    assert quality.build_settings(args).embedding_model == "multilingual-e5-small-onnx"
    # As the service: the default embedder is read with the cross-encoder, MiniLM is not.
    default = quality.build_settings(quality.parse_args([]))
    assert runs_cross_encoder(default, "local/multilingual-e5-small-q4-onnx")
    assert not runs_cross_encoder(default, "local/all-MiniLM-L6-v2-qint8")
    off = quality.build_settings(quality.parse_args(["--cross-encoder", "off"]))
    assert not runs_cross_encoder(off, "local/multilingual-e5-small-q4-onnx")
    with pytest.raises(SystemExit):
        quality.parse_args(["--cross-encoder", "on", "--verifier", "off"])
