"""PNG plots of forgetting curves, drawn with matplotlib's Agg backend (no display needed).

matplotlib is imported inside the functions: it is slow to import and only these plots need it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.model import Kind, Tier
from ebbing.retention.config import RetentionConfig

DPI = 120
FIGSIZE = (10.0, 5.5)
TIER_COLOURS = {Tier.HOT: "#d62728", Tier.WARM: "#ff7f0e", Tier.COLD: "#1f77b4", Tier.TRASH: "#7f7f7f"}
TOP = 1.05
LINESTYLES = ("-", "--")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _tiers(ax: Any, config: RetentionConfig) -> None:
    """Dashed threshold lines labelled with their tier, each tier's band lightly shaded."""
    hot, warm, cold = (config.thresholds[t] for t in (Tier.HOT, Tier.WARM, Tier.COLD))
    bands = ((Tier.HOT, hot, TOP), (Tier.WARM, warm, hot), (Tier.COLD, cold, warm), (Tier.TRASH, 0.0, cold))
    for tier, low, high in bands:
        ax.axhspan(low, high, color=TIER_COLOURS[tier], alpha=0.07, linewidth=0)
    for tier, value in ((Tier.HOT, hot), (Tier.WARM, warm), (Tier.COLD, cold)):
        ax.axhline(value, color=TIER_COLOURS[tier], linestyle="--", linewidth=1)
        # Axes-fraction x with data y: the label sits at the right edge whatever the time range.
        ax.text(0.995, value + 0.01, f"{tier.value} ≥ {value:g}", transform=ax.get_yaxis_transform(),
                ha="right", va="bottom", fontsize=9, color=TIER_COLOURS[tier])
    ax.text(0.995, 0.01, "forgotten", transform=ax.get_yaxis_transform(), ha="right", va="bottom", fontsize=9,
            color=TIER_COLOURS[Tier.TRASH])
    ax.set_ylim(0.0, TOP)
    ax.set_ylabel("retention score")
    ax.grid(True, alpha=0.3)


def _save(fig: Any, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=DPI)
    return out


def plot_record(times: np.ndarray, scores: np.ndarray, access_times: Sequence[float], config: RetentionConfig,
                title: str, path: str | Path) -> Path:
    """One record's curve (times in epoch seconds, drawn as UTC dates) with its recalls marked."""
    plt = _pyplot()
    import matplotlib.dates

    # matplotlib.dates is untyped; Any keeps strict mypy from flagging each call.
    mdates: Any = matplotlib.dates

    times = np.asarray(times, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    try:
        _tiers(ax, config)
        ax.plot(_dates(times), scores, color="black", linewidth=1.6, label="retention")
        recalls = np.asarray(access_times, dtype=np.float64)
        recalls = recalls[(recalls >= times[0]) & (recalls <= times[-1])] if times.size else recalls[:0]
        if recalls.size:
            # The marker sits on the top of the jump: the last sample at the recall instant is "after".
            after = scores[np.searchsorted(times, recalls, side="right") - 1]
            ax.scatter(_dates(recalls), after, marker="o", s=36, color="#2ca02c", edgecolor="black", zorder=3,
                       label="recall")
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set_xlabel("date (UTC)")
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return _save(fig, path)
    finally:
        plt.close(fig)


def plot_kinds(curves: Mapping[Kind, tuple[np.ndarray, np.ndarray]], config: RetentionConfig, path: str | Path,
               title: str = "Forgetting curve by kind (never recalled, importance 0.6, P1)") -> Path:
    """One line per kind (x in days), as `kind_curves` returns them, over the tier thresholds."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    try:
        _tiers(ax, config)
        for index, (kind, (days, scores)) in enumerate(curves.items()):
            # Kinds can share a stability (decision and summary do by default); alternating dashes keeps
            # a line drawn over another visible.
            ax.plot(days, scores, linewidth=1.6, linestyle=LINESTYLES[index % len(LINESTYLES)], label=kind.value)
        ax.set_xlabel("days since creation")
        ax.set_xlim(left=0)
        ax.set_title(title)
        ax.legend(title="kind", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return _save(fig, path)
    finally:
        plt.close(fig)


def _dates(epoch_seconds: np.ndarray) -> np.ndarray:
    """Epoch seconds as numpy datetimes (millisecond precision), which matplotlib plots on a date axis."""
    out: np.ndarray = np.round(epoch_seconds * 1000).astype("datetime64[ms]")
    return out
