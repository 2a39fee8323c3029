"""Maximum-likelihood training of the territory CRFs (Boltzmann5, BoltzmannLiberties) with optax.

log P(s|c) = sum_e log psi_e(s_i, s_j) - log Z(c); its gradient is the data sufficient statistics minus
the model expectations.  Three ways to get the expectations:
- exact: log Z by frontier elimination (9x9 and smaller), so jax.grad gives exactly that difference;
- bp: pairwise loopy-BP beliefs (`bp_surrogate`);
- sw: Swendsen-Wang samples from persistent chains (`sampled_surrogate`, persistent contrastive divergence).
The surrogates are linear in the log potentials with stopped-gradient weights (data one-hot - expectation),
so their gradient through the model's potentials is exactly the ML gradient under that approximation.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from jaxgo.crf.exact import brute_force_marginals, frontier_marginals
from jaxgo.crf.graph import board_graph
from jaxgo.crf.models import MODELS


def _data_onehot(spins_idx, n):
    g = board_graph(n)
    si = spins_idx[:, g.edges[:, 0]]
    sj = spins_idx[:, g.edges[:, 1]]
    return jax.nn.one_hot(si * 2 + sj, 4).reshape(si.shape + (2, 2))


def log_likelihood(params, colours, spins_idx, n: int, exact: str = "frontier", model: str = "b5"):
    """Mean log P(s|c) over positions.  colours [B, P]; spins_idx [B, P] in {0 (Black), 1 (White)}."""
    lp = MODELS[model].log_potentials(params, colours, n)
    score = jnp.sum(_data_onehot(spins_idx, n) * lp, axis=(1, 2, 3))
    logz = (frontier_marginals if exact == "frontier" else brute_force_marginals)(lp, n)[1]
    return jnp.mean(score - logz)


def bp_surrogate(params, colours, spins_idx, n: int, iterations: int = 50, model: str = "b5"):
    """Surrogate whose gradient is (data sufficient statistics - BP expectations), mean over positions.
    (Loopy BP used during learning, as the paper recommends when BP is used for evaluation.)"""
    from jaxgo.crf.bp import loopy_bp_edge_beliefs
    lp = MODELS[model].log_potentials(params, colours, n)
    b = jax.lax.stop_gradient(loopy_bp_edge_beliefs(lp, n, iterations))
    return jnp.mean(jnp.sum((_data_onehot(spins_idx, n) - b) * lp, axis=(1, 2, 3)))


def sampled_surrogate(params, colours, spins_idx, n: int, key, chains, sweeps: int = 5, model: str = "b5",
                      burn_in: int = 0):
    """As bp_surrogate with expectations from `sweeps` Swendsen-Wang (+ whole-chain flip) sweeps of
    persistent chains.
    chains [B, P] spins (+1/-1).  Returns (surrogate, new chains)."""
    from jaxgo.crf.sampling import edge_expectations
    lp = MODELS[model].log_potentials(params, colours, n)
    b, s = edge_expectations(key, jax.lax.stop_gradient(lp), n, chains, sweeps, "sw", colours, burn_in)
    return jnp.mean(jnp.sum((_data_onehot(spins_idx, n) - b) * lp, axis=(1, 2, 3))), s


def _init(model, init):
    k = MODELS[model].num_params
    return jnp.zeros(k) if init is None else jnp.asarray(init, jnp.float32)


def train_exact(colours, spins_idx, n: int, steps: int = 200, lr: float = 0.05, init=None, model: str = "b5"):
    params = _init(model, init)
    opt = optax.adam(lr)
    state = opt.init(params)
    loss_grad = jax.jit(jax.value_and_grad(lambda p: -log_likelihood(p, colours, spins_idx, n, model=model)))
    history = []
    for _ in range(steps):
        loss, g = loss_grad(params)
        upd, state = opt.update(g, state)
        params = optax.apply_updates(params, upd)
        history.append(float(loss))
    return params, history


def train_b5(colours, spins_idx, n: int, steps: int = 200, lr: float = 0.05, init=None):
    return train_exact(colours, spins_idx, n, steps, lr, init, "b5")


def train_bp(colours, spins_idx, n: int, steps: int = 100, lr: float = 0.05, init=None, model: str = "b5",
             iterations: int = 50):
    params = _init(model, init)
    opt = optax.adam(lr)
    state = opt.init(params)
    grad = jax.jit(jax.grad(lambda p: -bp_surrogate(p, colours, spins_idx, n, iterations, model)))
    for _ in range(steps):
        upd, state = opt.update(grad(params), state)
        params = optax.apply_updates(params, upd)
    return params


def train_b5_bp(colours, spins_idx, n: int, steps: int = 100, lr: float = 0.05, init=None):
    return train_bp(colours, spins_idx, n, steps, lr, init, "b5")
