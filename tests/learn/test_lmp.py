"""Laplace_q marginal propagation: reaches MM's optimum (same Gamma prior) on synthetic team data, equals a
literal Algorithm 1 (thesis) on plain Bradley-Terry data, and one pass already lands near the optimum."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

from jaxgo.learn import bt, lmp
from jaxgo.learn.bt import PRIOR_ALPHA, PRIOR_BETA
from jaxgo.learn.synthetic import bt_positions


def test_lmp_reaches_mm_optimum_with_teams():
    features, mask, winner, true = bt_positions(num_positions=1500, seed=3)
    mm = np.asarray(bt.fit(features, mask, winner, 10, iterations=150, fixed=[0, 6], prior="gamma").log_gamma)
    state = lmp.fit(features, mask, winner, 10, passes=25, batch=8, fixed=[0, 6])
    got = np.asarray(lmp.log_gamma(state))
    assert got[0] == 0.0 and got[6] == 0.0
    assert np.abs(got - mm).max() < 0.01, (got, mm)
    assert np.abs(mm - np.log(true)).max() < 0.25  # and MM's optimum is near the generating gammas


def test_one_pass_is_close_and_more_passes_get_closer():
    features, mask, winner, _ = bt_positions(num_positions=1500, seed=4)
    mm = np.asarray(bt.fit(features, mask, winner, 10, iterations=150, fixed=[0, 6], prior="gamma").log_gamma)
    errors = []
    lmp.fit(features, mask, winner, 10, passes=4, batch=8, fixed=[0, 6],
            callback=lambda p, s: errors.append(float(np.abs(np.asarray(lmp.log_gamma(s)) - mm).max())))
    assert errors[0] < 0.8 and errors[-1] < errors[0] / 2, errors


def algorithm1(points, num_alternatives, passes):
    """The thesis' Algorithm 1, literally (one alternative per team), visiting points in order; returns modes."""
    alpha = np.full(num_alternatives, PRIOR_ALPHA)
    beta = np.full(num_alternatives, PRIOR_BETA)
    delta = {}
    for _ in range(passes):
        for d, (alts, chosen) in enumerate(points):
            if d not in delta:
                alpha[chosen] += 1
                delta[d] = 1.0
                beta[alts] += delta[d]
            new = 1.0 / np.sum(alpha[alts] / beta[alts])
            beta[alts] += new - delta[d]
            delta[d] = new
    return alpha / beta


def test_plain_bradley_terry_matches_algorithm1():
    rng = np.random.default_rng(5)
    strength = np.array([0.5, 1.0, 2.0, 4.0, 1.5, 0.7])
    points = []
    for _ in range(300):
        alts = rng.choice(6, size=3, replace=False)
        p = strength[alts] / strength[alts].sum()
        points.append((alts, int(alts[rng.choice(3, p=p)])))
    reference = algorithm1(points, 6, passes=300)
    features = np.array([a for a, _ in points], np.int32)[:, :, None]
    winner = np.array([list(a).index(c) for a, c in points], np.int32)
    mask = np.ones(features.shape[:2], bool)
    state = lmp.fit(features, mask, winner, 6, passes=300, batch=1)
    mm = np.exp(np.asarray(bt.fit(features, mask, winner, 6, iterations=300, prior="gamma").log_gamma))
    # all three reach the MAP point (the overall scale, pinned only by the prior, converges last)
    assert np.allclose(reference, mm, rtol=1e-3), (reference, mm)
    assert np.allclose(np.exp(np.asarray(lmp.log_gamma(state))), mm, rtol=1e-3)
