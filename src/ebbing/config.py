"""Where Ebbing keeps its files when nobody says: `$EBBING_HOME`, else `~/.ebbing`."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    configured = os.environ.get("EBBING_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".ebbing"


def default_db() -> Path:
    return home() / "ebbing.db"
