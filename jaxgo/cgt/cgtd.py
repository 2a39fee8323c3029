"""CG-TD(0): Combinatorial-Games Temporal-Difference learning of triangle thermographs (thesis section 5.8).

Every node of every subgame holds a learnt :class:`~jaxgo.cgt.triangle.Triangle` (t, m, LS, RS), all zero at
the start.  One episode (Algorithm 4) plays the sum from the roots to the end with a policy pi; after each move
out of node G, ``UpdateThermograph(G)`` (Algorithm 6) moves G's triangle towards the crossing of its options'
taxed triangles; at the end ``UpdateLeaves`` (Algorithm 5) moves the reached leaves' values towards the result.

Algorithm 6, left half (as printed).  L = the Left option with the highest mean, lrs = max RS over the Left
options; the current right side of G is approximated by the slope-1 line through (t(G), m(G)), whose value at
t = 0 is rs = m(G) - t(G).  Its crossing with the taxed mast of L, m(L) - t, is at t1 = (m(L) - rs) / 2; its
crossing with L's taxed right wall (the line from (0, lrs) to (t(L), m(L) - t(L))) is at
t2 = t(L) (lrs - rs) / (lrs - (m(L) - 2 t(L))).  The target is t' = min(t1, t2), m' = rs + t', and

    m(G) += alpha (m' - m(G));  t(G) += alpha (t' - t(G));  LS(G) += alpha (lrs - LS(G)).

Right half (the thesis writes only "analogous code"; derived by the symmetry G -> -G, which swaps Left and
Right, negates means and stops and keeps temperatures).  R = the Right option with the lowest mean,
rls = min LS over the Right options; the left side of G is the slope -1 line through (t(G), m(G)) with value
ls = m(G) + t(G) at t = 0.  Its crossing with R's taxed mast m(R) + t is at t1 = (ls - m(R)) / 2; with R's
taxed left wall (the line from (0, rls) to (t(R), m(R) + t(R))) at
t2 = t(R) (ls - rls) / ((m(R) + 2 t(R)) - rls).  Target t' = min(t1, t2), m' = ls - t', and

    m(G) += alpha (m' - m(G));  t(G) += alpha (t' - t(G));  RS(G) += alpha (rls - RS(G)).

The right half uses the (t, m) the left half just wrote.  A fixed point has (t(G), m(G)) on both taxed
scaffolds, i.e. at their crossing: the recursive triangle of :func:`jaxgo.cgt.triangle.triangle_from_options`
(``tests/test_cgt_triangle.py`` checks both the closed forms and this fixed point).

Corrections to the printed pseudo-code, each forced by the text around it:

* Algorithm 6's last line reads ``LS(G) <- t(G) + alpha (lrs - LS(G))``; the intended update is
  ``LS(G) <- LS(G) + alpha (lrs - LS(G))`` (the stop moves towards lrs, "the amount controlled by the learning
  rate").
* Algorithm 5 writes ``m <- m - alpha delta / N`` with ``delta = R - sum m``; that moves the prediction away
  from R.  Gradient descent on (R - sum m)^2 is ``m <- m + alpha delta / N``, used here.
* ``min(t1, t2)`` is the first crossing when the taxed wall of L lies under its taxed mast (m(L) >= lrs, always
  so with one Left option).  In general the crossing is t2 if it falls on the wall segment (t2 <= t(L)) and t1
  otherwise; we use that form, which equals ``min(t1, t2)`` in the usual case.  When t(L) <= 0 (a leaf or a
  cold option) L has no wall segment and t' = t1.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from jaxgo.cgt.games import LEFT, RIGHT, Game, initial_state, is_terminal, legal_moves, opponent, play, score
from jaxgo.cgt.strategies import hotstrat_move
from jaxgo.cgt.triangle import Triangle, best_left, best_right


def left_target(lstar: Triangle, lrs: float, t_g: float, m_g: float) -> tuple[float, float]:
    """Algorithm 6, left half: (t', m') where the taxed Left options meet the right line through (t_g, m_g)."""
    rs = m_g - t_g
    t1 = (lstar.mean - rs) / 2.0
    tl = lstar.temperature
    denom = lrs - (lstar.mean - 2.0 * tl)
    tp = t1
    if tl > 0 and denom > 0:
        t2 = tl * (lrs - rs) / denom
        if t2 <= tl:
            tp = t2
    return tp, rs + tp


def right_target(rstar: Triangle, rls: float, t_g: float, m_g: float) -> tuple[float, float]:
    """Algorithm 6, right half (by symmetry): (t', m') where the taxed Right options meet the left line."""
    ls = m_g + t_g
    t1 = (ls - rstar.mean) / 2.0
    tr = rstar.temperature
    denom = (rstar.mean + 2.0 * tr) - rls
    tp = t1
    if tr > 0 and denom > 0:
        t2 = tr * (ls - rls) / denom
        if t2 <= tr:
            tp = t2
    return tp, ls - tp


def update_thermograph(tri: Triangle, lefts: list[Triangle], rights: list[Triangle], alpha: float) -> Triangle:
    """Algorithm 6: one learning step of G's triangle ``tri`` towards its options' taxed triangles."""
    t, m, ls, rs = tri.temperature, tri.mean, tri.ls, tri.rs
    lstar, lrs = best_left(lefts)
    tp, mp = left_target(lstar, lrs, t, m)
    m += alpha * (mp - m)
    t += alpha * (tp - t)
    ls += alpha * (lrs - ls)
    rstar, rls = best_right(rights)
    tp, mp = right_target(rstar, rls, t, m)
    m += alpha * (mp - m)
    t += alpha * (tp - t)
    rs += alpha * (rls - rs)
    return Triangle(t, m, ls, rs)


def update_leaves(leaves: list[Triangle], result: float, alpha: float) -> list[Triangle]:
    """Algorithm 5 (sign corrected): move the reached leaves' values so that their sum predicts ``result``."""
    delta = result - sum(tri.mean for tri in leaves)
    step = alpha * delta / len(leaves)
    return [Triangle(0.0, tri.mean + step, tri.mean + step, tri.mean + step) for tri in leaves]


