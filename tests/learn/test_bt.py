"""MM for Bradley-Terry with feature teams: recovers known gammas on synthetic data."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax.numpy as jnp
import numpy as np

from jaxgo.learn import bt
from jaxgo.learn.synthetic import bt_positions


def synthetic(num_positions=4000, candidates=12, seed=0):
    """Two groups: group 0 levels 1..5 (index 0 absent), group 1 levels 7..9 (index 6 absent)."""
    return bt_positions(num_positions, candidates, seed)


def test_mm_recovers_known_gammas():
    features, mask, winner, true = synthetic()
    state = bt.fit(features, mask, winner, 10, iterations=40, fixed=[0, 6], prior=False)
    got = np.exp(np.asarray(state.log_gamma))
    assert got[0] == 1.0 and got[6] == 1.0
    rel_err = np.abs(np.log(got) - np.log(true))
    assert rel_err.max() < 0.15, (got, true)


def test_mm_increases_likelihood_and_reaches_stationary_point():
    features, mask, winner, _ = synthetic(num_positions=1500, seed=1)
    lls = []
    bt.fit(features, mask, winner, 10, iterations=8, fixed=[0, 6], prior=False,
           callback=lambda i, s: lls.append(float(bt.log_likelihood(s.log_gamma, features, mask, winner))))
    assert all(b >= a - 1e-5 for a, b in zip(lls, lls[1:])), lls  # MM never decreases the (penalised) fit
    assert lls[-1] > float(bt.log_likelihood(jnp.zeros(10), jnp.asarray(features), jnp.asarray(mask),
                                               jnp.asarray(winner))) + 0.1


def test_predict_rank_and_win_counts():
    features = np.array([[[1, 3], [2, 3], [0, 4]]], np.int32)
    mask = np.ones((1, 3), bool)
    log_gamma = jnp.log(jnp.array([1.0, 2.0, 5.0, 1.0, 1.0]))
    assert int(bt.predict_rank(log_gamma, jnp.asarray(features), jnp.asarray(mask), jnp.array([1]))[0]) == 0
    assert int(bt.predict_rank(log_gamma, jnp.asarray(features), jnp.asarray(mask), jnp.array([0]))[0]) == 1
    wins = np.asarray(bt.win_counts(jnp.asarray(features), jnp.array([2]), 5))
    assert wins.tolist() == [1, 0, 0, 0, 1]


def test_padding_rows_are_ignored_and_nothing_overflows():
    features, mask, winner, _ = synthetic(num_positions=300, seed=2)
    base = bt.fit(features, mask, winner, 10, iterations=3, fixed=[0, 6], prior="gamma")
    pad_f = np.concatenate([features, np.zeros((7,) + features.shape[1:], np.int32)])
    pad_m = np.concatenate([mask, np.zeros((7, mask.shape[1]), bool)])
    pad_w = np.concatenate([winner, np.zeros(7, np.int32)])
    padded = bt.fit(pad_f, pad_m, pad_w, 10, iterations=3, fixed=[0, 6], prior="gamma")
    assert np.allclose(np.asarray(base.log_gamma), np.asarray(padded.log_gamma), atol=1e-5)
    # huge log-gammas (a float32 exp would overflow) still give finite log-likelihoods and MM steps
    huge = jnp.asarray(np.array([0, 80, 90, 0, 0, 0, 0, 85, 0, 0], np.float32))
    assert np.isfinite(float(bt.log_likelihood(huge, features, mask, winner)))
    wins = bt.win_counts(jnp.asarray(features), jnp.asarray(winner), 10)
    denom = bt.group_denominator(huge, jnp.asarray(features), jnp.asarray(mask), 0)
    assert np.all(np.isfinite(np.asarray(denom)))
    assert np.isfinite(np.asarray(bt.mm_step(huge, wins, denom, jnp.ones(10, bool), "coulom"))).all()
