"""Which verifier and which grounding floor the settings give a service: the cross-encoder with
the multilingual embedders (`MEMORY_CROSS_ENCODER=auto`), a warning when they run without it, and
the grounding floor that follows the embedder when `MEMORY_SIMILARITY_THRESHOLD` is unset."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.services import Services
from memory_guard.settings import Settings
from memory_guard.verify.configured import runs_cross_encoder, similarity_threshold, verifier_of


@pytest.mark.parametrize(
    ("setting", "model_id", "runs"),
    [
        ("auto", "local/multilingual-e5-small-q4-onnx", True),
        ("auto", "local/multilingual-e5-small-q4", True),
        ("auto", "local/all-MiniLM-L6-v2-qint8", False),
        ("auto", "hashing-384", False),
        ("on", "local/all-MiniLM-L6-v2-qint8", True),
        ("off", "local/multilingual-e5-small-q4-onnx", False),
    ],
)
def test_auto_runs_the_cross_encoder_on_the_candidates_it_was_fitted_on(
    setting: str, model_id: str, runs: bool
) -> None:
    settings = Settings(_env_file=None, memory_cross_encoder=setting)  # type: ignore[call-arg]
    assert runs_cross_encoder(settings, model_id) is runs
    off = settings.model_copy(update={"memory_verifier": "off"})
    assert runs_cross_encoder(off, model_id) is False, "no verifier, no cross-encoder"


async def test_auto_leaves_the_cross_encoder_off_for_another_embedder(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, memory_db_path=tmp_path / "memory.db", embedding_provider="hashing"
    )
    assert settings.memory_cross_encoder == "auto"
    services = await Services.open(settings, embedder=HashingEmbedder())
    try:
        assert services.cross_encoder is None
        verifier = services.guard.verifier
        assert verifier is not None and verifier.cross_encoder is None
    finally:
        await services.aclose()


class _E5IdEmbedder(HashingEmbedder):
    """Hashing vectors under the default embedder's id: only the id matters to `verifier_of`."""

    @property
    def model_id(self) -> str:
        return "local/multilingual-e5-small-q4-onnx"


def test_the_default_embedder_without_the_cross_encoder_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    off = Settings(_env_file=None, memory_cross_encoder="off")  # type: ignore[call-arg]
    with caplog.at_level("WARNING", logger="memory_guard.services"):
        verifier_of(off, _E5IdEmbedder())
    assert "without the cross-encoder serves wrong answers" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="memory_guard.services"):
        verifier_of(off, HashingEmbedder())
    assert "without the cross-encoder" not in caplog.text


def test_the_grounding_floor_follows_the_embedder_unless_set() -> None:
    unset = Settings(_env_file=None)  # type: ignore[call-arg]
    assert unset.memory_similarity_threshold is None
    assert similarity_threshold(unset, "local/multilingual-e5-small-q4-onnx") == 0.90
    assert similarity_threshold(unset, "local/all-MiniLM-L6-v2-qint8") == 0.85
    set_ = unset.model_copy(update={"memory_similarity_threshold": 0.8})
    assert similarity_threshold(set_, "local/multilingual-e5-small-q4-onnx") == 0.8
    # Never above a direct floor, which would leave a served score with no grounding under it.
    low = unset.model_copy(update={"memory_verified_direct_threshold": 0.88})
    assert similarity_threshold(low, "local/multilingual-e5-small-q4-onnx") == 0.88


async def test_the_service_grounds_from_the_default_embedders_floor(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, memory_db_path=tmp_path / "memory.db", memory_cross_encoder="off"
    )
    services = await Services.open(settings, embedder=_E5IdEmbedder())
    try:
        assert services.guard.policy.similar == 0.90
    finally:
        await services.aclose()
