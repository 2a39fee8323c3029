"""Light playouts on the native board: uniform over the legal moves that do not fill the mover's own eye.

The same policy as the XLA kernel (``jaxgo.playouts.xla.light``): pass only when no such move is left, simple ko,
no suicide, at most ``max_moves`` moves (passes included), Tromp-Taylor area at the end.  Move choice is
"sample, then validate" over the empty list: a uniform pick among the empty points not yet refuted; a pick that
is the ko point, an own eye or suicide is swapped behind the part still to be tried, so every eligible point
keeps the same chance and each is looked at most once per move.
"""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native.random import next_u64, uniform_below

jit = nb.jit


@jit
def choose_light(st, g, rng, exact):
    """(move, rng): a uniform legal non-eye point for the side to move, or ``PASS`` when there is none."""
    c = g[nb.TO_PLAY]
    m = g[nb.N_EMPTY]
    w = g[nb.WIDTH]
    ko = g[nb.KO]
    colour = st[nb.COLOUR]
    empties = st[nb.EMPTIES]
    while m > 0:
        rng, bits = next_u64(rng)
        k = uniform_below(bits, m)
        p = empties[k]
        # an empty neighbour makes a point legal and no eye (the ko point never has one)
        if p != ko and (colour[p - w] == nb.EMPTY or colour[p + w] == nb.EMPTY or colour[p - 1] == nb.EMPTY
                        or colour[p + 1] == nb.EMPTY):
            return p, rng
        if not nb.is_eye(st, g, p, c) and nb.is_legal(st, g, p, c, exact):
            return p, rng
        nb.swap_behind(st, k, m)  # refuted for this move
        m -= 1
    return nb.PASS, rng


@jit
def light_playout(st, g, rng, max_moves, first, exact, trace):
    """Play the board ``st, g`` (exact or pseudo-liberties: ``exact``) out with light moves; ``first`` int8 [PP] (zeros
    on entry) receives the colour (1 Black, 2 White) that first put a stone on each point; ``trace`` int32 [M]
    receives the first M moves (padded points, ``PASS``; M = 0: none). Returns (moves played, rng)."""
    moves = 0
    while g[nb.PASSES] < 2 and moves < max_moves:
        p, rng = choose_light(st, g, rng, exact)
        if p != nb.PASS and first[p] == 0:
            first[p] = g[nb.TO_PLAY]
        if moves < trace.shape[0]:
            trace[moves] = p
        nb.play(st, g, p, exact)
        moves += 1
    return moves, rng


def max_moves_for(size: int) -> int:
    """The playouts' move limit on an N x N board, as the XLA kernels: 3 * N * N (passes included)."""
    return 3 * size * size


def empty_first(size: int) -> np.ndarray:
    return np.zeros((size + 2) ** 2, np.int8)
