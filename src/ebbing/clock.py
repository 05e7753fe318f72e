"""Time is an input. Every public operation takes `at`; this module turns it into aware UTC.

Inside the engine times travel as epoch seconds (float): that is what the retention arithmetic and
the stores use. Only this module and the surfaces read the wall clock.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from ebbing.errors import InvalidInput

Instant = datetime | float | int | str | None
LATEST = datetime(9999, 12, 30, tzinfo=UTC).timestamp()  # a day short of datetime.max, for any UTC offset


def now() -> float:
    return time.time()


def to_epoch(at: Instant, field: str = "at") -> float:
    """`at` as epoch seconds: None means now; naive datetimes and ISO strings without an offset are UTC."""
    if at is None:
        return now()
    if isinstance(at, bool):
        raise InvalidInput(field, "must be a datetime, epoch seconds or an ISO-8601 string, not a boolean")
    if isinstance(at, int | float):
        value = float(at)
        if not math.isfinite(value) or value < 0:
            raise InvalidInput(field, "epoch seconds must be a finite number >= 0")
        if value > LATEST:  # beyond it no datetime can hold the time (found by the server's schema fuzzing)
            raise InvalidInput(field, "must be before the year 9999")
        return value
    if isinstance(at, str):
        text = at.strip()
        if not text:
            raise InvalidInput(field, "cannot parse an empty timestamp")
        try:
            return to_epoch(float(text), field)
        except ValueError:
            pass
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise InvalidInput(field, f"cannot parse timestamp {at!r}; use ISO-8601 or epoch seconds") from None
        return to_epoch(parsed, field)
    if isinstance(at, datetime):
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        if at.timestamp() > LATEST:
            raise InvalidInput(field, "must be before the year 9999")
        return at.timestamp()
    raise InvalidInput(field, f"must be a datetime, epoch seconds or an ISO-8601 string, not {type(at).__name__}")


def to_datetime(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC)


def iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC).isoformat()
