"""Exact thermographs: taxed stops LS_t / RS_t as piecewise-linear functions (thesis section 5.6).

For an inner node ``G = {G^L | G^R}`` the *scaffolds* are

    left scaffold   SL(t) = max over G^L of  RS_t(G^L) - t
    right scaffold  SR(t) = min over G^R of  LS_t(G^R) + t

(the opponent's tax ``t`` is paid with each move).  Wall slopes are always in {-1, 0, +1}, so SL is
non-increasing and SR non-decreasing; the *temperature* t(G) is the lowest ``t`` with SL(t) <= SR(t) and the
*mean* m(G) = SL(t(G)) = SR(t(G)).  Above t(G) both stops are the vertical *mast* at m(G) (nobody wants to move
first in G when the ambient temperature is higher), which is the thesis's

    (5.1)  LS_t(G) = max(RS_t(G^L) - t, m(G)),     (5.2)  RS_t(G) = min(LS_t(G^R) + t, m(G)).

A leaf ``v`` has LS_t = RS_t = v; its temperature is 0 by the convention of Algorithm 5 (it cannot be played, so
the value never matters for play; classical CGT gives an integer temperature -1).  Cold games such as {0 | 1}
get a negative temperature (the scaffolds cross below t = 0: -1/2 here).  As in classical thermography the
functions live on taxes t >= -1 (up to a bound above every temperature in the tree); when the scaffolds have
already crossed at t = -1 the game is treated as cold with temperature -1 and mean halfway between the
scaffolds there (classical CGT would take the simplest number; in the thesis's no-pass rules nobody wants to
move in such a game, and only cold subpositions are affected).  Under the no-pass rules LS_0 / RS_0 of the
thermograph equal the real stops only for games with t(G) >= 0.

The horizontal axis of a thermograph is the score with positive values on the left (plotting helper
:func:`plot_thermograph`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxgo.cgt.games import LEFT, Game

# ----------------------------------------------------------------------------------------------------------
# Piecewise-linear functions of the tax t


@dataclass(frozen=True)
class PWL:
    """A continuous piecewise-linear function given by breakpoints ``ts`` (increasing) and values ``vs``."""

    ts: np.ndarray
    vs: np.ndarray

    def __call__(self, t):
        return np.interp(t, self.ts, self.vs)

    @staticmethod
    def constant(v: float, lo: float, hi: float) -> "PWL":
        return PWL(np.array([lo, hi]), np.array([v, v], dtype=float))

    @staticmethod
    def line(v0: float, slope: float, lo: float, hi: float) -> "PWL":
        """``v0 + slope * t``."""
        ts = np.array([lo, hi])
        return PWL(ts, v0 + slope * ts)

    def plus_tax(self, slope: float) -> "PWL":
        """``f(t) + slope * t`` (slope -1 taxes Left's move, +1 taxes Right's)."""
        return PWL(self.ts, self.vs + slope * self.ts)

    def simplified(self, tol: float = 1e-12) -> "PWL":
        """Drop duplicate and collinear breakpoints."""
        ts, vs = [self.ts[0]], [self.vs[0]]
        for k in range(1, len(self.ts)):
            if self.ts[k] - ts[-1] <= tol:
                continue
            if len(ts) >= 2 and k < len(self.ts):
                s0 = (vs[-1] - vs[-2]) / (ts[-1] - ts[-2])
                s1 = (self.vs[k] - vs[-1]) / (self.ts[k] - ts[-1])
                if abs(s0 - s1) <= 1e-9:
                    ts[-1], vs[-1] = self.ts[k], self.vs[k]
                    continue
            ts.append(self.ts[k])
            vs.append(self.vs[k])
        return PWL(np.array(ts), np.array(vs))

    def slope_at(self, t: float, side: int = -1) -> float:
        """Slope just below (side=-1) or just above (side=+1) ``t``."""
        h = 1e-7
        a, b = (t - h, t) if side < 0 else (t, t + h)
        return float((self(b) - self(a)) / h)


def envelope(fs: list[PWL], upper: bool) -> PWL:
    """Pointwise max (``upper``) or min of PWL functions sharing a domain."""
    grid = np.unique(np.concatenate([f.ts for f in fs]))
    vals = np.stack([f(grid) for f in fs])  # [k, len(grid)]
    extra = []
    for j in range(len(grid) - 1):  # every function is linear on [grid[j], grid[j+1]]: add pairwise crossings
        d0 = vals[:, j][:, None] - vals[:, j][None, :]
        d1 = vals[:, j + 1][:, None] - vals[:, j + 1][None, :]
        cross = (d0 * d1) < 0
        if cross.any():
            frac = d0[cross] / (d0[cross] - d1[cross])
            extra.extend(grid[j] + frac * (grid[j + 1] - grid[j]))
    grid = np.unique(np.concatenate([grid, np.array(extra)])) if extra else grid
    vals = np.stack([f(grid) for f in fs])
    return PWL(grid, vals.max(0) if upper else vals.min(0)).simplified()


def first_crossing(left: PWL, right: PWL) -> tuple[float, float]:
    """Lowest ``t`` where the non-increasing ``left`` meets or drops below the non-decreasing ``right``;
    returns ``(t, value)``.  If they have already crossed at the bottom of the domain (a cold game), returns
    the domain's lowest ``t`` and the midpoint between them there.  Raises if they never meet."""
    grid = np.unique(np.concatenate([left.ts, right.ts]))
    d = left(grid) - right(grid)
    below = np.nonzero(d <= 1e-12)[0]
    if len(below) == 0:
        raise ValueError("scaffolds do not cross inside the domain; widen it")
    k = below[0]
    if k == 0:
        return float(grid[0]), float((left(grid[0]) + right(grid[0])) / 2)
    if d[k] >= -1e-12:
        t = grid[k]
    else:
        t = grid[k - 1] + d[k - 1] / (d[k - 1] - d[k]) * (grid[k] - grid[k - 1])
    return float(t), float(left(t))


