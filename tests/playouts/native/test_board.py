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


def former_set_stones(st, g, plain, to_play, ko_plain, passes, exact) -> None:
    """``board.set_stones`` as it was before it walked rows and columns (each point's index by division), in
    Python: what the compiled set-up must still give, array for array (the empty list's order and the chains'
    rings included, which the playouts' random picks and captures follow)."""
    size, w = int(g[nb.SIZE_N]), int(g[nb.WIDTH])
    n = 0
    for p in range(w * w):
        st[nb.CHAIN, p], st[nb.NEXT, p] = p, p
        st[[nb.SIZE, nb.LIBS, nb.LSUM, nb.LSQ, nb.MARK], p] = 0
        if 1 <= p // w <= size and 1 <= p % w <= size:
            st[nb.COLOUR, p], st[nb.EMPTY_AT, p], st[nb.EMPTIES, n] = nb.EMPTY, n, p
            n += 1
        else:
            st[nb.COLOUR, p], st[nb.EMPTY_AT, p] = nb.OFF, -1
    g[[nb.N_EMPTY, nb.KO, nb.TO_PLAY, nb.PASSES, nb.PLY, nb.STAMP, nb.CAPTURED, nb.LAST, nb.LAST2]] = \
        [n, -1, nb.BLACK, 0, 0, 0, 0, -1, -1]
    padded = [(i // size + 1) * w + i % size + 1 for i in range(size * size)]
    for i, p in enumerate(padded):
        if plain[i] != 0:
            st[nb.COLOUR, p] = nb.BLACK if plain[i] > 0 else nb.WHITE
            at, last = st[nb.EMPTY_AT, p], g[nb.N_EMPTY] - 1
            moved = st[nb.EMPTIES, last]
            st[nb.EMPTIES, at], st[nb.EMPTY_AT, moved], st[nb.EMPTY_AT, p], g[nb.N_EMPTY] = moved, at, -1, last
    for p in padded:
        st[nb.CHAIN, p] = -1 if st[nb.COLOUR, p] in (nb.BLACK, nb.WHITE) else p
    for p0 in padded:
        col = st[nb.COLOUR, p0]
        if col not in (nb.BLACK, nb.WHITE) or st[nb.CHAIN, p0] >= 0:
            continue
        st[nb.CHAIN, p0], st[nb.NEXT, p0], st[nb.SIZE, p0] = p0, p0, 1
        st[[nb.LIBS, nb.LSUM, nb.LSQ], p0] = 0
        g[nb.STAMP] += 1
        stamp, stack = g[nb.STAMP], [p0]
        while stack:
            s = stack.pop()
            for q in (s - w, s + w, s - 1, s + 1):
                if st[nb.COLOUR, q] == col and st[nb.CHAIN, q] < 0:
                    st[nb.CHAIN, q], st[nb.NEXT, q], st[nb.NEXT, p0] = p0, st[nb.NEXT, p0], q
                    st[nb.SIZE, p0] += 1
                    stack.append(q)
                elif st[nb.COLOUR, q] == nb.EMPTY and (not exact or st[nb.MARK, q] != stamp):
                    st[nb.MARK, q] = stamp
                    st[[nb.LIBS, nb.LSUM, nb.LSQ], p0] += [1, q, q * q]
    g[nb.TO_PLAY] = nb.BLACK if to_play > 0 else nb.WHITE
    g[nb.KO] = -1 if ko_plain < 0 else padded[ko_plain]
    g[nb.PASSES] = passes


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("size", [5, 9, 19])
def test_set_stones_builds_the_board_of_the_former_set_up(size, exact):
    """On random positions, set up over the previous one (stale entries past the empty list stay as they were):
    every array of the board and its globals as the former set-up left them, and the board consistent."""
    boards, _ = random_positions(size, 40 if size < 19 else 6, seed=size + 100)
    st, g = nb.new_board(size)
    for board in boards:
        stones = np.asarray(board.stones, np.int8)
        ko, to_play = int(board.ko_point), int(board.to_play)
        st_old, g_old = st.copy(), g.copy()
        former_set_stones(st_old, g_old, stones, to_play, ko, 1, exact)
        nb.set_stones(st, g, stones, to_play, ko, 1, exact)
        where = board.to_ascii()
        np.testing.assert_array_equal(st, st_old, err_msg=where)
        np.testing.assert_array_equal(g, g_old, err_msg=where)
        nb.check_consistency(st, g, exact)
    assert len(boards) >= 6
