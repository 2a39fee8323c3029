"""``Game``'s public view of its history: position keys, independent copies, steps and the start position."""

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go import rules, tables  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402


def pt(vertex: str) -> int:
    return gtp_to_point(vertex, 5)


def key(state) -> int:
    words = np.asarray(state.hash, np.uint64)
    return int(words[0]) | (int(words[1]) << 32)


def board(game) -> str:
    return "\n".join("".join(".XO"[int(v)] for v in row) for row in game.board())


def test_position_keys_are_the_zobrist_keys_of_every_position():
    game = new_game(5)
    keys = [key(game.state)]
    for colour, vertex in ((BLACK, "C3"), (WHITE, "D3"), (BLACK, "pass")):
        game.play(colour, game.pass_move if vertex == "pass" else pt(vertex))
        keys.append(key(game.state))
    assert game.position_keys() == set(keys) and len(set(keys)) == 3  # the pass repeats a position
    game.undo()
    game.undo()
    assert game.position_keys() == set(keys[:2])


def test_copy_is_independent_and_has_nothing_to_undo():
    game = new_game(5, ko_rule="situational")
    game.setup_stones(BLACK, [pt("A1")])
    game.play(BLACK, pt("C3"))
    game.play(WHITE, pt("D3"))
    snap = game.copy()
    assert snap.rules == game.rules and snap.moves == game.moves and snap.position_keys() == game.position_keys()
    assert board(snap) == board(game) and snap.to_play == game.to_play
    start, moves = snap.start_position()
    assert snap.steps() == [] and start is snap.state and moves == game.moves
    with pytest.raises(IndexError):
        snap.undo()
    snap.play(BLACK, pt("B2"))
    assert len(game.moves) == 2 and len(snap.moves) == 3
    assert key(snap.state) in snap.position_keys() and key(snap.state) not in game.position_keys()
    game.undo()
    assert board(snap) == "\n".join([".....", ".....", "..XO.", ".X...", "X...."])


def test_steps_and_start_position_follow_setup_and_moves():
    game = new_game(5)
    empty = game.state
    assert game.steps() == [] and game.start_position()[0] is empty and game.start_position()[1] == []
    game.setup_stones(BLACK, [pt("B2"), pt("D4")])
    game.set_to_play(WHITE)
    after_setup = game.state
    assert game.start_position()[0] is after_setup and game.start_position()[1] == []
    game.play(WHITE, pt("C3"))
    game.play(BLACK, pt("C4"))
    assert [was_move for _, was_move in game.steps()] == [False, True, True]
    assert game.steps()[0][0] is empty and game.steps()[1][0] is after_setup
    start, moves = game.start_position()
    assert start is after_setup and moves == [(WHITE, pt("C3")), (BLACK, pt("C4"))]
    assert int(start.to_play) == WHITE
    game.setup_stones(WHITE, [pt("E1")])  # setup after a move: the moves cannot be replayed from one position
    assert game.start_position()[0] is game.state and game.start_position()[1] == []
    assert board(game) == "\n".join([".....", "..XX.", "..O..", ".X...", "....O"])
    game.undo()
    assert game.start_position()[0] is after_setup


def test_rules_neighbour_lists_come_from_the_table():
    table = rules.neighbour_table(5)
    lists = tables.neighbour_lists(5)
    assert lists[0] == (5, 1) and lists[pt("C3")] == (7, 17, 11, 13)
    assert all(tuple(q for q in row if q != 25) == got for row, got in zip(table.tolist(), lists))
    assert tables.diagonal_lists(5)[0] == (6,)


def test_gtp_vertices_parse_and_bad_ones_are_value_errors():
    from jaxgo.go.coords import point_to_gtp

    for point in range(26):
        assert gtp_to_point(point_to_gtp(point, 5), 5) == point
    assert gtp_to_point(" e1 ", 5) == 24 and gtp_to_point("Pass", 5) == 25
    for bad in ("", "E", "I1", "F1", "E0", "E6", "E-1", "E²", "E١"):  # non-ASCII digits are not digits here
        with pytest.raises(ValueError, match="invalid vertex"):
            gtp_to_point(bad, 5)
