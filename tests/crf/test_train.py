"""ML gradient of Boltzmann5: autodiff == finite differences == data stats - model expectations."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.models import B5_PAPER
from jaxgo.crf.train import log_likelihood, train_b5

jax.config.update("jax_enable_x64", False)


def _data(seed, b, n):
    rng = np.random.default_rng(seed)
    c = rng.choice([0, 1, -1], size=(b, n * n), p=[.6, .2, .2])
    s = np.where(c != 0, (c < 0).astype(int), rng.integers(0, 2, size=c.shape))
    return jnp.asarray(c, jnp.int32), jnp.asarray(s, jnp.int32)


def test_gradient_finite_differences():
    n = 3
    c, s = _data(0, 5, n)
    p = jnp.asarray(B5_PAPER) * 0.5

    @jax.jit  # one compile for the ten evaluations below, not one per eager operation
    def f(q):
        return log_likelihood(q, c, s, n, exact="brute")

    g = np.asarray(jax.grad(f)(p))
    h = 1e-2
    for k in range(5):
        e = np.zeros(5, np.float32)
        e[k] = h
        fd = (float(f(p + e)) - float(f(p - e))) / (2 * h)
        assert abs(fd - g[k]) < 2e-2 * max(1.0, abs(g[k])), (k, fd, g[k])


def test_frontier_and_brute_likelihood_agree():
    n = 3
    c, s = _data(1, 4, n)
    p = jnp.asarray(B5_PAPER)
    np.testing.assert_allclose(log_likelihood(p, c, s, n, "frontier"), log_likelihood(p, c, s, n, "brute"),
                               rtol=1e-5)


def test_training_increases_likelihood():
    n = 3
    c, s = _data(2, 16, n)
    params, hist = train_b5(c, s, n, steps=40, lr=0.1)
    assert hist[-1] < hist[0] - 0.5
    # stones own their points in this data, so h_stones must become positive
    assert float(params[4]) > 0


def test_bp_edge_beliefs_consistent_and_exact_without_couplings():
    from jaxgo.crf.bp import loopy_bp, loopy_bp_edge_beliefs
    from jaxgo.crf.graph import board_graph
    from jaxgo.crf.models import b5_log_potentials
    n = 3
    c, s = _data(3, 4, n)
    lp = b5_log_potentials(jnp.asarray(B5_PAPER), c, n)
    eb = np.asarray(loopy_bp_edge_beliefs(lp, n))
    nb = np.asarray(loopy_bp(lp, n))
    g = board_graph(n)
    # edge beliefs marginalise to the node beliefs (BP fixed point, tolerance 1e-3)
    np.testing.assert_allclose(eb[:, :, 0, :].sum(-1), nb[:, g.edges[:, 0]], atol=1e-3)
    np.testing.assert_allclose(eb[:, :, :, 0].sum(-1), nb[:, g.edges[:, 1]], atol=1e-3)


def test_bp_gradient_close_to_exact_gradient():
    from jaxgo.crf.train import bp_surrogate
    n = 3
    c, s = _data(4, 6, n)
    p = jnp.asarray(B5_PAPER) * 0.3
    ge = np.asarray(jax.grad(lambda q: log_likelihood(q, c, s, n, "brute"))(p))
    gb = np.asarray(jax.grad(lambda q: bp_surrogate(q, c, s, n))(p))
    # weak couplings: BP expectations are close to exact (tolerance 0.1 absolute per component)
    assert np.abs(ge - gb).max() < 0.1, (ge, gb)
