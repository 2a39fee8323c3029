"""Packed candidate codes: decode(pack(levels)) gives back the levels, and batched extraction equals the per-game
scan."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import numpy as np

from jaxgo.features import GROUPS, game_features, group_offsets
from jaxgo.features.codes import decode, decode_levels, pack
from jaxgo.features.games import games_codes, previous_moves
from jaxgo.go.sgf import load_sgf
from jaxgo.learn.synthetic import random_game_sgf

# 9x9: W's dc joins cc in atari, B's ec captures both, W retakes dc (distance 0 to the move before the previous
# one); the game ends with two passes.
CAPTURE_GAME = (b"(;GM[1]FF[4]SZ[9];B[cb];W[cc];B[bc];W[gg];B[cd];W[gh];B[db];W[hg];B[dd];W[dc];B[ec];W[dc];"
                b"B[];W[])")


def test_pack_then_decode_levels_is_identity():
    rng = np.random.default_rng(0)
    points = 81
    levels = np.zeros((5, points + 1, len(GROUPS)), np.int32)
    levels[..., 0] = rng.integers(1, 134281, size=(5, points + 1))
    for g, top in ((1, 3), (2, 2), (3, 2), (4, 3)):
        levels[..., g] = rng.integers(0, top, size=(5, points + 1))
    legal = rng.random((5, points + 1)) < 0.7
    codes = pack(levels, legal)
    assert codes.dtype == np.uint32
    got, got_legal = decode_levels(codes, np.full(5, -1), np.full(5, -1))
    got = np.asarray(got)
    assert np.array_equal(np.asarray(got_legal), legal)
    for g in range(5):
        assert np.array_equal(got[..., g], np.where(legal, levels[..., g], 0))


def decode_games(coded):
    """Per game of ``coded`` (``games_codes``' output), its decoded (features, legal) as numpy: the positions of
    every game decoded in one compiled call (eagerly, each of decode's operations compiles on its own)."""
    prevs = [previous_moves(moves) for _, moves in coded]
    features, legal = jax.jit(decode)(np.concatenate([codes for codes, _ in coded]),
                             np.concatenate([prev for prev, _ in prevs]), np.concatenate([prev2 for _, prev2 in prevs]))
    cuts = np.cumsum([len(moves) for _, moves in coded])[:-1]
    return list(zip(np.split(np.asarray(features), cuts), np.split(np.asarray(legal), cuts)))


def test_batched_codes_decode_to_game_features():
    records = [load_sgf(CAPTURE_GAME)] + [load_sgf(random_game_sgf(9, 30, seed=s)) for s in range(4)]
    out = games_codes(records, batch=16)  # one vmapped call, padded with empty games
    assert len(out) == len(records)
    decoded = decode_games(out)
    for record, (_, moves), (f, legal_out) in zip(records, out, decoded):
        feats, legal, mv = game_features(record)
        assert np.array_equal(f, feats) and np.array_equal(legal_out, legal)
        assert np.array_equal(mv, moves)
    feats, legal, _ = game_features(records[0])
    retake = 11  # W[dc] again
    dc = 2 * 9 + 3
    assert legal[retake, dc]
    assert feats[retake, dc, GROUPS.index("dist_prev2")] == group_offsets()[GROUPS.index("dist_prev2")] + 17
