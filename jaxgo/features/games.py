"""Features for every move of a game record: one jitted ``lax.scan`` per game (moves padded to a bucket).

``game_features(record)`` replays the record with ``jaxgo.go.rules`` (simple ko; setup stones via
``rules.from_board``) and returns, per move, the global feature indices of every candidate (group offsets of
``jaxgo.features.group_offsets`` added, so level 0 of each group becomes that group's absent index), the legal
mask, and the played move.  Moves that are illegal under the basic rules (occupied point, suicide, ko) end the
usable part of the game: positions from there on are dropped and the game is counted as truncated.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.features import large
from jaxgo.features.codes import pack
from jaxgo.features.moves import canonical_pattern_table, group_offsets, group_sizes, move_features
from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.sgf import GameRecord

BUCKET = 64  # moves are padded to a multiple of this, so few shapes are compiled


@functools.partial(jax.jit, static_argnames=())
def _scan_game(state: rules.State, colours, moves, table, offsets):
    """colours int8 [T], moves int32 [T] (padded with passes) -> (features int32 [T, P+1, G],
    legal bool [T, P+1], ok bool [T]: the move was legal for the colour given in the record)."""

    def step(carry, xs):
        state, prev, prev2 = carry
        colour, move = xs
        state = state.replace(to_play=colour)  # records may have two moves of one colour in a row
        levels, legal = move_features(state, prev, prev2, table)
        ok = legal[move]
        nxt = rules.play(state, jnp.where(ok, move, state.stones.shape[0]))
        return (nxt, move, prev), (levels + offsets, legal, ok)

    init = (state, jnp.int32(-1), jnp.int32(-1))
    _, out = jax.lax.scan(step, init, (colours, moves))
    return out


def _initial(record: GameRecord):
    """(rules.State after the setup stones, colours int8 [T], moves int32 [T]) of a record."""
    points = record.size * record.size
    board = np.zeros(points, np.int8)
    board[record.setup_black] = BLACK
    board[record.setup_white] = WHITE
    state = rules.from_board(board, to_play=record.first_to_play())
    colours = np.array([c for c, _ in record.moves], np.int8)
    moves = np.array([m for _, m in record.moves], np.int32)
    return state, colours, moves


def check_levels(levels) -> None:
    """Raise ValueError unless every level lies in its group's range (a level outside would index another
    group's gammas)."""
    sizes = group_sizes()
    bad = (levels < 0) | (levels >= sizes)
    if np.any(bad):
        where = np.argwhere(bad)[0]
        raise ValueError(f"feature level out of range at {tuple(where)}: group {where[-1]}")


@jax.jit
def _scan_codes(state: rules.State, colours, moves, table, large_tables=None):
    """Batched: state (leading axis B), colours int8 [B, T], moves int32 [B, T] -> (codes uint32
    [B, T, P+1], ok bool [B, T]).  With ``large_tables`` (``LargeDictionary.tables()`` as arrays) the codes are
    uint32 [B, T, P+1, 2]: the base code and the large-pattern level (``jaxgo.features.large``)."""

    def features(state, prev, prev2):
        levels, legal = move_features(state, prev, prev2, table)
        code = pack(levels, legal)
        if large_tables is not None:
            code = jnp.stack([code, large.candidate_levels(state, legal, large_tables).astype(jnp.uint32)], -1)
        return code, legal

    def one(state, colours, moves):
        def step(carry, xs):
            state, prev, prev2 = carry
            colour, move = xs
            state = state.replace(to_play=colour)
            code, legal = features(state, prev, prev2)
            ok = legal[move]
            nxt = rules.play(state, jnp.where(ok, move, state.stones.shape[0]))
            return (nxt, move, prev), (code, ok)

        _, out = jax.lax.scan(step, (state, jnp.int32(-1), jnp.int32(-1)), (colours, moves))
        return out

    return jax.vmap(one)(state, colours, moves)


@jax.jit
def _scan_played_hashes(state: rules.State, colours, moves):
    """Batched like ``_scan_codes`` -> (hashes uint32 [B, T, S, 8]: the large-pattern hashes around each played
    point in the 8 symmetry frames, cells uint8 [B, T, O]: the colour values around it, ok bool [B, T])."""

    def one(state, colours, moves):
        def step(state, xs):
            colour, move = xs
            state = state.replace(to_play=colour)
            ok = rules.legal_mask(state)[move]
            hashes = large.point_hashes(state, move)
            cells = large.point_cells(state, move).astype(jnp.uint8)
            return rules.play(state, jnp.where(ok, move, state.stones.shape[0])), (hashes, cells, ok)

        return jax.lax.scan(step, state, (colours, moves))[1]

    return jax.vmap(one)(state, colours, moves)


def previous_moves(moves):
    """(prev, prev2) int16 [T]: the move before each move and the one before that (-1: none)."""
    moves = np.asarray(moves, np.int32)
    prev = np.concatenate([[-1], moves[:-1]])[: len(moves)]
    prev2 = np.concatenate([[-1, -1], moves[:-2]])[: len(moves)]
    return prev.astype(np.int16), prev2.astype(np.int16)


