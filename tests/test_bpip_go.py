"""The BPIP controller on a Go capture problem, against proof-number search."""

from __future__ import annotations

import pytest

from jaxgo.coords import BLACK, WHITE
from jaxgo.reference import ReferenceBoard
from jaxgo.search.bpip.control import run_search
from jaxgo.search.bpip.go_domain import GO_GRID, LADDER, CaptureDomain, proof_number_search
from jaxgo.search.bpip.tree import Settings

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
