"""The learned pair classifier over `features.FEATURES`: a small neural network or a logistic
regression, on standardized features.

Its parameters ship as `pair_model.json`, one set per embedding model, because the
similarity features mean something else for each model. Each set carries its own cut-offs:
they read the probabilities of that trained network, so they change when it is retrained, not
when a deployment changes. `training/train_verifier.py` writes that file; nothing here trains.
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
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Cutoffs:
    """The classifier probabilities that turn into a verdict."""

    accept: float  # from here the verifier says yes
    reject: float  # below this it says no; in between it is unsure (and asks the judge, if any)
    confident: float  # from here a yes is confident: served from the lower verified-direct floor

    def __post_init__(self) -> None:
        if not 0.0 <= self.reject <= self.accept <= self.confident <= 1.0:
            raise ValueError(
                "cut-offs must be ordered 0 <= reject <= accept <= confident <= 1, "
                f"not {self.reject}, {self.accept}, {self.confident}"
            )

    def to_json(self) -> dict[str, float]:
        return {"accept": self.accept, "reject": self.reject, "confident": self.confident}


# The cut-offs measured for the shipped classifiers; a newly trained model starts from them.
DEFAULT_CUTOFFS = Cutoffs(accept=0.7, reject=0.2, confident=0.95)


@dataclass(frozen=True, slots=True)
class PairModel:
    embedding_model: str
    features: tuple[str, ...]  # the columns of FEATURES it reads, in order
    mean: Floats
    scale: Floats
    weights: Floats  # output layer
    bias: float
    cutoffs: Cutoffs
    hidden_weights: Floats | None = None  # (features, units): a tanh hidden layer, when present
    hidden_bias: Floats | None = None

    @property
    def uses_residual(self) -> bool:
        return "residual_similarity" in self.features

    def probability(self, vector: Floats) -> float:
        """Probability that the stored answer serves the incoming question."""
        columns = [FEATURES.index(name) for name in self.features]
        x = (vector[columns] - self.mean) / self.scale
        if self.hidden_weights is not None and self.hidden_bias is not None:
            x = np.tanh(x @ self.hidden_weights + self.hidden_bias)
        z = float(x @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "features": list(self.features),
            "mean": _rounded(self.mean),
            "scale": _rounded(self.scale),
            "weights": _rounded(self.weights),
            "bias": round(self.bias, 6),
            "cutoffs": self.cutoffs.to_json(),
        }
        if self.hidden_weights is not None and self.hidden_bias is not None:
            data["hidden_weights"] = [_rounded(row) for row in self.hidden_weights]
            data["hidden_bias"] = _rounded(self.hidden_bias)
        return data

    @classmethod
    def from_json(cls, embedding_model: str, data: dict[str, Any]) -> PairModel:
        unknown = [name for name in data["features"] if name not in FEATURES]
        if unknown:
            raise ValueError(f"{MODEL_FILE} uses unknown features {unknown}; retrain it")
        hidden = data.get("hidden_weights")
        cutoffs = data["cutoffs"]
        return cls(
            embedding_model=embedding_model,
            features=tuple(data["features"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            cutoffs=Cutoffs(
                accept=float(cutoffs["accept"]),
                reject=float(cutoffs["reject"]),
                confident=float(cutoffs["confident"]),
            ),
            hidden_weights=None if hidden is None else np.asarray(hidden, dtype=np.float64),
            hidden_bias=None if hidden is None else np.asarray(data["hidden_bias"], dtype=np.float64),
        )


def _rounded(values: Floats) -> list[float]:
    return [round(float(v), 6) for v in values]


def load_models(path: Path | None = None) -> dict[str, PairModel]:
    """Every shipped classifier, by the embedding model it was trained with."""
    if path is None:
        text = resources.files("memory_guard.verify").joinpath(MODEL_FILE).read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    document = json.loads(text)
    return {name: PairModel.from_json(name, data) for name, data in document["models"].items()}
