"""Exact inference: brute-force enumeration (tiny boards) and row-by-row frontier
variable elimination (transfer matrices over 2^N row states; 9x9 -> 512 states)."""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.graph import board_graph


def brute_force_marginals(logpsi, n: int):
    """logpsi [B, E, 2, 2] -> (P(s=Black) [B, P], log Z [B]).  Enumerates 2^(n*n) states."""
    g = board_graph(n)
    P = n * n
    assert P <= 20, "brute force only for tiny boards"
    states = ((np.arange(2 ** P)[:, None] >> np.arange(P)[None, :]) & 1)      # [S, P] spin index
    si = jnp.asarray(states[:, g.edges[:, 0]])
    sj = jnp.asarray(states[:, g.edges[:, 1]])
    e = jnp.arange(g.num_edges)
    energy = logpsi[:, e[None, :], si, sj].sum(-1)                            # [B, S]
    logz = jax.nn.logsumexp(energy, axis=-1)
    p = jnp.exp(energy - logz[:, None])
    black = p @ jnp.asarray(1 - states, jnp.float32)
    return black, logz


@partial(jax.jit, static_argnames=("n",))
def _frontier_one(logpsi, n: int):
    H = n * (n - 1)
    bits = jnp.asarray(((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1))   # [S, n]
    lh = logpsi[:H].reshape(n, n - 1, 2, 2)
    lv = logpsi[H:].reshape(n - 1, n, 2, 2)
    k1 = jnp.arange(n - 1)
    k = jnp.arange(n)
    # within-row weight Hr[r, x]
    Hr = lh[:, k1[None, :], bits[:, :-1], bits[:, 1:]].sum(-1)                     # [n, S]
    # between rows r and r+1: V[r, x, y]
    V = lv[:, k[None, None, :], bits[:, None, :], bits[None, :, :]].sum(-1)        # [n-1, S, S]

    def fwd(a, r):
        a_new = Hr[r + 1] + jax.nn.logsumexp(a[:, None] + V[r], axis=0)
        return a_new, a_new

    a0 = Hr[0]
    _, alphas = jax.lax.scan(fwd, a0, jnp.arange(n - 1))
    alphas = jnp.concatenate([a0[None], alphas])                                    # [n, S]

    def bwd(b, r):
        b_new = jax.nn.logsumexp(V[r] + (Hr[r + 1] + b)[None, :], axis=1)
        return b_new, b_new

    bl = jnp.zeros(2 ** n)
    _, betas = jax.lax.scan(bwd, bl, jnp.arange(n - 2, -1, -1))
    betas = jnp.concatenate([betas[::-1], bl[None]])                                # [n, S]
    logz = jax.nn.logsumexp(alphas[-1])
    rowp = jnp.exp(alphas + betas - logz)                                           # [n, S]
    black = rowp @ (1 - bits).astype(logpsi.dtype)                                  # [n, n]
    return black.reshape(-1), logz


def frontier_marginals(logpsi, n: int):
    """logpsi [B, E, 2, 2] -> (P(s=Black) [B, P], log Z [B]), exact, row-by-row elimination."""
    return jax.vmap(lambda one: _frontier_one(one, n))(logpsi)
