"""The native ladder reader against the host one (``jaxgo.go.ladder``), on random positions and ASCII boards."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go import ladder as host
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.hostboard import Board
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import ladder as nl


def native(board: Board):
    """(st, g, work) of a host board (the side to move, the ko point)."""
    st, g = nb.new_board(board.size)
    nb.set_stones(st, g, np.asarray(board.stones, np.int8), board.to_play, board.ko, 0, True)
    return st, g, nl.new_ladder_work((board.size + 2) ** 2, 100)


def pad(point: int, size: int) -> int:
    return int(nb.padded_point(point, size))


def host_board(board: ReferenceBoard) -> Board:
    return Board(board.size, board.stones.tolist(), board.to_play, board.ko_point)


def short_chains(board: Board, colour: int):
    """(a point of, liberties of) every chain of ``colour`` with one or two liberties."""
    seen = set()
    for point, stone in enumerate(board.stones):
        if stone == colour and point not in seen:
            stones, libs = board.chain(point)
            seen |= stones
            if len(libs) <= 2:
                yield point, sorted(libs)


@pytest.mark.parametrize("size, count", [(9, 600), pytest.param(13, 150, marks=pytest.mark.slow),
                                         pytest.param(19, 30, marks=pytest.mark.slow)])
@pytest.mark.parametrize("budget", [100, 9])
def test_reader_gives_the_host_readers_answers(size, count, budget):
    rng = np.random.default_rng(size + budget)
    boards = []
    for moves in (size * size // 3, size * size // 2, size * size):  # sparse boards hold the long ladders
        boards += random_positions(size, count // 3, seed=int(rng.integers(1 << 30)), max_moves=moves)[0]
    checked = {"attack": 0, "works": 0, "escape": 0, "captured": 0, "escaped": 0}
    for reference in boards:
        board = host_board(reference)
        st, g, work = native(board)
        before = st.copy()
        for goal, libs in short_chains(board, -board.to_play):
            want = host.ladder_move(board, goal, depth=80, budget=budget)
            got = nl.ladder_attack(work, st, g, pad(goal, size), 80, budget)
            assert got == (-1 if want is None else pad(want, size)), board
            checked["attack"] += 1
            checked["captured" if want is not None else "escaped"] += len(libs) == 2
            for atari in libs if len(libs) == 2 else ():
                want = host.ladder_atari_works(board, goal, atari, depth=80, budget=budget)
                assert nl.atari_works(work, st, g, pad(goal, size), pad(atari, size), 80, budget) == want
                checked["works"] += 1
        failed = host.failed_escapes(board) if budget == 100 else None
        for _, libs in short_chains(board, board.to_play) if failed is not None else ():
            if len(libs) == 1 and board.play(libs[0]) is not None:
                assert nl.escape_fails(work, st, g, pad(libs[0], size), 80, 100) == (libs[0] in failed)
                checked["escape"] += 1
        np.testing.assert_array_equal(st, before)  # the reader reads copies
    if budget != 100:  # failed_escapes reads with the default budget only
        del checked["escape"]
    assert min(checked.values()) > 10 and checked["attack"] + checked["works"] > count * 3, checked


LADDER = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""
# the same with a white stone on the ladder's path (top right): the ladder breaker
BROKEN = """
. . . . . . O . .
. . . . . . . . .
. . . . . . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""
EDGE = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . X X . . . . .
. X O . . . . . .
"""
# Black's two stones left of O's are in atari: O can take them instead of running
CAPTURE_ESCAPE = """
. . . . . . . . .
. . . . . . . . .
. . . O . . . . .
. . O X O . . . .
. . O X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""


def attack(text: str, goal: tuple[int, int], to_play: int = BLACK):
    board = Board.from_ascii(text, to_play)
    st, g, work = native(board)
    point = goal[0] * board.size + goal[1]
    got = nl.ladder_attack(work, st, g, pad(point, board.size), 80, 100)
    want = host.ladder_move(board, point)
    assert got == (-1 if want is None else pad(want, board.size))
    return None if want is None else divmod(want, board.size)


def test_ladder_works_and_is_broken_by_a_stone_on_its_path():
    assert attack(LADDER, (4, 4)) == (2, 4)  # the atari from above drives O towards the empty top right
    assert attack(BROKEN, (4, 4)) is None


def test_edge_ladder_works():
    assert attack(EDGE, (8, 2)) is not None


def test_capturing_an_attacker_in_atari_escapes():
    board = Board.from_ascii(LADDER, BLACK)
    assert host.ladder_move(board, 4 * 9 + 4) is not None
    assert attack(CAPTURE_ESCAPE, (4, 4)) is None


def test_escape_into_a_working_ladder_fails():
    board = Board.from_ascii(LADDER, BLACK).play(2 * 9 + 4)  # Black's atari: White to move, one liberty
    st, g, work = native(board)
    assert host.failed_escapes(board) == [3 * 9 + 5]
    assert nl.escape_fails(work, st, g, pad(3 * 9 + 5, 9), 80, 100)
    broken = Board.from_ascii(BROKEN, BLACK).play(2 * 9 + 4)
    st, g, work = native(broken)
    assert host.failed_escapes(broken) == [] and not nl.escape_fails(work, st, g, pad(3 * 9 + 5, 9), 80, 100)


@pytest.mark.parametrize("to_play", [BLACK, WHITE])
def test_reader_of_a_chain_with_three_liberties_gives_none(to_play):
    board = Board.from_ascii(LADDER.replace("X O . . . .", "X O . . O .", 1), to_play)
    st, g, work = native(board)
    assert nl.ladder_attack(work, st, g, pad(7 * 9 + 2, 9), 80, 100) == -1  # an empty point
    assert nl.ladder_attack(work, st, g, pad(3 * 9 + 3, 9), 80, 100) == -1  # X: three liberties
