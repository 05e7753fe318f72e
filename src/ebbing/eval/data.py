"""Where the public evaluation data lives: `../shared/data/...` beside the checkout (never shipped with it)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # src/ebbing/eval/data.py -> the checkout (when run from one)


def shared_file(relative: Path) -> Path | None:
    """`relative` (e.g. `../shared/data/locomo/locomo10.json`) from the current folder or the checkout, if there."""
    for base in (Path.cwd(), REPO):
        candidate = (base / relative).resolve()
        if candidate.is_file():
            return candidate
    return None
