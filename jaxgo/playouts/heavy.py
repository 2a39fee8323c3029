"""Heavy playouts: every move sampled with probability proportional to its Bradley-Terry gamma.

Policy (Coulom 2007; Lew's thesis, section 3.4.1): a candidate move ``a`` (an empty point that is legal and
does not fill the mover's own eye by the playout eye rule) has strength

    gamma_a = gamma_pattern[3x3 pattern of a] * gamma_capture * gamma_extension * gamma_self_atari
              * gamma_atari * gamma_dist_prev * gamma_dist_prev2 * gamma_line

with the groups and levels of ``jaxgo.features.moves`` (the same definitions the gammas are trained on), and
the playout picks ``a`` with probability gamma_a / sum_b gamma_b.  Everything else is as in the light playouts
(``jaxgo.playouts.light``): pass only when no candidate is left, simple ko, no suicide, at most ``3 * N * N`` moves,
Tromp-Taylor area scoring with komi, the same ``PlayoutResult``.

Implementation.  The boards are row bitboards with the batch axis innermost (``jaxgo.playouts.bitboard``) plus, kept
up to date move by move, the *liberty class* of every chain: ``lib1`` / ``lib2`` hold the stones of chains
with exactly one / exactly two liberties, and ``libsum`` (dense int16 [N, N, B]) the sum of the liberty
indices of a one- or two-liberty chain.  Every tactical feature of every point follows from the 4 neighbours'
classes without playing the move, as word operations on the bitboards (``_tactics``):

- capture: next to an opponent ``lib1`` stone (its only liberty is the point); level 2 when that chain is the
  chain of the previous move (``last_chain``), level 3 when it touches an own ``lib1`` chain (a flood within
  the opponent's ``lib1`` stones; the capture saves the own chain);
- atari: next to an opponent ``lib2`` stone (and no capture), level 2 while a ko point exists;
- the liberties the new stone's chain keeps (captures aside) are the empty neighbours, plus the *other*
  liberty ``libsum - point`` of each own two-liberty neighbour, plus at least two from any own neighbour with
  three or more: counted exactly as 0, 1 or >= 2.  That gives legality (0 and no capture = suicide),
  self-atari (exactly 1, no capture) and escape from atari (next to an own ``lib1`` stone, and >= 2 or a
  capture).  Only "exactly 1" needs the dense ``libsum`` comparison (``_one_liberty_left``);
- the 3x3 pattern code is the 8 neighbours' colours plus the ``lib1`` bit of the 4 orthogonal ones, looked up
  in a gamma table over all 2**20 raw codes (canonicalisation folded in).

Sampling: row sums, a cumulative sum over the N rows, then over the N points of the chosen row.  Playing the
move reads the (at most 4) neighbouring chains off a dense chain-id array (``ids``, one comparison per point;
no flood fill): opponent chains left without liberties are captured, the others and the merged own chain get
their new class from their liberty count.  Own chains next to captured stones gain liberties
(``_gain_liberties``): two-liberty ones leave ``lib2`` (a bitboard flood), one-liberty ones gain the captured
points next to them (``libsum`` + the point when they touch one, none left otherwise); only several one-liberty
chains sharing two or more captured points are re-counted one chain at a time.  Lanes that finish take the
next pending playout, as in ``jaxgo.playouts.light``; randomness is one xorshift32 stream per playout, so results
depend only on the key.

XLA CPU notes (measured, see docs/heavy.md): a cheap producer used by a fused consumer is recomputed for
every consumer element -- a bitboard word once per point of its row, a per-board sum once per point of the
board -- and such a fusion with a gather in it is not vectorised.  So per-board counts are real reductions
(``_count``, ``_nonempty``: their results are buffers), bitboard sets and row sums read point by point are
computed into buffers first (``_materialize``; ``optimization_barrier`` is expanded away before fusion on
CPU), and short sums that stay inside one fusion are unrolled into elementwise adds (``_sum_over``, ``_pack``).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.playouts import bitboard as bb
from jaxgo.playouts import light as playout
from jaxgo.playouts import rule_policy

U32 = jnp.uint32
DENSE = jnp.int16  # chain ids and liberty sums (< 2 * 361 + 19): half the memory traffic of int32
PlayoutResult = playout.PlayoutResult

# The 8 cells of the 3x3 pattern in ``jaxgo.features.moves`` order: 4 orthogonal (up, down, left, right), then
# the 4 diagonals.
_CELLS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


# ----------------------------------------------------------------------------------------------------------
# Gamma tables


@chex.dataclass(frozen=True)
class PolicyTables:
    """The gammas rearranged for the playout loop (all float32; pass them as arrays, they are not static)."""

    pattern: chex.Array  # [2**20]: gamma of the pattern group per raw 3x3 code (``moves.pattern_codes``)
    capture: chex.Array  # [4]: gamma per level (level 0 = absent included), likewise below
    extension: chex.Array  # [2]
    self_atari: chex.Array  # [2]
    atari: chex.Array  # [3]
    dist_prev: chex.Array  # [Ld]
    dist_prev2: chex.Array  # [Ld]
    line: chex.Array  # [6]: gamma_line per level, times the pass group's level-0 gamma (a constant)


def _group_levels() -> dict[str, int]:
    return dict(zip(mf.GROUPS, (int(s) for s in mf.group_sizes())))


def policy_tables(log_gamma) -> PolicyTables:
    """Tables for ``run`` from log-gammas float [K] indexed like ``jaxgo.features.moves`` (group offset + level;
    K = ``moves.num_features()``)."""
    log_gamma = np.asarray(log_gamma, np.float64)
    if log_gamma.shape != (mf.num_features(),):
        raise ValueError(f"log-gammas must have shape ({mf.num_features()},), got {log_gamma.shape}")
    gamma = np.exp(log_gamma)
    sizes = _group_levels()
    offsets = dict(zip(mf.GROUPS, (int(o) for o in mf.group_offsets())))

    def group(name):
        return gamma[offsets[name]: offsets[name] + sizes[name]]

    pattern_ids = mf.canonical_pattern_table()[0]
    small = {name: jnp.asarray(group(name), jnp.float32)
             for name in ("capture", "extension", "self_atari", "atari", "dist_prev", "dist_prev2")}
    return PolicyTables(pattern=jnp.asarray(group("pattern")[1 + pattern_ids], jnp.float32),
                        line=jnp.asarray(group("line") * group("pass")[0], jnp.float32), **small)


def synthetic_log_gammas(seed: int = 0, sigma: float = 1.0) -> np.ndarray:
    """float32 [K]: made-up log-gammas for development and tests: log-normal pattern gammas, strong captures
    and escapes, weak self-ataris, a preference for moves near the previous one.  Absent levels stay at 0."""
    rng = np.random.default_rng(seed)
    sizes = _group_levels()
    offsets = dict(zip(mf.GROUPS, (int(o) for o in mf.group_offsets())))
    log_gamma = np.zeros(mf.num_features(), np.float64)
    log_gamma[offsets["pattern"] + 1: offsets["pattern"] + sizes["pattern"]] = rng.normal(
        0.0, sigma, sizes["pattern"] - 1)
    fixed = {"capture": [0, 2.5, 3.0, 3.5], "extension": [0, 2.0], "self_atari": [0, -2.0],
             "atari": [0, 0.7, 1.0],
             "line": [0, -0.8, 0.2, 0.4, 0.1, 0.0], "pass": [0, -3.0, -1.0]}
    for name, values in fixed.items():
        log_gamma[offsets[name]: offsets[name] + len(values)] = values
    for name, scale in (("dist_prev", 1.5), ("dist_prev2", 0.7)):
        levels = np.arange(sizes[name])
        ramp = scale * np.maximum(0.0, 1.0 - (levels - 1) / 6.0)
        ramp[0] = 0.0
        log_gamma[offsets[name]: offsets[name] + sizes[name]] = ramp
    return log_gamma.astype(np.float32)


def load_default_tables() -> PolicyTables:
    """The tables of the gammas shipped with the package (``jaxgo.features.gammas.load_default``)."""
    from jaxgo.features import gammas as shipped

    return policy_tables(_as_log_gamma(shipped.load_default()))


def _as_log_gamma(gammas) -> np.ndarray:
    """Accept the shipped gammas object in the shapes it may come in: an array of log-gammas, or an object or
    mapping with a ``log_gamma`` entry."""
    if isinstance(gammas, dict):
        gammas = gammas["log_gamma"]
    elif hasattr(gammas, "log_gamma"):
        gammas = gammas.log_gamma
    return np.asarray(gammas, np.float32)


# ----------------------------------------------------------------------------------------------------------
# Loop state


@chex.dataclass(frozen=True)
class _Boards:
    """Loop state for B lanes, batch axis LAST (see ``jaxgo.playouts.bitboard``)."""

    black: chex.Array  # uint32 [N, B]
    white: chex.Array  # uint32 [N, B]
    ko: chex.Array  # uint32 [N, B]: the simple-ko point (empty set if none)
    ids: chex.Array  # int16 [N, N, B]: chain id (a point of the chain) of every stone; junk on empty points
    lib1: chex.Array  # uint32 [N, B]: stones of chains with exactly one liberty
    lib2: chex.Array  # uint32 [N, B]: stones of chains with exactly two liberties
    libsum: chex.Array  # int16 [N, N, B]: sum of the liberty indices (meaningful on lib1 and lib2 stones only)
    last_chain: chex.Array  # uint32 [N, B]: chain of the previous move (empty after a pass / at the start)
    prev: chex.Array  # int32 [B]: previous move (P = pass, -1 = none)
    prev2: chex.Array  # int32 [B]: the move before it
    to_play: chex.Array  # int32 [B]
    passes: chex.Array  # int32 [B]
    ply: chex.Array  # int32 [B]
    rng: chex.Array  # uint32 [B]
    first_colour: chex.Array  # int8 [P, B]
    first_ply: chex.Array  # int16 [P, B]
    moves: chex.Array  # int16 [max_moves, B] or [0, B]


def _dense(x, size: int):
    """uint32 [N, B] -> bool [N, N, B] (row, column, batch)."""
    cols = jnp.arange(size, dtype=U32).reshape(1, size, 1)
    return ((x[:, None, :] >> cols) & U32(1)).astype(bool)


def _index_sum(x, size: int):
    """int32 [*batch]: sum of the point indices (row * N + col) of the set x uint32 [N, *batch]."""
    rows = jnp.arange(size, dtype=jnp.int32).reshape((size,) + (1,) * (x.ndim - 1))
    count = jax.lax.population_count(x).astype(jnp.int32)
    bit_sum = jnp.zeros_like(count)
    for b, mask in enumerate((0xAAAAAAAA, 0xCCCCCCCC, 0xF0F0F0F0, 0xFF00FF00, 0xFFFF0000)):
        bit_sum = bit_sum + (jax.lax.population_count(x & U32(mask)).astype(jnp.int32) << b)
    return jnp.sum(count * rows * size + bit_sum, axis=0)


def _set_classes(lib1, lib2, libsum, updates, size: int):
    """Record liberty classes: for each (chain [N, B] (one chain per board, or empty), its liberties [N, B],
    apply [B]) put the chain's stones in ``lib1`` / ``lib2`` (uint32 [N, B]) by its liberty count and write the
    liberty index sum into ``libsum`` (int32 [N, N, B]) for one or two.  The chains are disjoint or equal (then
    with equal liberties); one pass over the dense ``libsum``.  Returns (lib1, lib2, libsum)."""
    touched = jnp.zeros_like(lib1)
    one = jnp.zeros_like(lib1)
    two = jnp.zeros_like(lib1)
    writes, sums = [], []
    for chain, libs, apply in updates:
        chain = jnp.where(apply[None], chain, U32(0))
        count = _count(libs)
        touched = touched | chain
        one = one | jnp.where((count == 1)[None], chain, U32(0))
        two = two | jnp.where((count == 2)[None], chain, U32(0))
        writes.append(jnp.where(((count == 1) | (count == 2))[None], chain, U32(0)))
        sums.append(_index_sum(libs, size))
    writes = (jnp.stack(writes))
    for k in range(len(updates)):
        libsum = jnp.where(_dense(writes[k], size), sums[k][None, None].astype(libsum.dtype), libsum)
    return (lib1 & ~touched) | one, (lib2 & ~touched) | two, libsum


# ----------------------------------------------------------------------------------------------------------
# Features and move choice


def _materialize(x):
    """x, computed once into its own buffer: XLA's CPU backend otherwise fuses cheap producers into every
    consumer and recomputes them per element (a bitboard word once per point of its row, say), which also
    keeps the consumer's loop from vectorising.  A max over a stacked pair is a reduction, which it does not
    fuse into consumers (``optimization_barrier`` is expanded away before fusion on CPU)."""
    return jnp.max(jnp.stack([x, jnp.zeros_like(x)]), axis=0)


def _count(x):
    """int32 [B]: points in each set x uint32 [N, B].  A real reduction on purpose: XLA's CPU backend computes
    it once into a buffer, whereas an unrolled sum of rows would be fused into, and recomputed by, every
    consumer element of a broadcast of it."""
    return bb.popcount(x)


def _nonempty(x):
    """bool [B]: the set x uint32 [N, B] is not empty (a reduction, see ``_count``)."""
    return ~bb.is_empty_set(x)


def _toward(x, k: int, size: int):
    """uint32 [N, B]: the points whose neighbour in direction ``_CELLS[k]`` (k < 4) is in x."""
    return (bb.shift_down(x), bb.shift_up(x), bb.shift_left(x, size), bb.shift_right(x))[k]


def _at_least(sets, n: int):
    """Points in at least ``n`` (1 or 2) of the sets."""
    if n == 1:
        return functools.reduce(jnp.bitwise_or, sets)
    return functools.reduce(jnp.bitwise_or, [a & b for i, a in enumerate(sets) for b in sets[i + 1:]])


def _tactics(boards: _Boards, size: int):
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
    exact = _pack(_one_liberty_left(boards.libsum, own_two, empty, size), size)
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
    return sets, _nonempty(boards.ko)


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
    for k, (dr, dc) in enumerate(_CELLS[:4]):
        is_empty = _dense(_toward(empty, k, size), size)
        ref_empty = jnp.where(is_empty, twice + (dr * size + dc), ref_empty)
        has_empty = has_empty | is_empty
        owns.append(_dense(_toward(own_two, k, size), size))
        sums.append(libsum[1 + dr: 1 + dr + size, 1 + dc: 1 + dc + size])
    first = sums[3]
    for k in (2, 1, 0):
        first = jnp.where(owns[k], sums[k], first)
    ref = jnp.where(has_empty, ref_empty, first)
    same = jnp.ones(ref.shape, bool)
    for is_two, value in zip(owns, sums):
        same = same & (~is_two | (value == ref))
    return same


def _pattern_code(boards: _Boards, size: int):
    """int32 [N, N, B]: raw 3x3 code of every point (``moves.pattern_codes``: 2 bits per cell, own 1, opponent 2,
    off board 3, in ``_CELLS`` order, plus the atari bit of the 4 orthogonal neighbours at bit 16 + k)."""
    is_black = boards.to_play == BLACK
    own = jnp.where(is_black, boards.black, boards.white)
    opp = jnp.where(is_black, boards.white, boards.black)
    value = (_dense(own, size).astype(jnp.int32) + 2 * _dense(opp, size).astype(jnp.int32)
             + 4 * _dense(boards.lib1, size).astype(jnp.int32))
    value = jnp.pad(value, ((1, 1), (1, 1), (0, 0)), constant_values=3)
    code = jnp.zeros((size, size, value.shape[-1]), jnp.int32)
    for i, (dr, dc) in enumerate(_CELLS):
        cell = value[1 + dr: 1 + dr + size, 1 + dc: 1 + dc + size]
        code = code | ((cell & 3) << (2 * i))
        if i < 4:
            code = code | ((cell >> 2) << (16 + i))
    return code


def _point_levels(boards: _Boards, size: int):
    """Per-point feature levels for the side to move, all int32 [N, N, B] (batch last), for diagnostics.

    Returns (code, tactical, dist_prev, dist_prev2, legal, eye):
    code: raw 3x3 pattern code (``moves.pattern_codes``); tactical: dict of the capture / extension /
    self_atari / atari levels; dist_prev / dist_prev2: distance levels; legal: bool, empty, not ko and not
    suicide; eye: bool, the mover's own eye by the playout eye rule.
    """
    sets, has_ko = _tactics(boards, size)
    bit = {name: _dense(value, size) for name, value in sets.items()}
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


def _distance_rows(tables: PolicyTables, size: int):
    """(float32 [P+1, P], float32 [P+1, P]): gamma_dist_prev / gamma_dist_prev2 of every point for every
    previous move (row P: none); built once per device call, read one row per board and move."""
    levels = jnp.asarray(_distance_level_table(size))
    return tables.dist_prev[levels], tables.dist_prev2[levels]


def _weights(boards: _Boards, tables: PolicyTables, size: int, rows=None):
    """float32 [N, N, B]: gamma of every candidate (0 elsewhere); rows: ``_distance_rows`` (built if None).

    The same product, in the same order, as gamma_pattern * gamma_line * the four tactical gammas * the two
    distance gammas; the tactical levels come as bitboards (``_tactics``) and are read out point by point.
    With ``rule_policy.RuleTables`` instead of gammas: the MoGo-style rule tiers (``_rule_weights``)."""
    if isinstance(tables, rule_policy.RuleTables):
        return _rule_weights(boards, tables, size)
    sets, has_ko = _tactics(boards, size)
    sets = {name: _materialize(value) for name, value in sets.items()}
    rows = _distance_rows(tables, size) if rows is None else rows

    def bit(name):
        return _dense(sets[name], size)

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
    return jnp.where(_dense(sets["legal"] & ~sets["eye"], size), gamma, 0.0)


def _rule_weights(boards: _Boards, tables, size: int):
    """float32 [N, N, B]: the rule policy's tier weight of every candidate (``rule_policy.tier_weights``:
    capture, save, MoGo shape next to the previous move, anything else), 0 elsewhere."""
    sets, _ = _tactics(boards, size)
    own = jnp.where(boards.to_play == BLACK, boards.black, boards.white)
    sets["joined_self_atari"] = sets["self_atari"] & bb.neighbours(own, size)
    sets = {name: _materialize(sets[name]) for name in ("capture", "extension", "legal", "eye", "joined_self_atari")}

    def bit(name):
        return _dense(sets[name], size)

    return rule_policy.tier_weights(_pattern_code(boards, size), bit("capture"), bit("extension"),
                                    _distance_levels(boards.prev, size), _dense(sets["legal"] & ~sets["eye"], size),
                                    tables.shape, bit("joined_self_atari"), tables.self_atari_factor)


def _pick(weights, u):
    """Sample one point per board with probability proportional to ``weights`` [N, N, B] (not all zero),
    given uniforms u [B] in [0, 1).  Returns (row, col) int32 [B] and whether any weight is positive [B]."""
    size = weights.shape[0]
    idx = jnp.arange(size, dtype=jnp.int32)[:, None]

    def first(cum, w, target):
        """First index with a positive weight whose cumulative sum exceeds target (else the last positive)."""
        hit = (cum > target[None]) & (w > 0)
        last = jnp.max(jnp.where(w > 0, idx, 0), axis=0)
        return jnp.where(jnp.any(hit, axis=0), jnp.argmax(hit, axis=0).astype(jnp.int32), last)

    row_sum = _materialize(_sum_over(weights, 1))  # [N, B], summed once (not inside every consumer)
    row_cum = jnp.cumsum(row_sum, axis=0)
    target = u * row_cum[-1]
    row = first(row_cum, row_sum, target)
    at_row = idx == row[None]
    before = jnp.sum(jnp.where(at_row, row_cum - row_sum, 0.0), axis=0)
    in_row = _materialize(_sum_over(jnp.where(at_row[:, None, :], weights, 0.0), 0))  # [N, B]
    col = first(jnp.cumsum(in_row, axis=0), in_row, target - before)
    return row, col, row_cum[-1] > 0


def _sum_over(x, axis: int):
    """Sum over a short leading axis of a batch-last array, unrolled into elementwise adds (XLA's CPU reduce
    over a non-minor axis walks each board's elements with a stride)."""
    parts = [jax.lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis])]
    return functools.reduce(jnp.add, parts)


