"""Per-game feature extraction (one scan per game) agrees with a step-by-step ReferenceBoard replay."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

from jaxgo.features import GROUPS, game_features, group_offsets
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.reference import ReferenceBoard
from jaxgo.go.sgf import load_sgf

# 9x9 game authored for this test: handicap stone, a capture (W takes at cc after B's atari sequence), passes.
GAME = b"(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]AB[cc][gg];W[cd];B[dd];W[ce];B[de];W[bc];B[cf];W[be];B[df];W[dc];B[ed];" \
       b"W[cb];B[bd];W[ad];B[];W[tt])"
ILLEGAL = b"(;GM[1]FF[4]SZ[9];B[ee];W[ef];B[ee];W[aa])"


def test_game_features_follow_the_reference_replay():
    record = load_sgf(GAME)
    feats, legal, moves = game_features(record)
    assert feats.shape == (len(record.moves), 82, len(GROUPS)) and legal.shape == (len(record.moves), 82)
    board = ReferenceBoard(9)
    for p in record.setup_black:
        board.stones[p] = BLACK
    board.to_play = record.first_to_play()
    offsets = group_offsets()
    for t, (colour, move) in enumerate(record.moves):
        board.to_play = colour
        assert np.array_equal(legal[t], board.legal_mask()), t
        assert moves[t] == move and legal[t, move]
        # every candidate's index lies in its group's range; illegal ones are the absent index
        assert np.all(feats[t] >= offsets) and np.all(feats[t][~legal[t]] == offsets)
        board.play(move)
    # the last move is a pass right after a pass: pass level 2
    assert feats[-1, 81, GROUPS.index("pass")] == offsets[GROUPS.index("pass")] + 2
    assert record.first_to_play() == WHITE


def test_illegal_move_truncates_game():
    feats, legal, moves = game_features(load_sgf(ILLEGAL))
    assert len(moves) == 2 and feats.shape[0] == 2
