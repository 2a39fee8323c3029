"""Tests of the flood-fill reference board (``jaxgo.go.reference``) on hand-written positions.

Boards are written top row first; GTP vertices name points (row 1 is the bottom row, columns skip I).
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go.coords import BLACK, EMPTY, WHITE, gtp_to_point
from jaxgo.go.reference import ReferenceBoard


def board_of(text: str, to_play: int = BLACK, komi: float = 7.5, suicide: bool = False) -> ReferenceBoard:
    return ReferenceBoard.from_ascii(text, to_play=to_play, komi=komi, suicide=suicide)


def at(board: ReferenceBoard, vertex: str) -> int:
    return gtp_to_point(vertex, board.size)


def points(board: ReferenceBoard, *vertices: str) -> set[int]:
    return {at(board, v) for v in vertices}


def mask_points(mask: np.ndarray) -> set[int]:
    return set(np.flatnonzero(mask).tolist())


def play(board: ReferenceBoard, *vertices: str) -> None:
    for vertex in vertices:
        board.play(at(board, vertex))


# ----------------------------------------------------------------------------------------------------------
# Construction, display, chains


def test_new_board():
    board = ReferenceBoard(9)
    assert board.size == 9 and board.komi == 7.5 and board.suicide is False
    assert board.stones.shape == (81,) and board.stones.dtype == np.int8 and not board.stones.any()
    assert board.to_play == BLACK and board.ko_point == -1 and board.passes == 0
    assert board.captures == {BLACK: 0, WHITE: 0}
    assert not board.is_over()


def test_from_ascii_characters_and_orientation():
    board = board_of(
        """
        X x # @
        O o . +
        , . . .
        . . . O
        """,
        to_play=WHITE,
        komi=0.5,
    )
    assert board.size == 4 and board.to_play == WHITE and board.komi == 0.5
    assert list(board.stones[:4]) == [BLACK] * 4
    assert list(board.stones[4:8]) == [WHITE, WHITE, EMPTY, EMPTY]
    assert board.stones[at(board, "D1")] == WHITE  # bottom right
    assert board.stones[at(board, "A4")] == BLACK  # top left
    assert mask_points(board.stones != EMPTY) == points(board, "A4", "B4", "C4", "D4", "A3", "B3", "D1")


def test_from_ascii_rejects_bad_text():
    with pytest.raises(ValueError):
        board_of("X . .\n. . .")  # not square
    with pytest.raises(ValueError):
        board_of("X Z\n. .")  # unknown character


def test_to_ascii_round_trip_and_ko_marker():
    text = "X O .\n. X .\nO . ."
    board = board_of(text)
    assert board.to_ascii() == text
    again = ReferenceBoard.from_ascii(board.to_ascii())
    assert np.array_equal(again.stones, board.stones)
    board.ko_point = at(board, "C1")
    assert board.to_ascii().splitlines()[-1] == "O . *"


def test_copy_is_independent():
    board = board_of(". . .\n. X .\n. . .")
    other = board.copy()
    other.play(at(other, "A3"))
    assert board.stones[at(board, "A3")] == EMPTY and board.to_play == BLACK
    assert other.stones[at(other, "A3")] == BLACK and other.to_play == WHITE
    other.captures[BLACK] = 5
    assert board.captures[BLACK] == 0


def test_chain_and_liberties():
    board = board_of(
        """
        X X . O .
        . X . O .
        . X X . .
        O . . . .
        . . . X X
        """
    )
    chain = board.chain(at(board, "A5"))
    assert mask_points(chain) == points(board, "A5", "B5", "B4", "B3", "C3")
    assert np.array_equal(board.chain(at(board, "C3")), chain)
    libs = board.liberties(at(board, "B4"))
    assert mask_points(libs) == points(board, "C5", "A4", "C4", "A3", "B2", "C2", "D3")
    assert mask_points(board.liberties(at(board, "D5"))) == points(board, "C5", "E5", "C4", "E4", "D3")
    assert mask_points(board.liberties(at(board, "A2"))) == points(board, "A3", "B2", "A1")
    assert mask_points(board.liberties(at(board, "E1"))) == points(board, "C1", "D2", "E2")
    # The chain of an empty point is its empty region.
    region = board.chain(at(board, "A4"))
    assert mask_points(region) == points(board, "A4", "A3")
    with pytest.raises(ValueError):
        board.liberties(at(board, "A4"))
    with pytest.raises(ValueError):
        board.chain(25)


# ----------------------------------------------------------------------------------------------------------
# Captures


def test_single_capture_in_the_centre():
    board = board_of(
        """
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        . . . . .
        """
    )
    play(board, "C2")
    assert board.stones[at(board, "C3")] == EMPTY
    assert board.stones[at(board, "C2")] == BLACK
    assert board.captures == {BLACK: 1, WHITE: 0}
    assert board.ko_point == -1  # the capturing stone keeps three liberties
    assert board.to_play == WHITE and board.passes == 0


def test_corner_capture():
    board = board_of(
        """
        O X . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . .
        """
    )
    play(board, "A4")
    assert board.stones[at(board, "A5")] == EMPTY
    assert board.captures[BLACK] == 1
    assert board.ko_point == -1


def test_capture_of_a_long_chain():
    board = board_of(
        """
        . . . . .
        X X X . .
        O O O . .
        X X X . .
        . . . . .
        """
    )
    play(board, "D3")
    assert mask_points(board.stones == WHITE) == set()
    assert board.captures == {BLACK: 3, WHITE: 0}
    assert mask_points(board.liberties(at(board, "D3"))) == points(board, "C3", "E3", "D4", "D2")


def test_one_move_captures_four_separate_chains():
    text = """
        . X O X .
        X O . O X
        . X O X .
        . . X . .
        . . . . .
        """
    white_to_play = board_of(text, to_play=WHITE)
    assert not white_to_play.is_legal(at(white_to_play, "C4"))  # suicide for white
    board = board_of(text)
    assert board.is_legal(at(board, "C4"))
    play(board, "C4")
    assert mask_points(board.stones == WHITE) == set()
    assert board.captures == {BLACK: 4, WHITE: 0}
    assert board.ko_point == -1


def test_capture_of_two_chains_on_the_edge():
    board = board_of(
        """
        . . . . .
        . . . . .
        . . . . .
        O O O O .
        X X . X O
        """,
        to_play=WHITE,
    )
    play(board, "C1")
    assert mask_points(board.stones == BLACK) == set()
    assert board.captures == {BLACK: 0, WHITE: 3}
    assert board.ko_point == -1


def test_capturing_move_with_no_empty_neighbour_is_legal():
    board = board_of(
        """
        . X O . .
        X O . O .
        O . O . .
        . . . . .
        . . . . .
        """,
        to_play=WHITE,
    )
    # A5 has no empty neighbour, but white captures B5 and A4 there.
    assert board.is_legal(at(board, "A5"))
    play(board, "A5")
    assert board.captures[WHITE] == 2
    assert mask_points(board.stones == BLACK) == set()


def test_snapback():
    board = board_of(
        """
        . . . . .
        . . . . .
        O O O . .
        X X O . .
        . . X . .
        """,
        to_play=WHITE,
    )
    play(board, "B1")  # throw-in: one liberty (A1), black A2-B2 left with A1 only
    assert board.captures == {BLACK: 0, WHITE: 0}
    assert mask_points(board.liberties(at(board, "A2"))) == points(board, "A1")
    play(board, "A1")  # black captures the throw-in ...
    assert board.captures == {BLACK: 1, WHITE: 0}
    assert board.ko_point == -1  # ... with a three-stone chain: not a ko
    assert mask_points(board.liberties(at(board, "A1"))) == points(board, "B1")
    play(board, "B1")  # ... and white takes back three stones at once
    assert board.captures == {BLACK: 1, WHITE: 3}
    assert board.ko_point == -1
    assert mask_points(board.stones == BLACK) == points(board, "C1")
    assert mask_points(board.liberties(at(board, "C1"))) == points(board, "D1")


# ----------------------------------------------------------------------------------------------------------
# Ko

KO_POSITION = """
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    """


def test_ko_capture_sets_the_ko_point():
    board = board_of(KO_POSITION)
    play(board, "C3")
    assert board.captures[BLACK] == 1
    assert board.ko_point == at(board, "B3")
    assert not board.is_legal(at(board, "B3"))
    assert not board.legal_mask()[at(board, "B3")]
    assert "ko" in board.illegal_reason(at(board, "B3"))
    with pytest.raises(ValueError):
        play(board, "B3")
    # Every other empty point is still legal for white.
    assert board.legal_mask().sum() == (25 - 7) - 1 + 1  # empty points, minus the ko point, plus pass


def test_ko_expires_after_a_move_elsewhere():
    board = board_of(KO_POSITION)
    play(board, "C3", "E5")  # black takes the ko, white plays elsewhere (a ko threat)
    assert board.ko_point == -1
    assert board.is_legal(at(board, "B3"))  # black may now fill the ko
    play(board, "E1")  # black answers elsewhere
    assert board.is_legal(at(board, "B3"))  # so white may retake
    play(board, "B3")
    assert board.captures == {BLACK: 1, WHITE: 1}
    assert board.stones[at(board, "C3")] == EMPTY
    assert board.ko_point == at(board, "C3")  # and now black is the one who must wait
    assert not board.is_legal(at(board, "C3"))


def test_pass_clears_the_ko():
    board = board_of(KO_POSITION)
    play(board, "C3")
    board.play(board.pass_move)
    assert board.ko_point == -1 and board.passes == 1 and board.to_play == BLACK


def test_capturing_one_stone_with_a_connected_stone_is_not_ko():
    board = board_of(
        """
        . . . . .
        . X O . .
        X O . X .
        . X O . .
        . . . . .
        """
    )
    play(board, "C3")  # C3 connects to D3, so the capturing chain has two stones: no ko
    assert board.captures[BLACK] == 1
    assert board.stones[at(board, "B3")] == EMPTY
    assert board.ko_point == -1


def test_capturing_two_stones_is_not_ko():
    board = board_of(
        """
        O O . O .
        X X O . .
        . . . . .
        . . . . .
        . . . . .
        """
    )
    play(board, "C5")  # captures A5-B5; the lone C5 stone is left with B5 as its only liberty
    assert board.captures[BLACK] == 2
    assert mask_points(board.liberties(at(board, "C5"))) == points(board, "B5")
    assert board.ko_point == -1  # two stones were captured: white may take back at once
    assert board.is_legal(at(board, "B5"))
    play(board, "B5")
    assert board.captures == {BLACK: 2, WHITE: 1}
    assert board.ko_point == -1  # the white stone has two liberties (A5, C5)


# ----------------------------------------------------------------------------------------------------------
# Suicide

CORNER_SUICIDE = """
    . X . . .
    X . . . .
    . . . . .
    . . . . .
    . . . . .
    """

MULTI_STONE_SUICIDE = """
    O . X . .
    X X . . .
    . . . . .
    . . . . .
    . . . . .
    """


def test_single_stone_suicide_is_forbidden():
    board = board_of(CORNER_SUICIDE, to_play=WHITE)
    assert not board.is_legal(at(board, "A5"))
    assert not board.legal_mask()[at(board, "A5")]
    assert "suicide" in board.illegal_reason(at(board, "A5"))
    with pytest.raises(ValueError):
        play(board, "A5")
    assert board.stones[at(board, "A5")] == EMPTY and board.to_play == WHITE  # nothing changed
    # Black may play there (own eye filling is legal).
    black = board_of(CORNER_SUICIDE)
    assert black.is_legal(at(black, "A5"))


def test_multi_stone_suicide_is_forbidden():
    board = board_of(MULTI_STONE_SUICIDE, to_play=WHITE)
    assert not board.is_legal(at(board, "B5"))
    assert not board.legal_mask()[at(board, "B5")]


def test_single_stone_suicide_allowed():
    board = board_of(CORNER_SUICIDE, to_play=WHITE, suicide=True)
    before = board.stones.copy()
    assert board.is_legal(at(board, "A5")) and board.legal_mask()[at(board, "A5")]
    play(board, "A5")
    assert np.array_equal(board.stones, before)  # the stone removed itself
    assert board.captures == {BLACK: 1, WHITE: 0}
    assert board.to_play == BLACK and board.ko_point == -1 and board.passes == 0


def test_multi_stone_suicide_allowed():
    board = board_of(MULTI_STONE_SUICIDE, to_play=WHITE, suicide=True)
    play(board, "B5")
    assert mask_points(board.stones == WHITE) == set()
    assert mask_points(board.stones == BLACK) == points(board, "C5", "A4", "B4")
    assert board.captures == {BLACK: 2, WHITE: 0}
    assert board.to_play == BLACK


def test_capture_takes_precedence_over_suicide():
    board = board_of(
        """
        X . X . .
        O X . . .
        . . . . .
        . . . . .
        . . . . .
        """,
        to_play=WHITE,
    )
    # White B5 has no empty neighbour, but it captures black A5 (whose last liberty was B5) and then has A5
    # as a liberty, so it is legal even with suicide forbidden.
    assert board.is_legal(at(board, "B5"))
    play(board, "B5")
    assert board.captures == {BLACK: 0, WHITE: 1}
    assert board.stones[at(board, "B5")] == WHITE
    assert board.ko_point == at(board, "A5")  # a ko in the corner


# ----------------------------------------------------------------------------------------------------------
# Legal mask


def test_legal_mask_basics():
    board = board_of(". X .\nX . .\n. . O")
    mask = board.legal_mask()
    assert mask.shape == (10,) and mask.dtype == bool and mask[-1]
    assert mask_points(mask[:-1]) == points(board, "A3", "C3", "B2", "C2", "A1", "B1")
    board.to_play = WHITE
    assert mask_points(board.legal_mask()[:-1]) == points(board, "C3", "B2", "C2", "A1", "B1")
    assert board.is_legal(board.pass_move)
    assert not board.is_legal(at(board, "B3"))  # occupied
    assert not board.is_legal(-1) and not board.is_legal(10)


def test_full_board_only_pass_is_legal():
    board = board_of("X X\nX X")
    assert list(board.legal_mask()) == [False, False, False, False, True]


def random_positions(size: int, moves: int, seed: int, suicide: bool):
    rng = np.random.default_rng(seed)
    board = ReferenceBoard(size, suicide=suicide)
    for _ in range(moves):
        yield board
        legal = np.flatnonzero(board.legal_mask())
        board.play(int(rng.choice(legal)) if rng.random() > 0.03 else board.pass_move)


@pytest.mark.parametrize("size,suicide", [(4, False), (5, False), (5, True), (7, False)])
def test_legal_mask_equals_trying_every_move(size, suicide):
    for board in random_positions(size, 150, seed=size + 10 * suicide, suicide=suicide):
        assert np.array_equal(board.legal_mask(), board.legal_mask_slow()), board


@pytest.mark.parametrize("size", [3, 5, 7])
def test_eye_mask_equals_is_eye(size):
    for board in random_positions(size, 120, seed=size, suicide=False):
        for color in (BLACK, WHITE):
            expected = [board.is_eye(p, color) for p in range(board.num_points)]
            assert list(board.eye_mask(color)) == expected, board


# ----------------------------------------------------------------------------------------------------------
# Eyes


def test_corner_eye():
    board = board_of(
        """
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
        """
    )
    assert board.is_eye(at(board, "A5"), BLACK)
    assert not board.is_eye(at(board, "A5"), WHITE)
    board.stones[at(board, "B4")] = WHITE  # opponent on the only diagonal: false eye
    assert not board.is_eye(at(board, "A5"), BLACK)
    board.stones[at(board, "B4")] = BLACK  # own diagonal is fine
    assert board.is_eye(at(board, "A5"), BLACK)


def test_edge_eye():
    board = board_of(
        """
        . . . . .
        . . . . .
        . . . . .
        . . X . .
        . X . X .
        """
    )
    assert board.is_eye(at(board, "C1"), BLACK)
    board.stones[at(board, "B2")] = WHITE  # one opponent diagonal on the edge: false eye
    assert not board.is_eye(at(board, "C1"), BLACK)
    board.stones[at(board, "B2")] = EMPTY
    board.stones[at(board, "D1")] = EMPTY  # an empty neighbour: not an eye
    assert not board.is_eye(at(board, "C1"), BLACK)


def test_centre_eye_allows_one_opponent_diagonal():
    board = board_of(
        """
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .
        """,
    )
    centre = at(board, "C3")
    assert board.is_eye(centre, BLACK) and not board.is_eye(centre, WHITE)
    board.stones[at(board, "B4")] = WHITE
    assert board.is_eye(centre, BLACK)  # one opponent diagonal is allowed in the centre
    board.stones[at(board, "D2")] = WHITE
    assert not board.is_eye(centre, BLACK)  # two make it false
    board.stones[at(board, "D2")] = BLACK
    board.stones[at(board, "D4")] = BLACK
    board.stones[at(board, "B2")] = BLACK
    assert board.is_eye(centre, BLACK)


def test_occupied_point_is_not_an_eye_and_white_eyes_work():
    board = board_of(
        """
        O . O
        . O .
        O . O
        """
    )
    for vertex in ("B3", "A2", "C2", "B1"):
        assert board.is_eye(at(board, vertex), WHITE)
        assert not board.is_eye(at(board, vertex), BLACK)
    assert not board.is_eye(at(board, "B2"), WHITE)
    assert mask_points(board.eye_mask(WHITE)) == points(board, "B3", "A2", "C2", "B1")
    assert not board.eye_mask(BLACK).any()


# ----------------------------------------------------------------------------------------------------------
# Scoring and the end of the game


def test_empty_board_is_neutral():
    board = ReferenceBoard(5, komi=7.5)
    assert not board.ownership().any()
    assert board.area_score() == -7.5


def test_one_stone_owns_the_board():
    board = ReferenceBoard(5, komi=7.5)
    play(board, "C3")
    assert np.all(board.ownership() == BLACK)
    assert board.area_score() == 25 - 7.5
    play(board, "D3")
    assert not board.ownership()[board.stones == EMPTY].any()
    assert board.area_score() == 1 - 1 - 7.5


def test_split_board_with_a_neutral_column():
    board = board_of(
        """
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        """,
        komi=0.0,
    )
    owner = board.ownership()
    assert owner.dtype == np.int8
    expected = np.tile(np.array([BLACK, BLACK, EMPTY, WHITE, WHITE], np.int8), 5)
    assert np.array_equal(owner, expected)
    assert board.area(BLACK) == 10 and board.area(WHITE) == 10
    assert board.area_score() == 0.0


def test_seki_like_shared_liberties_and_dame_are_neutral():
    board = board_of(
        """
        . X . O .
        X X . O O
        O X X O .
        . O X O O
        O . X . O
        """
    )
    owner = board.ownership()
    assert mask_points(owner == EMPTY) == points(board, "C5", "C4", "B1", "D1")  # shared liberties and dame
    assert owner[at(board, "A5")] == BLACK  # black's eye
    for vertex in ("E5", "E3", "A2"):  # white's eyes
        assert owner[at(board, vertex)] == WHITE
    assert board.area(BLACK) == 7 + 1 and board.area(WHITE) == 10 + 3
    assert board.area_score() == 8 - 13 - 7.5


def test_regions_are_scored_regardless_of_life():
    # Tromp-Taylor does not judge life: an empty point touching both colours is neutral, even if one side's
    # chain is in atari there (C5), and one-colour regions count for that colour.
    board = board_of(
        """
        X X . O .
        X X O O O
        X O X X X
        O O X . X
        . O . X X
        """,
        komi=0.5,
    )
    owner = board.ownership()
    assert owner[at(board, "C5")] == EMPTY  # touches black B5 and white D5
    assert owner[at(board, "E5")] == WHITE
    assert owner[at(board, "D2")] == BLACK
    assert owner[at(board, "A1")] == WHITE
    assert owner[at(board, "C1")] == EMPTY  # touches white B1 and black C2 / D1
    black = int((board.stones == BLACK).sum()) + 1
    white = int((board.stones == WHITE).sum()) + 2
    assert board.area_score() == black - white - 0.5


def test_passes_and_end_of_game():
    board = ReferenceBoard(5)
    board.play(board.pass_move)
    assert board.passes == 1 and not board.is_over() and board.to_play == WHITE
    play(board, "C3")
    assert board.passes == 0 and board.to_play == BLACK
    board.play(board.pass_move)
    board.play(board.pass_move)
    assert board.passes == 2 and board.is_over()
    assert board.captures == {BLACK: 0, WHITE: 0}


def test_illegal_moves_raise():
    board = board_of(". X\n. .")
    with pytest.raises(ValueError):
        play(board, "B2")  # occupied
    with pytest.raises(ValueError):
        board.play(5)  # off the board (pass is 4)
    with pytest.raises(ValueError):
        board.play(-1)
    assert board.to_play == BLACK and board.passes == 0
