"""The default composite (decay gated by priority, exemptions) as one compiled pass, for large sweeps.

numpy evaluates the policy one operation at a time, some thirty passes over every column; on a million
records that is ~55 ms, while the seed's per-record Python loop of its simpler formula takes ~0.5 s.
A fused loop compiled by numba reads each record once. It is the same arithmetic as `ebbinghaus.py`,
`priority.py` and `composite.py` (a test checks equality on random batches); numpy stays the reference and
serves small batches, where compiling (~2 s once, then cached) would not pay.

Why it is shaped the way it is: the main loop is written so LLVM turns it into SIMD code (four records per
instruction), which roughly triples its speed. Three things stop that and are kept out of it:
- table lookups indexed per record (S0 by kind, the reinforcement by recall count) compile to gathers,
  which LLVM's cost model refuses on this class of CPU; a first, plain loop does both lookups;
- a call to libm's `exp`, which has no vector form here (llvmlite no longer links Intel's SVML); `_exp`
  below is the textbook vectorisable version (Cody-Waite reduction by ln 2, degree-12 Taylor polynomial,
  2^k built from its bits, no float-to-integer conversion), within 2 ulp of libm for the range a decay needs (x <= 0);
- branches: every choice is a select, and the division may not raise (`error_model="numpy"`; every
  stability is > 0 by RetentionConfig's checks).

numba is optional (the `ebbing[fast]` extra): nothing imports it before a batch is big enough to use it, and
when it cannot be imported `available()` and `applies()` say no, so every batch takes the numpy path, with the
same results, only slower on very large sweeps.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ebbing.model import Priority, Tier
from ebbing.retention.base import KINDS, MARKED_IMPORTANCE, PRIORITIES, RecordBatch
from ebbing.retention.config import DAY, RetentionConfig

FUSED_AT = 50_000  # records: below this numpy is fast enough and numba need not even be imported
LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two so that k * LN2_HI is exact for |k| < 2^20
LN2_LO = 1.90821492927058770002e-10
ROUNDING = 6755399441055744.0  # 1.5 * 2^52: adding it rounds a double to an integer, kept in the low bits
EXP_MIN = -708.0  # below this e^x is under 3.4e-308 (subnormal): taken as 0
TABLE_MAX = 1 << 20  # reinforcement table entries (8 MiB); a config saturating later is left to numpy


def _saturation(config: RetentionConfig) -> int:
    """The recall count from which reinforcement stays at its cap."""
    if config.beta <= 0:
        return 0
    return math.ceil(math.expm1(config.max_reinforcement - 1.0) / config.beta)


@functools.cache
def available() -> bool:
    """Whether numba can be imported. Asked only once a batch is big enough for the kernel, so small batches
    (and processes that never sweep a large store) never pay numba's import."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def applies(config: RetentionConfig) -> bool:
    """Whether the kernel computes this configuration's composite (combine="decay", a tabulable cap) and numba
    is there to compile it. The cheap checks come first so an inapplicable config never imports numba."""
    return config.combine == "decay" and _saturation(config) <= TABLE_MAX and available()


