"""How many threads numpy's OpenBLAS uses for a search's small products.

A search multiplies small matrices (a few dozen to a few hundred candidates by 240 background vectors).
OpenBLAS splits even those across every core, and its threads spin while they wait: on a loaded 2-core
machine a cold-fallback search took 36 ms with them and 14 ms single-threaded (docs/evaluation.md). Ranking
therefore runs its products single-threaded (`one_thread`, scoped to the call, the previous count restored
after, so code around Ebbing keeps its own setting); the evaluation pins the whole run (`--blas-threads`).
The embedder (OpenMP, not BLAS) is not affected.

numpy's wheels bundle OpenBLAS with prefixed symbols (`scipy_openblas_set_num_threads64_`); without them
(another BLAS, another build) nothing is changed and the caller is told so.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
          ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
          ("openblas_set_num_threads", "openblas_get_num_threads"))


def _openblas() -> tuple[Any, Any] | None:
    folder = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for path in sorted(folder.glob("libscipy_openblas*.so*")) + sorted(folder.glob("libopenblas*.so*")):
        try:
            lib = ctypes.CDLL(str(path))  # already loaded by numpy: the same handle
        except OSError:
            continue
        for setter, getter in _NAMES:
            if hasattr(lib, setter) and hasattr(lib, getter):
                set_threads, get_threads = getattr(lib, setter), getattr(lib, getter)
                set_threads.argtypes, set_threads.restype = [ctypes.c_int], None
                get_threads.argtypes, get_threads.restype = [], ctypes.c_int
                return set_threads, get_threads
    return None


_found: list[tuple[Any, Any] | None] = []


def _cached() -> tuple[Any, Any] | None:
    if not _found:
        _found.append(_openblas())
    return _found[0]


@contextmanager
def one_thread() -> Iterator[None]:
    """numpy's OpenBLAS on one thread inside the block (when it can be set), the previous count after."""
    found = _cached()
    if found is None:
        yield
        return
    set_threads, get_threads = found
    before = int(get_threads())
    if before == 1:
        yield
        return
    set_threads(1)
    try:
        yield
    finally:
        set_threads(before)


@contextmanager
def blas_threads(count: int) -> Iterator[int | None]:
    """Limit numpy's OpenBLAS to `count` threads inside the block (0: leave it); yields the count in force,
    or None when it could not be changed."""
    found = _cached() if count > 0 else None
    if found is None:
        yield None
        return
    set_threads, get_threads = found
    before = int(get_threads())
    set_threads(count)
    try:
        yield int(get_threads())
    finally:
        set_threads(before)
