"""Per-candidate move features of one position, as a pure JAX function (``jax.vmap`` it over positions).

Every candidate (the P points and pass, index P) gets one *level* per feature group; level 0 means "absent"
(no gamma).  Groups and levels (after Coulom 2007, "Computing Elo Ratings of Move Patterns in the Game of Go"):

- ``pattern``   1 + dense id of the canonical 3x3 pattern (see ``pattern_codes``); 0 for pass.
- ``capture``   1: captures an opponent chain; 2: the captured chain holds the previous move; 3: the captured
                chain touches an own chain in atari (the capture saves it; Coulom's largest tactical gamma).
                Level 3 wins over level 2.
- ``extension`` 1: escapes from atari: joins an own chain in atari and the merged chain has >= 2 liberties.
- ``self_atari`` 1: the merged chain of the new stone has exactly one liberty and nothing is captured.
- ``atari``     1: puts an adjacent opponent chain in atari (and does not capture); 2: the same with a ko
                on the board (``state.ko >= 0``).
- ``dist_prev`` / ``dist_prev2``: Coulom's distance d(dx, dy) = |dx| + |dy| + max(|dx|, |dy|) to the previous
                move / the move before it: level d - 1 for d = 2..16, 16 for d >= 17, 0 if that move is a pass
                or there is none, and ``SAME_POINT_LEVEL`` (17) for d = 0, the point of that move itself (legal
                again only when its stone was captured, e.g. retaking a ko: only ``dist_prev2`` sees it).
- ``line``      1..4: distance to the nearest edge + 1 (first line = 1); 5: fifth line or more.
- ``pass``      1: pass; 2: pass right after a pass.

Liberties after the move are counted exactly from the incremental pseudo-liberty statistics of
``jaxgo.go.rules`` (count, sum, sum of squares), so no candidate is played out; the one approximation is that a
capturing move is never called self-atari.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.go import rules
from jaxgo.go.coords import EMPTY

GROUPS = ("pattern", "capture", "extension", "self_atari", "atari", "dist_prev", "dist_prev2", "line", "pass")
MAX_DISTANCE = 17
SAME_POINT_LEVEL = MAX_DISTANCE  # d = 0: replying on the point of a captured stone

# 3x3 layout: the 4 orthogonal cells in rules.neighbour_table order, then the 4 diagonals in diagonal_table order.
_CELLS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
# Cell values: 0 empty, 1 own (side to move), 2 opponent, 3 off board.  Code: sum(value_i * 4**i) for the 8
# cells, plus bit 16 + k when orthogonal neighbour k is a stone whose chain is in atari.
NUM_RAW_CODES = 1 << 20


def symmetries():
    """The 8 symmetries of the square as maps (dr, dc) -> (dr', dc')."""
    def make(swap, sr, sc):
        def transform(r, c):
            if swap:
                r, c = c, r
            return sr * r, sc * c
        return transform
    return [make(swap, sr, sc) for swap in (False, True) for sr in (1, -1) for sc in (1, -1)]


@functools.lru_cache(maxsize=None)
def canonical_pattern_table() -> tuple[np.ndarray, int]:
    """(int32 [2**20] dense pattern id per raw code, number of ids): raw codes equal under one of the 8
    board symmetries get the same id (ids follow the order of the smallest code of each class)."""
    codes = np.arange(NUM_RAW_CODES, dtype=np.int32)
    values = [(codes >> (2 * i)) & 3 for i in range(8)]
    bits = [(codes >> (16 + k)) & 1 for k in range(4)]
    best = None
    for transform in symmetries():
        out = np.zeros_like(codes)
        for i, cell in enumerate(_CELLS):
            j = _CELLS.index(transform(*cell))
            out |= values[i] << (2 * j)
            if i < 4:
                out |= bits[i] << (16 + j)
        best = out if best is None else np.minimum(best, out, out=best)
    # dense ids in the order of the classes' smallest codes, without sorting: rank the codes that are a minimum
    is_smallest = np.zeros(NUM_RAW_CODES, np.int32)
    is_smallest[best] = 1
    rank = np.cumsum(is_smallest, dtype=np.int32) - 1
    return rank[best], int(rank[-1]) + 1


def _group_sizes() -> dict[str, int]:
    """Number of levels (including level 0 = absent) per group."""
    return {"pattern": canonical_pattern_table()[1] + 1, "capture": 4, "extension": 2, "self_atari": 2,
            "atari": 3, "dist_prev": MAX_DISTANCE + 1, "dist_prev2": MAX_DISTANCE + 1, "line": 6, "pass": 3}


def group_sizes() -> np.ndarray:
    """int32 [G]: number of levels of each group in ``GROUPS`` order (level 0 = absent included)."""
    return np.array([_group_sizes()[g] for g in GROUPS], np.int32)


def group_offsets() -> np.ndarray:
    """int32 [G]: offset of each group's levels in the global feature index (level 0 of every group maps to
    its own absent index; ``jaxgo.learn.bt`` keeps absent features at gamma 1)."""
    sizes = np.array([_group_sizes()[g] for g in GROUPS], np.int64)
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)


def num_features() -> int:
    """Total number of global feature indices (all groups, absent levels included)."""
    return int(sum(_group_sizes().values()))


def distance(a, b, size: int):
    """int32: Coulom's move distance |dr| + |dc| + max(|dr|, |dc|) between points a and b (same shapes)."""
    dr = jnp.abs(a // size - b // size)
    dc = jnp.abs(a % size - b % size)
    return dr + dc + jnp.maximum(dr, dc)


def pattern_codes(state: rules.State):
    """int32 [P]: raw 3x3 code of every point, colours relative to ``state.to_play`` (see ``_CELLS``)."""
    points = state.stones.shape[0]
    size = rules.board_size(points)
    stones = jnp.concatenate([state.stones.astype(jnp.int32), jnp.array([rules.OFF_BOARD], jnp.int32)])
    rel = stones * state.to_play.astype(jnp.int32)  # own 1, opponent -1, off board +-2
    value = jnp.where(rel == 1, 1, jnp.where(rel == -1, 2, jnp.where(rel == 0, 0, 3)))
    cells = jnp.concatenate([jnp.asarray(rules.neighbour_table(size)), jnp.asarray(rules.diagonal_table(size))], 1)
    cell_value = value[cells]  # [P, 8]
    code = jnp.sum(cell_value << (2 * jnp.arange(8)), axis=1)
    _, chain = rules.padded(state)
    atari = rules.chain_atari_mask(state)[chain[cells[:, :4]]]  # False on empty / off-board cells
    return code + jnp.sum(atari.astype(jnp.int32) << (16 + jnp.arange(4)), axis=1)


def move_features(state: rules.State, prev_move, prev_move2, pattern_table):
    """Features of every candidate of one position.

    state: one ``rules.State``; prev_move, prev_move2: int32 [] (P = pass, -1 = none);
    pattern_table: int32 [2**20] from ``canonical_pattern_table()[0]`` (pass it as an array so it is not
    baked into the compiled program).
    Returns (levels int32 [P+1, G] in ``GROUPS`` order, legal bool [P+1]).
    """
    points = state.stones.shape[0]
    size = rules.board_size(points)
    idx = jnp.arange(points)
    own = state.to_play
    stones_pad, chain_pad = rules.padded(state)
    nbrs = jnp.asarray(rules.neighbour_table(size))  # [P, 4]
    nb_colour = stones_pad[nbrs]
    nb_chain = chain_pad[nbrs]
    pad = lambda t: jnp.concatenate([t, jnp.zeros(1, jnp.int32)])  # noqa: E731
    count, lsum, lsumsq = pad(state.lib_count), pad(state.lib_sum), pad(state.lib_sumsq)
    atari_chain = rules.chain_atari_mask(state)
    p = idx[:, None]

    # Adjacent chains counted once each; k = adjacencies of the chain to the point (pseudo-liberties lost).
    earlier_same = (nb_chain[:, :, None] == nb_chain[:, None, :]) & jnp.tril(jnp.ones((4, 4), bool), -1)
    is_first = ~jnp.any(earlier_same, axis=2)
    k = jnp.sum(nb_chain[:, :, None] == nb_chain[:, None, :], axis=2)  # [P, 4]
    c_after = count[nb_chain] - k
    s_after = lsum[nb_chain] - k * p
    q_after = lsumsq[nb_chain] - k * p * p
    is_opp = nb_colour == -own
    is_own = nb_colour == own
    opp_first = is_opp & is_first
    captured = opp_first & (c_after == 0)  # [P, 4]
    captures = jnp.any(captured, axis=1)
    capture_prev = jnp.any(captured & (nb_chain == chain_pad[jnp.clip(prev_move, 0, points)]) &
                           (prev_move >= 0) & (prev_move < points), axis=1)
    ataris = jnp.any(opp_first & (c_after > 0) & rules.in_atari(c_after, s_after, q_after), axis=1) & ~captures
    # Captures of an opponent chain that touches an own chain in atari: the capture saves it.
    touches_own_atari = jnp.any(is_own & atari_chain[nb_chain], axis=1)  # [P]
    flag = ((state.stones == -own) & touches_own_atari).astype(jnp.int32)
    chain_touches = jax.ops.segment_max(flag, state.chain, num_segments=points + 1) > 0  # [P+1] by chain id
    capture_saves = jnp.any(captured & chain_touches[nb_chain], axis=1)

    # The merged chain of the new stone: its empty neighbours plus the adjacent own chains minus the point.
    own_first = is_own & is_first
    empty_nb = nb_colour == EMPTY
    e_idx = jnp.where(empty_nb, nbrs, 0)
    m_count = jnp.sum(empty_nb, 1) + jnp.sum(jnp.where(own_first, c_after, 0), 1)
    m_sum = jnp.sum(e_idx, 1) + jnp.sum(jnp.where(own_first, s_after, 0), 1)
    m_sumsq = jnp.sum(e_idx * e_idx, 1) + jnp.sum(jnp.where(own_first, q_after, 0), 1)
    merged_atari = rules.in_atari(m_count, m_sum, m_sumsq)
    merged_two = (m_count > 0) & ~merged_atari
    own_in_atari = jnp.any(is_own & atari_chain[nb_chain], axis=1)
    extension = own_in_atari & (merged_two | captures)
    self_atari = merged_atari & ~captures

    legal = rules.legal_mask(state)
    code = pattern_codes(state)
    pattern = 1 + pattern_table[code]

    def dist_level(prev):
        d = jnp.minimum(distance(idx, jnp.clip(prev, 0, points - 1), size), MAX_DISTANCE)
        level = jnp.where(d == 0, SAME_POINT_LEVEL, d - 1)  # d is never 1
        return jnp.where((prev >= 0) & (prev < points), level, 0)

    row, col = idx // size, idx % size
    line = jnp.minimum(jnp.minimum(jnp.minimum(row, col), jnp.minimum(size - 1 - row, size - 1 - col)) + 1, 5)
    levels = jnp.stack([
        pattern,
        jnp.where(captures, jnp.where(capture_saves, 3, jnp.where(capture_prev, 2, 1)), 0),
        extension.astype(jnp.int32),
        self_atari.astype(jnp.int32),
        jnp.where(ataris, jnp.where(state.ko >= 0, 2, 1), 0),
        dist_level(prev_move),
        dist_level(prev_move2),
        line,
        jnp.zeros(points, jnp.int32),
    ], axis=1).astype(jnp.int32)
    pass_row = jnp.zeros(len(GROUPS), jnp.int32).at[GROUPS.index("pass")].set(
        jnp.where(prev_move == points, 2, 1))
    levels = jnp.concatenate([levels, pass_row[None]], axis=0)
    return jnp.where(legal[:, None], levels, 0), legal
