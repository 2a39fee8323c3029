"""The BPIP controller on a Go capture problem, against proof-number search."""

from __future__ import annotations

import pytest

from jaxgo.bpip.control import run_search
from jaxgo.bpip.go_domain import GO_GRID, LADDER, CaptureDomain, proof_number_search
from jaxgo.bpip.tree import Settings
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.reference import ReferenceBoard

TARGET = 3 * 9 + 4  # e6


def problem(breaker=None):
    board = ReferenceBoard.from_ascii(LADDER, to_play=BLACK)
    if breaker is not None:
        board.stones[breaker] = WHITE
    dom = CaptureDomain(TARGET, BLACK, max_plies=40)
    return dom, dom.initial(board)


def test_pns_proves_the_ladder_and_disproves_the_broken_one():
    dom, s = problem()
    res = proof_number_search(dom, s)
    assert res["proved"] is True and res["moves"] == [49]  # e4
    dom, s = problem(breaker=7 * 9 + 7)  # a white stone on the ladder's path
    assert proof_number_search(dom, s)["proved"] is False


@pytest.mark.parametrize("method", ["qss", "trqss", "atrqss"])
def test_controller_chooses_the_ladder_move(method):
    dom, s = problem()
    res = run_search(dom, s, method, Settings(grid=GO_GRID, cost_per_etu=0.001))
    assert res.move == 49
    assert res.root_values["41"] == -1.0  # f5 lets White out at once (3 liberties)
    assert res.expansions <= proof_number_search(dom, s)["expansions"]


# ---------------------------------------------------------------------------------------------------------
# move choice with playout-based leaf distributions (jaxgo.bpip.go_playout)

def test_playout_estimate_by_hand():
    from jaxgo.bpip.go_playout import GoPlayoutDomain

    dom = GoPlayoutDomain(size=5, playouts_per_leaf=8, z=2.0)
    (m1, up1, lw1), (m2, up2, lw2) = dom.estimate([8, 3], [0, 2])
    # 8/8 wins: p = 9/10, M = 0.8, s = 2 sqrt(.9 * .1 / 9) = 0.2 -> Up clipped to 1, Lw = 0.4
    assert (m1, up1, lw1) == pytest.approx((0.8, 1.0, 0.4))
    # 3 wins 2 draws: p = (3 + 1 + 1) / 10 = 0.5, M = 0, s = 2 sqrt(.25 / 9) = 1/3
    assert (m2, up2, lw2) == pytest.approx((0.0, 2 / 3, -2 / 3))


CAPTURE_5X5 = """
. . . . .
. X X X .
. O O O X
. X X X .
. . . . .
"""  # White's three stones have one liberty (a3); Black to play


@pytest.mark.slow  # JAX compiles the playout kernel (~30 s on a shared 2-core machine)
def test_go_controller_on_a_small_board_respects_the_playout_budget():
    from jaxgo.bpip.go_playout import GO_VALUE_GRID, GoPlayoutDomain, to_numpy
    from jaxgo.go import rules

    board = ReferenceBoard.from_ascii(CAPTURE_5X5, to_play=BLACK)
    state = to_numpy(rules.from_board(board.stones, to_play=BLACK))
    dom = GoPlayoutDomain(size=5, komi=0.5, playouts_per_leaf=8, budget=300, seed=1)
    res = run_search(dom, state, "qss", Settings(grid=GO_VALUE_GRID, cost_per_etu=1e-5))
    legal = set(dom.moves(state))
    assert res.move in legal and len(res.root_values) == len(legal)
    assert res.stop_reason == "budget" and dom.playouts >= 300
    assert dom.playouts % 8 == 0  # only the playouts whose results are used are counted (no padding)
    assert res.expansions == dom.device_calls >= 2
    assert dom.move_name(10) == "A3" and 10 in legal


@pytest.mark.slow
def test_cli_go_json_and_bad_moves(capsys):
    import json

    from jaxgo.bpip.cli import main

    assert main(["go", "--size", "5", "--moves", "C3 B2", "--budget", "200", "--mcts", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["playouts"] >= 200 and record["mcts"]["playouts"] >= record["playouts"]
    assert record["move"] not in ("C3", "B2") and {"expansions", "time_units", "root_values"} <= set(record)
    assert main(["go", "--size", "5", "--moves", "C3 C3"]) == 2  # occupied point: clear error, exit code 2
    assert "bad --moves" in capsys.readouterr().out


@pytest.mark.slow
def test_small_match_runs_and_counts_games():
    from jaxgo.bpip.go_compare import play_match

    out = play_match(1, 100, size=5, komi=0.5, max_moves=8, log=None)
    [game] = out["games"]
    assert out["bpip_wins"] + out["mcts_wins"] == 1 and game["bpip_colour"] == "B"
    assert 1 <= game["moves"] <= 8
    # 100 playouts per move is far below MCTS's resignation minimum, so the area score decides; BPIP is Black
    assert game["bpip_won"] == (game["score_black"] > 0)
