"""A playout's value (jaxgo.search.backup.playout_values); the compiled backup itself is held to the numpy
reference after real descents in test_descent.py."""

from __future__ import annotations

import numpy as np

from jaxgo.search import backup


def test_playout_values_plain_and_with_a_share_of_the_score():
    winner = np.array([1, -1, 0, 1, 1, -1], np.int8)
    score = np.array([0.5, -0.5, 0.0, 30.0, 3.0, -60.0])
    assert backup.playout_values(winner, score).tolist() == [1.0, 0.0, 0.5, 1.0, 1.0, 0.0]
    value = backup.playout_values(winner, score, 0.1, 9.0)
    won, lost = value[winner == 1], value[winner == -1]
    assert won.min() > 0.9 > 0.1 > lost.max()  # every win outweighs every loss
    assert value[3] > value[4] > value[0]  # between wins, the larger margin is worth more
    assert value[2] == 0.5
    mirrored = backup.playout_values(-winner, -score, 0.1, 9.0)
    np.testing.assert_allclose(value + mirrored, 1.0)  # White's value is 1 - Black's
