"""The chess pawn-ending experiment (python-chess is the optional extra ``chess``)."""

from __future__ import annotations

import json

import pytest

chess = pytest.importorskip("chess", reason="python-chess not installed (pip install 'jaxgo[chess]')")

from jaxgo.bpip import chess_domain as cd  # noqa: E402
from jaxgo.bpip.cli import main  # noqa: E402
from jaxgo.bpip.control import run_search  # noqa: E402
from jaxgo.bpip.tree import Settings  # noqa: E402


def paper_board():
    return chess.Board(cd.POSITIONS["paper"])


def test_static_value_of_paper_position_is_0_6():
    m, up, lw = cd.ChessDomain().evaluate(paper_board())
    assert m == pytest.approx(0.6)  # the paper: "static value 0.6 (due to more forwarded pawns)"
    assert lw < m < up


def test_b6_is_the_only_winning_move_at_9_ply():
    res = cd.winning_moves(cd.ChessDomain(), paper_board(), depth=9, threshold=5.0)
    assert res["winning"] == ["b5b6"]


def test_7_ply_search_does_not_see_the_breakthrough():
    res = cd.root_search(cd.ChessDomain(), paper_board(), 7, exact_root=True)
    assert res["values"]["b5b6"] < 5.0  # promotion lies 9 plies deep, as in the paper


@pytest.mark.parametrize("method", ["qss", "trqss", "atrqss"])
def test_controllers_return_a_legal_move_with_consistent_time(method):
    res = run_search(cd.ChessDomain(), paper_board(), method, Settings(cost_per_etu=0.001, max_expansions=60))
    assert chess.Move.from_uci(res.move_name) in paper_board().legal_moves
    assert 1 <= res.expansions <= 60
    assert res.time_units == pytest.approx(res.expansions + 10.0 * res.adaptations)
    assert set(res.root_values) == {m.uci() for m in paper_board().legal_moves}