# ----------------------------------------------------------------------------------------------------------
# Playing a move


def _pack(mask, size: int):
    """bool [N, N, B] -> uint32 [N, B] (the inverse of ``_dense``)."""
    out = jnp.where(mask[:, 0], U32(1), U32(0))
    for c in range(1, size):  # unrolled: XLA fuses it into one elementwise loop
        out = out | jnp.where(mask[:, c], U32(1 << c), U32(0))
    return out


def _chain_of(ids, point, colour_bits, size: int):
    """uint32 [N, B]: the chain through ``point`` int32 [B] (a stone of ``colour_bits`` [N, B]), read off the
    chain ids ``ids`` int32 [N, N, B]: one gather per board and one comparison per point."""
    lanes = jnp.arange(point.shape[0])
    target = ids.reshape(-1)[jnp.clip(point, 0, size * size - 1) * point.shape[0] + lanes]
    return _pack(ids == target[None, None], size) & colour_bits


def _play(boards: _Boards, point, placed, size: int) -> tuple[_Boards, chex.Array]:
    """Play ``point`` int32 [B] for the side to move on the boards where ``placed`` [B] (a legal move; the
    other boards are left unchanged).  Returns (boards with stones, chain ids, liberty classes and ko
    updated, the merged chain of the new stone [N, B] (empty where not placed))."""
    full = bb.row_mask(size)
    is_black = boards.to_play == BLACK
    own = jnp.where(is_black, boards.black, boards.white)
    opp = jnp.where(is_black, boards.white, boards.black)
    row, col = point // size, point % size
    stone = jnp.where(placed[None], bb.point_mask(row, col, size), U32(0))
    occupied = own | opp
    empty_after = full & ~(occupied | stone)
    # The chain id of each neighbour stone: a 1-D gather of one id per board.  (Reductions over the board axes
    # of [N, N, B] arrays are slow on XLA's CPU backend: strided loops per board.)
    lanes = jnp.arange(point.shape[0])
    flat_ids = boards.ids.reshape(-1)
    neighbour_sets = (bb.shift_up(stone), bb.shift_down(stone), bb.shift_right(stone), bb.shift_left(stone, size))
    chains, is_opp = [], []
    for (dr, dc), there in zip(_CELLS[:4], neighbour_sets):
        present = placed & ~bb.is_empty_set(there & occupied)
        neighbour = jnp.clip(point + dr * size + dc, 0, size * size - 1)
        target = flat_ids[neighbour * point.shape[0] + lanes]
        chain = jnp.where(present[None], _pack(boards.ids == target[None, None], size) & occupied, U32(0))
        opp_k = present & _nonempty(there & opp)
        chains.append(chain)
        is_opp.append(opp_k)
    stacked = jax.lax.optimization_barrier(jnp.stack(chains, axis=1))  # [N, 4, B], computed once
    libs = bb.neighbours(stacked, size) & empty_after[:, None]
    chains = [stacked[:, k] for k in range(4)]
    libs = [libs[:, k] for k in range(4)]
    dead = [opp_k & bb.is_empty_set(lib) for opp_k, lib in zip(is_opp, libs)]
    captured = functools.reduce(jnp.bitwise_or, [jnp.where(d[None], c, U32(0)) for d, c in zip(dead, chains)])
    merged = stone | functools.reduce(jnp.bitwise_or, [jnp.where(o[None], U32(0), c)
                                                       for o, c in zip(is_opp, chains)])
    merged, captured = jax.lax.optimization_barrier((merged, captured))
    merged_libs = bb.neighbours(merged, size) & (empty_after | captured)
    new_own = own | stone
    new_opp = opp & ~captured
    boards = boards.replace(
        black=jnp.where(is_black[None], new_own, new_opp),
        white=jnp.where(is_black[None], new_opp, new_own),
        ids=jnp.where(_dense(merged, size), point[None, None].astype(boards.ids.dtype), boards.ids),
    )
    updates = [(c, lib, o & ~d) for c, lib, o, d in zip(chains, libs, is_opp, dead)]
    lib1, lib2, libsum = _set_classes(boards.lib1 & ~captured, boards.lib2 & ~captured, boards.libsum,
                                      updates + [(merged, merged_libs, placed)], size)

    # Own chains next to captured stones gained liberties (``_gain_liberties``); the chains it leaves over are
    # re-counted here one at a time.
    empty_now = full & ~(new_own | new_opp)

    ids = boards.ids

    def recount(carry):
        lib1, lib2, libsum, todo = carry
        has = ~bb.is_empty_set(todo)
        r, c = bb.select_point(jnp.where(has[None], todo, U32(1)), jnp.zeros_like(has, jnp.int32))
        chain = jnp.where(has[None], _chain_of(ids, r * size + c, new_own, size), U32(0))
        libs = bb.neighbours(chain, size) & empty_now
        lib1, lib2, libsum = _set_classes(lib1, lib2, libsum, [(chain, libs, has)], size)
        return lib1, lib2, libsum, todo & ~chain

    todo = new_own & bb.neighbours(captured, size) & ~merged & (lib1 | lib2)
    lib1, lib2, libsum, hard = _gain_liberties(todo, captured, new_own & ~merged, lib1, lib2, libsum, size)
    lib1, lib2, libsum, _ = jax.lax.while_loop(lambda c: jnp.any(c[3] != 0), recount, (lib1, lib2, libsum, hard))
    ko_shape = (bb.is_empty_set(merged & ~stone) & (bb.popcount(merged_libs) == 1)
                & (bb.popcount(captured) == 1))
    ko = jnp.where(placed[None], jnp.where(ko_shape[None], captured, U32(0)), boards.ko)
    return boards.replace(ko=ko, lib1=lib1, lib2=lib2, libsum=libsum), merged


