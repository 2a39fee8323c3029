"""Gibbs and Swendsen-Wang against brute-force exact marginals; cluster labelling."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.clusters import cluster_labels
from jaxgo.crf.exact import brute_force_marginals
from jaxgo.crf.graph import board_graph
from jaxgo.crf.models import B5_PAPER, b5_log_potentials
from jaxgo.crf.sampling import decompose, sample_marginals


def test_decompose_reconstructs_table():
    rng = np.random.default_rng(0)
    lp = jnp.asarray(rng.normal(size=(5, 2, 2)), jnp.float32)
    J, bi, bj = decompose(lp)
    s = jnp.array([1.0, -1.0])
    rec = J[:, None, None] * s[:, None] * s[None, :] + bi[:, None, None] * s[:, None] + bj[:, None, None] * s[None, :]
    d = lp - rec           # must be a constant per edge
    np.testing.assert_allclose(d - d[:, :1, :1], 0, atol=1e-6)


def test_cluster_labels_components():
    n = 3
    g = board_graph(n)
    bond = np.zeros(g.num_edges, bool)
    # bond 0-1, 1-2 (row 0), and 4-7 (vertical), nothing else
    for a, b in [(0, 1), (1, 2), (4, 7)]:
        e = int(np.where((g.edges[:, 0] == a) & (g.edges[:, 1] == b))[0][0])
        bond[e] = True
    lab = np.asarray(cluster_labels(jnp.asarray(bond)[None], n))[0]
    assert list(lab) == [0, 0, 0, 3, 4, 5, 6, 4, 8]


def _check(method, lp, n, key, tol):
    pb, _ = brute_force_marginals(lp, n)
    p, _ = sample_marginals(key, lp, n, sweeps=3000, method=method, burn_in=50)
    err = np.abs(np.asarray(p) - np.asarray(pb))
    assert err.max() < tol, (method, err.max())


def test_samplers_match_exact_b5():
    # Tolerance stated: 3000 sweeps on 3x3 boards, max abs marginal error < 0.06.
    rng = np.random.default_rng(1)
    c = jnp.asarray(rng.choice([0, 1, -1], size=(4, 9), p=[.6, .2, .2]), jnp.int32)
    lp = b5_log_potentials(jnp.asarray(B5_PAPER), c, 3)
    _check("sw", lp, 3, jax.random.PRNGKey(0), 0.06)
    _check("gibbs", lp, 3, jax.random.PRNGKey(1), 0.06)


def test_sw_negative_couplings():
    # generic tables (some J<0, anti-bonds) must give the right marginals too
    rng = np.random.default_rng(2)
    lp = jnp.asarray(rng.normal(size=(4, board_graph(3).num_edges, 2, 2)), jnp.float32)
    _check("sw", lp, 3, jax.random.PRNGKey(2), 0.06)
