"""The approximate indexes of the large scopes, kept on disk so that a start does not rebuild them.

They live in a folder beside the database (`<db>.ann/`): one faiss file per scope, the row key of
each of its labels (`.keys.npy`), and `manifest.json` with the embedding model, the width, and
per scope its row count and the CRC-32 of both files. At start-up the rows come from the
database as always; a scope's file is used only when the manifest matches, both checksums do,
and every live row is in it with exactly its vector (rows removed since are forgotten). A few
rows added or re-embedded since it was written (a crash after the last save) are added to it;
anything else (missing, corrupt, another model, many changes) is rebuilt from the rows and
written again. A file is never used as it is without that check, so it is never stale.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory_guard.core.scope import Scope
from memory_guard.memory.ann_index import AnnIndex
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.scope_rows import ScopeRows

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
FORMAT = 1
# Changes since the file was written that are caught up rather than rebuilt: a graph grown by
# many additions is as good as a fresh one, but past this many dead labels it searches slower.
CATCH_UP_SHARE = 0.1
CHUNK = 65_536


@dataclass(slots=True)
class IndexLoad:
    """What start-up did for each large scope: counts, for the log and the tests."""

    read: int = 0  # used from the file (caught up or not)
    caught_up: int = 0  # rows added to a file's graph
    built: int = 0  # built from the rows


def folder_of(database: Path) -> Path:
    return database.with_name(database.name + ".ann")


def _stem(scope: Scope) -> str:
    text = json.dumps([scope.tenant, scope.agent, scope.project, scope.phase])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _crc(path: Path) -> int:
    crc = 0
    with path.open("rb") as file:
        while chunk := file.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def open_approximate(index: VectorIndex, folder: Path | None) -> IndexLoad:
    """Give every scope of at least `index.approximate_from` rows its approximate index: read
    from `folder` when its file holds the live rows, else built (and then written there)."""
    load = IndexLoad()
    manifest = _manifest(folder) if folder is not None else {}
    same_model = manifest.get("format") == FORMAT and manifest.get("model_id") == index.model_id
    same_model = same_model and manifest.get("dimension") == index.dimension
    files: dict[str, Any] = manifest.get("scopes", {}) if same_model else {}
    for scope, rows in index.scope_rows():
        if index.approximate_from <= 0 or rows.size < index.approximate_from:
            continue
        described = f"{scope.tenant}/{scope.agent}/{scope.project}/{scope.phase}"
        stem = _stem(scope)
        ann = _read(folder, files.get(stem), stem, index.dimension) if folder is not None else None
        if ann is not None:
            added = _catch_up(ann, rows)
            if added is not None:
                rows.attach(ann)
                rows.ann_changed = added > 0
                load.read += 1
                load.caught_up += added
                logger.info("approximate index of %s read: %d rows, %d caught up", described, ann.live, added)
                continue
            reason = "too many changes since it was written"
        else:
            reason = "no usable file" if folder is not None else "no folder"
        logger.info("building the approximate index of %s (%d rows): %s", described, rows.size, reason)
        started = time.perf_counter()
        rows.attach(
            AnnIndex.build(
                index.dimension, rows.keys[: rows.size], rows.vectors[: rows.size], os.cpu_count() or 1
            )
        )
        load.built += 1
        logger.info("approximate index of %s built in %.1fs", described, time.perf_counter() - started)
    if folder is not None and load.built + load.caught_up:
        save_approximate(index, folder)
    return load


def _read(folder: Path | None, entry: Any, stem: str, dimension: int) -> AnnIndex | None:
    if folder is None or not isinstance(entry, dict):
        return None
    graph, keys = folder / f"{stem}.faiss", folder / f"{stem}.keys.npy"
    try:
        if _crc(graph) != entry.get("graph_crc32") or _crc(keys) != entry.get("keys_crc32"):
            logger.warning("approximate index file %s does not match its checksum: rebuilt", graph)
            return None
        return AnnIndex.read(graph, dimension, np.load(keys, allow_pickle=False))
    except (OSError, ValueError, RuntimeError) as error:  # faiss raises RuntimeError
        logger.warning("approximate index file %s unreadable (%s): rebuilt", graph, error)
        return None


def _catch_up(ann: AnnIndex, rows: ScopeRows) -> int | None:
    """Make the graph hold exactly the live rows: forget the others, add those it lacks or holds
    with another vector. How many were added, or None when too many to catch up."""
    labels = ann.label_keys()
    alive = labels != 0
    live = rows.positions
    for key in labels[alive].tolist():
        if key not in live:
            ann.discard(key)
    held = ann.label_keys()
    at = np.flatnonzero(held != 0)
    row_of = np.fromiter((live[key] for key in held[at].tolist()), dtype=np.int64, count=len(at))
    stored = ann.stored_vectors()
    same = np.ones(len(at), dtype=bool)
    for start in range(0, len(at), CHUNK):  # a slice at a time: copies of every vector would double them
        part = slice(start, start + CHUNK)
        same[part] = np.all(stored[at[part]] == rows.vectors[row_of[part]], axis=1)
    for key in held[at[~same]].tolist():
        ann.discard(key)
    missing = np.fromiter(
        (key for key in rows.keys[: rows.size].tolist() if not ann.holds(key)), dtype=np.int64
    )
    if len(missing) + ann.dead > CATCH_UP_SHARE * rows.size:
        return None
    if len(missing):
        ann.add(missing, rows.vectors[[live[key] for key in missing.tolist()]])
    return len(missing)


def save_approximate(index: VectorIndex, folder: Path) -> int:
    """Write the approximate indexes changed since read or written, then the manifest: how many.
    Each file is written beside its old one and renamed over it, so a cut save leaves the old
    file, which its checksum (or the row check) then refuses or catches up."""
    folder.mkdir(parents=True, exist_ok=True)
    old = _manifest(folder)
    keep = old.get("model_id") == index.model_id and old.get("dimension") == index.dimension
    scopes: dict[str, Any] = dict(old.get("scopes", {})) if keep else {}
    written = 0
    for scope, rows in index.scope_rows():
        if rows.ann is None or (not rows.ann_changed and _stem(scope) in scopes):
            continue
        stem = _stem(scope)
        graph, keys = folder / f"{stem}.faiss", folder / f"{stem}.keys.npy"
        rows.ann.write(graph.with_suffix(".tmp"))
        with keys.with_suffix(".tmp").open("wb") as file:
            np.save(file, rows.ann.label_keys(), allow_pickle=False)
        os.replace(graph.with_suffix(".tmp"), graph)
        os.replace(keys.with_suffix(".tmp"), keys)
        scopes[stem] = {
            "scope": [scope.tenant, scope.agent, scope.project, scope.phase],
            "rows": rows.ann.live,
            "labels": rows.ann.labels,
            "graph_crc32": _crc(graph),
            "keys_crc32": _crc(keys),
        }
        rows.ann_changed = False
        written += 1
    manifest = {"format": FORMAT, "model_id": index.model_id, "dimension": index.dimension, "scopes": scopes}
    tmp = folder / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, folder / MANIFEST)
    return written


async def open_index_files(index: VectorIndex, database: Path) -> IndexLoad:
    """`open_approximate` from the folder beside the database, off the event loop."""
    return await asyncio.to_thread(open_approximate, index, folder_of(database))


def save_index_files(index: VectorIndex, database: Path) -> None:
    """`save_approximate` into the folder beside the database (at shutdown), when there is any;
    a build under way is waited for, not thrown away for the next start to do again."""
    if any(rows.wait_for_build() is not None for _, rows in index.scope_rows()):
        save_approximate(index, folder_of(database))
