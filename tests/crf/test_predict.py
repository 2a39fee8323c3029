"""Predictions and evaluation quantities: SW with chain flips vs exact where plain SW gets stuck,
edge expectations, expected score / P(win), cross-entropy and sign accuracy."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.crf.exact import brute_force_marginals
from jaxgo.crf.models import B5_PAPER, b5_log_potentials
from jaxgo.crf.predict import cross_entropy, expected_score, marginals, score_samples, sign_accuracy, win_probability
from jaxgo.crf.sampling import edge_expectations


def board(text):
    rows = [r.split() for r in text.strip().splitlines()]
    return np.array([[{"X": 1, "O": -1, ".": 0}[c] for c in r] for r in rows], np.int32)


# Two adjacent opposite-colour chains: plain SW can hold both at the same outcome for very long.
WALLS = board("""
. X O .
. X O .
. X O .
. X O .
""").reshape(1, -1)


def test_sw_with_chain_flips_matches_exact():
    # tolerance: 2000 sweeps, 0.07 absolute on every point (about 4 standard errors of iid samples)
    lp = b5_log_potentials(jnp.asarray(B5_PAPER), jnp.asarray(WALLS), 4)
    ex = np.asarray(brute_force_marginals(lp, 4)[0])
    p = marginals(B5_PAPER, "b5", WALLS, 4, "sw", sweeps=2000, burn_in=50, seed=3)
    assert np.abs(p - ex).max() < 0.07


@pytest.mark.slow
def test_edge_expectations_match_exact_pair_marginals():
    lp = b5_log_potentials(jnp.asarray(B5_PAPER), jnp.asarray(WALLS), 4)
    s0 = jnp.asarray(np.where(WALLS != 0, WALLS, 1), jnp.float32)         # empty points start Black
    b, s = edge_expectations(jax.random.PRNGKey(0), lp, 4, s0, 3000, "sw", jnp.asarray(WALLS))
    b = np.asarray(b)
    np.testing.assert_allclose(b.sum((-1, -2)), 1.0, atol=1e-5)
    ex = np.asarray(brute_force_marginals(lp, 4)[0])[0]
    from jaxgo.crf.graph import board_graph
    g = board_graph(4)
    # P(s_i = Black) from the edge statistics agrees with exact node marginals
    assert np.abs(b[0, :, 0, :].sum(-1) - ex[g.edges[:, 0]]).max() < 0.06
    assert set(np.unique(np.asarray(s))) <= {-1.0, 1.0}


def test_score_and_win_probability():
    samples = np.array([[3.0, 5.0, -1.0, 9.0], [-10.0, -12.0, -8.0, -9.0]])
    np.testing.assert_allclose(expected_score(samples), [4.0, -9.75])
    np.testing.assert_allclose(win_probability(samples, 4.5), [0.5, 0.0])
    np.testing.assert_allclose(win_probability(samples, np.array([4.0, -9.5])), [0.5, 0.5])
    sm = score_samples(B5_PAPER, "b5", WALLS, 4, sweeps=50)
    assert sm.shape == (1, 50) and np.all(np.abs(sm) <= 16) and np.all(sm % 2 == 0)
    assert abs(expected_score(sm)[0]) < 6            # symmetric position: score near 0


def test_cross_entropy_and_sign_accuracy():
    lab = np.array([[1, -1, 0, 1]])
    p = np.array([[0.9, 0.2, 0.5, 0.4]])
    want = -(np.log(0.9) + np.log(0.8) + np.log(0.4)) / 3
    np.testing.assert_allclose(cross_entropy(p, lab), [want])
    np.testing.assert_allclose(cross_entropy(p, lab, base=2), [want / np.log(2)])
    np.testing.assert_allclose(sign_accuracy(p, lab), [2 / 3])
    assert np.isfinite(cross_entropy(np.array([[0.0, 1.0]]), np.array([[1, -1]]))).all()   # clipped
