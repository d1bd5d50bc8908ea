"""The verifier's training: the split it relies on and the fitting it ships."""

from __future__ import annotations

import numpy as np
from training.fit import fit_logistic, fit_network
from training.splits import half_of


def test_a_pair_keeps_its_half_in_either_order() -> None:
    pairs = [(f"question {i}", f"autre question {i}") for i in range(400)]
    halves = [half_of(a, b) for a, b in pairs]
    assert halves == [half_of(b, a) for a, b in pairs]
    assert 150 < halves.count("train") < 250, "about half of the pairs train"


def _toy() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 0] - 0.5 * x[:, 1] > 0).astype(float)
    return x, y, np.ones(len(y))


def test_logistic_fit_separates_a_separable_set() -> None:
    x, y, w = _toy()
    weights, bias = fit_logistic(x, y, w)
    predicted = (x @ weights + bias > 0).astype(float)
    assert (predicted == y).mean() > 0.97
    assert weights[0] > 0 > weights[1]


def test_network_fit_is_deterministic_and_learns() -> None:
    x, y, w = _toy()
    first = fit_network(x, y, w, steps=800, seed=3)
    again = fit_network(x, y, w, steps=800, seed=3)
    assert (
        all(np.array_equal(a, b) for a, b in zip(first[:3], again[:3], strict=True)) and first[3] == again[3]
    )
    hidden_w, hidden_b, out_w, out_b = first
    predicted = (np.tanh(x @ hidden_w + hidden_b) @ out_w + out_b > 0).astype(float)
    assert (predicted == y).mean() > 0.95
