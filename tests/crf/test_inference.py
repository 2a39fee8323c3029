"""Territory CRF: Boltzmann5 potentials, loopy BP and exact inference (brute force vs frontier)."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.bp import loopy_bp
from jaxgo.crf.exact import brute_force_marginals, frontier_marginals
from jaxgo.crf.graph import board_graph
from jaxgo.crf.models import B5_PAPER, b5_log_potentials

# The functions under test, each compiled as one call (the board side n static): run eagerly, every one of their
# operations compiles on its own, at about twice the CPU time.
brute = jax.jit(brute_force_marginals, static_argnums=1)
frontier = jax.jit(frontier_marginals, static_argnums=1)
potentials = jax.jit(b5_log_potentials, static_argnums=2)


def random_positions(rng, b, n, p_stone=0.4):
    c = rng.choice([0, 1, -1], size=(b, n * n), p=[1 - p_stone, p_stone / 2, p_stone / 2])
    return jnp.asarray(c, jnp.int32)


def test_graph_counts():
    g = board_graph(9)
    assert g.num_edges == 2 * 9 * 8
    deg = np.bincount(g.dst, minlength=81)
    assert deg.min() == 2 and deg.max() == 4 and deg.sum() == 4 * 9 * 8


def test_b5_potential_table():
    # black stone next to empty: w_chain_empty si sj + h (1*si + 0*sj)
    c = jnp.array([[1, 0, 0, 0]])
    lp = np.asarray(potentials(jnp.asarray(B5_PAPER), c, 2))[0, 0]   # edge (0,1)
    w, h = B5_PAPER[2], B5_PAPER[4]
    np.testing.assert_allclose(lp, [[w + h, -w + h], [-w - h, w - h]], rtol=1e-6)


def test_colour_reversal_symmetry():
    rng = np.random.default_rng(0)
    c = random_positions(rng, 4, 3)
    lp = potentials(jnp.asarray(B5_PAPER), c, 3)
    lpr = potentials(jnp.asarray(B5_PAPER), -c, 3)
    np.testing.assert_allclose(lp, lpr[..., ::-1, ::-1], atol=1e-6)
    pb, _ = brute(lp, 3)
    pr, _ = brute(lpr, 3)
    np.testing.assert_allclose(pb, 1 - pr, atol=1e-5)


def test_frontier_matches_brute_force():
    rng = np.random.default_rng(1)
    for n in (3, 4):
        c = random_positions(rng, 6, n)
        lp = potentials(jnp.asarray(B5_PAPER), c, n)
        pb, zb = brute(lp, n)
        pf, zf = frontier(lp, n)
        np.testing.assert_allclose(pf, pb, atol=1e-5)
        np.testing.assert_allclose(zf, zb, rtol=1e-5)


def test_frontier_random_potentials():
    # arbitrary (non-B5) factor tables: elimination must still be exact
    rng = np.random.default_rng(2)
    n = 4
    lp = jnp.asarray(rng.normal(size=(3, board_graph(n).num_edges, 2, 2)), jnp.float32)
    pb, zb = brute(lp, n)
    pf, zf = frontier(lp, n)
    np.testing.assert_allclose(pf, pb, atol=1e-5)
    np.testing.assert_allclose(zf, zb, rtol=1e-5)


def test_bp_exact_without_couplings():
    # with all couplings zero the graph decouples: BP must be exact
    rng = np.random.default_rng(3)
    c = random_positions(rng, 4, 4)
    params = jnp.array([0.0, 0.0, 0.0, 0.0, 0.3])
    lp = potentials(params, c, 4)
    pb, _ = brute(lp, 4)
    np.testing.assert_allclose(loopy_bp(lp, 4), pb, atol=5e-5)  # float32 messages over 50 sweeps


def test_bp_close_to_exact_paper_params():
    # Tolerance stated: with the paper's B5 parameters on random 4x4 positions,
    # loopy BP (eps=0.5, I=50) marginals are within 0.15 of exact at every point, mean error < 0.05.
    rng = np.random.default_rng(4)
    c = random_positions(rng, 16, 4)
    lp = potentials(jnp.asarray(B5_PAPER), c, 4)
    pb, _ = brute(lp, 4)
    pbp = loopy_bp(lp, 4)
    err = np.abs(np.asarray(pbp) - np.asarray(pb))
    assert err.max() < 0.15, err.max()
    assert err.mean() < 0.05, err.mean()


def test_bp_9x9_vs_frontier():
    rng = np.random.default_rng(5)
    c = random_positions(rng, 4, 9, p_stone=0.3)
    lp = potentials(jnp.asarray(B5_PAPER), c, 9)
    pf, _ = frontier(lp, 9)
    pbp = loopy_bp(lp, 9)
    err = np.abs(np.asarray(pbp) - np.asarray(pf))
    assert np.all(np.isfinite(pf)) and np.all((pf >= 0) & (pf <= 1))
    assert err.mean() < 0.1, err.mean()
