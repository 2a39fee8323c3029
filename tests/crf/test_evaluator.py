"""Territory evaluator API (jaxgo.crf.evaluator) on ASCII boards."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import pytest

from jaxgo.crf.evaluator import black_probability, expected_territory, load_model


def board(text):
    """ASCII rows, X = Black, O = White, . = empty, top row first -> int8 [N, N]."""
    rows = [r.split() for r in text.strip().splitlines()]
    return np.array([[{"X": 1, "O": -1, ".": 0}[c] for c in r] for r in rows], np.int8)


LIVING_BLACK = board("""
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
X X X X X . . . .
. X . X X . . . .
X X X . X . . . .
. . X X X . . . .
""")


def test_shape_range_and_dtype():
    out = expected_territory(LIVING_BLACK[None], np.array([1]))
    assert out.shape == (1, 9, 9) and out.dtype == np.float32
    assert np.all(out >= -1) and np.all(out <= 1)


def test_living_group_surroundings_lean_to_its_colour():
    out = expected_territory(LIVING_BLACK[None], np.array([-1]))[0]
    assert out[6, 0] > 0.5 and out[8, 0] > 0.5 and out[6, 2] > 0.5       # eyes are Black
    assert out[7, 5] > 0.2                                                # next to the group leans Black
    assert out[5, 0] > 0.9                                                # the stones themselves
    assert out[7, 5] > out[7, 8]                                          # influence decays with distance


def test_colour_reversal_and_batch_independence():
    b = np.stack([LIVING_BLACK, -LIVING_BLACK, np.zeros((9, 9), np.int8)])
    out = expected_territory(b, np.array([1, 1, -1]))
    np.testing.assert_allclose(out[1], -out[0], atol=1e-5)
    np.testing.assert_allclose(out[2], 0.0, atol=1e-5)                     # empty board: no preference
    single = expected_territory(b[:1], np.array([1]))
    np.testing.assert_allclose(single[0], out[0], atol=1e-5)


def test_orientation_row_zero_is_top():
    b = np.zeros((5, 5), np.int8)
    b[0, :] = 1                                                          # Black wall on the top row
    b[4, :] = -1
    out = expected_territory(b[None], np.array([1]))[0]
    assert out[1].mean() > 0 > out[3].mean()


@pytest.mark.parametrize("n", [2, 3, 13, 19])
def test_sizes(n):
    b = np.zeros((2, n, n), np.int8)
    b[0, 0, 0] = 1
    p = black_probability(b, np.zeros(2, int))
    assert p.shape == (2, n, n) and p[0, 0, 0] > 0.5


def test_bad_input_is_rejected():
    with pytest.raises(ValueError):
        expected_territory(np.zeros((1, 9, 8), np.int8), np.array([1]))
    with pytest.raises(ValueError):
        expected_territory(np.zeros((1, 20, 20), np.int8), np.array([1]))
    with pytest.raises(ValueError):
        expected_territory(np.full((1, 5, 5), 2, np.int8), np.array([1]))
    with pytest.raises(ValueError):
        expected_territory(np.zeros((2, 5, 5), np.int8), np.array([1]))


def test_default_model_ships_in_package():
    name, params = load_model("b5")
    assert name == "b5" and params.shape == (5,) and params[0] > params[1] > 0
