"""Seeded bootstrap confidence intervals shared by the benchmark runners and `bench compare`.

Percentile bootstrap: simple, assumption-light, and honest about small n (the interval simply
gets wide). Seeded so a rerun prints the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0


class Interval(BaseModel):
    """A point estimate with its confidence interval (None bounds when n < 2); printed signed, as
    the deltas it mostly shows."""

    mean: float | None
    low: float | None
    high: float | None
    n: int
    level: float = 0.95

    def __str__(self) -> str:
        if self.mean is None:
            return "–"
        if self.low is None:
            return f"{self.mean:+.2f} (n={self.n})"
        return f"{self.mean:+.2f} [{self.low:+.2f}, {self.high:+.2f}] (n={self.n})"


def _interval(point: float, resampled: np.ndarray, n: int, level: float) -> Interval:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return Interval(mean=round(point, 4), low=round(float(low), 4), high=round(float(high), 4), n=n, level=level)


def mean_ci(values: Sequence[float], *, level: float = 0.95, resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED) -> Interval:
    """Mean of `values` with a bootstrap interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Interval(mean=None, low=None, high=None, n=0, level=level)
    if data.size == 1:
        return Interval(mean=round(float(data[0]), 4), low=None, high=None, n=1, level=level)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    return _interval(float(data.mean()), means, int(data.size), level)


def diff_ci(a: Sequence[float], b: Sequence[float], *, paired: bool, level: float = 0.95,
            resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Interval:
    """mean(b) - mean(a) with a bootstrap interval. Paired: `a[i]` and `b[i]` are the same item
    (resample items, keep pairs), which is tighter when both runs answered the same prompts."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if paired:
        if x.size != y.size:
            raise ValueError("paired samples need equal lengths")
        return mean_ci(y - x, level=level, resamples=resamples, seed=seed)
    if x.size == 0 or y.size == 0:
        return Interval(mean=None, low=None, high=None, n=min(x.size, y.size), level=level)
    point = float(y.mean() - x.mean())
    if x.size < 2 or y.size < 2:
        return Interval(mean=round(point, 4), low=None, high=None, n=min(x.size, y.size), level=level)
    rng = np.random.default_rng(seed)
    mx = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    my = y[rng.integers(0, y.size, size=(resamples, y.size))].mean(axis=1)
    return _interval(point, my - mx, int(min(x.size, y.size)), level)