def _gain_liberties(seeds, captured, own, lib1, lib2, libsum, size: int):
    """Own chains next to captured stones (all sets uint32 [N, B]; ``seeds``: their stones next to ``captured``,
    ``own``: the mover's stones outside the new stone's chain) gain those points as liberties.

    A two-liberty chain then has three or more: it leaves ``lib2`` whole (a flood within the own two-liberty
    stones, whose connected parts are exactly those chains).  A one-liberty chain (``libsum`` = its liberty)
    gains the captured points next to it: when a board's one-liberty chains touch a single captured point g
    together, each touches g and becomes a two-liberty chain with libsum + g; when they touch two or more and
    are a single chain, it has three or more.  The rest (several one-liberty chains sharing two or more captured
    points, rare) is returned as ``hard`` to be re-counted one chain at a time.
    Returns (lib1, lib2, libsum, hard)."""
    ones = seeds & lib1
    has = _nonempty(ones)
    r, c = bb.select_point(jnp.where(has[None], ones, U32(1)), jnp.zeros_like(has, jnp.int32))
    first = jnp.where(has[None], bb.point_mask(r, c, size), U32(0))
    within1 = own & lib1
    grown = bb.flood(jnp.stack([seeds & lib2, ones, first], axis=1),
                     jnp.stack([own & lib2, within1, within1], axis=1), size)
    twos, chains, first_chain = grown[:, 0], grown[:, 1], grown[:, 2]
    gained = bb.neighbours(chains, size) & captured
    count = _count(gained)
    single = ~_nonempty(chains & ~first_chain)
    to_two = (count == 1)[None]
    done = jnp.where(to_two | ((count >= 2) & single)[None], chains, U32(0))
    raised = jnp.where(to_two, chains, U32(0))
    libsum = jnp.where(_dense(raised, size), libsum + _index_sum(gained, size)[None, None].astype(libsum.dtype),
                       libsum)
    return lib1 & ~done, (lib2 & ~twos) | raised, libsum, ones & ~done


