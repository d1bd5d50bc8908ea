"""The learned pair classifier: a logistic regression over `features.FEATURES`.

Its parameters ship as `pair_model.json`, one set per embedding model, because the
similarity feature means something else for each model. `training/train_verifier.py`
writes that file; nothing here trains.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_guard.verify.features import FEATURES

MODEL_FILE = "pair_model.json"


@dataclass(frozen=True, slots=True)
class PairModel:
    embedding_model: str
    weights: npt.NDArray[np.float64]
    bias: float
    mean: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]

    def probability(self, features: npt.NDArray[np.float64]) -> float:
        """Probability that the stored answer serves the incoming question."""
        z = float(((features - self.mean) / self.scale) @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": [round(float(w), 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "mean": [round(float(m), 6) for m in self.mean],
            "scale": [round(float(s), 6) for s in self.scale],
        }

    @classmethod
    def from_json(cls, embedding_model: str, data: dict[str, Any]) -> PairModel:
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{MODEL_FILE} was trained on other features; retrain it")
        return cls(
            embedding_model=embedding_model,
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
        )


def load_models(path: Path | None = None) -> dict[str, PairModel]:
    """Every shipped classifier, by the embedding model it was trained with."""
    if path is None:
        text = resources.files("memory_guard.verify").joinpath(MODEL_FILE).read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    document = json.loads(text)
    return {name: PairModel.from_json(name, data) for name, data in document["models"].items()}
