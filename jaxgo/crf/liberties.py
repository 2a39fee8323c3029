"""Liberty counts of the chain through every point, as a jittable array program (batched).

Chains: points joined by same-colour stone adjacency, labelled by min-label propagation
(`clusters.chain_labels`).  Liberties of a chain = distinct empty points adjacent to it: each
empty point counts once per distinct neighbouring chain (a chain touching it from two sides counts once).
"""
from __future__ import annotations

from functools import lru_cache, partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.clusters import chain_labels
from jaxgo.go import rules


@lru_cache(maxsize=None)
def neighbours(n: int) -> np.ndarray:
    """int32 [P, 4] neighbour indices (``rules.neighbour_table`` order), -1 where off the board."""
    table = rules.neighbour_table(n)
    return np.where(table == n * n, -1, table).astype(np.int32)


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
