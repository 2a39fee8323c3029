"""The native board against the reference board: legal points, eyes, liberties and area on random positions,
and chains, liberties and the empty list recomputed from scratch after every move of random games."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go.reference import ReferenceBoard, label_chains, random_positions
from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import checks

KO_POSITION = """
. X O . .
X O . O .
. X O . .
. . . . .
. . . . .
"""


def view(board: ReferenceBoard, exact: bool):
    points = board.num_points
    legal, eye = np.zeros(points, bool), np.zeros(points, bool)
    libs, owner = np.zeros(points, np.int32), np.zeros(points, np.int8)
    area = checks.position_view(board.stones, board.to_play, board.ko_point, exact, legal, eye, libs, owner)
    return legal, eye, libs, owner, area


@pytest.mark.parametrize("size", [5, 9, pytest.param(13, marks=pytest.mark.slow), 19])
def test_position_view_matches_the_reference(size):
    boards, _ = random_positions(size, 40 if size < 19 else 15, seed=size)
    for board in boards:
        legal, eye, libs, owner, area = view(board, exact=True)
        where = board.to_ascii()
        np.testing.assert_array_equal(legal, board.legal_mask()[:-1], err_msg=where)
        np.testing.assert_array_equal(eye, board.eye_mask(board.to_play), err_msg=where)
        label, counts = label_chains(board.stones, size)
        expected = np.where(label >= 0, np.asarray(counts + [0])[label], 0)
        np.testing.assert_array_equal(libs, expected, err_msg=where)
        np.testing.assert_array_equal(owner, board.ownership(), err_msg=where)
        assert area == pytest.approx(board.area_score() + board.komi)
        # pseudo-liberties decide legality the same way
        np.testing.assert_array_equal(view(board, exact=False)[0], legal, err_msg=where)


def test_ko_point_is_illegal_and_the_recapture_elsewhere_legal():
    board = ReferenceBoard.from_ascii(KO_POSITION)
    board.play(1 * 5 + 2)  # Black captures at the ko point's neighbour: X at (1, 2) takes O at (1, 1)
    legal, *_ = view(board, exact=True)
    np.testing.assert_array_equal(legal, board.legal_mask()[:-1])
    assert board.ko_point >= 0 and not legal[board.ko_point]


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("size, games", [(9, 40), pytest.param(13, 10, marks=pytest.mark.slow), (19, 6)])
def test_random_games_keep_every_invariant(size, games, exact):
    moves = checks.checked_light_games(size, 7, games, exact)
    assert moves > games * size * size  # thousands of checked positions: light games run about 1.3 N^2 moves


def test_padded_and_board_indices_round_trip():
    size = 9
    points = np.arange(size * size + 1)
    padded = nb.to_padded(points, size)
    assert padded[-1] == nb.PASS
    np.testing.assert_array_equal(nb.to_plain(padded, size), points)
    st, g = nb.new_board(size)
    assert set(st[nb.COLOUR, padded[:-1]]) == {nb.EMPTY}
    assert g[nb.N_EMPTY] == size * size
