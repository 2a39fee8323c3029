"""Adaptive-pattern failure on a Go position (jaxgo.cgt.go_patterns, thesis section 5.2)."""

import numpy as np
import pytest

from jaxgo.cgt.go_patterns import A, P, Q, adaptive_pattern_experiment, board_from_ascii, pattern_points, point
from jaxgo.go import rules


def test_board_layout():
    b = board_from_ascii().reshape(9, 9)
    assert (b[5, 3:7] == rules.BLACK).all() and b[A] == rules.EMPTY and b[P] == rules.EMPTY and b[Q] == rules.EMPTY
    assert point(A) in pattern_points(P) and point(A) not in pattern_points(Q)
    assert pattern_points(Q)[0] == -1  # q is on the edge


@pytest.mark.slow
def test_position_is_as_described():
    """Only the row-4 points are playable (eyes excluded); the four Black stones have A as only liberty."""
    state = rules.from_board(board_from_ascii(), rules.BLACK)
    legal = np.asarray(rules.legal_mask(state))[:-1] & ~np.asarray(rules.eye_mask(state, rules.BLACK))
    assert sorted(np.nonzero(legal)[0].tolist()) == [36, 37, 38, 39, 44]  # (4,0) (4,1) p=(4,2) A=(4,3) (4,8)
    white = rules.play(rules.from_board(board_from_ascii(), rules.WHITE), point(A))
    assert int(np.asarray(white.captures)[1]) == 4  # White at A captures the four stones
    black = rules.play(state, point(A))
    assert int(np.asarray(black.captures).sum()) == 0


@pytest.mark.slow
def test_pattern_weights_measure_circumstances():
    """Black's p has weight 5 after Black took A and about -3 after White took A (gap ~8), while Black p vs
    White p inside the same circumstance differs by at most ~2."""
    r = adaptive_pattern_experiment(2048, seed=1)
    assert r["pattern_weight_gap_p"] > 6.0
    assert abs(r["value_of_p_given_A_black"]) < 1.0 and abs(r["value_of_p_given_A_white"]) < 2.5
