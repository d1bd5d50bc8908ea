"""The settings an operator sees: `.env.example` lists exactly them, each documents itself, a
renamed one still reads its old name (with a warning), and the verifier's cut-offs come with the
trained model rather than from the environment."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from pydantic import SecretStr

from memory_guard.settings import Settings
from memory_guard.settings.outdated import REMOVED, RENAMED
from memory_guard.verify.features import compare
from memory_guard.verify.model import Cutoffs, PairModel, load_models

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"^([A-Z][A-Z0-9_]*)=", re.MULTILINE)


def _example_variables() -> list[str]:
    return VARIABLE.findall((ROOT / ".env.example").read_text("utf-8"))


def test_env_example_lists_every_setting_and_nothing_else() -> None:
    listed = _example_variables()
    assert len(listed) == len(set(listed)), "a variable is listed twice"
    fields = {name.upper() for name in Settings.model_fields}
    assert set(listed) - fields == set(), "listed in .env.example but not a setting"
    assert fields - set(listed) == set(), "a setting missing from .env.example"


def test_env_example_values_are_the_defaults() -> None:
    # Read with nothing else: what .env.example says must be what the code does without it.
    from_example = Settings(_env_file=ROOT / ".env.example")  # type: ignore[call-arg]
    defaults = Settings(_env_file=None)  # type: ignore[call-arg]
    assert from_example.model_dump() == defaults.model_dump()


def test_every_setting_documents_itself_and_secrets_stay_secret() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description and len(field.description) > 15, f"{name} has no description"
        if name.endswith(("_key", "_keys", "_token")):
            assert field.annotation is SecretStr, f"{name} holds a secret: SecretStr"


def test_the_renamed_embeddings_key_reads_its_old_name_and_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert RENAMED == {"openai_api_key": "embedding_api_key"}
    monkeypatch.delenv("EMBEDDING_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-old-name")
    with pytest.warns(DeprecationWarning, match="OPENAI_API_KEY is deprecated: rename it EMBEDDING_API_KEY"):
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.embedding_api_key.get_secret_value() == "sk-from-the-old-name"

    # In a `.env` file too, and the new name wins over the old one.
    monkeypatch.delenv("OPENAI_API_KEY")
    env_file = tmp_path / ".env"
    env_file.write_text("OPENAI_API_KEY=sk-old\nEMBEDDING_API_KEY=sk-new\n", "utf-8")
    with pytest.warns(DeprecationWarning, match="OPENAI_API_KEY"):
        settings = Settings(_env_file=env_file)  # type: ignore[call-arg]
    assert settings.embedding_api_key.get_secret_value() == "sk-new"


def test_the_new_name_reads_without_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EMBEDDING_API_KEY", "sk-new")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.embedding_api_key.get_secret_value() == "sk-new"
    assert Settings(_env_file=None, embedding_api_key="sk-kw").embedding_api_key.get_secret_value() == "sk-kw"  # type: ignore[call-arg]


def test_a_removed_setting_is_ignored_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "memory_verifier_accept" in REMOVED
    assert "memory_verifier_accept" not in Settings.model_fields
    monkeypatch.setenv("MEMORY_VERIFIER_ACCEPT", "0.1")
    with pytest.warns(DeprecationWarning, match="MEMORY_VERIFIER_ACCEPT is no longer a setting"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_every_shipped_classifier_carries_its_ordered_cut_offs() -> None:
    models = load_models()
    assert models
    for model in models.values():
        cut = model.cutoffs
        assert 0.0 <= cut.reject <= cut.accept <= cut.confident <= 1.0
    with pytest.raises(ValueError, match="ordered"):
        Cutoffs(accept=0.9, reject=0.95, confident=0.99)


def test_the_verifier_judges_with_the_cut_offs_of_its_model() -> None:
    """Moved out of the settings, the cut-offs must still be the ones the verdict reads."""
    from memory_guard.verify.verifier import OfflineVerifier

    model = PairModel(
        embedding_model="test",
        features=("similarity",),
        mean=np.array([0.0]),
        scale=np.array([1.0]),
        weights=np.array([0.0]),
        bias=0.0,  # p = 0.5 for every pair
        cutoffs=Cutoffs(accept=0.4, reject=0.1, confident=0.9),
    )
    pair = compare("Comment créer un index ?", "Comment créer un index ?", 0.9)
    assert OfflineVerifier(model).decide(pair).verdict.value == "accept"
    strict = PairModel(**{**_fields(model), "cutoffs": Cutoffs(accept=0.6, reject=0.1, confident=0.9)})
    assert OfflineVerifier(strict).decide(pair).verdict.value == "unsure"
    lax = PairModel(**{**_fields(model), "cutoffs": Cutoffs(accept=0.8, reject=0.6, confident=0.9)})
    assert OfflineVerifier(lax).decide(pair).verdict.value == "reject"
    assert PairModel.from_json("test", strict.to_json()).cutoffs == strict.cutoffs


def _fields(model: PairModel) -> dict[str, object]:
    return {name: getattr(model, name) for name in PairModel.__dataclass_fields__}