# ----------------------------------------------------------------------------------------------------------
# Thermographs


@dataclass(frozen=True)
class Thermograph:
    """Taxed stops of one node: ``left(t) = LS_t``, ``right(t) = RS_t`` (masts included)."""

    left: PWL
    right: PWL
    mean: float
    temperature: float

    @property
    def ls(self) -> float:
        """Left stop LS_0."""
        return float(self.left(0.0))

    @property
    def rs(self) -> float:
        """Right stop RS_0."""
        return float(self.right(0.0))

    def stop(self, player: int, t: float) -> float:
        """Taxed stop at ambient temperature ``t`` when ``player`` moves first."""
        return float(self.left(t) if player == LEFT else self.right(t))


T_MIN = -1.0  # lowest tax considered, as in classical thermography


def domain(game: Game) -> tuple[float, float]:
    """The tax range [-1, hi], hi above every temperature in the tree (walls move at most 1 per unit t)."""
    vals = game.leaf_values()
    span = (max(vals) - min(vals) + 1.0) * (_depth(game) + 1) + 1.0
    return T_MIN, span


def _depth(game: Game, node: int = 0) -> int:
    kids = game.left[node] + game.right[node]
    return 0 if not kids else 1 + max(_depth(game, c) for c in kids)


def mast(t0: float, m: float, scaffold: PWL) -> PWL:
    """``scaffold`` below ``t0`` and the constant ``m`` from ``t0`` up (the wall of a thermograph)."""
    keep = scaffold.ts < t0
    ts = np.concatenate([scaffold.ts[keep], [t0, scaffold.ts[-1]]])
    vs = np.concatenate([scaffold.vs[keep], [m, m]])
    if ts[-1] <= t0:  # t0 at the domain's top
        ts, vs = ts[:-1], vs[:-1]
    return PWL(ts, vs).simplified()


def scaffolds(option_thermographs_left, option_thermographs_right) -> tuple[PWL, PWL]:
    """Left scaffold max(RS_t(G^L) - t) and right scaffold min(LS_t(G^R) + t)."""
    sl = envelope([th.right.plus_tax(-1.0) for th in option_thermographs_left], upper=True)
    sr = envelope([th.left.plus_tax(+1.0) for th in option_thermographs_right], upper=False)
    return sl, sr


def combine(option_thermographs_left, option_thermographs_right) -> Thermograph:
    """Thermograph of ``{G^L | G^R}`` from its options' thermographs: equations (5.1)-(5.2)."""
    sl, sr = scaffolds(option_thermographs_left, option_thermographs_right)
    t0, m = first_crossing(sl, sr)
    return Thermograph(mast(t0, m, sl), mast(t0, m, sr), m, t0)


def thermographs(game: Game) -> list[Thermograph]:
    """Exact thermograph of every node of ``game`` (index = node id), computed bottom-up."""
    lo, hi = domain(game)
    out: list[Thermograph | None] = [None] * game.n_nodes

    def visit(n: int) -> Thermograph:
        if out[n] is None:
            if game.is_leaf(n):
                v = game.value[n]
                out[n] = Thermograph(PWL.constant(v, lo, hi), PWL.constant(v, lo, hi), v, 0.0)
            else:
                out[n] = combine([visit(c) for c in game.left[n]], [visit(c) for c in game.right[n]])
        return out[n]

    visit(0)
    return out


def shape(th: Thermograph) -> str:
    """``"leaf/number"`` (not hot), ``"gote"`` (both walls slanted just below t(G)), ``"sente (Left)"`` /
    ``"sente (Right)"`` (that player's wall is vertical below t(G): his move keeps the mean and demands an
    answer), or ``"mast"`` if both are vertical."""
    if th.temperature <= 0:
        return "leaf/number"
    t = th.temperature
    lv = abs(th.left.slope_at(t)) < 1e-6
    rv = abs(th.right.slope_at(t)) < 1e-6
    return {(False, False): "gote", (True, False): "sente (Left)", (False, True): "sente (Right)"}.get(
        (lv, rv), "mast"
    )


def plot_thermograph(ax, th: Thermograph, *, t_max: float | None = None, label: str = "", **kw):
    """Draw ``th`` on a matplotlib axis: x = score (positive on the left), y = tax t >= 0."""
    t_max = t_max if t_max is not None else max(th.temperature, 0.0) + 2.0
    ts = np.linspace(0.0, t_max, 400)
    (line,) = ax.plot(th.left(ts), ts, label=label, **kw)
    kw["color"] = line.get_color()
    ax.plot(th.right(ts), ts, **kw)
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    ax.set_xlabel("score (Left positive, drawn on the left)")
    ax.set_ylabel("tax / ambient temperature t")
    return line
