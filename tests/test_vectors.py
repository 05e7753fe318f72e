from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ebbing.store.vectors import SPLIT_AT, ScopeVectors


def _unit(rows: int, dims: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    out: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return out


@pytest.mark.parametrize("split", [False, True])
def test_int8_nominations_contain_the_exact_nearest(split: bool) -> None:
    matrix = _unit(SPLIT_AT + 500, 384, 0)
    index = ScopeVectors()
    for start in range(0, len(matrix), 4096):  # appended in pieces, as a stream of adds would
        index.append(np.arange(start, min(start + 4096, len(matrix))) + 1000, matrix[start : start + 4096])
    queries = _unit(20, 384, 1) * 0.3 + matrix[:20] * 0.7
    with ThreadPoolExecutor(1) as pool:
        for query in queries / np.linalg.norm(queries, axis=1, keepdims=True):
            exact = set(np.argsort(-(matrix @ query))[:10] + 1000)
            nominated = index.nearest(query, 30, pool=pool if split else None)
            assert exact <= set(nominated) and len(nominated) == 30


def test_a_larger_vector_rescales_without_losing_order() -> None:
    index = ScopeVectors()
    small = _unit(200, 16, 2) * 0.2 + np.eye(16, dtype=np.float32)[0] * 0.01
    index.append(np.arange(200), small / np.linalg.norm(small, axis=1, keepdims=True))
    spike = np.zeros((1, 16), dtype=np.float32)
    spike[0, 3] = 1.0  # far beyond the largest component seen so far
    index.append([999], spike)
    assert index.nearest(spike[0], 1) == [999]


def test_allowed_keys_filter_and_empty_index() -> None:
    assert ScopeVectors().nearest(np.ones(4, dtype=np.float32) / 2, 5) == []
    index = ScopeVectors()
    matrix = _unit(50, 8, 3)
    index.append(np.arange(50), matrix)
    assert index.nearest(matrix[7], 5, allowed=np.array([3, 7, 9])) == sorted(
        [3, 7, 9], key=lambda k: -float(matrix[k] @ matrix[7]))