@functools.cache
def _compiled() -> Any:
    if not available():
        raise ImportError("the compiled sweep kernel needs numba: install the extra ebbing[fast]")
    from llvmlite import ir
    from numba import njit, prange, types
    from numba.extending import intrinsic

    def float_of_bits(typingctx: Any, bits: Any) -> Any:
        """Reinterpret an int64's bits as a float64 (what C does with a union)."""

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], ir.DoubleType())

        return types.float64(types.int64), codegen

    def bits_of_float(typingctx: Any, value: Any) -> Any:
        """Reinterpret a float64's bits as an int64."""

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], ir.IntType(64))

        return types.int64(types.float64), codegen

    # Typed Any: called from compiled code, where numba supplies the typing context the stubs ask for.
    as_float: Any = intrinsic(float_of_bits)
    as_bits: Any = intrinsic(bits_of_float)

    @njit(inline="always")
    def exp(x: float) -> float:
        """e^x for x <= 0 without a libm call, so that loops calling it vectorise."""
        y = max(x, EXP_MIN)
        # k = round(y / ln 2) without a float -> int conversion, which AVX2 can only do one value at a time:
        # after adding ROUNDING the low mantissa bits of `shifted` hold k itself.
        shifted = y * LOG2E + ROUNDING
        k = shifted - ROUNDING
        r = (y - k * LN2_HI) - k * LN2_LO  # |r| <= ln(2) / 2: the degree-12 Taylor remainder is < 1e-16
        p = 1.0 + r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720 + r * (
            1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r * (1 / 3628800 + r * (
                1 / 39916800 + r / 479001600)))))))))))
        # Times 2^k: k + 1023 shifted into the exponent field (the shift drops ROUNDING's own bits);
        # k >= -1021 keeps it a normal number.
        value = p * as_float((as_bits(shifted) + 1023) << 52)
        return value if x >= EXP_MIN else 0.0

    @njit(parallel=True, cache=True, error_model="numpy")
    def decay_scores(kind: Any, importance: Any, priority: Any, pinned: Any, held: Any, security: Any,
                     created: Any, last: Any, count: Any, updates: Any, now: float, base: Any, limit: Any,
                     reinforcement: Any, weight_floor: float, security_factor: float, marked_factor: float,
                     updated_factor: float, frequent: int, marked_at: float, protection: float, floor: float,
                     salience_factor: float, salience_pivot: float, out: Any) -> None:
        n = kind.shape[0]
        top = reinforcement.shape[0] - 1
        for i in prange(n):  # the lookups (gathers): S0 by kind times the capped reinforcement
            out[i] = base[kind[i]] * reinforcement[min(max(count[i], 0), top)]
        p0, p1, p2 = limit[0], limit[1], limit[2]
        for i in prange(n):  # everything else, branch-free
            reference = created[i] if math.isnan(last[i]) else last[i]
            elapsed = now - reference
            stability = (out[i] * (1.0 + (security_factor - 1.0) * security[i])
                         * (1.0 + (marked_factor - 1.0) * (importance[i] >= marked_at))
                         * salience_factor ** ((importance[i] < marked_at)
                                               * min(max((importance[i] - salience_pivot)
                                                         / (marked_at - salience_pivot), -1.0), 1.0))
                         * (1.0 + (updated_factor - 1.0) * (updates[i] >= frequent)))
            weight = weight_floor + (1.0 - weight_floor) * min(max(importance[i], 0.0), 1.0)
            score = max(weight * exp(-max(elapsed, 0.0) / stability), floor * (now - created[i] < protection))
            code = priority[i]
            expires = p0 if code == 0 else (p1 if code == 1 else p2)
            score = score if elapsed <= expires else 0.0  # priority expiry gates everything
            out[i] = 1.0 if (pinned[i] | held[i] | (code == 0)) else score  # `or` would branch

    @njit(parallel=True, cache=True)
    def tier_codes(scores: Any, hot: float, warm: float, cold: float, out: Any) -> None:
        for i in prange(scores.shape[0]):
            s = scores[i]
            out[i] = 3 - (s >= cold) - (s >= warm) - (s >= hot)

    @njit(parallel=True, cache=True)
    def placement_codes(scores: Any, priority: Any, created: Any, last: Any, now: float, hot: float, warm: float,
                        cold: float, p1: int, archive: float, out: Any) -> None:
        for i in prange(scores.shape[0]):
            s = scores[i]
            code = 3 - (s >= cold) - (s >= warm) - (s >= hot)
            reference = created[i] if math.isnan(last[i]) else last[i]
            # A forgotten P1 record stays cold within the archive window (Composite.settle), branch-free.
            out[i] = code - ((code == 3) & (priority[i] == p1) & (now - reference <= archive))

    @njit(cache=True)
    def exp_many(x: Any, out: Any) -> None:
        for i in range(x.shape[0]):
            out[i] = exp(x[i])

    return decay_scores, exp_many, tier_codes, placement_codes


def exp_nonpositive(x: np.ndarray) -> np.ndarray:
    """The kernel's own e^x (x <= 0), exposed so a test can hold it against numpy."""
    out = np.empty(len(x), dtype=np.float64)
    _compiled()[1](np.asarray(x, dtype=np.float64), out)
    return out


def tiers(scores: np.ndarray, hot: float, warm: float, cold: float) -> np.ndarray:
    """Tier codes as `Composite.tiers` computes them, in one compiled pass."""
    out = np.empty(len(scores), dtype=np.int8)
    _compiled()[2](np.ascontiguousarray(scores, dtype=np.float64), hot, warm, cold, out)
    return out


def placement(scores: np.ndarray, batch: RecordBatch, now: float, config: RetentionConfig) -> np.ndarray:
    """Tier codes as `Composite.placement` gives them (thresholds, then `Composite.settle`), in one pass."""
    hot, warm, cold = (config.thresholds[t] for t in (Tier.HOT, Tier.WARM, Tier.COLD))
    archive = config.archive_days * DAY if config.archive_days > 0 else -np.inf
    out = np.empty(len(scores), dtype=np.int8)
    _compiled()[3](np.ascontiguousarray(scores, dtype=np.float64), batch.priority, batch.created_at,
                   batch.last_accessed_at, float(now), hot, warm, cold, PRIORITIES.index(Priority.P1), archive, out)
    return out


def decay_scores(batch: RecordBatch, now: float, config: RetentionConfig) -> np.ndarray:
    """Composite scores for `combine="decay"`, computed by the compiled kernel."""
    if len(PRIORITIES) != 3:
        raise AssertionError("the kernel selects among exactly three priorities")
    base = np.array([config.stability_days[k] * DAY for k in KINDS], dtype=np.float64)
    limit = np.array([np.inf if p.value == "P0" else config.expiry_days[p] * DAY for p in PRIORITIES],
                     dtype=np.float64)
    out = np.empty(len(batch), dtype=np.float64)
    if config.combine != "decay" or _saturation(config) > TABLE_MAX:
        raise ValueError("the compiled kernel computes combine='decay' with a reinforcement cap it can tabulate")
    # Reinforcement reaches its cap after a few recalls (14 by default): tabulated up to there.
    counts = np.arange(_saturation(config) + 1, dtype=np.float64)
    reinforcement = np.minimum(1.0 + np.log1p(config.beta * counts), config.max_reinforcement)
    _compiled()[0](batch.kind, batch.importance, batch.priority, batch.pinned, batch.held, batch.security,
                   batch.created_at, batch.last_accessed_at, batch.access_count, batch.update_count, float(now), base,
                   limit, reinforcement, config.weight_floor, config.security_factor, config.marked_factor,
                   config.updated_factor, config.frequent_updates, MARKED_IMPORTANCE, config.protection_days * DAY,
                   config.protection_floor, config.salience_factor, config.salience_pivot, out)
    return out