@dataclass
class CGTD:
    """CG-TD(0) learner for a sum of games (Algorithm 4) with an epsilon-greedy HOTSTRAT policy pi.

    ``epsilon`` = 1 gives uniformly random play, which visits every node; smaller values spend more episodes on
    HOTSTRAT's lines.  The player to move first is drawn at random each episode."""

    games: tuple[Game, ...]
    alpha: float = 0.1
    alpha_leaves: float = 0.1
    epsilon: float = 0.5
    seed: int = 0

    def __post_init__(self):
        self.games = tuple(self.games)
        self.rng = random.Random(self.seed)
        self.model = [[Triangle(0.0, 0.0, 0.0, 0.0) for _ in range(g.n_nodes)] for g in self.games]
        self.episodes = 0

    def policy(self, state, player: int):
        """pi: a random legal move with probability epsilon, else HOTSTRAT on the current triangles."""
        if self.rng.random() < self.epsilon:
            return self.rng.choice(legal_moves(self.games, state, player))
        return hotstrat_move(self.games, state, player, self.model)

    def update_node(self, i: int, node: int) -> None:
        g, tab = self.games[i], self.model[i]
        tab[node] = update_thermograph(
            tab[node], [tab[c] for c in g.left[node]], [tab[c] for c in g.right[node]], self.alpha
        )

    def episode(self) -> float:
        """One pass of Algorithm 4's outer loop; returns the result."""
        state = initial_state(self.games)
        player = self.rng.choice((LEFT, RIGHT))
        while not is_terminal(self.games, state):
            i, child = self.policy(state, player)
            node = state[i]
            state = play(state, (i, child))
            self.update_node(i, node)
            player = opponent(player)
        result = score(self.games, state)
        new = update_leaves([self.model[i][n] for i, n in enumerate(state)], result, self.alpha_leaves)
        for i, n in enumerate(state):
            self.model[i][n] = new[i]
        self.episodes += 1
        return result

    def run(self, episodes: int, every: int = 0, callback=None) -> None:
        """Run ``episodes`` episodes; call ``callback(self)`` every ``every`` episodes."""
        for k in range(episodes):
            self.episode()
            if callback is not None and every and (k + 1) % every == 0:
                callback(self)

    def temperatures(self) -> list[list[float]]:
        return [[tri.temperature for tri in tab] for tab in self.model]
