"""How many threads numpy's OpenBLAS uses during an evaluation.

A search multiplies small matrices (a few dozen candidates by 240 background vectors); OpenBLAS splits even
those across every core and its idle threads spin, which on a loaded 2-core machine made a search 2-3x
slower in this evaluation (docs/evaluation.md). The evaluation therefore runs numpy's BLAS single-threaded
by default (`--blas-threads 1`); 0 leaves it as it is. The embedder (OpenMP, not BLAS) is not affected.

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


@contextmanager
def blas_threads(count: int) -> Iterator[int | None]:
    """Limit numpy's OpenBLAS to `count` threads inside the block (0: leave it); yields the count in force,
    or None when it could not be changed."""
    found = _openblas() if count > 0 else None
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
