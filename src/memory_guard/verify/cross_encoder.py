"""The cross-encoder: one small transformer reading the stored and the incoming question together.

Two questions that differ by one word that changes the answer sit close together as separate
embeddings; read side by side, they do not. The model (the first layers of multilingual-e5-small,
fine-tuned by `training/train_cross_encoder.py`) returns the probability that the stored answer
serves the incoming question. It is one ONNX file, shipped in this package's assets and pinned by
sha256 like the embedding models; its metadata carries the input format and the cut-offs fitted
on the held-out pairs (`training/fit_cross_encoder.py`), so a retrained file brings its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from memory_guard.core.normalize import embedding_text
from memory_guard.embeddings.local import AssetMismatch, cpu_session, read_pinned
from memory_guard.embeddings.tokenizer import SharedTokenizer, TextEncoder, shared_tokenizer

MAX_CANDIDATES = 3  # the cross-encoder reads at most the top 3 unvetoed candidates
METADATA_KEY = "memory_guard.cross_encoder"
FORMAT = 1
ASSET = "cross_encoder.onnx"
ASSET_SHA256 = "71252d23f9d77cb82a8d7b55539b4a614bf5d3f116ba23e9a31ec6652bc2ef0a"
ASSET_SIZE = 38_709_970
DEFAULT_MODEL_ID = "local/cross-encoder-e5"
QUERY_PREFIX = "query: "
_OUTPUT = "probability"


class CrossEncoderAssetMismatch(AssetMismatch):
    """The shipped cross-encoder file is not the pinned one."""


class CrossEncoderFileError(ValueError):
    """A cross-encoder file whose metadata cannot be used."""


@dataclass(frozen=True, slots=True)
class CrossEncoderCutoffs:
    """From `direct` a candidate that passed the vetoes is served direct; below `unsure` it is
    rejected; in between it is unsure."""

    direct: float
    unsure: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.unsure <= self.direct <= 1.0:
            raise ValueError(
                f"cross-encoder cut-offs must satisfy 0 <= unsure <= direct <= 1, "
                f"not unsure={self.unsure}, direct={self.direct}"
            )


def pair_ids(
    tokenizer: TextEncoder, stored: str, incoming: str, max_len: int, prefix: str = QUERY_PREFIX
) -> list[int]:
    """`<s> query: A </s></s> query: B </s>` (XLM-R's pair format), at most max_len ids: the
    longer question is cut first, so a long stored question cannot crowd out the new one."""
    if max_len < 4:
        raise ValueError(f"max_len must leave room for the 4 special tokens, not {max_len}")
    first = tokenizer.encode(prefix + stored).ids  # <s> ... </s>
    second = tokenizer.encode(prefix + incoming).ids
    bos, eos = first[0], first[-1]
    head, tail = first[1:-1], second[1:-1]
    room = max_len - 4  # <s>, </s></s> between the two, </s> at the end
    while len(head) + len(tail) > room:
        if len(head) >= len(tail):
            head = head[:-1]
        else:
            tail = tail[:-1]
    return [bos, *head, eos, eos, *tail, eos]


@dataclass(frozen=True, slots=True)
class _Metadata:
    model_id: str
    max_len: int
    pad_id: int
    query_prefix: str
    tokenizer: str
    tokenizer_sha256: str
    cutoffs: CrossEncoderCutoffs


def _field(meta: Mapping[str, Any], key: str, kind: type, where: object) -> Any:
    if key not in meta:
        raise CrossEncoderFileError(f"cross-encoder {where}: its metadata has no {key!r}")
    value = meta[key]
    # bool is an int to Python, never a count or a probability here.
    if isinstance(value, bool) or not isinstance(value, kind):
        raise CrossEncoderFileError(
            f"cross-encoder {where}: metadata {key!r} must be a {kind.__name__}, not {value!r}"
        )
    return value


def _probability(meta: Mapping[str, Any], key: str, where: object) -> float:
    if key not in meta:
        raise CrossEncoderFileError(f"cross-encoder {where}: its cut-offs have no {key!r}")
    value = meta[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CrossEncoderFileError(f"cross-encoder {where}: cut-off {key!r} must be a number, not {value!r}")
    return float(value)


def parse_metadata(raw: Mapping[str, str], where: object) -> _Metadata:
    """The `memory_guard.cross_encoder` entry of the file's metadata, checked."""
    if METADATA_KEY not in raw:
        raise CrossEncoderFileError(f"cross-encoder {where}: no {METADATA_KEY!r} metadata entry")
    try:
        meta = json.loads(raw[METADATA_KEY])
    except json.JSONDecodeError as exc:
        raise CrossEncoderFileError(f"cross-encoder {where}: its metadata is not JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise CrossEncoderFileError(f"cross-encoder {where}: its metadata is not a JSON object")
    version = _field(meta, "format", int, where)
    if version != FORMAT:
        raise CrossEncoderFileError(
            f"cross-encoder {where}: metadata format {version}, this version reads format {FORMAT}"
        )
    max_len = _field(meta, "max_len", int, where)
    if max_len < 4:
        raise CrossEncoderFileError(f"cross-encoder {where}: max_len {max_len} leaves no room for text")
    cutoffs = _field(meta, "cutoffs", dict, where)
    try:
        bounds = CrossEncoderCutoffs(
            direct=_probability(cutoffs, "direct", where), unsure=_probability(cutoffs, "unsure", where)
        )
    except ValueError as exc:
        if isinstance(exc, CrossEncoderFileError):
            raise
        raise CrossEncoderFileError(f"cross-encoder {where}: {exc}") from exc
    model_id = meta.get("model_id", DEFAULT_MODEL_ID)
    if not isinstance(model_id, str) or not model_id:
        raise CrossEncoderFileError(f"cross-encoder {where}: metadata 'model_id' must be a non-empty string")
    return _Metadata(
        model_id=model_id,
        max_len=max_len,
        pad_id=_field(meta, "pad_id", int, where),
        query_prefix=_field(meta, "query_prefix", str, where),
        tokenizer=_field(meta, "tokenizer", str, where),
        tokenizer_sha256=_field(meta, "tokenizer_sha256", str, where),
        cutoffs=bounds,
    )


def shipped_asset() -> Traversable:
    return resources.files("memory_guard.verify").joinpath("assets", ASSET)


def _read_tokenizer(meta: _Metadata, where: object) -> SharedTokenizer:
    """The file the metadata names, among the embedders' shipped tokenizers, with its hash."""
    name = Path(meta.tokenizer).name
    source = resources.files("memory_guard.embeddings").joinpath("assets", name)
    if name != meta.tokenizer or not source.is_file():
        raise CrossEncoderFileError(
            f"cross-encoder {where}: its tokenizer {meta.tokenizer!r} is not one this package ships"
        )
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != meta.tokenizer_sha256:
        raise CrossEncoderFileError(
            f"cross-encoder {where} was made with tokenizer sha256 {meta.tokenizer_sha256}, but the "
            f"shipped {name} has sha256 {digest}; the token ids would not be the ones it learned"
        )
    # The very object the e5 embedder encodes with (about 80 MB once, not twice); it can be
    # neither cut nor padded by either user, so `pair_ids` sees the file's plain encoding.
    return shared_tokenizer(data)


class CrossEncoder:
    """A loaded cross-encoder. `probabilities` is synchronous and thread-safe (onnxruntime's
    `run` and the tokenizer both are); run it off the event loop."""

    def __init__(self, session: Any, tokenizer: TextEncoder, meta: _Metadata) -> None:
        self._session: Any = session
        self._tokenizer = tokenizer
        self._meta = meta
        self._lock = threading.Lock()
        self.model_id = meta.model_id
        self.cutoffs = meta.cutoffs

    @classmethod
    def load(cls, path: Path | None = None, *, threads: int | None = None) -> CrossEncoder:
        """The shipped file (None), checked against its pinned sha256 and size, or the file at
        `path`, read as is (a retrained model, tests)."""
        # Two where there are two cores: unlike one embedding (7% faster for 40% more CPU), a pair
        # run splits well (measured on 2 cores: 4.0 -> 2.8 ms for 1 pair, 10.7 -> 6.7 ms for 3), and
        # it sits on the path of a direct answer.
        count = min(2, os.cpu_count() or 1) if threads is None else threads
        if count < 1:
            raise ValueError(f"threads must be at least 1, not {count}")
        if path is None:
            source: Path | Traversable = shipped_asset()
            model = read_pinned(
                source, "cross-encoder model", ASSET_SHA256, ASSET_SIZE, CrossEncoderAssetMismatch
            )
        else:
            source, model = path, path.read_bytes()
        session = cpu_session(model, count)
        meta = parse_metadata(session.get_modelmeta().custom_metadata_map, source)
        names = {i.name for i in session.get_inputs()}
        outputs = {o.name for o in session.get_outputs()}
        if names != {"input_ids", "attention_mask"} or _OUTPUT not in outputs:
            raise CrossEncoderFileError(
                f"cross-encoder {source}: expected inputs input_ids, attention_mask and output "
                f"{_OUTPUT!r}, found inputs {sorted(names)} and outputs {sorted(outputs)}"
            )
        return cls(session, _read_tokenizer(meta, source), meta)

    @property
    def max_len(self) -> int:
        return self._meta.max_len

    def pair_ids(self, stored: str, incoming: str) -> list[int]:
        return pair_ids(self._tokenizer, stored, incoming, self._meta.max_len, self._meta.query_prefix)

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(the stored answer serves the incoming question) for each (stored, incoming) pair,
        in order, in one run."""
        session = self._session
        if session is None:
            raise RuntimeError("the cross-encoder is closed")
        if not pairs:
            return []
        # As for the vectors, greetings and politeness ask nothing: the model reads without them
        # (the service, the fit of the cut-offs and the benches all read through here).
        rows = [self.pair_ids(embedding_text(stored), embedding_text(incoming)) for stored, incoming in pairs]
        width = max(len(row) for row in rows)
        ids = np.full((len(rows), width), self._meta.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        out = session.run([_OUTPUT], {"input_ids": ids, "attention_mask": mask})[0]
        return [float(p) for p in np.asarray(out, dtype=np.float64).reshape(-1)]

    def close(self) -> None:
        with self._lock:
            self._session = None
