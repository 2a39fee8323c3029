"""Compiled self-checks of the native board and weights, for tests and diagnostics: random games checked move
by move against recomputation from scratch (``board.check_consistency``, ``heavy.fill_base``), and the
board's view of a position (legal points, eyes, liberties, area) for comparison with the reference board."""

from __future__ import annotations

import numpy as np

from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import heavy as nw
from jaxgo.playouts.native import light as nl
from jaxgo.playouts.native.random import next_u64, stream_seed, uniform_float

jit = nb.jit


@jit(nrt=True)
def checked_light_games(size, seed, games, exact):
    """Play ``games`` light playouts from the empty board, recomputing chains, liberties (exact or pseudo) and
    the empty list from scratch after every move (raises on a difference).  Returns the moves played."""
    st, g = nb.new_board(size)
    total = 0
    for j in range(games):
        nb.clear(st, g)
        rng = stream_seed(seed, j)
        moves = 0
        while g[nb.PASSES] < 2 and moves < 3 * size * size:
            p, rng = nl.choose_light(st, g, rng, exact)
            nb.play(st, g, p, exact)
            nb.check_consistency(st, g, exact)
            moves += 1
        total += moves
    return total


@jit(nrt=True)
def checked_weighted_games(stones, to_play, ko, seed, games, policy, tables, lines, dist1, dist2, plain_of):
    """Play ``games`` weighted playouts (policy ``features.HEAVY`` or ``RULES``) from the position of stones
    int8 [P] (``to_play`` 1 / -1, simple-ko board index); after every move the incrementally kept base weights
    and flags of both colours are compared with ``fill_base`` from scratch and the board with
    ``check_consistency``.  Returns (moves played, mismatching entries)."""
    size = int(np.sqrt(stones.shape[0]) + 0.5)
    st, g = nb.new_board(size)
    w = size + 2
    pp = w * w
    base = np.zeros((2, pp), np.float64)
    flags = np.zeros((2, pp), np.int8)
    fresh = np.zeros((2, pp), np.float64)
    fresh_flags = np.zeros((2, pp), np.int8)
    work = nw.new_work(pp, w)
    total = 0
    bad = 0
    for j in range(games):
        nb.set_stones(st, g, stones, to_play, ko, 0, True)
        nw.fill_base(st, g, base, flags, policy, tables, lines)
        rng = stream_seed(seed, j)
        moves = 0
        while g[nb.PASSES] < 2 and moves < 3 * size * size:
            weight = nw.move_weights(st, g, base, flags, policy, tables, dist1, dist2, plain_of, work[0], work[1])
            q = nb.PASS
            if weight > 0:
                rng, bits = next_u64(rng)
                q = nw.draw(work[0], work[1], weight, uniform_float(bits), size, w)
            nw.play_and_update(st, g, q, base, flags, policy, tables, lines, work)
            nb.check_consistency(st, g, True)
            nw.fill_base(st, g, fresh, fresh_flags, policy, tables, lines)
            for c in range(2):
                for p in range(pp):
                    if abs(fresh[c, p] - base[c, p]) > 1e-9 * max(1.0, abs(fresh[c, p])) or \
                            fresh_flags[c, p] != flags[c, p]:
                        bad += 1
            moves += 1
        total += moves
    return total, bad


@jit(nrt=True)
def position_view(stones, to_play, ko, exact, legal, eye, libs, owner):
    """The board's view of one position (stones int8 [P], ``to_play`` 1 / -1, simple-ko board index): fills
    legal / eye bool [P] for the side to move, libs int32 [P] (the liberties of each stone's chain, exact or
    pseudo; 0 on empty points) and owner int8 [P] (area); returns Black's area minus White's."""
    size = int(np.sqrt(stones.shape[0]) + 0.5)
    st, g = nb.new_board(size)
    nb.set_stones(st, g, stones, to_play, ko, 0, exact)
    w = g[nb.WIDTH]
    c = g[nb.TO_PLAY]
    for i in range(size * size):
        p = (i // size + 1) * w + i % size + 1
        empty = st[nb.COLOUR, p] == nb.EMPTY
        legal[i] = empty and nb.is_legal(st, g, p, c, exact)
        eye[i] = empty and nb.is_eye(st, g, p, c)
        libs[i] = 0 if empty else st[nb.LIBS, st[nb.CHAIN, p]]
    return nb.area_owner(st, g, owner)
