"""Liberty counts of the chain through every point, as a jittable array program (batched).

Chains: points joined by same-colour stone adjacency, labelled by min-label propagation
(`sampling.cluster_labels`).  Liberties of a chain = distinct empty points adjacent to it: each
empty point counts once per distinct neighbouring chain (a chain touching it from two sides counts once).
"""
from __future__ import annotations

from functools import lru_cache, partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.graph import board_graph
from jaxgo.crf.sampling import cluster_labels


@lru_cache(maxsize=None)
def neighbours(n: int) -> np.ndarray:
    """[P, 4] neighbour indices, -1 where off the board."""
    out = -np.ones((n * n, 4), np.int32)
    for r in range(n):
        for c in range(n):
            for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                if 0 <= r + dr < n and 0 <= c + dc < n:
                    out[r * n + c, k] = (r + dr) * n + c + dc
    return out


def chain_labels(stones, n: int):
    """stones [B, P] in {1,-1,0} -> [B, P] chain label (min point index of the chain; empty points: own index)."""
    g = board_graph(n)
    ci, cj = stones[:, g.edges[:, 0]], stones[:, g.edges[:, 1]]
    return cluster_labels((ci != 0) & (ci == cj), n)


@partial(jax.jit, static_argnames=("n",))
def liberty_counts(stones, n: int):
    """stones [B, P] -> int32 [B, P]: liberties of the chain through each stone; 0 on empty points."""
    P = n * n
    nb = jnp.asarray(neighbours(n))
    valid = nb >= 0
    lab = chain_labels(stones, n)
    nbc = jnp.where(valid, stones[:, jnp.maximum(nb, 0)], 0)                    # [B, P, 4] neighbour colour
    nbl = jnp.where(valid & (nbc != 0), lab[:, jnp.maximum(nb, 0)], -1)         # [B, P, 4] neighbour chain
    first = jnp.ones(nbl.shape, bool)
    for k in range(1, 4):                                                        # dedupe among the 4
        first = first.at[..., k].set(jnp.all(nbl[..., k:k + 1] != nbl[..., :k], axis=-1))
    count = (nbl >= 0) & first & (stones == 0)[..., None]
    seg = jnp.where(count, nbl, P)                                               # P = dump slot
    libs = jax.vmap(lambda s, c: jax.ops.segment_sum(c.reshape(-1).astype(jnp.int32), s.reshape(-1),
                                                     num_segments=P + 1))(seg, count)
    return jnp.where(stones != 0, jnp.take_along_axis(libs, lab, axis=1), 0)
