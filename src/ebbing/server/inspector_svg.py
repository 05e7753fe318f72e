"""The inspector's two charts as inline SVG, drawn on the server: no script, no library, no network.

Every piece of text that came from a user goes through `escape`; the result is `Markup`, so the
templates insert it as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from markupsafe import Markup, escape

from ebbing.model import MemoryRecord

COLOURS = {"hot": "#d62728", "warm": "#ff7f0e", "cold": "#1f77b4", "trash": "#7f7f7f"}
CURVE_COLOURS = ("#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
WIDTH, HEIGHT = 520, 220
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 12, 28


def _x(value: float, low: float, high: float) -> float:
    return LEFT + (value - low) / ((high - low) or 1.0) * (WIDTH - LEFT - RIGHT)


def _y(value: float, high: float) -> float:
    return HEIGHT - BOTTOM - value / (high or 1.0) * (HEIGHT - TOP - BOTTOM)


def _frame(title: str, body: list[str]) -> Markup:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'class="chart" aria-label="{escape(title)}"><title>{escape(title)}</title>')
    axes = (f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}" class="axis"/>'
            f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" class="axis"/>')
    return Markup(head + axes + "".join(body) + "</svg>")


def _ticks(high: float) -> list[float]:
    if high <= 0:
        return [0.0]
    step = 10 ** np.floor(np.log10(high))
    while high / step > 5:
        step *= 2
    return [float(v) for v in np.arange(0, high + step / 2, step)]


def tier_chart(times: Sequence[float], counts: dict[str, list[int]]) -> Markup:
    """Stacked areas: how many records were in each tier at each time (hot at the bottom)."""
    body: list[str] = []
    totals = np.sum([counts[t] for t in COLOURS], axis=0) if times else np.zeros(0)
    high = float(max(totals.max() if totals.size else 0, 1))
    low_t, high_t = times[0], times[-1]
    for tick in _ticks(high):
        y = _y(tick, high)
        body.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" class="grid"/>'
                    f'<text x="{LEFT - 4}" y="{y + 4:.1f}" class="tick" text-anchor="end">{tick:g}</text>')
    base = np.zeros(len(times))
    for tier, colour in COLOURS.items():
        top = base + np.asarray(counts[tier], dtype=float)
        upper = [f"{_x(t, low_t, high_t):.1f},{_y(v, high):.1f}" for t, v in zip(times, top, strict=True)]
        lower = [f"{_x(t, low_t, high_t):.1f},{_y(v, high):.1f}" for t, v in zip(times, base, strict=True)]
        points = " ".join(upper + lower[::-1])
        body.append(f'<polygon points="{points}" fill="{colour}" fill-opacity="0.75" stroke="none">'
                    f'<title>{tier}: {counts[tier][-1]} now</title></polygon>')
        base = top
    for index in (0, len(times) // 2, len(times) - 1):
        moment = times[index]
        label = datetime.fromtimestamp(moment, tz=UTC).strftime("%b %d")
        anchor = "start" if index == 0 else "end" if index == len(times) - 1 else "middle"
        body.append(f'<text x="{_x(moment, low_t, high_t):.1f}" y="{HEIGHT - 8}" class="tick" '
                    f'text-anchor="{anchor}">{label}</text>')
    return _frame("Records per tier over the last days", body)


def curve_chart(curves: Sequence[tuple[MemoryRecord, np.ndarray, np.ndarray]], thresholds: dict[str, float],
                days: float) -> Markup:
    """Each record's projected retention if never used again, with the tier thresholds dashed."""
    body: list[str] = []
    for tier, value in thresholds.items():
        if tier not in COLOURS or value <= 0:
            continue
        y = _y(value, 1.0)
        body.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="{COLOURS[tier]}" '
                    f'stroke-dasharray="4 3" stroke-width="1"/>'
                    f'<text x="{WIDTH - RIGHT - 2}" y="{y - 3:.1f}" class="tick" text-anchor="end" '
                    f'fill="{COLOURS[tier]}">{tier} ≥ {value:g}</text>')
    for tick in (0.0, 0.5, 1.0):
        body.append(f'<text x="{LEFT - 4}" y="{_y(tick, 1.0) + 4:.1f}" class="tick" text-anchor="end">{tick:g}</text>')
    for index, (record, x_days, scores) in enumerate(curves):
        colour = CURVE_COLOURS[index % len(CURVE_COLOURS)]
        points = " ".join(f"{_x(float(d), 0.0, days):.1f},{_y(float(s), 1.0):.1f}"
                          for d, s in zip(x_days, scores, strict=True))
        body.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2">'
                    f'<title>{escape(record.text[:80])}</title></polyline>')
    for value in (0.0, days / 2, days):
        anchor = "start" if value == 0 else "end" if value == days else "middle"
        body.append(f'<text x="{_x(value, 0.0, days):.1f}" y="{HEIGHT - 8}" class="tick" '
                    f'text-anchor="{anchor}">{"now" if value == 0 else f"+{value:g} d"}</text>')
    return _frame("Projected retention if never used again", body)


def swatch(colour: str) -> Markup:
    """A small square of `colour`, drawn as SVG: a fill attribute, not a `style` one, which the inspector's
    Content-Security-Policy (no inline styles) would block."""
    return Markup(f'<svg class="key" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" rx="2" '
                  f'fill="{escape(colour)}"/></svg>')


def legend(curves: Sequence[tuple[MemoryRecord, np.ndarray, np.ndarray]]) -> list[tuple[Markup, MemoryRecord]]:
    """(colour swatch, record) per drawn curve, for the list under the chart."""
    return [(swatch(CURVE_COLOURS[i % len(CURVE_COLOURS)]), record) for i, (record, _, _) in enumerate(curves)]
