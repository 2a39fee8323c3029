"""The chess pawn-ending experiment (python-chess is the optional extra ``chess``)."""

from __future__ import annotations

import json

import pytest

chess = pytest.importorskip("chess", reason="python-chess not installed (pip install 'jaxgo[chess]')")

from jaxgo.search.bpip import chess_domain as cd  # noqa: E402
from jaxgo.search.bpip.cli import main  # noqa: E402
from jaxgo.search.bpip.control import run_search  # noqa: E402
from jaxgo.search.bpip.tree import Settings  # noqa: E402


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


def test_cli_alphabeta_finds_b6(capsys):
    assert main(["chess", "--method", "alphabeta", "--depth", "9", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["move"] == "b5b6" and record["value"] >= 5.0


@pytest.mark.slow
def test_exact_9_ply_values():
    res = cd.root_search(cd.ChessDomain(), paper_board(), 9, exact_root=True)
    assert res["move"] == "b5b6"
    assert [m for m, v in res["values"].items() if v >= 5.0] == ["b5b6"]