def _step(boards: _Boards, running, tables: PolicyTables, size: int, record: bool, rows=None) -> _Boards:
    """One move (or a forced pass) on every running board."""
    points = size * size
    weights = _weights(boards, tables, size, rows)
    rng, bits = playout.next_random(boards.rng)
    u = (bits >> U32(8)).astype(jnp.float32) * jnp.float32(1.0 / (1 << 24))
    row, col, any_candidate = _pick(weights, u)
    must_pass = ~any_candidate
    placed = running & ~must_pass
    boards, merged = _play(boards, row * size + col, placed, size)
    point = jnp.where(must_pass, points, row * size + col)

    first_colour, first_ply, moves = playout.record_move(boards, point, placed, running, points, record)
    return boards.replace(
        ko=jnp.where((running & must_pass)[None], U32(0), boards.ko),
        last_chain=jnp.where(running[None], merged, boards.last_chain),
        prev=jnp.where(running, point, boards.prev),
        prev2=jnp.where(running, boards.prev, boards.prev2),
        to_play=jnp.where(running, -boards.to_play, boards.to_play),
        passes=jnp.where(running, jnp.where(must_pass, boards.passes + 1, 0), boards.passes),
        ply=boards.ply + running.astype(jnp.int32),
        rng=jnp.where(running, rng, boards.rng),
        first_colour=first_colour,
        first_ply=first_ply,
        moves=moves,
    )


