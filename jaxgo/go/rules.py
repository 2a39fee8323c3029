"""Go rules on one dense board, as pure JAX functions (callers ``jax.vmap`` for batches).

The state keeps every chain's pseudo-liberties incrementally: for chain id ``q`` (the index of a representative
stone) ``lib_count[q]`` counts (stone, empty neighbour) adjacencies, ``lib_sum[q]`` sums those neighbours' point
indices and ``lib_sumsq[q]`` their squares.  A chain is in atari exactly when every pseudo-liberty is the same
point: ``lib_sum == lib_count * m`` and ``lib_sumsq == lib_count * m * m`` for ``m = lib_sum // lib_count``
(the variance form of pgx's ``sum**2 == count * sumsq`` test, which stays inside int32 on 19x19).
A move costs O(P): a few gathers around the point, dense relabelling of the merged chains, and one segment sum
for the liberties that captures give back.  No flood fill happens during play.

Jitted code applies simple ko only; positional/situational superko is checked on the host (``jaxgo.go.game``)
against the Zobrist hash history.  The board size is read from the array shapes (P = N * N); the
per-size tables (neighbours, diagonals, Zobrist keys) are numpy constants built once per size (``jaxgo.go.tables``;
``rules.board_size``, ``rules.neighbour_table`` ... name the same functions).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.go.coords import BLACK, EMPTY, WHITE
from jaxgo.go.hostboard import chains
from jaxgo.go.tables import board_size, colour_index, diagonal_table, neighbour_lists, neighbour_table, zobrist_table

OFF_BOARD = 2  # colour value of the padding point P in neighbour lookups


@chex.dataclass(frozen=True)
class State:
    """One Go position.  Shapes for an N x N board with P = N * N points."""

    stones: chex.Array  # int8 [P]: BLACK 1, WHITE -1, EMPTY 0
    chain: chex.Array  # int32 [P]: representative point of the stone's chain; P on empty points
    lib_count: chex.Array  # int32 [P]: pseudo-liberty count, indexed by chain id
    lib_sum: chex.Array  # int32 [P]: sum of pseudo-liberty point indices, by chain id
    lib_sumsq: chex.Array  # int32 [P]: sum of squared pseudo-liberty indices, by chain id
    ko: chex.Array  # int32 []: point the side to move may not play (simple ko), -1 if none
    to_play: chex.Array  # int8 []: BLACK or WHITE
    passes: chex.Array  # int32 []: consecutive passes
    captures: chex.Array  # int32 [2]: stones captured by black (0) and by white (1)
    hash: chex.Array  # uint32 [2]: 64-bit Zobrist hash of the stones (not of the side to move)
    move_count: chex.Array  # int32 []: moves played including passes


# ----------------------------------------------------------------------------------------------------------
# Construction


def new_state(size: int) -> State:
    """Empty N x N board, Black to play."""
    points = size * size
    zeros = jnp.zeros(points, jnp.int32)
    return State(
        stones=jnp.zeros(points, jnp.int8),
        chain=jnp.full(points, points, jnp.int32),
        lib_count=zeros,
        lib_sum=zeros,
        lib_sumsq=zeros,
        ko=jnp.int32(-1),
        to_play=jnp.int8(BLACK),
        passes=jnp.int32(0),
        captures=jnp.zeros(2, jnp.int32),
        hash=jnp.zeros(2, jnp.uint32),
        move_count=jnp.int32(0),
    )


def from_board(stones, to_play: int = BLACK, captures=(0, 0), move_count: int = 0) -> State:
    """Host-side: build a State from an arbitrary board (setup stones, ASCII tests) by flood fill.

    stones: int8 [P] (or [N, N]).  Chains without liberties are kept as given (no capture is applied).
    """
    board = np.asarray(stones, dtype=np.int8).reshape(-1)
    points = board.shape[0]
    size = board_size(points)
    chain, lib_count, lib_sum, lib_sumsq = _chains_from_scratch(board, size)
    key = _hash_from_scratch(board, size)
    return State(
        stones=jnp.asarray(board),
        chain=jnp.asarray(chain),
        lib_count=jnp.asarray(lib_count),
        lib_sum=jnp.asarray(lib_sum),
        lib_sumsq=jnp.asarray(lib_sumsq),
        ko=jnp.int32(-1),
        to_play=jnp.int8(to_play),
        passes=jnp.int32(0),
        captures=jnp.asarray(captures, jnp.int32),
        hash=jnp.asarray(key),
        move_count=jnp.int32(move_count),
    )


def _chains_from_scratch(board: np.ndarray, size: int):
    """Chain ids (smallest point of each chain) and pseudo-liberty statistics, from the host board's flood fill
    (``hostboard.chains``)."""
    points = size * size
    nbrs = neighbour_lists(size)
    chain = np.full(points, points, np.int32)
    lib_count = np.zeros(points, np.int64)
    lib_sum = np.zeros(points, np.int64)
    lib_sumsq = np.zeros(points, np.int64)
    stones = board.tolist()
    for members in chains(stones, size):
        start = members[0]
        chain[members] = start
        for point in members:
            for nb in nbrs[point]:
                if stones[nb] == EMPTY:
                    lib_count[start] += 1
                    lib_sum[start] += nb
                    lib_sumsq[start] += nb * nb
    return chain, lib_count.astype(np.int32), lib_sum.astype(np.int32), lib_sumsq.astype(np.int32)


def _hash_from_scratch(board: np.ndarray, size: int) -> np.ndarray:
    table = zobrist_table(size)
    key = np.zeros(2, np.uint32)
    for point in np.flatnonzero(board):
        key ^= table[point, 0 if board[point] == BLACK else 1]
    return key


# ----------------------------------------------------------------------------------------------------------
# Queries


def hash_key(words) -> np.ndarray:
    """uint64 [...]: the 64-bit key of Zobrist words uint32 [..., 2] (``State.hash``: low word first)."""
    words = np.asarray(words, dtype=np.uint64)
    return words[..., 0] | (words[..., 1] << np.uint64(32))


def in_atari(lib_count, lib_sum, lib_sumsq):
    """bool [...]: the chain has exactly one distinct liberty (all pseudo-liberties are one point)."""
    safe_count = jnp.maximum(lib_count, 1)
    mean = lib_sum // safe_count
    return (lib_count > 0) & (lib_sum == lib_count * mean) & (lib_sumsq == lib_count * mean * mean)


def padded(state: State):
    """Stones and chain ids with an extra off-board entry at index P (for neighbour lookups)."""
    points = state.stones.shape[0]
    stones = jnp.concatenate([state.stones, jnp.array([OFF_BOARD], jnp.int8)])
    chain = jnp.concatenate([state.chain, jnp.array([points], jnp.int32)])
    return stones, chain


def chain_atari_mask(state: State):
    """bool [P+1] by chain id (index P is the padding id, False): the chain is in atari."""
    atari = in_atari(state.lib_count, state.lib_sum, state.lib_sumsq)
    return jnp.concatenate([atari, jnp.array([False])])


def legal_mask(state: State, *, suicide: bool = False):
    """bool [P+1]: legal moves for ``state.to_play`` under simple ko; the last entry (pass) is always True.

    A point is legal when empty, not the ko point, and either it has an empty neighbour, or it joins an own
    chain that keeps another liberty, or it captures an adjacent opponent chain in atari.  With
    ``suicide=True`` every empty non-ko point is legal.
    """
    points = state.stones.shape[0]
    empty = state.stones == EMPTY
    not_ko = jnp.arange(points) != state.ko
    if suicide:
        legal = empty & not_ko
    else:
        stones, chain = padded(state)
        nbrs = neighbour_table(board_size(points))
        nb_colour = stones[nbrs]  # [P, 4]
        nb_atari = chain_atari_mask(state)[chain[nbrs]]  # [P, 4]
        own = state.to_play
        has_liberty = jnp.any(nb_colour == EMPTY, axis=1)
        joins_safe_chain = jnp.any((nb_colour == own) & ~nb_atari, axis=1)
        captures = jnp.any((nb_colour == -own) & nb_atari, axis=1)
        legal = empty & not_ko & (has_liberty | joins_safe_chain | captures)
    return jnp.concatenate([legal, jnp.array([True])])


def eye_mask(state: State, color):
    """bool [P]: empty points that are eyes of ``color`` by the playout eye rule.

    Every on-board orthogonal neighbour is ``color``; among the on-board diagonals the opponent holds none
    when the point is on the edge or in a corner, and at most one in the centre.
    """
    points = state.stones.shape[0]
    size = board_size(points)
    stones = jnp.concatenate([state.stones, jnp.array([OFF_BOARD], jnp.int8)])
    nb_colour = stones[neighbour_table(size)]
    surrounded = jnp.all((nb_colour == color) | (nb_colour == OFF_BOARD), axis=1)
    diag = diagonal_table(size)
    on_edge = jnp.asarray(np.any(diag == points, axis=1))
    enemy_diagonals = jnp.sum(stones[diag] == -color, axis=1)
    allowed = jnp.where(on_edge, 0, 1)
    return (state.stones == EMPTY) & surrounded & (enemy_diagonals <= allowed)


def ownership(state: State):
    """int8 [P]: Tromp-Taylor area owner of each point: the stone's colour, or for an empty point the single
    colour its empty region reaches (0 if it reaches both or neither)."""
    points = state.stones.shape[0]
    nbrs = neighbour_table(board_size(points))
    empty = state.stones == EMPTY

    def reach(color):
        start = empty & jnp.any(_pad_bool(state.stones == color)[nbrs], axis=1)

        def grow(carry):
            current, _ = carry
            nxt = current | (empty & jnp.any(_pad_bool(current)[nbrs], axis=1))
            return nxt, jnp.any(nxt != current)

        return jax.lax.while_loop(lambda c: c[1], grow, (start, jnp.bool_(True)))[0]

    black, white = reach(BLACK), reach(WHITE)
    owner = state.stones.astype(jnp.int8)
    owner = jnp.where(empty & black & ~white, jnp.int8(BLACK), owner)
    return jnp.where(empty & white & ~black, jnp.int8(WHITE), owner)


def _pad_bool(mask):
    return jnp.concatenate([mask, jnp.array([False])])


def area_score(state: State, komi):
    """float32 []: Tromp-Taylor area score, black area - white area - komi."""
    return jnp.sum(ownership(state).astype(jnp.float32)) - komi


def is_over(state: State):
    """bool []: the game has ended by two consecutive passes."""
    return state.passes >= 2


# ----------------------------------------------------------------------------------------------------------
# Playing a move


def play(state: State, move, *, suicide: bool = False) -> State:
    """Play ``move`` (point index, or P for pass) for ``state.to_play``.

    Precondition: the move is legal under simple ko (see ``legal_mask``); an illegal move gives an
    unspecified state.  With ``suicide=True`` a suicidal move removes the mover's own chain.
    """
    points = state.stones.shape[0]
    move = jnp.asarray(move, jnp.int32)
    placed = _place_stone(state, jnp.minimum(move, points - 1), suicide)
    passed = state.replace(
        ko=jnp.int32(-1),
        to_play=-state.to_play,
        passes=state.passes + 1,
        move_count=state.move_count + 1,
    )
    return jax.tree_util.tree_map(lambda a, b: jnp.where(move == points, a, b), passed, placed)


def _xor_reduce(keys, mask):
    """uint32 [2]: XOR of the rows of ``keys`` [P, 2] selected by ``mask`` [P]."""
    selected = jnp.where(mask[:, None], keys, jnp.uint32(0))
    return jax.lax.reduce(selected, jnp.uint32(0), jax.lax.bitwise_xor, (0,))


def _remove_stones(state: State, removed, gainer):
    """Empty the points in ``removed`` (bool [P]) and give their liberties back to ``gainer``'s chains."""
    points = state.stones.shape[0]
    nbrs = neighbour_table(board_size(points))
    stones = jnp.where(removed, jnp.int8(EMPTY), state.stones)
    chain = jnp.where(removed, points, state.chain)
    # Every gainer stone next to a removed point gets that point back as a pseudo-liberty.
    nb_removed = _pad_bool(removed)[nbrs]  # [P, 4]
    nb_index = jnp.where(nb_removed, nbrs, 0)
    gain_count = jnp.sum(nb_removed, axis=1, dtype=jnp.int32)
    gain_sum = jnp.sum(nb_index, axis=1, dtype=jnp.int32)
    gain_sumsq = jnp.sum(nb_index * nb_index, axis=1, dtype=jnp.int32)
    target = jnp.where(stones == gainer, chain, points)  # points beyond the table are dropped

    def add(table, values):
        return table.at[target].add(values, mode="drop")

    # Removed chains' statistics slots are cleared (their ids are no longer used).
    cleared = jnp.zeros(points, bool).at[jnp.where(removed, state.chain, points)].set(True, mode="drop")
    return state.replace(
        stones=stones,
        chain=chain,
        lib_count=add(jnp.where(cleared, 0, state.lib_count), gain_count),
        lib_sum=add(jnp.where(cleared, 0, state.lib_sum), gain_sum),
        lib_sumsq=add(jnp.where(cleared, 0, state.lib_sumsq), gain_sumsq),
    )


