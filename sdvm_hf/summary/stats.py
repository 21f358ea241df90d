"""The answer-position test: each choices-count's answer positions against uniform.

A chi-square test, with :func:`chi_square_sf` computed here without scipy, and the test's
verdict in words (the one wording the text lines and the HTML page share).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sdvm_hf.errors import InputError

__all__ = [
    "ALPHA",
    "MIN_EXPECTED",
    "PositionBias",
    "bias_verdict",
    "chi_square_sf",
    "position_bias",
]


def chi_square_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X chi-square distributed with ``df`` degrees of freedom.

    This is the regularized upper incomplete gamma function Q(df/2, statistic/2), by its
    series below a + 1 and its continued fraction above (Numerical Recipes, ``gammq``).

    >>> round(chi_square_sf(3.841458820694124, 1), 6), round(chi_square_sf(2.0, 2), 6)
    (0.05, 0.367879)
    """
    if df < 1 or statistic < 0 or math.isnan(statistic):
        raise InputError(f"chi-square: expected df >= 1 and statistic >= 0, got {df}, {statistic}")
    a, x = df / 2, statistic / 2
    if x == 0:
        return 1.0
    scale = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:  # the series for P(a, x); Q = 1 - P
        term = total = 1 / a
        for n in range(1, 10_000):
            term *= x / (a + n)
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1 - total * scale)
    tiny = 1e-300  # the continued fraction for Q(a, x), by modified Lentz
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    fraction = d
    for n in range(1, 10_000):
        an = -n * (n - a)
        b += 2
        d = an * d + b
        d = 1 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        fraction *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return fraction * scale


ALPHA = 0.05
"""Answer positions whose chi-square p-value falls below this are flagged as biased."""

MIN_EXPECTED = 5
"""The test needs at least this many samples expected at each position to say anything."""


@dataclass(frozen=True)
class PositionBias:
    """Answer positions of one choices-count tested against uniform (chi-square)."""

    samples: int
    """Samples with this many choices."""
    statistic: float
    """The chi-square statistic: sum over positions of (observed - expected)^2 / expected."""
    df: int
    """Degrees of freedom: choices - 1."""
    p_value: float
    """P(chi-square >= statistic) were every position equally likely."""
    testable: bool
    """Whether every position expects at least :data:`MIN_EXPECTED` samples."""
    biased: bool
    """Testable, and ``p_value`` below :data:`ALPHA`."""


def position_bias(positions: dict[int, int], choices: int) -> PositionBias:
    """Test how often the answer sits at each of ``choices`` positions against uniform.

    >>> test = position_bias({0: 30, 1: 10}, 2)
    >>> test.statistic, round(test.p_value, 5), test.biased
    (10.0, 0.00157, True)
    """
    samples = sum(positions.values())
    expected = samples / choices
    statistic = sum((positions.get(p, 0) - expected) ** 2 / expected for p in range(choices))
    p_value = chi_square_sf(statistic, choices - 1)
    testable = expected >= MIN_EXPECTED
    return PositionBias(
        samples, statistic, choices - 1, p_value, testable, testable and p_value < ALPHA
    )


def bias_verdict(test: PositionBias) -> str:
    """The test's verdict in words."""
    if not test.testable:
        return f"too few samples to test (under {MIN_EXPECTED} expected per position)"
    return f"position bias (p < {ALPHA})" if test.biased else "no position bias found"