# ----------------------------------------------------------------------------------------------------------
# Start positions


def _liberty_classes(state: rules.State, prev):
    """One position: (lib1 bool [P], lib2 bool [P], libsum int32 [P], last_chain bool [P]) from the chain ids.

    Exact liberty counts: each (chain, empty point) adjacency is counted once per empty point."""
    points = state.stones.shape[0]
    size = rules.board_size(points)
    stones, chain = rules.padded(state)
    nbrs = jnp.asarray(rules.neighbour_table(size))
    nb_chain = jnp.where(jnp.abs(stones[nbrs]) == 1, chain[nbrs], points)
    earlier = (nb_chain[:, :, None] == nb_chain[:, None, :]) & jnp.tril(jnp.ones((4, 4), bool), -1)
    counted = (state.stones == 0)[:, None] & (nb_chain < points) & ~jnp.any(earlier, axis=2)
    target = jnp.where(counted, nb_chain, points).reshape(-1)
    count = jax.ops.segment_sum(counted.reshape(-1).astype(jnp.int32), target, num_segments=points + 1)
    total = jax.ops.segment_sum(jnp.where(counted, jnp.arange(points)[:, None], 0).reshape(-1), target,
                                num_segments=points + 1)
    own_count = count[state.chain]
    is_stone = state.stones != 0
    prev_chain = chain[jnp.clip(prev, 0, points)]
    last = is_stone & (prev >= 0) & (prev < points) & (state.chain == prev_chain)
    return is_stone & (own_count == 1), is_stone & (own_count == 2), total[state.chain], last


