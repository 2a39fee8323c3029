"""Triangle approximation (jaxgo.cgt.triangle) and the CG-TD(0) update rules (jaxgo.cgt.cgtd, Algorithms 5-6)."""

import random

import numpy as np
import pytest

from jaxgo.cgt.cgtd import CGTD, left_target, right_target, update_leaves, update_thermograph
from jaxgo.cgt.games import parse, toy_sum
from jaxgo.cgt.thermograph import PWL, first_crossing, thermographs
from jaxgo.cgt.triangle import Triangle, leaf_triangle, triangle_from_options, triangles, wall_pwl


def test_triangle_walls():
    tri = Triangle(temperature=3.0, mean=0.0, ls=3.0, rs=0.0)
    assert tri.left_wall(0.0) == 3.0 and tri.left_wall(1.5) == 1.5 and tri.left_wall(5.0) == 0.0
    assert tri.right_wall(2.0) == 0.0
    assert leaf_triangle(-6).left_wall(4.0) == -6.0


def test_triangles_exact_on_toy_games():
    for g in toy_sum():
        for a, e in zip(triangles(g), thermographs(g)):
            assert (a.temperature, a.mean, a.ls, a.rs) == pytest.approx((e.temperature, e.mean, e.ls, e.rs))


def test_recursive_triangle_by_hand():
    """{2, {4|1} | -2}: L* = {4|1} (m 2.5, t 1.5), lrs = max(2, 1) = 2.  Taxed: 2 - 2t/3 below 1.5, then 2.5 - t;
    SR = -2 + t meets the wall piece only at t = 2.4 > 1.5, so the crossing is on the mast: t = 2.25, m = 0.25."""
    tri = triangles(parse("{2, {4|1} | -2}"))[0]
    assert (tri.temperature, tri.mean, tri.ls, tri.rs) == pytest.approx((2.25, 0.25, 2.0, -2.0))


def test_triangle_differs_from_exact_when_walls_have_kinks():
    """{{6|{2|0}} | -1}: G^L = {6|{2|0}} has t 2.5, m 3.5 and a kinked right wall (2 up to t = 1, then 1 + t).
    Exact: SL = 2 - t then 1, SR = -1 + t: t = 2, m = 1.  Triangle: the wall is the line 2 + 0.6 t, taxed
    2 - 0.4 t, meeting -1 + t at t = 3 / 1.4 = 2.142857, m = 1.142857."""
    g = parse("{{6|{2|0}} | -1}")
    a, e = triangles(g)[0], thermographs(g)[0]
    assert (e.temperature, e.mean) == pytest.approx((2.0, 1.0))
    assert (a.temperature, a.mean, a.ls, a.rs) == pytest.approx((3 / 1.4, 3 / 1.4 - 1, 2.0, -1.0))


def random_hot_triangle(rng):
    t = rng.uniform(0.2, 4)
    m = rng.uniform(-4, 4)
    return Triangle(t, m, m + rng.uniform(0, t), m - rng.uniform(0, t))


def test_alg6_left_closed_form_is_geometric_crossing():
    """t' of Algorithm 6 = first crossing of L's taxed wall/mast with the slope-1 line through (t(G), m(G))."""
    rng = random.Random(0)
    for _ in range(300):
        lstar = random_hot_triangle(rng)
        lrs = lstar.rs + rng.choice([0.0, rng.uniform(0, 2)])  # another Left option may have a higher RS
        t_g, m_g = rng.uniform(0, 5), rng.uniform(-5, 5)
        tp, mp = left_target(lstar, lrs, t_g, m_g)
        sl = wall_pwl(lrs, lstar.mean, lstar.temperature, -50, 50).plus_tax(-1.0)
        line = PWL.line(m_g - t_g, 1.0, -50, 50)
        t_ref, m_ref = first_crossing(sl, line)
        assert (tp, mp) == pytest.approx((t_ref, m_ref), abs=1e-9)
        if lrs <= lstar.mean:  # the printed min(t1, t2) form
            t1 = (lstar.mean - (m_g - t_g)) / 2
            t2 = lstar.temperature * (lrs - (m_g - t_g)) / (lrs - (lstar.mean - 2 * lstar.temperature))
            assert tp == pytest.approx(min(t1, t2))


def test_alg6_right_half_is_mirror_of_left_half():
    rng = random.Random(1)
    for _ in range(300):
        r = random_hot_triangle(rng)
        rls = r.ls - rng.uniform(0, 2)
        t_g, m_g = rng.uniform(0, 5), rng.uniform(-5, 5)
        mirror = Triangle(r.temperature, -r.mean, -r.rs, -r.ls)  # -R is a Left option of -G
        tp, mp = right_target(r, rls, t_g, m_g)
        tq, mq = left_target(mirror, -rls, t_g, -m_g)
        assert (tp, mp) == pytest.approx((tq, -mq), abs=1e-9)


def test_alg6_fixed_point_is_recursive_triangle():
    """Iterating UpdateThermograph with fixed options converges to the triangle of section 5.7."""
    rng = random.Random(2)
    for _ in range(20):
        lefts = [random_hot_triangle(rng) for _ in range(rng.randint(1, 2))]
        rights = [Triangle(t.temperature, t.mean - 6, t.ls - 6, t.rs - 6) for t in
                  (random_hot_triangle(rng) for _ in range(rng.randint(1, 2)))]
        want = triangle_from_options(lefts, rights, lo=-50, hi=50)
        tri = Triangle(0.0, 0.0, 0.0, 0.0)
        for _ in range(400):
            tri = update_thermograph(tri, lefts, rights, alpha=0.3)
        assert (tri.temperature, tri.mean, tri.ls, tri.rs) == pytest.approx(
            (want.temperature, want.mean, want.ls, want.rs), abs=1e-6)


def test_update_leaves_moves_prediction_towards_result():
    leaves = [leaf_triangle(1.0), leaf_triangle(-2.0), leaf_triangle(0.5)]
    new = update_leaves(leaves, result=3.0, alpha=0.5)
    before, after = sum(t.mean for t in leaves), sum(t.mean for t in new)
    assert after - before == pytest.approx(0.5 * (3.0 - before))
    assert all(t.temperature == 0.0 and t.ls == t.mean == t.rs for t in new)


def test_cgtd_learns_toy_temperatures():
    games = toy_sum()
    learner = CGTD(games, alpha=0.1, alpha_leaves=0.1, epsilon=0.5, seed=0)
    learner.run(2500)
    exact = [[th.temperature for th in thermographs(g)] for g in games]
    err = max(abs(a - b) for la, lb in zip(learner.temperatures(), exact) for a, b in zip(la, lb))
    assert err < 0.15
    # means are identifiable only up to a constant per subgame: compare mean differences to the root
    for g, tab in zip(games, learner.model):
        ex = thermographs(g)
        d_learnt = np.array([tri.mean - tab[0].mean for tri in tab])
        d_exact = np.array([th.mean - ex[0].mean for th in ex])
        assert np.abs(d_learnt - d_exact).max() < 0.3
