"""Maximum-likelihood training of Boltzmann5 with optax.

log P(s|c) = sum_e log psi_e(s_i, s_j) - log Z(c); its gradient is the data sufficient
statistics minus the model expectations.  Here log Z comes from exact frontier elimination
(9x9 and smaller), so jax.grad gives exactly that difference.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from .exact import frontier_marginals, brute_force_marginals
from .graph import board_graph
from .models import b5_log_potentials


def log_likelihood(params, colours, spins_idx, n: int, exact: str = "frontier"):
    """Mean log P(s|c) over positions.  spins_idx [B, P] in {0 (Black), 1 (White)}."""
    g = board_graph(n)
    lp = b5_log_potentials(params, colours, n)
    e = jnp.arange(g.num_edges)
    si = spins_idx[:, g.edges[:, 0]]
    sj = spins_idx[:, g.edges[:, 1]]
    score = jax.vmap(lambda l, a, b: l[e, a, b].sum())(lp, si, sj)
    logz = (frontier_marginals if exact == "frontier" else brute_force_marginals)(lp, n)[1]
    return jnp.mean(score - logz)


def train_b5(colours, spins_idx, n: int, steps: int = 200, lr: float = 0.05, init=None):
    params = jnp.zeros(5) if init is None else jnp.asarray(init, jnp.float32)
    opt = optax.adam(lr)
    state = opt.init(params)
    loss_grad = jax.jit(jax.value_and_grad(lambda p: -log_likelihood(p, colours, spins_idx, n)))
    history = []
    for _ in range(steps):
        loss, g = loss_grad(params)
        upd, state = opt.update(g, state)
        params = optax.apply_updates(params, upd)
        history.append(float(loss))
    return params, history


def bp_surrogate(params, colours, spins_idx, n: int, iterations: int = 50):
    """Surrogate whose gradient is (data sufficient statistics - BP expectations), mean over positions.
    (Loopy BP used during learning, as the paper recommends when BP is used for evaluation.)"""
    from .bp import loopy_bp_edge_beliefs
    g = board_graph(n)
    lp = b5_log_potentials(params, colours, n)
    b = jax.lax.stop_gradient(loopy_bp_edge_beliefs(lp, n, iterations))
    si = spins_idx[:, g.edges[:, 0]]
    sj = spins_idx[:, g.edges[:, 1]]
    data = jax.nn.one_hot(si * 2 + sj, 4).reshape(b.shape)
    return jnp.mean(jnp.sum((data - b) * lp, axis=(1, 2, 3)))


def train_b5_bp(colours, spins_idx, n: int, steps: int = 100, lr: float = 0.05, init=None):
    params = jnp.zeros(5) if init is None else jnp.asarray(init, jnp.float32)
    opt = optax.adam(lr)
    state = opt.init(params)
    grad = jax.jit(jax.grad(lambda p: -bp_surrogate(p, colours, spins_idx, n)))
    for _ in range(steps):
        upd, state = opt.update(grad(params), state)
        params = optax.apply_updates(params, upd)
    return params