def _place_stone(state: State, point, suicide: bool) -> State:
    points = state.stones.shape[0]
    size = board_size(points)
    own = state.to_play
    stones_pad, chain_pad = padded(state)
    nbrs = jnp.asarray(neighbour_table(size))[point]  # [4]
    nb_colour = stones_pad[nbrs]
    nb_chain = chain_pad[nbrs]
    is_stone = (nb_colour == BLACK) | (nb_colour == WHITE)

    # 1. The point stops being a pseudo-liberty of every adjacent chain (once per adjacency).
    drop_target = jnp.where(is_stone, nb_chain, points)
    ones = is_stone.astype(jnp.int32)
    lib_count = state.lib_count.at[drop_target].add(-ones, mode="drop")
    lib_sum = state.lib_sum.at[drop_target].add(-ones * point, mode="drop")
    lib_sumsq = state.lib_sumsq.at[drop_target].add(-ones * point * point, mode="drop")

    # 2. Merge the new stone with the distinct adjacent own chains under the id `point`.
    is_own = nb_colour == own
    earlier_same = (nb_chain[:, None] == nb_chain[None, :]) & jnp.tril(jnp.ones((4, 4), bool), -1)
    first_own = is_own & ~jnp.any(earlier_same & is_own[None, :], axis=1)
    own_ids = jnp.where(first_own, nb_chain, points)
    is_empty = nb_colour == EMPTY
    empty_index = jnp.where(is_empty, nbrs, 0)
    pad = lambda table: jnp.concatenate([table, jnp.zeros(1, jnp.int32)])  # noqa: E731
    merged_count = jnp.sum(is_empty, dtype=jnp.int32) + jnp.sum(pad(lib_count)[own_ids])
    merged_sum = jnp.sum(empty_index) + jnp.sum(pad(lib_sum)[own_ids])
    merged_sumsq = jnp.sum(empty_index * empty_index) + jnp.sum(pad(lib_sumsq)[own_ids])
    joins = jnp.any(state.chain[:, None] == own_ids[None, :], axis=1) & (state.stones == own)
    chain = jnp.where(joins, point, state.chain).at[point].set(point)
    stale = jnp.zeros(points, bool).at[own_ids].set(True, mode="drop")
    lib_count = jnp.where(stale, 0, lib_count).at[point].set(merged_count)
    lib_sum = jnp.where(stale, 0, lib_sum).at[point].set(merged_sum)
    lib_sumsq = jnp.where(stale, 0, lib_sumsq).at[point].set(merged_sumsq)

    keys = jnp.asarray(zobrist_table(size))
    own_index = colour_index(own).astype(jnp.int32)
    placed = state.replace(
        stones=state.stones.at[point].set(own),
        chain=chain,
        lib_count=lib_count,
        lib_sum=lib_sum,
        lib_sumsq=lib_sumsq,
        hash=state.hash ^ keys[point, own_index],
    )

    # 3. Capture adjacent opponent chains left without pseudo-liberties.
    dead_ids = jnp.where((nb_colour == -own) & (pad(lib_count)[nb_chain] == 0), nb_chain, -1)
    captured = (placed.stones == -own) & jnp.any(placed.chain[:, None] == dead_ids[None, :], axis=1)
    num_captured = jnp.sum(captured, dtype=jnp.int32)
    after = _remove_stones(placed, captured, own)
    after = after.replace(hash=after.hash ^ _xor_reduce(keys[:, 1 - own_index], captured))

    # 4. Suicide (only reachable when allowed): the merged chain has no liberty left.
    own_captured = jnp.zeros(2, jnp.int32)
    if suicide:
        dead_self = (after.lib_count[point] == 0) & (num_captured == 0)
        self_removed = (after.chain == point) & (after.stones == own) & dead_self
        removed_after = _remove_stones(after, self_removed, -own)
        removed_after = removed_after.replace(hash=after.hash ^ _xor_reduce(keys[:, own_index], self_removed))
        after = removed_after
        own_captured = own_captured.at[1 - own_index].add(jnp.sum(self_removed, dtype=jnp.int32))

    # 5. Simple ko: one stone captured by a lone stone that is left with that single liberty.
    single_stone = ~jnp.any(is_own)
    ko = jnp.where(
        (num_captured == 1) & single_stone & (after.lib_count[point] == 1),
        jnp.argmax(captured).astype(jnp.int32),
        jnp.int32(-1),
    )
    captures = state.captures.at[own_index].add(num_captured) + own_captured
    return after.replace(
        ko=ko,
        to_play=-own,
        passes=jnp.int32(0),
        captures=captures,
        move_count=state.move_count + 1,
    )