def _from_states(states: rules.State, rng, prev, prev2, max_moves: int, record: bool) -> _Boards:
    """Batched rules.State [B, ...] and previous moves [B] -> loop state."""
    batch, points = states.stones.shape
    size = rules.board_size(points)
    grid = states.stones.reshape(batch, size, size)
    ko_point = jnp.arange(points)[None, :] == states.ko[:, None]
    lib1, lib2, libsum, last = jax.vmap(_liberty_classes)(states, prev)

    def bits(mask):
        return bb.from_dense(mask.reshape(batch, size, size))

    return _Boards(
        black=bb.from_dense(grid == BLACK),
        white=bb.from_dense(grid == WHITE),
        ko=bits(ko_point),
        ids=jnp.moveaxis(states.chain.reshape(batch, size, size), 0, -1).astype(DENSE),
        lib1=bits(lib1),
        lib2=bits(lib2),
        libsum=jnp.moveaxis(libsum.reshape(batch, size, size), 0, -1).astype(DENSE),
        last_chain=bits(last),
        prev=prev.astype(jnp.int32),
        prev2=prev2.astype(jnp.int32),
        to_play=states.to_play.astype(jnp.int32),
        passes=states.passes.astype(jnp.int32),
        ply=jnp.zeros(batch, jnp.int32),
        rng=rng,
        first_colour=jnp.zeros((points, batch), jnp.int8),
        first_ply=jnp.full((points, batch), -1, jnp.int16),
        moves=jnp.full((max_moves if record else 0, batch), -1, jnp.int16),
    )


