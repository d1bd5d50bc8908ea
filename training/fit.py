"""Weighted fitting of the pair classifier, in numpy only (deterministic for a seed)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


def fit_logistic(x: Floats, y: Floats, w: Floats, l2: float = 1.0) -> tuple[Floats, float]:
    """L2 logistic regression by Newton's method; returns (weights, bias)."""
    z = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2 / w.sum())
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        gradient = z.T @ (w * (p - y)) / w.sum() + penalty * beta
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z / w.sum() + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def fit_network(
    x: Floats, y: Floats, w: Floats, units: int = 16, steps: int = 3000, rate: float = 0.01, seed: int = 13
) -> tuple[Floats, Floats, Floats, float]:
    """One tanh hidden layer, full-batch Adam with a little L2; (hidden W, hidden b, W, b)."""
    rng = np.random.default_rng(seed)
    params = [
        rng.normal(0, 0.5, (x.shape[1], units)),
        np.zeros(units),
        rng.normal(0, 0.5, units),
        np.zeros(1),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    share = w / w.sum()
    l2 = 1e-3
    for t in range(1, steps + 1):
        hidden = np.tanh(x @ params[0] + params[1])
        p = 1.0 / (1.0 + np.exp(-(hidden @ params[2] + params[3][0])))
        dz = share * (p - y)
        dh = np.outer(dz, params[2]) * (1 - hidden**2)
        grads = [x.T @ dh + l2 * params[0], dh.sum(0), hidden.T @ dz + l2 * params[2], np.array([dz.sum()])]
        for i, g in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * g
            second[i] = 0.999 * second[i] + 0.001 * g * g
            params[i] -= rate * (first[i] / (1 - 0.9**t)) / (np.sqrt(second[i] / (1 - 0.999**t)) + 1e-8)
    return params[0], params[1], params[2], float(params[3][0])
