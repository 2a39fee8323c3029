"""Cluster labels on the board graph: bonded clusters (Swendsen-Wang) and chains of stones.

Labels are found on device by min-label propagation with pointer jumping; a cluster's label is its minimum point
index.  Batched over positions [B, ...].
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxgo.crf.graph import board_graph


def cluster_labels(bond, n):
    """bond [B, E] bool -> label [B, P]: the minimum point index of each bonded cluster."""
    g = board_graph(n)
    P = n * n
    ei, ej = jnp.asarray(g.edges[:, 0]), jnp.asarray(g.edges[:, 1])
    big = P

    def one(bd):
        def body(carry):
            lab, _ = carry
            li, lj = lab[ei], lab[ej]
            m = jnp.where(bd, jnp.minimum(li, lj), big)
            new = lab.at[ei].min(m).at[ej].min(m)
            new = new[new]          # pointer jumping
            return new, jnp.any(new != lab)

        lab, _ = jax.lax.while_loop(lambda c: c[1], body, (jnp.arange(P), True))
        return lab

    return jax.vmap(one)(bond)


def chain_labels(stones, n: int):
    """stones [B, P] in {1,-1,0} -> [B, P] chain label (min point index of the chain; empty points: own index)."""
    g = board_graph(n)
    ci, cj = stones[:, g.edges[:, 0]], stones[:, g.edges[:, 1]]
    return cluster_labels((ci != 0) & (ci == cj), n)