# ----------------------------------------------------------------------------------------------------------
# The playout loop


def _playouts(states, rng, prev, prev2, komi, tables, max_moves: int, record: bool, lanes: int,
              active) -> PlayoutResult:
    """T playouts (one per entry of ``states`` [T, ...]) on ``lanes`` persistent boards; as
    ``jaxgo.playouts.light._playouts`` (a finished lane hands in its result and takes the next pending playout)."""
    total, points = states.stones.shape
    size = rules.board_size(points)
    lanes = min(lanes, total)
    collect = max(8, lanes // 16)
    # Start positions that are compile-time constants (``run_from_empty``) would otherwise be constant-folded:
    # XLA evaluates the liberty-count segment sum (a scatter-add s32[T, P+1]) at compile time, > 1 s with a
    # warning, for work a real search pays at run time anyway (~10 us a board).
    states = jax.lax.optimization_barrier(states)
    jobs = _from_states(states, rng, prev, prev2, max_moves, record=False)
    rows = None if isinstance(tables, rule_policy.RuleTables) else _distance_rows(tables, size)

    def running(b):
        return (b.passes < 2) & (b.ply < max_moves)

    def load(boards, lane, job):
        src = jnp.maximum(job, 0)
        target = jnp.where(job >= 0, lane, lanes)

        def put(table, fresh):
            return table.at[..., target].set(fresh, mode="drop")

        fresh = jax.tree_util.tree_map(lambda x: x[..., src], jobs)
        count = src.shape[0]
        return boards.replace(
            **{name: put(getattr(boards, name), getattr(fresh, name))
               for name in ("black", "white", "ko", "ids", "lib1", "lib2", "libsum", "last_chain", "prev", "prev2",
                            "to_play", "passes", "rng")},
            ply=put(boards.ply, jnp.zeros_like(src)),
            first_colour=put(boards.first_colour, jnp.zeros((points, count), jnp.int8)),
            first_ply=put(boards.first_ply, jnp.full((points, count), -1, jnp.int16)),
            moves=put(boards.moves, jnp.full((boards.moves.shape[0], count), -1, jnp.int16)),
        )

    def body(carry):
        boards, job, next_job, out = carry
        boards = _step(boards, running(boards) & (job >= 0), tables, size, record, rows)
        finished = (job >= 0) & ~running(boards)
        return playout.retire_and_refill(boards, job, next_job, out, finished, load, collect, komi, size, active)

    first = playout.first_jobs(lanes, active)
    boards = _from_states(jax.tree_util.tree_map(lambda x: x[:lanes], states), rng[:lanes], prev[:lanes],
                          prev2[:lanes], max_moves, record)
    out = playout.empty_result(total, points, max_moves if record else 0)
    out = jax.lax.while_loop(lambda c: jnp.any(c[1] >= 0), body, (boards, first, jnp.int32(lanes), out))[3]
    return out.replace(winner=jnp.sign(out.score).astype(jnp.int8))


def default_lanes(num_points: int) -> int:
    """Boards advanced together by default.  A heavy lane carries ~3x the light one's working set (dense chain
    ids, liberty sums, weights), so on a CPU 9x9 runs best with fewer lanes than the light playouts: 256
    (measured on the shared 2-core CPU, one device, CPU time: 4,096 playouts/s at 256 lanes, 3,697 at 512,
    2,946 at 1,024); 19x19 is flat between 64 and 256 lanes and keeps ``playout.default_lanes``, as do
    accelerators (as many lanes as memory allows)."""
    if num_points <= 100 and jax.default_backend() == "cpu":
        return 256
    return playout.default_lanes(num_points)


def _batched(states: rules.State, num_per_state: int, last_moves):
    if states.stones.ndim == 1:
        states = jax.tree_util.tree_map(lambda x: x[None], states)
    count = states.stones.shape[0]
    if last_moves is None:
        last_moves = jnp.full((count, 2), -1, jnp.int32)
    last_moves = jnp.asarray(last_moves, jnp.int32).reshape(count, 2)
    if num_per_state > 1:
        states = jax.tree_util.tree_map(lambda x: jnp.repeat(x, num_per_state, axis=0), states)
        last_moves = jnp.repeat(last_moves, num_per_state, axis=0)
    return states, last_moves


@functools.partial(jax.jit, static_argnames=("num_per_state", "max_moves", "record_moves", "lanes"))
def run(states: rules.State, key, komi=7.5, *, gammas: PolicyTables, num_per_state: int = 1,
        max_moves: int | None = None, record_moves: bool = False, lanes: int | None = None,
        last_moves=None, active_states=None) -> PlayoutResult:
    """Run heavy playouts from a batch of positions in one device call.

    states: ``rules.State`` batched [S, ...] (or one unbatched state); key: a ``jax.random`` key; komi: float.
    gammas: ``PolicyTables`` (``policy_tables(log_gamma)``, ``load_default_tables()``), or
    ``rule_policy.rule_tables()`` for the MoGo-style rule policy.
    last_moves: optional int [S, 2], the previous move and the one before it of each position (P = pass, -1 =
    none) for the distance features of the first playout move; default none.
    active_states: play out only the first ``active_states`` positions (traced), as ``playout.run``.
    Returns a ``PlayoutResult`` over S * num_per_state playouts, position-major, as ``playout.run``.
    """
    states, last = _batched(states, num_per_state, last_moves)
    points = states.stones.shape[-1]
    limit = 3 * points if max_moves is None else max_moves
    batch = states.stones.shape[0]
    seeds = jax.random.bits(key, (batch,), jnp.uint32) | U32(1)
    return _playouts(states, seeds, last[:, 0], last[:, 1], jnp.float32(komi), gammas, limit, record_moves,
                     lanes or default_lanes(points), playout.active_jobs(batch, num_per_state, active_states))


def run_from_empty(size: int, batch: int, key, komi=7.5, *, gammas: PolicyTables, **kwargs) -> PlayoutResult:
    """``batch`` heavy playouts from the empty N x N board (Black first)."""
    return run(rules.new_state(size), key, komi, gammas=gammas, num_per_state=batch, **kwargs)


@jax.jit
def point_features(states: rules.State, last_moves=None):
    """The playout's own view of every point, for tests and diagnostics: states batched [S, ...], last_moves
    int [S, 2] or None.  Returns a dict of int32 [S, P]: ``code`` (raw 3x3 code), the four tactical levels,
    ``dist_prev``, ``dist_prev2``, and bool [S, P] ``legal`` and ``eye``."""
    states, last = _batched(states, 1, last_moves)
    count, points = states.stones.shape
    boards = _from_states(states, jnp.ones(count, U32), last[:, 0], last[:, 1], 1, False)
    size = rules.board_size(points)
    code, tactical, dist1, dist2, legal, eye = _point_levels(boards, size)
    out = {"code": code, **tactical, "dist_prev": dist1, "dist_prev2": dist2, "legal": legal, "eye": eye}
    return {name: jnp.moveaxis(value, -1, 0).reshape(count, points) for name, value in out.items()}


@jax.jit
def move_probabilities(states: rules.State, gammas: PolicyTables, last_moves=None):
    """float32 [S, P]: the playout policy's probability of each point as the next move (all zero when the
    playout must pass)."""
    states, last = _batched(states, 1, last_moves)
    count, points = states.stones.shape
    boards = _from_states(states, jnp.ones(count, U32), last[:, 0], last[:, 1], 1, False)
    weights = _weights(boards, gammas, rules.board_size(points))
    total = jnp.sum(weights, axis=(0, 1))
    probs = weights / jnp.maximum(total, 1e-30)[None, None]
    return jnp.moveaxis(probs, -1, 0).reshape(count, points)
