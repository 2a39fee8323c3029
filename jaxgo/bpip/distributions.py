"""Discrete value distributions on a symmetric grid: the DFISA staircase (eq. 14) and BPIP propagation.

Every distribution is a probability vector over a fixed grid ``g`` that is symmetric about 0
(``g[i] == -g[G-1-i]``), so negation (the negamax change of viewpoint) is a reversal of the vector.
A real value is placed on the grid by linear interpolation between its two neighbours, which keeps the mean
exactly (values outside the grid are clipped to its ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Grid:
    """Symmetric value grid ``step * (-K..K)``."""

    half_width: float = 12.0
    step: float = 0.1

    @property
    def values(self) -> np.ndarray:
        k = int(round(self.half_width / self.step))
        return np.arange(-k, k + 1, dtype=np.float64) * self.step

    @property
    def size(self) -> int:
        return 2 * int(round(self.half_width / self.step)) + 1


def staircase(mean: float, upper: float, lower: float, alpha: float) -> list[tuple[float, float]]:
    """Triple-spike distribution of eq. (14): spikes (Lw, p_lo), (M, alpha), (Up, p_hi); its mean is M.

    ``p_lo = (1-alpha)(Up-M)/(Up-Lw)`` and ``p_hi = (1-alpha)(M-Lw)/(Up-Lw)``.  Bounds are first made to
    contain M; when Up == Lw the distribution is the single spike (M, 1).
    """
    upper, lower = max(upper, mean), min(lower, mean)
    if upper - lower <= 1e-12:
        return [(float(mean), 1.0)]
    width = upper - lower
    spikes = [
        (float(lower), (1.0 - alpha) * (upper - mean) / width),
        (float(mean), float(alpha)),
        (float(upper), (1.0 - alpha) * (mean - lower) / width),
    ]
    return [(z, p) for z, p in spikes if p > 0.0]


def snap(values, grid: Grid) -> np.ndarray:
    """Rows of point masses at ``values`` ([S] -> [S, G]), each split linearly between two grid points."""
    g = grid.values
    v = np.clip(np.asarray(values, dtype=np.float64), g[0], g[-1])
    pos = (v - g[0]) / grid.step
    lo = np.clip(np.floor(pos).astype(int), 0, len(g) - 1)
    hi = np.minimum(lo + 1, len(g) - 1)
    frac = pos - lo
    out = np.zeros((v.size, len(g)))
    rows = np.arange(v.size)
    np.add.at(out, (rows, lo), 1.0 - frac)
    np.add.at(out, (rows, hi), frac)
    return out


def spikes_to_pmf(spikes, grid: Grid) -> np.ndarray:
    """Probability vector [G] of a list of (value, probability) spikes."""
    z = np.array([s[0] for s in spikes])
    p = np.array([s[1] for s in spikes])
    return p @ snap(z, grid)


def negate(pmf: np.ndarray) -> np.ndarray:
    """Distribution of -X (reversal on the symmetric grid); works on the last axis."""
    return pmf[..., ::-1]


def neg_cdf(pmf: np.ndarray) -> np.ndarray:
    """CDF of -X, i.e. ``F[i] = P(-X <= g[i])``, on the last axis."""
    return np.cumsum(pmf[..., ::-1], axis=-1)


def max_of_negated(children_pmfs: np.ndarray) -> np.ndarray:
    """Distribution of max_m(-X_m) for independent children X_m (product rule for CDFs): [b, G] -> [G]."""
    cdf = np.prod(neg_cdf(children_pmfs), axis=0)
    return np.diff(cdf, prepend=0.0)


def exclusive_products(rows: np.ndarray) -> np.ndarray:
    """For rows r_0..r_{b-1} ([b, G]), the products of all other rows ([b, G]) without division."""
    b = rows.shape[0]
    ones = np.ones((1,) + rows.shape[1:])
    prefix = np.concatenate([ones, np.cumprod(rows, axis=0)[:-1]], axis=0)
    suffix = np.concatenate([np.cumprod(rows[::-1], axis=0)[:-1][::-1], ones], axis=0) if b > 1 else ones
    return prefix * suffix


def mean(pmf: np.ndarray, grid: Grid) -> np.ndarray:
    """Expected value on the last axis."""
    return pmf @ grid.values


def best_probabilities(pmfs: np.ndarray) -> np.ndarray:
    """Pr(m): probability that X_m is the largest of independent X_0..X_{b-1} ([b, G] -> [b]).

    Ties are broken uniformly at random, computed exactly with Gauss-Legendre quadrature over a uniform
    tie-break variable u: P(m best) = sum_v p_m(v) * int_0^1 prod_{o != m} (F_o(v-) + p_o(v) u) du,
    a polynomial of degree b-1 in u.
    """
    b = pmfs.shape[0]
    if b == 1:
        return np.ones(1)
    cdf = np.cumsum(pmfs, axis=-1)
    below = cdf - pmfs
    n = max(1, math.ceil(b / 2))
    nodes, weights = np.polynomial.legendre.leggauss(n)
    u = 0.5 * (nodes + 1.0)
    w = 0.5 * weights
    terms = below[None] + pmfs[None] * u[:, None, None]  # [n, b, G]
    others = np.stack([exclusive_products(t) for t in terms])  # [n, b, G]
    integral = np.tensordot(w, others, axes=1)  # [b, G]
    probs = np.sum(pmfs * integral, axis=-1)
    return probs / probs.sum()
