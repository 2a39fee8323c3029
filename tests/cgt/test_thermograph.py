"""Exact thermographs (jaxgo.cgt.thermograph) on hand-computed games."""

import numpy as np
import pytest

from jaxgo.cgt.games import LEFT, RIGHT, Minimax, negate, parse
from jaxgo.cgt.thermograph import shape, thermographs


def th(text):
    return thermographs(parse(text))[0]


@pytest.mark.parametrize(
    "text, t, m, ls, rs, kind",
    [
        ("{2|-2}", 2, 0, 2, -2, "gote"),
        ("{4|-4}", 4, 0, 4, -4, "gote"),
        ("{0|-6}", 3, -3, 0, -6, "gote"),
        # I: left wall 3 - t, right wall LS_t(I^R) + t = max(-t, -3) + t = 0 up to t = 3 (Right's sente)
        ("{3|{0|-6}}", 3, 0, 3, 0, "sente (Right)"),
        # SL = RS_t({5|1}) - t = 1 (t < 2), 3 - t (t >= 2); SR = -3 + t; cross 3 - t = -3 + t
        ("{{5|1}|-3}", 3, 0, 1, -3, "gote"),
        # SL = max(2 - t, min(1 + t, 2.5) - t); SR = -2 + t; cross on 2.5 - t at t = 2.25
        ("{2, {4|1} | -2}", 2.25, 0.25, 2, -2, "gote"),
    ],
)
def test_hand_computed(text, t, m, ls, rs, kind):
    g = th(text)
    assert g.temperature == pytest.approx(t) and g.mean == pytest.approx(m)
    assert g.ls == pytest.approx(ls) and g.rs == pytest.approx(rs)
    assert shape(g) == kind


def test_walls_pointwise():
    g = th("{2, {4|1} | -2}")
    for t, left in [(0.0, 2.0), (0.5, 1.5), (1.2, 1.0), (1.5, 1.0), (2.0, 0.5), (3.0, 0.25)]:
        assert g.left(t) == pytest.approx(left)
    for t, right in [(0.0, -2.0), (2.0, 0.0), (2.25, 0.25), (4.0, 0.25)]:
        assert g.right(t) == pytest.approx(right)
    ts = np.linspace(-1, 5, 61)  # LS_t >= RS_t everywhere, masts equal above t(G)
    assert np.all(g.left(ts) >= g.right(ts) - 1e-12)
    assert np.allclose(g.left(ts[ts >= 2.25]), 0.25) and np.allclose(g.right(ts[ts >= 2.25]), 0.25)


def test_cold_game_has_negative_temperature():
    g = th("{0|1}")
    assert g.temperature == pytest.approx(-0.5) and g.mean == pytest.approx(0.5)


@pytest.mark.parametrize("text", ["{3|{0|-6}}", "{2, {4|1} | -2}", "{{3|{0|-6}} | {-1|-9}}"])
def test_negation_symmetry(text):
    g = parse(text)
    for a, b in zip(thermographs(g), thermographs(negate(g))):
        assert b.temperature == pytest.approx(a.temperature) and b.mean == pytest.approx(-a.mean)
        assert b.ls == pytest.approx(-a.rs) and b.rs == pytest.approx(-a.ls)


@pytest.mark.parametrize("text", ["{2|-2}", "{3|{0|-6}}", "{{5|1}|-3}", "{{3|{0|-6}} | {-1|-9}}"])
def test_stops_equal_single_game_minimax_when_hot(text):
    """For games whose every inner position is hot, LS_0 / RS_0 are the alternating-play stops."""
    g = parse(text)
    solver = Minimax((g,))
    t = thermographs(g)[0]
    assert t.ls == solver.value((0,), LEFT) and t.rs == solver.value((0,), RIGHT)
