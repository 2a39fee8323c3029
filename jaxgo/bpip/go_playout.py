"""9x9 (any size) Go move choice for the BPIP controller with playout-based leaf distributions.

A leaf is evaluated by ``playouts_per_leaf`` (L) light playouts (``jaxgo.playouts.xla.light.run``); all children of an
expanded node are generated (``rules.play``, vmapped) and played out in one device call.  Values are for the
side to move at the node, on [-1, 1]:

  p  = (wins + draws / 2 + 1) / (L + 2)          (win rate, Laplace-smoothed)
  M  = 2 p - 1,   Up = min(1, M + z s),   Lw = max(-1, M - z s),   s = 2 sqrt(p (1 - p) / (L + 1))

i.e. the staircase of eq. (14) is centred on the playout mean and its outer spikes sit ``z`` (default 2)
standard errors away.  A node after two passes is exact (+1 / -1 / 0 by the area score).  Moves: legal
points that do not fill the mover's own eye (the playout eye rule, as MCTS does); pass only if none.

Batches are padded to a multiple of ``pad`` states so that one compiled kernel serves most expansions; the
padding playouts are not counted (``playouts`` counts only the ones whose results are used).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.bpip.distributions import Grid
from jaxgo.bpip.tree import Child
from jaxgo.go import rules
from jaxgo.go.coords import point_to_gtp
from jaxgo.go.kernels import kernels
from jaxgo.playouts.xla import light as playout

GO_VALUE_GRID = Grid(half_width=1.0, step=0.02)


def to_numpy(state: rules.State) -> rules.State:
    """A host copy of a (single) state."""
    return jax.tree_util.tree_map(np.asarray, state)


def _take(states: rules.State, i: int) -> rules.State:
    return jax.tree_util.tree_map(lambda x: x[i], states)


class GoPlayoutDomain:
    """Domain protocol of ``jaxgo.bpip.tree`` (with ``expand_batch``) for Go move choice.

    ``budget``: playouts after which ``exhausted()`` is true (the controller then stops).
    """

    def __init__(self, size: int = 9, komi: float = 7.5, playouts_per_leaf: int = 16, z: float = 2.0,
                 seed: int = 0, budget: int | None = None, pad: int = 16, suicide: bool = False):
        self.size, self.komi, self.L, self.z = size, float(komi), int(playouts_per_leaf), float(z)
        self.key = jax.random.PRNGKey(seed)
        self.budget, self.pad, self.suicide = budget, pad, suicide
        self.playouts = 0
        self.device_calls = 0

    # -- helpers
    def _next_key(self):
        self.key, sub = jax.random.split(self.key)
        return sub

    def exhausted(self) -> bool:
        return self.budget is not None and self.playouts >= self.budget

    def _score_value(self, state) -> float:
        """Exact value of a finished game for its side to move: sign of the area score."""
        score = float(rules.area_score(state, self.komi))
        return float(np.sign(score) * int(state.to_play))

    # -- Domain protocol
    def moves(self, state) -> list[int]:
        if int(state.passes) >= 2:
            return []
        mask = np.asarray(kernels(self.suicide).searchable(state))
        pts = [int(p) for p in np.flatnonzero(mask[:-1])]
        return pts or [self.size * self.size]

    def play(self, state, move):
        kids = kernels(self.suicide).children(state, jnp.asarray([move], jnp.int32))
        return to_numpy(_take(kids, 0))

    def terminal_value(self, state) -> float | None:
        return self._score_value(state) if int(state.passes) >= 2 else None

    def evaluate(self, state):
        """Single-state evaluation (only the root uses it, and the root is expanded at once): uninformed."""
        return 0.0, 1.0, -1.0

    def features(self, state) -> frozenset:
        return frozenset()

    def expansion_time(self, state) -> float:
        return 1.0

    def move_name(self, move) -> str:
        return point_to_gtp(int(move), self.size)

    def estimate(self, wins: np.ndarray, draws: np.ndarray) -> list[tuple[float, float, float]]:
        """(M, Up, Lw) per leaf from its playout wins and draws (for the side to move there)."""
        out = []
        for w, d in zip(wins, draws):
            p = (w + 0.5 * d + 1.0) / (self.L + 2.0)
            m = 2.0 * p - 1.0
            s = 2.0 * math.sqrt(p * (1.0 - p) / (self.L + 1.0))
            out.append((m, min(1.0, m + self.z * s), max(-1.0, m - self.z * s)))
        return out

    def expand_batch(self, state) -> list[Child]:
        """All children of ``state`` with their playout evaluations (one device call for the playouts)."""
        moves = self.moves(state)
        if not moves:
            return []
        n = len(moves)
        padded = -(-n // self.pad) * self.pad
        mv = np.array(moves + [moves[0]] * (padded - n), np.int32)
        kids = kernels(self.suicide).children(state, jnp.asarray(mv))
        result = playout.run(kids, self._next_key(), self.komi, num_per_state=self.L)
        self.device_calls += 1
        winner = np.asarray(result.winner).reshape(padded, self.L)[:n]
        kids_np = to_numpy(kids)
        to_play = np.asarray(kids_np.to_play[:n]).astype(np.int64)
        passes = np.asarray(kids_np.passes[:n])
        wins = (winner == to_play[:, None]).sum(axis=1)
        draws = (winner == 0).sum(axis=1)
        ests = self.estimate(wins, draws)
        out = []
        for i, m in enumerate(moves):
            s = _take(kids_np, i)
            if passes[i] >= 2:
                out.append(Child(move=m, state=s, exact=self._score_value(s)))
            else:
                out.append(Child(move=m, state=s, est=ests[i]))
                self.playouts += self.L
        return out
