"""Triangle approximation of thermographs (thesis section 5.7).

A thermograph is summarised by four numbers: temperature t(G), mean m(G), left stop LS(G) = LS_0(G) and right
stop RS(G) = RS_0(G).  The approximate left wall is the straight line from (0, LS) to (t, m), the right wall
the line from (0, RS) to (t, m), and both continue as the vertical mast at m above t.  A node with t <= 0 (a
leaf, or a cold game) is just its mast at m.

The recursive computation from the options (section 5.7): of all Left options only the one with the highest
mean, L*, is kept, but with its right stop replaced by the highest right stop over all Left options,
``lrs = max RS(G^L)``; likewise Right keeps R* (lowest mean) with ``rls = min LS(G^R)``.  Taxing these walls
gives two-piece scaffolds

    SL(t) = right wall of (t(L*), m(L*), RS = lrs)  - t
    SR(t) = left wall of  (t(R*), m(R*), LS = rls)  + t

whose first crossing is (t(G), m(G)); LS(G) = lrs and RS(G) = rls.  For the toy games of Figure 5.2 (one
option per side, straight walls) this is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxgo.cgt.games import LEFT, Game
from jaxgo.cgt.thermograph import PWL, T_MIN, domain, first_crossing


@dataclass(frozen=True)
class Triangle:
    """Four-number approximate thermograph."""

    temperature: float
    mean: float
    ls: float
    rs: float

    def left_wall(self, t):
        """Approximate LS_t: line (0, ls) -> (temperature, mean), mast above."""
        return _wall(self.ls, self.mean, self.temperature, t)

    def right_wall(self, t):
        """Approximate RS_t: line (0, rs) -> (temperature, mean), mast above."""
        return _wall(self.rs, self.mean, self.temperature, t)

    def stop(self, player: int, t: float) -> float:
        """Approximate taxed stop at ambient temperature ``t`` when ``player`` moves first."""
        return float(self.left_wall(t) if player == LEFT else self.right_wall(t))


def _wall(stop: float, mean: float, temp: float, t):
    t = np.asarray(t, dtype=float)
    if temp <= 0:
        return np.full_like(t, mean)
    return np.where(t < temp, stop + (mean - stop) * t / temp, mean)


def leaf_triangle(value: float) -> Triangle:
    """A leaf: temperature 0, mean = both stops = its value (Algorithm 5)."""
    return Triangle(0.0, float(value), float(value), float(value))


def wall_pwl(stop: float, mean: float, temp: float, lo: float, hi: float) -> PWL:
    """A triangle wall as a PWL on [lo, hi]: the sloped line extended below 0, the mast above ``temp``."""
    if temp <= 0:
        return PWL.constant(mean, lo, hi)
    slope = (mean - stop) / temp
    return PWL(np.array([lo, temp, hi]), np.array([stop + slope * lo, mean, mean]))


def best_left(options: list[Triangle]) -> tuple[Triangle, float]:
    """(L*, lrs): the Left option with the highest mean and the highest right stop over all Left options."""
    star = max(options, key=lambda tri: tri.mean)
    return star, max(tri.rs for tri in options)


def best_right(options: list[Triangle]) -> tuple[Triangle, float]:
    """(R*, rls): the Right option with the lowest mean and the lowest left stop over all Right options."""
    star = min(options, key=lambda tri: tri.mean)
    return star, min(tri.ls for tri in options)


def approximate_scaffolds(lefts: list[Triangle], rights: list[Triangle], lo: float, hi: float) -> tuple[PWL, PWL]:
    """Taxed approximate walls of all Left options (SL) and of all Right options (SR)."""
    lstar, lrs = best_left(lefts)
    rstar, rls = best_right(rights)
    sl = wall_pwl(lrs, lstar.mean, lstar.temperature, lo, hi).plus_tax(-1.0)
    sr = wall_pwl(rls, rstar.mean, rstar.temperature, lo, hi).plus_tax(+1.0)
    return sl, sr


def triangle_from_options(lefts: list[Triangle], rights: list[Triangle], lo: float = T_MIN,
                          hi: float = 1e3) -> Triangle:
    """Triangle of ``{G^L | G^R}`` from the options' triangles (the recursive step of section 5.7)."""
    sl, sr = approximate_scaffolds(lefts, rights, lo, hi)
    t, m = first_crossing(sl, sr)
    return Triangle(t, m, best_left(lefts)[1], best_right(rights)[1])


def triangles(game: Game) -> list[Triangle]:
    """Recursive triangle approximation of every node of ``game`` (index = node id)."""
    lo, hi = domain(game)
    out: list[Triangle | None] = [None] * game.n_nodes

    def visit(n: int) -> Triangle:
        if out[n] is None:
            if game.is_leaf(n):
                out[n] = leaf_triangle(game.value[n])
            else:
                lefts = [visit(c) for c in game.left[n]]
                rights = [visit(c) for c in game.right[n]]
                out[n] = triangle_from_options(lefts, rights, lo, hi)
        return out[n]

    visit(0)
    return out
