"""Heavy playouts' board: the loop state of B lanes (row bitboards, batch axis last, plus dense chain ids and the
liberty classes of every chain), playing a move on it, and building it from start positions.

The liberty classes (``lib1`` / ``lib2``: stones of chains with exactly one / two liberties; ``libsum``: the sum
of the liberty indices of such a chain) are kept up to date move by move, as ``jaxgo.playouts.xla.heavy`` describes;
``jaxgo.playouts.xla.features`` reads every tactical feature off them.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.playouts.xla import bitboard as bb

U32 = jnp.uint32
DENSE = jnp.int16  # chain ids and liberty sums (< 2 * 361 + 19): half the memory traffic of int32

# The 8 cells of the 3x3 pattern in ``jaxgo.features.moves`` order: 4 orthogonal (up, down, left, right), then
# the 4 diagonals.
CELLS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


@chex.dataclass(frozen=True)
class Boards:
    """Loop state for B lanes, batch axis LAST (see ``jaxgo.playouts.xla.bitboard``)."""

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


def dense(x, size: int):
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
        count = count_points(libs)
        touched = touched | chain
        one = one | jnp.where((count == 1)[None], chain, U32(0))
        two = two | jnp.where((count == 2)[None], chain, U32(0))
        writes.append(jnp.where(((count == 1) | (count == 2))[None], chain, U32(0)))
        sums.append(_index_sum(libs, size))
    writes = (jnp.stack(writes))
    for k in range(len(updates)):
        libsum = jnp.where(dense(writes[k], size), sums[k][None, None].astype(libsum.dtype), libsum)
    return (lib1 & ~touched) | one, (lib2 & ~touched) | two, libsum




def materialize(x):
    """x, computed once into its own buffer: XLA's CPU backend otherwise fuses cheap producers into every
    consumer and recomputes them per element (a bitboard word once per point of its row, say), which also
    keeps the consumer's loop from vectorising.  A max over a stacked pair is a reduction, which it does not
    fuse into consumers (``optimization_barrier`` is expanded away before fusion on CPU)."""
    return jnp.max(jnp.stack([x, jnp.zeros_like(x)]), axis=0)


def count_points(x):
    """int32 [B]: points in each set x uint32 [N, B].  A real reduction on purpose: XLA's CPU backend computes
    it once into a buffer, whereas an unrolled sum of rows would be fused into, and recomputed by, every
    consumer element of a broadcast of it."""
    return bb.popcount(x)


def nonempty(x):
    """bool [B]: the set x uint32 [N, B] is not empty (a reduction, see ``count_points``)."""
    return ~bb.is_empty_set(x)



# ----------------------------------------------------------------------------------------------------------
# Playing a move


def pack(mask, size: int):
    """bool [N, N, B] -> uint32 [N, B] (the inverse of ``dense``)."""
    out = jnp.where(mask[:, 0], U32(1), U32(0))
    for c in range(1, size):  # unrolled: XLA fuses it into one elementwise loop
        out = out | jnp.where(mask[:, c], U32(1 << c), U32(0))
    return out


def _chain_of(ids, point, colour_bits, size: int):
    """uint32 [N, B]: the chain through ``point`` int32 [B] (a stone of ``colour_bits`` [N, B]), read off the
    chain ids ``ids`` int32 [N, N, B]: one gather per board and one comparison per point."""
    lanes = jnp.arange(point.shape[0])
    target = ids.reshape(-1)[jnp.clip(point, 0, size * size - 1) * point.shape[0] + lanes]
    return pack(ids == target[None, None], size) & colour_bits


def play(boards: Boards, point, placed, size: int) -> tuple[Boards, chex.Array]:
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
    for (dr, dc), there in zip(CELLS[:4], neighbour_sets):
        present = placed & ~bb.is_empty_set(there & occupied)
        neighbour = jnp.clip(point + dr * size + dc, 0, size * size - 1)
        target = flat_ids[neighbour * point.shape[0] + lanes]
        chain = jnp.where(present[None], pack(boards.ids == target[None, None], size) & occupied, U32(0))
        opp_k = present & nonempty(there & opp)
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
        ids=jnp.where(dense(merged, size), point[None, None].astype(boards.ids.dtype), boards.ids),
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
    has = nonempty(ones)
    r, c = bb.select_point(jnp.where(has[None], ones, U32(1)), jnp.zeros_like(has, jnp.int32))
    first = jnp.where(has[None], bb.point_mask(r, c, size), U32(0))
    within1 = own & lib1
    grown = bb.flood(jnp.stack([seeds & lib2, ones, first], axis=1),
                     jnp.stack([own & lib2, within1, within1], axis=1), size)
    twos, chains, first_chain = grown[:, 0], grown[:, 1], grown[:, 2]
    gained = bb.neighbours(chains, size) & captured
    count = count_points(gained)
    single = ~nonempty(chains & ~first_chain)
    to_two = (count == 1)[None]
    done = jnp.where(to_two | ((count >= 2) & single)[None], chains, U32(0))
    raised = jnp.where(to_two, chains, U32(0))
    libsum = jnp.where(dense(raised, size), libsum + _index_sum(gained, size)[None, None].astype(libsum.dtype),
                       libsum)
    return lib1 & ~done, (lib2 & ~twos) | raised, libsum, ones & ~done


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


def from_states(states: rules.State, rng, prev, prev2, max_moves: int, record: bool) -> Boards:
    """Batched rules.State [B, ...] and previous moves [B] -> loop state."""
    batch, points = states.stones.shape
    size = rules.board_size(points)
    grid = states.stones.reshape(batch, size, size)
    ko_point = jnp.arange(points)[None, :] == states.ko[:, None]
    lib1, lib2, libsum, last = jax.vmap(_liberty_classes)(states, prev)

    def bits(mask):
        return bb.from_dense(mask.reshape(batch, size, size))

    return Boards(
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

