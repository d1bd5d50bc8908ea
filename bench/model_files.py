"""The shipped model files: their sizes, and what the cross-encoder file says of itself.

Printed in the header of bench/quality.py and bench/latency.py, so that a figure always comes
with the files that made it.
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import onnxruntime as ort

from memory_guard.embeddings.local import E5_MODEL, QUANTIZED_MODEL

MIB = 1024 * 1024
CROSS_ENCODER_FILE = "cross_encoder.onnx"
METADATA_KEY = "memory_guard.cross_encoder"  # the entry the cross-encoder's wrapper reads


def _embedding_asset(name: str) -> Traversable:
    return resources.files("memory_guard.embeddings").joinpath("assets", name)


def cross_encoder_asset() -> Traversable:
    return resources.files("memory_guard.verify").joinpath("assets", CROSS_ENCODER_FILE)


def _size(source: Traversable) -> str:
    if not source.is_file():
        return "missing"
    return f"{len(source.read_bytes()) / MIB:.1f} MiB"


def size_lines() -> list[str]:
    """One line per shipped model file, with its size in MiB."""
    files = [
        ("e5 (default) model", _embedding_asset(E5_MODEL.file_name)),
        ("e5 tokenizer", _embedding_asset(E5_MODEL.tokenizer_file)),
        ("MiniLM model", _embedding_asset(QUANTIZED_MODEL.file_name)),
        ("MiniLM tokenizer", _embedding_asset(QUANTIZED_MODEL.tokenizer_file)),
        ("cross-encoder model", cross_encoder_asset()),
    ]
    return [f"{label:<23}: {source.name} {_size(source)}" for label, source in files]


def cross_encoder_metadata() -> dict[str, Any] | None:
    """The JSON metadata of the shipped cross-encoder file; None when there is none."""
    source = cross_encoder_asset()
    if not source.is_file():
        return None
    session = ort.InferenceSession(source.read_bytes(), providers=["CPUExecutionProvider"])
    raw = session.get_modelmeta().custom_metadata_map.get(METADATA_KEY)
    if raw is None:
        return None
    meta = json.loads(raw)
    return meta if isinstance(meta, dict) else None


def _compact(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), default=str)


def metadata_lines(meta: dict[str, Any] | None) -> list[str]:
    """The cut-offs, the fit and the training summary the cross-encoder file carries."""
    if meta is None:
        return ["cross-encoder metadata : none (no shipped file, or no metadata entry)"]
    fitted = dict(meta.get("fitted", {}))
    kinds = fitted.pop("kinds", None)
    lines = [
        f"cross-encoder id       : {meta.get('model_id', '?')} (max_len {meta.get('max_len', '?')})",
        f"cross-encoder cut-offs : {_compact(meta.get('cutoffs', {}))}",
        f"cross-encoder fitted   : {_compact(fitted)}",
    ]
    if isinstance(kinds, dict):
        lines.append(
            f"  fitted direct by kind: {_compact({k: round(float(v), 4) for k, v in kinds.items()})}"
        )
    lines.append(f"cross-encoder training : {_compact(meta.get('training', {}))}")
    return lines


def header_lines() -> list[str]:
    return size_lines() + metadata_lines(cross_encoder_metadata())
