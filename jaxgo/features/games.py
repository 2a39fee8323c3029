"""Features for every move of a game record: one jitted ``lax.scan`` per game (moves padded to a bucket).

``game_features(record)`` replays the record with ``jaxgo.rules`` (simple ko; setup stones via
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

from jaxgo import rules
from jaxgo.coords import BLACK, WHITE
from jaxgo.features.moves import canonical_pattern_table, group_offsets, move_features
from jaxgo.sgf import GameRecord

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
    return np.asarray(feats[:usable]), np.asarray(legal[:usable]), moves[:usable]
