"""MM for Bradley-Terry with feature teams: recovers known gammas on synthetic data."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import jax.numpy as jnp

from jaxgo.learn import bt


def synthetic(num_positions=4000, candidates=12, seed=0):
    """Two groups: group 0 levels 1..5 (index 0 absent), group 1 levels 7..9 (index 6 absent)."""
    rng = np.random.default_rng(seed)
    true = np.ones(10)
    true[1:6] = [0.2, 0.5, 1.0, 3.0, 8.0]
    true[7:10] = [0.3, 2.0, 5.0]
    g0 = rng.integers(0, 6, size=(num_positions, candidates))
    g1 = rng.choice([6, 7, 8, 9], size=(num_positions, candidates))
    features = np.stack([g0, g1], axis=-1).astype(np.int32)
    mask = np.ones((num_positions, candidates), bool)
    mask[:, -3:] = rng.random((num_positions, 3)) < 0.5  # some positions have fewer candidates
    strength = true[g0] * true[g1] * mask
    prob = strength / strength.sum(1, keepdims=True)
    winner = np.array([rng.choice(candidates, p=p) for p in prob], np.int32)
    return features, mask, winner, true


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
    bt.fit(features, mask, winner, 10, iterations=15, fixed=[0, 6], prior=False,
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
