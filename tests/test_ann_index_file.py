"""The approximate indexes kept beside the database (memory/index_file.py): a start reads them
instead of rebuilding, and never serves from one that is stale or corrupt."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest

from memory_guard.core.scope import Scope
from memory_guard.memory.index_file import MANIFEST, folder_of, open_approximate
from memory_guard.services import Services
from tests.conftest import make_settings
from tests.test_ann_index import FROM, ROWS, A, filled, near, unit_rows
from tests.upstream import FakeUpstream


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return folder_of(tmp_path / "memory.db")


def saved(folder: Path, rows: np.ndarray) -> None:
    index = filled(FROM, rows)
    assert open_approximate(index, folder).built == 1  # and written, as a rebuild is
    assert (folder / MANIFEST).exists()


def _graph(folder: Path) -> Path:
    [graph] = folder.glob("*.faiss")
    return graph


def test_a_start_reads_the_saved_index_rather_than_rebuild_it(folder: Path) -> None:
    rows = unit_rows(ROWS, seed=11)
    saved(folder, rows)
    index, exact = filled(FROM, rows), filled(0, rows)
    load = open_approximate(index, folder)
    assert (load.read, load.built, load.caught_up) == (1, 0, 0)
    for query_id in range(100):
        query = near(rows[query_id * 13], seed=query_id)
        assert index.search(A, query, 3, 0.0).hits[0] == exact.search(A, query, 3, 0.0).hits[0]


@pytest.mark.parametrize("damage", ["flipped", "truncated", "keys", "manifest", "model", "checksum"])
def test_a_corrupt_or_foreign_file_is_rebuilt_not_used(folder: Path, damage: str) -> None:
    rows = unit_rows(ROWS, seed=12)
    saved(folder, rows)
    graph = _graph(folder)
    data = bytearray(graph.read_bytes())
    if damage == "flipped":
        data[len(data) // 2] ^= 0xFF
        graph.write_bytes(bytes(data))
    elif damage == "truncated":
        graph.write_bytes(bytes(data[: len(data) // 3]))
    elif damage == "keys":
        [keys] = folder.glob("*.keys.npy")
        keys.write_bytes(b"not numpy")
    elif damage == "manifest":
        (folder / MANIFEST).write_text("{not json")
    else:  # another model's file, or one whose bytes are not those written (a link changed)
        manifest = json.loads((folder / MANIFEST).read_text())
        if damage == "model":
            manifest["model_id"] = "another-model"
        else:
            [entry] = manifest["scopes"].values()
            entry["graph_crc32"] ^= 1
        (folder / MANIFEST).write_text(json.dumps(manifest))
    index, exact = filled(FROM, rows), filled(0, rows)
    load = open_approximate(index, folder)
    assert (load.read, load.built) == (0, 1)
    query = near(rows[7], seed=1)
    assert index.search(A, query, 3, 0.0).hits[0] == exact.search(A, query, 3, 0.0).hits[0]
    assert open_approximate(filled(FROM, rows), folder).read == 1  # written again, sound


def test_rows_removed_or_re_embedded_since_the_save_are_never_served(folder: Path) -> None:
    rows = unit_rows(ROWS, seed=13)
    saved(folder, rows)
    changed = rows.copy()
    changed[41] = unit_rows(1, seed=77)[0]  # entry 42 re-embedded after the save
    index = filled(FROM, changed[1:], first_id=2)  # entry 1 deleted after the save
    index.put(A, 42, changed[41], 42.0, math.inf)
    load = open_approximate(index, folder)
    assert load.read == 1 and load.caught_up == 1  # entry 42's new vector
    assert 1 not in [hit.entry_id for hit in index.search(A, rows[0], 3, 0.0).hits]
    assert 42 not in [hit.entry_id for hit in index.search(A, rows[41], 3, 0.0).hits]
    assert index.search(A, changed[41], 3, 0.0).hits[0].entry_id == 42


def test_a_few_rows_added_since_the_save_are_caught_up_many_are_rebuilt(folder: Path) -> None:
    rows = unit_rows(ROWS + 1000, seed=14)
    saved(folder, rows[:ROWS])
    few = filled(FROM, rows[: ROWS + 20])
    load = open_approximate(few, folder)
    assert (load.read, load.caught_up, load.built) == (1, 20, 0)
    assert few.search(A, rows[ROWS + 10], 3, 0.0).hits[0].entry_id == ROWS + 11
    many = filled(FROM, rows)
    assert open_approximate(many, folder).built == 1  # the caught-up file was written again first
    assert many.search(A, rows[ROWS + 500], 3, 0.0).hits[0].entry_id == ROWS + 501


def test_the_service_reads_its_saved_index_at_the_next_start(
    tmp_path: Path, upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path, upstream, memory_approximate_from=30)
    scope = Scope("acme", "default")
    questions = [f"Quel est le délai de livraison numéro {n} vers la ville {n * 7} ?" for n in range(40)]

    async def first_run() -> int:
        services = await Services.open(settings)
        try:
            entries = [
                await services.entries.create_faq(scope, q, f"Réponse {n}.", (), "staff")
                for n, q in enumerate(questions)
            ]
            await services.entries.delete("acme", entries[3].id, "staff")
            await services.guard.inspect(
                scope, "Délai de livraison 5 pour la ville 35 ?"
            )  # past the threshold: its build starts
            return entries[3].id
        finally:
            await services.aclose()

    async def second_run() -> list[int]:
        services = await Services.open(settings)
        try:
            assert services.guard.index.approximate_scopes() == 1
            result = await services.guard.inspect(scope, questions[3] + " merci")
            return [candidate.entry.id for candidate in result.candidates]
        finally:
            await services.aclose()

    deleted = asyncio.run(first_run())
    assert (folder_of(settings.memory_db_path) / MANIFEST).exists()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="memory_guard.memory.index_file"):
        found = asyncio.run(second_run())
    messages = [record.getMessage() for record in caplog.records]
    assert any("approximate index of acme/default// read: 39 rows" in m for m in messages), messages
    assert not any("building" in m for m in messages)
    assert deleted not in found
