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

from jaxgo.crf.graph import board_graph


def _damped_messages(logpsi, n: int, iterations: int, eps: float):
    """Run the damped synchronous schedule; (incoming log-messages per point [B, P, 2], cavity of the source of
    every directed message [B, 2E, 2]) of the final messages.  Directed edges: e = i->j for e < E, then the
    reverses; tables indexed [s_src, s_dst]."""
    g = board_graph(n)
    P, E = n * n, g.num_edges
    src, dst = jnp.asarray(g.src), jnp.asarray(g.dst)
    lp = jnp.concatenate([logpsi, jnp.swapaxes(logpsi, -1, -2)], axis=1)   # [B, 2E, 2, 2]
    B = logpsi.shape[0]
    rev = jnp.concatenate([jnp.arange(E, 2 * E), jnp.arange(E)])

    def incoming(logm):
        return jnp.zeros((B, P, 2), logm.dtype).at[:, dst].add(logm)

    def cavity(logm):
        return incoming(logm)[:, src] - logm[:, rev]                      # [B, 2E, 2] over s_src

    def step(m, _):
        new = jax.nn.logsumexp(lp + cavity(jnp.log(m))[..., :, None], axis=-2)  # [B, 2E, 2] over s_dst
        new = jax.nn.softmax(new, axis=-1)
        return eps * m + (1.0 - eps) * new, None

    m, _ = jax.lax.scan(step, jnp.full((B, 2 * E, 2), 0.5, logpsi.dtype), None, length=iterations)
    logm = jnp.log(m)
    return incoming(logm), cavity(logm)


@partial(jax.jit, static_argnames=("n", "iterations"))
def loopy_bp(logpsi, n: int, iterations: int = 50, eps: float = 0.5):
    """logpsi [B, E, 2, 2] -> P(s_j = Black) [B, P]."""
    incoming, _ = _damped_messages(logpsi, n, iterations, eps)
    return jax.nn.softmax(incoming, axis=-1)[..., 0]


@partial(jax.jit, static_argnames=("n", "iterations"))
def loopy_bp_edge_beliefs(logpsi, n: int, iterations: int = 50, eps: float = 0.5):
    """Pairwise BP beliefs b_ij(si, sj) [B, E, 2, 2] (normalised) after the same iterations as loopy_bp:
    b_ij ∝ psi_ij(si,sj) * prod_{q in A(i)\\j} m_qi(si) * prod_{q in A(j)\\i} m_qj(sj)."""
    _, cav = _damped_messages(logpsi, n, iterations, eps)
    B, E = logpsi.shape[0], logpsi.shape[1]
    ci, cj = cav[:, :E], cav[:, E:]                       # edge e: i side (message i->j), j side (j->i)
    lb = logpsi + ci[..., :, None] + cj[..., None, :]
    return jax.nn.softmax(lb.reshape(B, E, 4), axis=-1).reshape(B, E, 2, 2)