# ----------------------------------------------------------------------------------------------------------
# Host-side invariant check (KataGo's checkConsistency)


def check_consistency(state: State) -> None:
    """Recompute every invariant from scratch with numpy; raise AssertionError on any difference."""
    stones = np.asarray(state.stones)
    points = stones.shape[0]
    size = board_size(points)
    ref_chain, ref_count, ref_sum, ref_sumsq = _chains_from_scratch(stones, size)
    chain = np.asarray(state.chain)
    assert np.all(chain[stones == EMPTY] == points), "empty points must carry chain id P"
    for color in (BLACK, WHITE):
        for point in np.flatnonzero(stones == color):
            members = ref_chain == ref_chain[point]
            assert np.all(chain[members] == chain[point]), f"chain {point} split"
            rep = chain[point]
            assert stones[rep] == color and ref_chain[rep] == ref_chain[point], f"bad representative {rep}"
    for rep in np.unique(chain[stones != EMPTY]):
        ref = ref_chain[rep]
        got = (int(state.lib_count[rep]), int(state.lib_sum[rep]), int(state.lib_sumsq[rep]))
        assert got == (ref_count[ref], ref_sum[ref], ref_sumsq[ref]), f"liberties of chain {rep}: {got}"
    assert np.array_equal(np.asarray(state.hash), _hash_from_scratch(stones, size)), "zobrist hash"
    assert int(state.to_play) in (BLACK, WHITE)


def searchable_mask(state: State, suicide: bool = False) -> jax.Array:
    """bool [P + 1]: the moves a search considers -- legal moves that do not fill the mover's own eye (the
    playout eye rule), pass always included when legal."""
    legal = legal_mask(state, suicide=suicide)
    eyes = eye_mask(state, state.to_play)
    return legal.at[:-1].set(legal[:-1] & ~eyes)
