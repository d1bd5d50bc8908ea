"""The generated French/English training pairs: reproducible, split by template, clear of the
evaluation pairs, and their hard negatives really change what is asked."""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.quality import DEFAULT_DATA, DEV_FILE, TEMPLATES_FILE, read_jsonl
from training.make_pairs import BANK, OUT, SPLITS, generate, plain, split_templates
from training.templates import CROSS_LINGUAL, DIFFERENT_KINDS, SAME_KINDS, Template

from memory_guard.core.normalize import normalize_question

ROOT = Path(__file__).resolve().parents[1]
DEV = DEFAULT_DATA / DEV_FILE
HOLDOUT = ROOT / "bench" / "data" / "pairs_holdout.jsonl"
Row = dict[str, object]


@pytest.fixture(scope="module")
def splits() -> dict[str, list[Row]]:
    return generate()


def _all(splits: dict[str, list[Row]]) -> Iterator[tuple[str, Row]]:
    for name, rows in splits.items():
        for row in rows:
            yield name, row


def _templates() -> Iterator[Template]:
    for templates in BANK.values():
        yield from templates


def test_generation_is_deterministic_and_matches_the_committed_files(splits: dict[str, list[Row]]) -> None:
    assert generate() == splits
    for name in SPLITS:
        lines = (OUT / f"{name}.jsonl").read_text("utf-8").splitlines()
        assert [json.loads(line) for line in lines] == splits[name], (
            f"{name}.jsonl is stale: run training/make_pairs.py"
        )


def test_another_seed_gives_other_pairs(splits: dict[str, list[Row]]) -> None:
    assert generate(seed=14) != splits


def test_no_template_is_in_two_splits(splits: dict[str, list[Row]]) -> None:
    homes: dict[str, set[str]] = {}
    for name, row in _all(splits):
        homes.setdefault(str(row["template"]), set()).add(name)
        if "other" in row:  # the unrelated question's template lives in the same split
            homes.setdefault(str(row["other"]), set()).add(name)
    assert all(len(found) == 1 for found in homes.values()), {t: s for t, s in homes.items() if len(s) > 1}
    assert set(homes) == {t.id for t in _templates()}
    assert set(split_templates(13).values()) == set(SPLITS)


def test_template_ids_are_unique_and_phrasings_share_their_slots() -> None:
    ids = [t.id for t in _templates()]
    assert len(ids) == len(set(ids))
    for template in _templates():
        assert len(template.fr) >= 3 and len(template.en) >= 2, template.id
        for text in (*template.fr, *template.en):
            used = {name for _, name, _, _ in string.Formatter().parse(text) if name}
            assert used == set(template.slots), (template.id, text)


def _questions(path: Path) -> set[str]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return {normalize_question(row[side]) for row in rows for side in ("a", "b")}


@pytest.mark.parametrize("path", [DEV, HOLDOUT], ids=["pairs_dev", "pairs_holdout"])
def test_no_evaluation_question_is_generated(splits: dict[str, list[Row]], path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path.name} is not in this checkout")
    evaluation = _questions(path)
    generated = {normalize_question(str(row[side])) for _, row in _all(splits) for side in ("a", "b")}
    assert not evaluation & generated


def test_heldout_holds_every_kind_in_both_languages_and_across_them(splits: dict[str, list[Row]]) -> None:
    rows = splits["heldout"]
    kinds = {(row["kind"], row["lang"]) for row in rows}
    for kind in (*SAME_KINDS, *DIFFERENT_KINDS):
        langs = {lang for k, lang in kinds if k == kind}
        expected = {"mixed"} if kind == CROSS_LINGUAL else {"fr", "en"}
        assert expected <= langs, (kind, langs)
    assert {row["domain"] for row in rows} == set(BANK)
    assert all(row["same"] == (row["kind"] in SAME_KINDS) for _, row in _all(splits))


def test_every_split_is_balanced_enough_to_learn_from(splits: dict[str, list[Row]]) -> None:
    assert len(splits["train"]) >= 2000 and len(splits["heldout"]) >= 500
    for rows in splits.values():
        same = sum(bool(row["same"]) for row in rows)
        assert 0.4 < same / len(rows) < 0.65


def test_a_hard_negative_carries_the_term_it_swapped(splits: dict[str, list[Row]]) -> None:
    swapped = [row for _, row in _all(splits) if "change" in row]
    assert len(swapped) > 500
    for row in swapped:
        change = row["change"]
        assert isinstance(change, dict)
        was, now = plain(change["from"]), plain(change["to"])
        assert was != now, row
        assert was in plain(str(row["a"])) and now in plain(str(row["b"])), row
        assert row["same"] is False


def test_no_pair_asks_the_same_question_twice(splits: dict[str, list[Row]]) -> None:
    for _, row in _all(splits):
        assert normalize_question(str(row["a"])) != normalize_question(str(row["b"])), row


def test_the_quality_bench_measures_the_heldout_split(splits: dict[str, list[Row]]) -> None:
    pairs = read_jsonl(TEMPLATES_FILE)
    assert [(p.a, p.b, p.same, p.kind, p.lang) for p in pairs] == [
        (r["a"], r["b"], r["same"], r["kind"], r["lang"]) for r in splits["heldout"]
    ]
