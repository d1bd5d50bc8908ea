"""Settings that changed name or left: each old name still read with a warning, or ignored with one,
so that a `.env` written for an older release keeps working and says what to change."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping

from pydantic_settings import PydanticBaseSettingsSource

logger = logging.getLogger("memory_guard.settings")

# Old variable name -> the setting that replaced it. The old name keeps working, with a warning.
RENAMED = {"openai_api_key": "embedding_api_key"}
# Old variable -> what replaced it when its values changed too. Still read, with a warning.
REPLACED = {"memory_judge_enabled": "set MEMORY_JUDGE=on for true, MEMORY_JUDGE=off for false"}
# Variables that are no longer settings -> where the value lives now. Ignored, with a warning, so
# that a `.env` copied from an older `.env.example` says what to delete.
REMOVED = {
    "memory_verifier_accept": "the pair classifier's cut-offs in verify/pair_model.json",
    "memory_verifier_reject": "the pair classifier's cut-offs in verify/pair_model.json",
    "memory_verifier_confident": "the pair classifier's cut-offs in verify/pair_model.json",
    "memory_judge_max_tokens": "a constant of verify/llm_judge.py",
    "memory_bookkeeping_queue": "a constant of db/bookkeeping.py",
    "memory_bookkeeping_batch": "a constant of db/bookkeeping.py",
    "embedding_cache_size": "a constant of embeddings/cache.py",
    "app_url": "a constant of upstream/openai_chat.py",
    "app_name": "a constant of upstream/openai_chat.py",
}


def names_in(source: PydanticBaseSettingsSource) -> Mapping[str, object]:
    """The variables (or keyword arguments) a source was given, by lower-case name."""
    given = getattr(source, "init_kwargs", None) or getattr(source, "env_vars", None) or {}
    return {str(name).lower(): value for name, value in given.items()}


def warn_outdated(names: Mapping[str, object]) -> None:
    messages = (
        [
            f"{old.upper()} is deprecated: rename it {new.upper()} (the old name still works for now)"
            for old, new in RENAMED.items()
            if old in names
        ]
        + [
            f"{old.upper()} is deprecated: {how} (the old name still works for now)"
            for old, how in REPLACED.items()
            if old in names
        ]
        + [
            f"{name.upper()} is no longer a setting and is ignored: it is now {where}"
            for name, where in REMOVED.items()
            if name in names
        ]
    )
    for message in messages:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        logger.warning(message)
