"""SGF loading (sgfmill), replay with GNU Go's ``loadsgf FILE N`` semantics, and writing games back out."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go import sgf  # noqa: E402
from jaxgo.go.config import Rules  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, colour_letter, gtp_moves, gtp_to_point  # noqa: E402
from jaxgo.go.sgf import GameRecord, SGFError, game_to_sgf, load_sgf, point_to_sgf, replay  # noqa: E402
from jaxgo.util.paths import data_dir  # noqa: E402

DATA = Path(__file__).parents[1] / "fixtures"
SHARED_REPETITION = data_dir() / "rules" / "fuego-regression" / "regression" / "sgf" / "repetition"


def pt(vertex: str, size: int) -> int:
    return gtp_to_point(vertex, size)


# -- loading ----------------------------------------------------------------------------------------------
def test_load_game_properties_and_moves():
    record = load_sgf(DATA / "jaxgo_capture_ko.sgf")
    assert record.size == 5
    assert record.komi == 0.5
    assert record.handicap is None
    assert (record.black_name, record.white_name, record.result, record.ruleset) == ("Alice", "Bob", "B+0.5", "Chinese")
    assert record.setup_black == [] and record.setup_white == []
    p = record.pass_move
    expected = [(BLACK, "B5"), (WHITE, "C5"), (BLACK, "A4"), (WHITE, "B4"), (BLACK, "C3"), (WHITE, "A5"),
                (BLACK, "pass"), (WHITE, "D2"), (BLACK, "B5"), (WHITE, "pass"), (BLACK, "pass")]
    assert record.moves == [(c, pt(v, 5)) for c, v in expected]
    # B[tt] and B[] are both passes on a board up to 19x19.
    assert record.moves[6][1] == p and record.moves[9][1] == p
    # The same main line as GTP vertices, the form of ``play`` commands and analysis queries.
    assert record.gtp_moves() == [["B" if c == BLACK else "W", v] for c, v in expected]


def test_load_from_bytes_text_and_path_agree():
    path = DATA / "jaxgo_capture_ko.sgf"
    data = path.read_bytes()
    assert load_sgf(path) == load_sgf(str(path)) == load_sgf(data) == load_sgf(data.decode())


def test_load_handicap_setup():
    record = load_sgf(DATA / "jaxgo_handicap.sgf")
    assert record.size == 9 and record.komi == 0.5 and record.handicap == 2
    assert record.setup_black == sorted([pt("C3", 9), pt("G7", 9)])
    assert record.setup_white == []
    assert record.first_to_play() == WHITE
    assert record.moves == [(WHITE, pt("E5", 9)), (BLACK, pt("E7", 9)), (WHITE, 81)]


def test_load_setup_in_later_node_pl_and_main_line():
    record = load_sgf(DATA / "jaxgo_setup_pl.sgf")
    assert record.size == 7
    assert record.setup_black == [pt("A7", 7)]  # B6 removed again by AE in the second node
    assert record.setup_white == sorted([pt("C5", 7), pt("D4", 7)])
    assert record.player_to_move == WHITE
    # Variations: only the main line (first child) is read.
    assert record.moves == [(WHITE, pt("E3", 7)), (BLACK, pt("F2", 7)), (WHITE, pt("G1", 7))]


def test_handicap_without_moves_gives_white_the_move():
    record = load_sgf(b"(;FF[4]GM[1]SZ[9]HA[2]AB[cg][gc])")
    assert record.first_to_play() == WHITE
    assert load_sgf(b"(;FF[4]GM[1]SZ[9]AB[cg])").first_to_play() == BLACK


@pytest.mark.parametrize(
    "source, match",
    [
        (DATA / "jaxgo_broken.sgf", "cannot parse"),
        (DATA / "jaxgo_offboard.sgf", "node 2"),
        (DATA / "no_such_file.sgf", "cannot read"),
        (b"this is not sgf", "cannot parse"),
        (b"(;FF[4]GM[2]SZ[9])", "not a Go game"),
        (b"(;FF[4]GM[1]SZ[9]KM[lots])", "KM"),
        (b"(;FF[4]GM[1]SZ[9];B[ee];AB[aa])", "setup stones after a move"),
        (b"(;FF[4]GM[1]SZ[9]AB[aa]AW[aa])", "both colours"),
    ],
    ids=["unterminated", "off-board-move", "missing-file", "garbage", "not-go", "bad-komi", "late-setup", "overlap"],
)
def test_broken_sgf_raises_sgf_error(source, match):
    with pytest.raises(SGFError, match=match):
        load_sgf(source)


def test_sgf_error_is_a_value_error():
    assert issubclass(SGFError, ValueError)


# -- replay ---------------------------------------------------------------------------------------------
def test_replay_whole_game():
    record = load_sgf(DATA / "jaxgo_capture_ko.sgf")
    game = replay(record, Rules(size=19, komi=7.5, ko_rule="situational"))
    # Size and komi come from the record, the ko rule from the rules given.
    assert (game.size, game.rules.komi, game.rules.ko_rule) == (5, 0.5, "situational")
    assert game.moves == record.moves
    assert game.captures(WHITE) == 1 and game.captures(BLACK) == 1
    board = game.board()
    assert board[0, 1] == BLACK and board[0, 0] == 0  # B5 retaken, A5 captured
    assert game.is_over()
    assert game.to_play == WHITE


def test_replay_move_number_semantics():
    record = load_sgf(DATA / "jaxgo_capture_ko.sgf")
    rules = Rules(size=5, komi=0.5, ko_rule="simple")
    # N = 1: nothing played, the first move's colour to play.
    game = replay(record, rules, 1)
    assert game.moves == [] and game.to_play == BLACK and not game.board().any()
    # N = 7: moves 1..6 played (W A5 took B5), Black to move, and B5 is an immediate ko recapture.
    game = replay(record, rules, 7)
    assert game.moves == record.moves[:6]
    assert game.to_play == BLACK
    assert game.captures(WHITE) == 1
    assert not game.is_legal(BLACK, pt("B5", 5))
    # N = 9: Black passed and White played elsewhere, so the ko may now be retaken.
    game = replay(record, rules, 9)
    assert game.to_play == BLACK and game.is_legal(BLACK, pt("B5", 5))
    # N past the end: the whole game.
    assert replay(record, rules, 100).moves == record.moves
    with pytest.raises(SGFError):
        replay(record, rules, 0)


def test_replay_side_to_move_is_colour_of_move_n():
    # Two White moves in a row: before move 2 the side to move must be White, not Black.
    record = load_sgf(b"(;FF[4]GM[1]SZ[5];W[aa];W[bb];B[cc])")
    game = replay(record, Rules(size=5), 2)
    assert game.to_play == WHITE and game.moves == [(WHITE, 0)]


def test_replay_handicap_and_pl():
    game = replay(load_sgf(DATA / "jaxgo_handicap.sgf"), Rules(size=9), 1)
    assert game.to_play == WHITE
    assert sorted(np.flatnonzero(game.board().reshape(-1) == BLACK)) == sorted([pt("C3", 9), pt("G7", 9)])
    game = replay(load_sgf(DATA / "jaxgo_setup_pl.sgf"), Rules(size=7), 1)
    assert game.to_play == WHITE
    assert (game.board() == BLACK).sum() == 1 and (game.board() == WHITE).sum() == 2


def test_replay_illegal_move_raises():
    with pytest.raises(SGFError, match="move 2"):
        replay(load_sgf(DATA / "jaxgo_illegal.sgf"), Rules(size=9))


def test_replay_unsupported_size_raises():
    record = GameRecord(size=21)
    with pytest.raises(SGFError, match="unsupported"):
        replay(record)


def test_replay_superko_only_checked_when_asked():
    path = SHARED_REPETITION / "repetition-1.sgf"
    if not path.exists():
        pytest.skip(f"shared Fuego regression data not found at {path} (set JAXGO_DATA)")
    record = load_sgf(path)
    rules = Rules(size=9, ko_rule="positional")
    game = replay(record, rules)  # the record repeats a position at move 105; replay tolerates it
    assert len(game.moves) == len(record.moves)
    with pytest.raises(SGFError, match="superko"):
        replay(record, rules, check_superko=True)
    # The history is kept, so from the position before move 105 the repetition is refused.
    game = replay(record, rules, 105)
    colour, move = record.moves[104]
    assert not game.is_legal(colour, move)


def test_gtp_moves_and_colour_letters():
    assert colour_letter(BLACK) == "B" and colour_letter(WHITE) == "W"
    with pytest.raises(ValueError, match="not a colour"):
        colour_letter(0)
    # Numpy integers (stones arrays, search results) convert like ints; the pass index is "pass".
    moves = [(np.int8(BLACK), np.int64(pt("A19", 19))), (WHITE, pt("T1", 19)), (BLACK, 361)]
    assert gtp_moves(moves, 19) == [["B", "A19"], ["W", "T1"], ["B", "pass"]]
    assert gtp_moves([], 9) == []


# -- writing --------------------------------------------------------------------------------------------
def test_point_to_sgf():
    assert point_to_sgf(0, 9) == "aa"
    assert point_to_sgf(pt("J1", 9), 9) == "ii"
    assert point_to_sgf(pt("C5", 5), 5) == "ca"
    assert point_to_sgf(81, 9) == ""


@pytest.mark.parametrize("name", ["jaxgo_capture_ko.sgf", "jaxgo_handicap.sgf", "jaxgo_setup_pl.sgf"])
def test_game_to_sgf_round_trip(name):
    record = load_sgf(DATA / name)
    game = replay(record, Rules(size=record.size))
    text = game_to_sgf(game, result="B+0.5", black_name="x]y")
    again = load_sgf(text.encode())
    assert again.size == record.size and again.komi == record.komi
    assert again.setup_black == record.setup_black and again.setup_white == record.setup_white
    assert again.moves == record.moves
    assert again.result == "B+0.5" and again.black_name == "x]y"
    assert "B[]" in text or "W[]" in text or not any(m == record.pass_move for _, m in record.moves)


def test_game_to_sgf_setup_only_keeps_side_to_move():
    game = replay(load_sgf(DATA / "jaxgo_setup_pl.sgf"), Rules(size=7), 1)
    again = load_sgf(game_to_sgf(game).encode())
    assert again.moves == [] and again.first_to_play() == WHITE
    assert again.setup_black == [pt("A7", 7)]


def test_node_count_skips_property_values():
    assert sgf.count_nodes(b"(;GM[1]C[a;b\\];c];B[aa](;W[bb])(;W[cc]))") == 4


def test_the_caps_are_the_servers_and_name_the_limit():
    from jaxgo.server.protocol import MAX_QUERY_MOVES

    assert sgf.MAX_SGF_MOVES == MAX_QUERY_MOVES
    with pytest.raises(sgf.SGFLimitError, match=f"at most {sgf.MAX_SGF_NODES}"):
        sgf.load_sgf(b"(;" + b";" * (4 << 20) + b")")  # 4 MiB of empty nodes: refused before parsing
    with pytest.raises(sgf.SGFLimitError, match="at most 3 moves"):
        sgf.load_sgf(b"(;SZ[9];B[aa];W[bb];B[cc];W[dd])", max_moves=3)
    with pytest.raises(sgf.SGFLimitError, match="komi KM\\[1e308\\] out of range"):
        sgf.load_sgf(b"(;SZ[9]KM[1e308];B[aa])")
