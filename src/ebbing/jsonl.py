"""Reading JSON Lines strictly: every line must be UTF-8 and one JSON object, or it is reported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def read(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Yield (line number, object, None) or (line number, None, what is wrong); blank lines are skipped."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, None, f"line {number}: not valid UTF-8 (byte {exc.start})"
                continue
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, None, f"line {number}: not valid JSON ({exc.msg})"
                continue
            if not isinstance(value, dict):
                yield number, None, f"line {number}: must be a JSON object"
                continue
            yield number, value, None
