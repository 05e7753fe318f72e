"""The small logistic regression the salience and sameness models are fitted with."""

from __future__ import annotations

import numpy as np


def logistic(features: np.ndarray, labels: np.ndarray, l2: float) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (the bias, last, is not penalised). Small, exact
    and dependency-free for a few hundred rows; returns weights with the bias last."""
    design = np.hstack([features, np.ones((len(features), 1))])
    weights = np.zeros(design.shape[1])
    penalty = np.eye(design.shape[1]) * l2
    penalty[-1, -1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -40, 40)))
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, design.T @ (p - labels) + penalty @ weights)
        weights -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return weights
