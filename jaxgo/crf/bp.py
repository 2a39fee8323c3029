"""Loopy belief propagation exactly as the paper's pseudo-code (Section 3).

Synchronous (parallel) schedule: every new message is computed from the old messages,
then m := eps*m_old + (1-eps)*m_new for all messages; I iterations; beliefs are products of
incoming messages, normalised.  Messages are normalised to sum 1 each iteration (this only
rescales them and leaves the normalised beliefs unchanged).  Batched over positions.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from .graph import board_graph


@partial(jax.jit, static_argnames=("n", "iterations"))
def loopy_bp(logpsi, n: int, iterations: int = 50, eps: float = 0.5):
    """logpsi [B, E, 2, 2] -> P(s_j = Black) [B, P]."""
    g = board_graph(n)
    P, E = n * n, g.num_edges
    src, dst = jnp.asarray(g.src), jnp.asarray(g.dst)
    # directed tables indexed [s_src, s_dst]
    lp = jnp.concatenate([logpsi, jnp.swapaxes(logpsi, -1, -2)], axis=1)   # [B, 2E, 2, 2]
    B = logpsi.shape[0]
    rev = jnp.concatenate([jnp.arange(E, 2 * E), jnp.arange(E)])

    def incoming(logm):
        return jnp.zeros((B, P, 2), logm.dtype).at[:, dst].add(logm)

    def step(m, _):
        logm = jnp.log(m)
        cav = incoming(logm)[:, src] - logm[:, rev]                     # [B, 2E, 2] over s_src
        new = jax.nn.logsumexp(lp + cav[..., :, None], axis=-2)         # [B, 2E, 2] over s_dst
        new = jax.nn.softmax(new, axis=-1)
        return eps * m + (1.0 - eps) * new, None

    m0 = jnp.full((B, 2 * E, 2), 0.5, logpsi.dtype)
    m, _ = jax.lax.scan(step, m0, None, length=iterations)
    belief = jax.nn.softmax(incoming(jnp.log(m)), axis=-1)
    return belief[..., 0]


@partial(jax.jit, static_argnames=("n", "iterations"))
def loopy_bp_edge_beliefs(logpsi, n: int, iterations: int = 50, eps: float = 0.5):
    """Pairwise BP beliefs b_ij(si, sj) [B, E, 2, 2] (normalised) after the same iterations as loopy_bp:
    b_ij ∝ psi_ij(si,sj) * prod_{q in A(i)\\j} m_qi(si) * prod_{q in A(j)\\i} m_qj(sj)."""
    g = board_graph(n)
    P, E = n * n, g.num_edges
    src, dst = jnp.asarray(g.src), jnp.asarray(g.dst)
    lp = jnp.concatenate([logpsi, jnp.swapaxes(logpsi, -1, -2)], axis=1)
    B = logpsi.shape[0]
    rev = jnp.concatenate([jnp.arange(E, 2 * E), jnp.arange(E)])

    def incoming(logm):
        return jnp.zeros((B, P, 2), logm.dtype).at[:, dst].add(logm)

    def step(m, _):
        logm = jnp.log(m)
        cav = incoming(logm)[:, src] - logm[:, rev]
        new = jax.nn.softmax(jax.nn.logsumexp(lp + cav[..., :, None], axis=-2), axis=-1)
        return eps * m + (1.0 - eps) * new, None

    m, _ = jax.lax.scan(step, jnp.full((B, 2 * E, 2), 0.5, logpsi.dtype), None, length=iterations)
    logm = jnp.log(m)
    cav = incoming(logm)[:, src] - logm[:, rev]          # cavity of the source of each directed message
    ci, cj = cav[:, :E], cav[:, E:]                       # edge e: i side (message i->j), j side (j->i)
    lb = logpsi + ci[..., :, None] + cj[..., None, :]
    return jax.nn.softmax(lb.reshape(B, E, 4), axis=-1).reshape(B, E, 2, 2)
