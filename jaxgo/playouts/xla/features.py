"""Heavy playouts' features and move choice: the side to move's tactical view of every point (bitboard word
operations on the liberty classes of ``jaxgo.playouts.xla.board``), the 3x3 pattern codes and distance levels,
the gamma of every candidate (or the rule policy's tier weight), and the proportional draw."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.features import moves as mf
from jaxgo.go.coords import BLACK
from jaxgo.playouts.tables import PolicyTables
from jaxgo.playouts.xla import bitboard as bb
from jaxgo.playouts.xla import rules as rule_policy
from jaxgo.playouts.xla.board import CELLS, Boards, dense, materialize, nonempty, pack


def _toward(x, k: int, size: int):
    """uint32 [N, B]: the points whose neighbour in direction ``CELLS[k]`` (k < 4) is in x."""
    return (bb.shift_down(x), bb.shift_up(x), bb.shift_left(x, size), bb.shift_right(x))[k]


def _at_least(sets, n: int):
    """Points in at least ``n`` (1 or 2) of the sets."""
    if n == 1:
        return functools.reduce(jnp.bitwise_or, sets)
    return functools.reduce(jnp.bitwise_or, [a & b for i, a in enumerate(sets) for b in sets[i + 1:]])


def _tactics(boards: Boards, size: int):
    """The side to move's tactical view of every point, as bitboards uint32 [N, B] (batch last).

    Returns (sets, has_ko): sets holds ``capture``, ``capture_prev`` (capture of the previous move's chain),
    ``extension``, ``self_atari``, ``atari`` (without capture), ``legal`` (empty, not ko, not suicide) and
    ``eye`` (the mover's own eye by the playout eye rule); has_ko bool [B].  Only "exactly one liberty left"
    needs the liberty indices (``_one_liberty_left``, dense); everything else is a few word operations.
    """
    is_black = boards.to_play == BLACK
    own = jnp.where(is_black, boards.black, boards.white)
    opp = jnp.where(is_black, boards.white, boards.black)
    empty = bb.row_mask(size) & ~(own | opp)
    lib1, lib2 = boards.lib1, boards.lib2

    def nb(x):
        return bb.neighbours(x, size)

    capture = nb(opp & lib1)
    own_two = own & lib2
    big = nb(own & ~lib1 & ~lib2)  # next to an own chain with >= 3 liberties
    two = nb(own_two)
    empties = [_toward(empty, k, size) for k in range(4)]
    any_empty, two_empty = _at_least(empties, 1), _at_least(empties, 2)
    few = ~big & ~two_empty  # the new chain keeps at most one liberty from its empty neighbours and no 3+ chain
    none_left = few & ~any_empty & ~two
    exact = pack(_one_liberty_left(boards.libsum, own_two, empty, size), size)
    one_left = few & ((any_empty & ~two) | (two & exact))
    more_left = ~none_left & ~one_left
    sets = {
        "capture": capture,
        "capture_prev": capture & nb(opp & lib1 & boards.last_chain),
        # Capture of an opponent chain touching an own chain in atari (it saves that chain): a flood within
        # the opponent's one-liberty stones from those next to own one-liberty stones.
        "capture_saves": capture & nb(bb.flood(opp & lib1 & nb(own & lib1), opp & lib1, size)),
        "extension": nb(own & lib1) & (more_left | capture),
        "self_atari": one_left & ~capture,
        "atari": nb(opp & lib2) & ~capture,
        "legal": empty & ~boards.ko & (~none_left | capture),
        "eye": bb.eyes(own, opp, size),
    }
    return sets, nonempty(boards.ko)


def _one_liberty_left(libsum, own_two, empty, size: int):
    """bool [N, N, B]: where a stone would keep exactly one liberty *given* that it has at most one empty
    neighbour, no own neighbour chain with 3+ liberties and at least one liberty in total (elsewhere: junk).

    The liberties are the empty neighbour (if any) and, for each own two-liberty neighbour chain, its other
    liberty ``libsum - point``; they are all one point when they compare equal.  Compared as ``libsum`` values
    (a two-liberty chain's other liberty q equals the empty neighbour e exactly when libsum = point + e)."""
    pad = ((1, 1), (1, 1), (0, 0))
    libsum = jnp.pad(libsum, pad)
    dtype = libsum.dtype
    row = jnp.arange(size, dtype=dtype).reshape(size, 1, 1)
    col = jnp.arange(size, dtype=dtype).reshape(1, size, 1)
    twice = 2 * (row * size + col)
    ref_empty = jnp.zeros((size, size, 1), dtype)
    has_empty = jnp.zeros((size, size, own_two.shape[-1]), bool)
    sums, owns = [], []
    for k, (dr, dc) in enumerate(CELLS[:4]):
        is_empty = dense(_toward(empty, k, size), size)
        ref_empty = jnp.where(is_empty, twice + (dr * size + dc), ref_empty)
        has_empty = has_empty | is_empty
        owns.append(dense(_toward(own_two, k, size), size))
        sums.append(libsum[1 + dr: 1 + dr + size, 1 + dc: 1 + dc + size])
    first = sums[3]
    for k in (2, 1, 0):
        first = jnp.where(owns[k], sums[k], first)
    ref = jnp.where(has_empty, ref_empty, first)
    same = jnp.ones(ref.shape, bool)
    for is_two, value in zip(owns, sums):
        same = same & (~is_two | (value == ref))
    return same


def _pattern_code(boards: Boards, size: int):
    """int32 [N, N, B]: raw 3x3 code of every point (``moves.pattern_codes``: 2 bits per cell, own 1, opponent 2,
    off board 3, in ``CELLS`` order, plus the atari bit of the 4 orthogonal neighbours at bit 16 + k)."""
    is_black = boards.to_play == BLACK
    own = jnp.where(is_black, boards.black, boards.white)
    opp = jnp.where(is_black, boards.white, boards.black)
    value = (dense(own, size).astype(jnp.int32) + 2 * dense(opp, size).astype(jnp.int32)
             + 4 * dense(boards.lib1, size).astype(jnp.int32))
    value = jnp.pad(value, ((1, 1), (1, 1), (0, 0)), constant_values=3)
    code = jnp.zeros((size, size, value.shape[-1]), jnp.int32)
    for i, (dr, dc) in enumerate(CELLS):
        cell = value[1 + dr: 1 + dr + size, 1 + dc: 1 + dc + size]
        code = code | ((cell & 3) << (2 * i))
        if i < 4:
            code = code | ((cell >> 2) << (16 + i))
    return code


def point_levels(boards: Boards, size: int):
    """Per-point feature levels for the side to move, all int32 [N, N, B] (batch last), for diagnostics.

    Returns (code, tactical, dist_prev, dist_prev2, legal, eye):
    code: raw 3x3 pattern code (``moves.pattern_codes``); tactical: dict of the capture / extension /
    self_atari / atari levels; dist_prev / dist_prev2: distance levels; legal: bool, empty, not ko and not
    suicide; eye: bool, the mover's own eye by the playout eye rule.
    """
    sets, has_ko = _tactics(boards, size)
    bit = {name: dense(value, size) for name, value in sets.items()}
    tactical = {
        "capture": jnp.where(bit["capture"], jnp.where(bit["capture_saves"], 3,
                                                       jnp.where(bit["capture_prev"], 2, 1)), 0),
        "extension": bit["extension"].astype(jnp.int32),
        "self_atari": bit["self_atari"].astype(jnp.int32),
        "atari": jnp.where(bit["atari"], jnp.where(has_ko[None, None], 2, 1), 0),
    }

    return (_pattern_code(boards, size), tactical, _distance_levels(boards.prev, size),
            _distance_levels(boards.prev2, size), bit["legal"], bit["eye"])


def _distance_levels(prev, size: int):
    """int32 [N, N, B]: ``moves`` distance level of every point from the move prev int32 [B] (0 for none / pass)."""
    return _by_previous(jnp.asarray(_distance_level_table(size)), prev, size)


def _by_previous(table, prev, size: int):
    """[N, N, B]: row ``prev`` of a per-previous-move table [P+1, P] (row P: no previous move) for every board."""
    points = size * size
    index = jnp.where((prev >= 0) & (prev < points), prev, points)
    return jnp.transpose(table[index]).reshape(size, size, -1)  # [B, P] rows -> [N, N, B]


@functools.lru_cache(maxsize=None)
def _line_levels(size: int) -> np.ndarray:
    """int32 [N, N, 1]: ``moves`` line level of every point (1 = first line, 5 = fifth or more)."""
    idx = np.arange(size)
    edge = np.minimum(np.minimum(idx[:, None], idx[None, :]),
                      np.minimum(size - 1 - idx[:, None], size - 1 - idx[None, :]))
    return np.minimum(edge + 1, 5).astype(np.int32)[..., None]


@functools.lru_cache(maxsize=None)
def _distance_level_table(size: int) -> np.ndarray:
    """int32 [P+1, P]: ``moves`` distance level of every point from every previous move; row P (no previous
    move, or a pass) is all 0."""
    points = size * size
    idx = np.arange(points)
    dr = np.abs(idx[:, None] // size - idx[None, :] // size)
    dc = np.abs(idx[:, None] % size - idx[None, :] % size)
    d = np.minimum(dr + dc + np.maximum(dr, dc), mf.MAX_DISTANCE)
    level = np.where(d == 0, mf.SAME_POINT_LEVEL, d - 1)
    return np.concatenate([level, np.zeros((1, points), level.dtype)]).astype(np.int32)


def distance_rows(tables: PolicyTables, size: int):
    """(float32 [P+1, P], float32 [P+1, P]): gamma_dist_prev / gamma_dist_prev2 of every point for every
    previous move (row P: none); built once per device call, read one row per board and move."""
    levels = jnp.asarray(_distance_level_table(size))
    return jnp.asarray(tables.dist_prev)[levels], jnp.asarray(tables.dist_prev2)[levels]


def weights(boards: Boards, tables: PolicyTables, size: int, rows=None):
    """float32 [N, N, B]: gamma of every candidate (0 elsewhere); rows: ``distance_rows`` (built if None).

    The same product, in the same order, as gamma_pattern * gamma_line * the four tactical gammas * the two
    distance gammas; the tactical levels come as bitboards (``_tactics``) and are read out point by point.
    With ``rule_policy.RuleTables`` instead of gammas: the MoGo-style rule tiers (``_rule_weights``)."""
    if isinstance(tables, rule_policy.RuleTables):
        return _rule_weights(boards, tables, size)
    tables = PolicyTables(*(jnp.asarray(table) for table in tables))  # numpy tables outside a jitted caller
    sets, has_ko = _tactics(boards, size)
    sets = {name: materialize(value) for name, value in sets.items()}
    rows = distance_rows(tables, size) if rows is None else rows

    def bit(name):
        return dense(sets[name], size)

    pattern = tables.pattern[_pattern_code(boards, size)]
    distance = _by_previous(rows[0], boards.prev, size), _by_previous(rows[1], boards.prev2, size)
    gamma = pattern * tables.line[jnp.asarray(_line_levels(size))]
    capture = tables.capture
    capture_level = jnp.where(bit("capture_saves"), capture[3],
                              jnp.where(bit("capture_prev"), capture[2], capture[1]))
    gamma = gamma * jnp.where(bit("capture"), capture_level, capture[0])
    gamma = gamma * jnp.where(bit("extension"), tables.extension[1], tables.extension[0])
    gamma = gamma * jnp.where(bit("self_atari"), tables.self_atari[1], tables.self_atari[0])
    atari = jnp.where(has_ko, tables.atari[2], tables.atari[1])[None, None]
    gamma = gamma * jnp.where(bit("atari"), atari, tables.atari[0])
    gamma = gamma * distance[0] * distance[1]
    return jnp.where(dense(sets["legal"] & ~sets["eye"], size), gamma, 0.0)


def _rule_weights(boards: Boards, tables, size: int):
    """float32 [N, N, B]: the rule policy's tier weight of every candidate (``rule_policy.tier_weights``:
    capture, save, MoGo shape -- or in the chase variant an atari -- next to the previous move, anything else),
    0 elsewhere."""
    sets, _ = _tactics(boards, size)
    own = jnp.where(boards.to_play == BLACK, boards.black, boards.white)
    sets["joined_self_atari"] = sets["self_atari"] & bb.neighbours(own, size)
    sets = {name: materialize(sets[name])
            for name in ("capture", "extension", "legal", "eye", "joined_self_atari", "atari")}

    def bit(name):
        return dense(sets[name], size)

    return rule_policy.tier_weights(_pattern_code(boards, size), bit("capture"), bit("extension"),
                                    _distance_levels(boards.prev, size), dense(sets["legal"] & ~sets["eye"], size),
                                    tables.shape, bit("joined_self_atari"), tables.self_atari_factor,
                                    bit("atari"), tables.atari_near_previous)


def pick(weights, u):
    """Sample one point per board with probability proportional to ``weights`` [N, N, B] (not all zero),
    given uniforms u [B] in [0, 1).  Returns (row, col) int32 [B] and whether any weight is positive [B]."""
    size = weights.shape[0]
    idx = jnp.arange(size, dtype=jnp.int32)[:, None]

    def first(cum, w, target):
        """First index with a positive weight whose cumulative sum exceeds target (else the last positive)."""
        hit = (cum > target[None]) & (w > 0)
        last = jnp.max(jnp.where(w > 0, idx, 0), axis=0)
        return jnp.where(jnp.any(hit, axis=0), jnp.argmax(hit, axis=0).astype(jnp.int32), last)

    row_sum = materialize(_sum_over(weights, 1))  # [N, B], summed once (not inside every consumer)
    row_cum = jnp.cumsum(row_sum, axis=0)
    target = u * row_cum[-1]
    row = first(row_cum, row_sum, target)
    at_row = idx == row[None]
    before = jnp.sum(jnp.where(at_row, row_cum - row_sum, 0.0), axis=0)
    in_row = materialize(_sum_over(jnp.where(at_row[:, None, :], weights, 0.0), 0))  # [N, B]
    col = first(jnp.cumsum(in_row, axis=0), in_row, target - before)
    return row, col, row_cum[-1] > 0


def _sum_over(x, axis: int):
    """Sum over a short leading axis of a batch-last array, unrolled into elementwise adds (XLA's CPU reduce
    over a non-minor axis walks each board's elements with a stride)."""
    parts = [jax.lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis])]
    return functools.reduce(jnp.add, parts)