def _replay_batches(records, batch: int):
    """Yield (indices, states, colours int8 [batch, T], moves int32 [batch, T]) per ``batch`` records: games
    padded with passes to a common bucketed length, the batch padded with empty games."""
    for start in range(0, len(records), batch):
        index = list(range(start, min(start + batch, len(records))))
        inits = [_initial(records[i]) for i in index]
        points = records[index[0]].size ** 2
        length = max(1, max(len(m) for _, _, m in inits))
        padded = -(-length // BUCKET) * BUCKET
        while len(inits) < batch:
            inits.append((inits[0][0], np.zeros(0, np.int8), np.zeros(0, np.int32)))
        colours = np.full((batch, padded), BLACK, np.int8)
        moves = np.full((batch, padded), points, np.int32)
        for i, (_, c, m) in enumerate(inits):
            colours[i, :len(c)] = c
            moves[i, :len(m)] = m
        states = jax.tree.map(lambda *xs: jnp.stack(xs), *[s for s, _, _ in inits])
        yield index, states, jnp.asarray(colours), jnp.asarray(moves)


def _usable(num: int, ok) -> int:
    """Moves of a record before its first illegal one."""
    good = ok[:num]
    return num if good.all() else int(np.argmin(good))


def cut_games(records, coded) -> int:
    """How many of ``records`` were cut at an illegal move: ``coded`` (the output of ``games_codes`` for them)
    holds fewer moves than the record."""
    return sum(len(moves) < len(record.moves) for record, (_, moves) in zip(records, coded))


def games_codes(records, batch: int = 8, large_dictionary=None):
    """Packed candidate codes for several games at once (one vmapped scan per ``batch`` games).

    records: list of 19x19 (or same-size) GameRecords.  Returns a list, one per record, of
    (codes uint32 [T, P+1], moves int16 [T]) for the usable moves (up to the first illegal one); with a
    ``large.LargeDictionary`` the codes are uint32 [T, P+1, 2] (base code, large-pattern level).
    Games are padded with passes to a common bucketed length and the batch with empty games (kept in the given
    order: grouping by length would save padding but compile one program per length bucket).
    """
    records = list(records)
    out = [None] * len(records)
    table = jnp.asarray(canonical_pattern_table()[0])
    tables = None
    if large_dictionary is not None:
        tables = tuple(jnp.asarray(x) for x in large_dictionary.tables())
    for index, states, colours, moves in _replay_batches(records, batch):
        codes, ok = _scan_codes(states, colours, moves, table, tables)
        codes, ok, moves = np.asarray(codes), np.asarray(ok), np.asarray(moves)
        for i, r in enumerate(index):
            usable = _usable(len(records[r].moves), ok[i])
            out[r] = (codes[i, :usable], moves[i, :usable].astype(np.int16))
    return out


def games_played_hashes(records, batch: int = 8):
    """Per record, (hashes uint32 [T, S, 8], cells uint8 [T, O]): the large-pattern hashes (8 symmetry frames)
    and colour values around each played point of the usable non-pass moves (``jaxgo.features.large``), for
    harvesting a pattern dictionary."""
    records = list(records)
    out = [None] * len(records)
    for index, states, colours, moves in _replay_batches(records, batch):
        hashes, cells, ok = _scan_played_hashes(states, colours, moves)
        hashes, cells, ok, moves = np.asarray(hashes), np.asarray(cells), np.asarray(ok), np.asarray(moves)
        for i, r in enumerate(index):
            num = len(records[r].moves)
            played = moves[i, :num] < records[r].size ** 2
            usable = _usable(num, ok[i])
            out[r] = (hashes[i, :usable][played[:usable]], cells[i, :usable][played[:usable]])
    return out


def game_features(record: GameRecord):
    """(features int32 [T, P+1, G], legal bool [T, P+1], moves int32 [T]) for the usable moves of a game.

    T is the number of moves before the first illegal one (all of them for a clean record).
    """
    size = record.size
    points = size * size
    board = np.zeros(points, np.int8)
    board[record.setup_black] = BLACK
    board[record.setup_white] = WHITE
    state = rules.from_board(board, to_play=record.first_to_play())
    num = len(record.moves)
    padded = -(-num // BUCKET) * BUCKET
    colours = np.full(padded, BLACK, np.int8)
    moves = np.full(padded, points, np.int32)
    colours[:num] = [c for c, _ in record.moves]
    moves[:num] = [m for _, m in record.moves]
    table = jnp.asarray(canonical_pattern_table()[0])
    feats, legal, ok = _scan_game(state, jnp.asarray(colours), jnp.asarray(moves), table,
                                  jnp.asarray(group_offsets()))
    ok = np.asarray(ok)[:num]
    usable = num if ok.all() else int(np.argmin(ok))
    feats = np.asarray(feats[:usable])
    check_levels(feats - group_offsets())
    return feats, np.asarray(legal[:usable]), moves[:usable]