def test_cli_json(capsys):
    assert main(["chess", "--method", "trqss", "--json", "--max-expansions", "40"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert {"move", "expansions", "time_units"} <= set(record)
    assert record["expansions"] <= 40


def test_cli_alphabeta_finds_a6_after_b6_cxb6(capsys):
    fen = "7k/pp6/1p6/P1P5/8/8/8/7K w - - 0 2"  # after 1.b6 cxb6
    assert main(["chess", "--method", "alphabeta", "--depth", "7", "--position", fen, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["move"] == "a5a6" and record["value"] >= 5.0


@pytest.mark.slow
def test_cli_alphabeta_finds_b6(capsys):
    assert main(["chess", "--method", "alphabeta", "--depth", "9", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["move"] == "b5b6" and record["value"] >= 5.0


@pytest.mark.slow
def test_exact_9_ply_values():
    res = cd.root_search(cd.ChessDomain(), paper_board(), 9, exact_root=True)
    assert res["move"] == "b5b6"
    assert [m for m, v in res["values"].items() if v >= 5.0] == ["b5b6"]


def board_from_ascii(text: str, to_move: str) -> "chess.Board":
    """An 8x8 ASCII board (rank 8 first, '.' empty, FEN letters) with the side to move ('w' / 'b')."""
    rows = [r.replace(" ", "") for r in text.strip().splitlines()]
    assert len(rows) == 8 and all(len(r) == 8 for r in rows)
    fen_rows = []
    for r in rows:
        out, empty = "", 0
        for ch in r:
            if ch == ".":
                empty += 1
            else:
                out += (str(empty) if empty else "") + ch
                empty = 0
        fen_rows.append(out + (str(empty) if empty else ""))
    return chess.Board("/".join(fen_rows) + f" {to_move} - - 0 1")


# the paper's main line 1.b6 axb6 2.c6 bxc6 3.a6, Black to move: White's a-pawn queens first
AFTER_3_A6 = """
. . . . . . . k
. . p . . . . .
P p p . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . K
"""


def test_race_features_by_hand():
    dom = cd.ChessDomain(evaluator="race")
    board = board_from_ascii(AFTER_3_A6, "b")
    assert dom.race_steps(board, chess.WHITE) == 2  # a6-a7-a8, king h8 is 7 (6 with the move) away
    assert dom.race_steps(board, chess.BLACK) == 5  # b6 runs too (Kh1 is 6 from b1); c6 is caught, c7 blocked
    assert dom.race_feature(board) == (cd.RACE + 1) * 64 + 2  # the waiting side wins the race in 2
    m, up, lw = dom.evaluate(board)
    # M (Black to move) = material +2, White's a6 (-0.4), race lost in 2 (-8 * 0.9) = -5.6 (no captures)
    assert m == pytest.approx(2.0 - 0.4 - 7.2)
    # Up = max(M, M0 + P(black)) + 0.5 with M0 = 1.6, P = 8 * 0.7**4 for the 5-step b-pawn
    assert up == pytest.approx(1.6 + 8 * 0.7**4 + 0.5)
    # Lw = min(M, M0 - P(white)) - 0.5 with P = 8 * 0.7 for the 2-step a-pawn
    assert lw == pytest.approx(m - 0.5)
    assert cd.ChessDomain(evaluator="material").evaluate(board)[0] == pytest.approx(1.6)


KING_NEAR = """
. . . . . . . .
. . . . . . . .
. . . . k . . .
P . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . K
"""


def test_rule_of_the_square():
    dom = cd.ChessDomain(evaluator="race")
    # pawn a5 (3 steps), black king e6 (4 from a8): outside the square with White to move, inside with Black
    assert dom.race_steps(board_from_ascii(KING_NEAR, "w"), chess.WHITE) == 3
    assert dom.race_steps(board_from_ascii(KING_NEAR, "b"), chess.WHITE) is None
    assert dom.race_steps(board_from_ascii(KING_NEAR.replace(". . . . k", ". . . k ."), "w"), chess.WHITE) is None


def test_quiescence_sees_the_hanging_breakthrough():
    board = paper_board()
    board.push_uci("b5b6")
    board.push_uci("h8g8")  # a quiet reply: bxa7 or bxc7 now makes an unstoppable pawn
    assert cd.ChessDomain(evaluator="race").evaluate(board)[0] > 5.0
    assert cd.ChessDomain(evaluator="material").evaluate(board)[0] < 1.0


def after_b6_cxb6():
    board = paper_board()
    board.push_uci("b5b6")
    board.push_uci("c7b6")
    return board  # 2.a6! is the only move that wins within 7 plies


def test_after_b6_cxb6_only_a6_wins():
    assert cd.winning_moves(cd.ChessDomain(), after_b6_cxb6(), depth=7)["winning"] == ["a5a6"]


@pytest.mark.parametrize("method", ["trqss", pytest.param("qss", marks=pytest.mark.slow),
                                    pytest.param("atrqss", marks=pytest.mark.slow)])
def test_controllers_find_2_a6(method):
    res = run_search(cd.ChessDomain(evaluator="race"), after_b6_cxb6(), method,
                     Settings(cost_per_etu=0.003, max_expansions=200))
    assert res.move_name == "a5a6" and res.root_values["a5a6"] > 5.0
    assert res.expansions < 200  # stopped by its own rule


@pytest.mark.slow
@pytest.mark.parametrize("method", ["qss", "trqss", "atrqss"])
def test_table_3_controllers_find_b6(method):
    res = run_search(cd.ChessDomain(evaluator="race"), paper_board(), method,
                     Settings(cost_per_etu=0.003, gamma=0.5, max_expansions=300, trace=True))
    assert res.move_name == "b5b6" and res.root_values["b5b6"] > 4.0
    assert res.expansions < 300 and res.settled_at() <= 60


@pytest.mark.slow
def test_table_3_atrqss_adapts_once_at_the_root():
    s = Settings(cost_per_etu=0.01, gamma=0.9, sim_scale=40.0, max_expansions=300)
    res = run_search(cd.ChessDomain(evaluator="race"), paper_board(), "atrqss", s)
    assert res.move_name == "b5b6"
    assert res.adaptations == 1 and [d for k, d in res.log if k == "a"] == [0]
    assert res.time_units == res.expansions + 10.0
    trq = run_search(cd.ChessDomain(evaluator="race"), paper_board(), "trqss", s)
    assert trq.move_name == "b5b6" and res.expansions < trq.expansions


def test_material_evaluator_misses_b6_within_the_budget():
    res = run_search(cd.ChessDomain(evaluator="material"), paper_board(), "trqss",
                     Settings(cost_per_etu=0.003, max_expansions=100))
    assert res.move_name != "b5b6"  # the promotion is 9 plies deep and the product rule sinks 1.b6
