"""Gibbs sampling and generalised Swendsen-Wang (Edwards-Sokal) for pairwise binary CRFs.

Any 2x2 log factor table decomposes as l(si,sj) = a + bi si + bj sj + J si sj.  SW: given
spins, each edge with J>0 and si==sj (or J<0 and si!=sj) is bonded with prob 1-exp(-2|J|);
bonded points form clusters (labelled on device by min-label propagation with pointer
jumping); every cluster is flipped as a whole with prob sigmoid(-2 sum_{i in c} f_i s_i),
where f_i is the point's total field.  Gibbs: checkerboard sweeps (the board graph is
bipartite, so each half-sweep updates conditionally independent points exactly).
Spins are +1 (Black) / -1 (White).  Everything batched over positions [B, ...].
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.clusters import chain_labels, cluster_labels
from jaxgo.crf.graph import board_graph


def decompose(logpsi):
    """logpsi [..., E, 2, 2] (index 0 = +1) -> (J, bi, bj) each [..., E]."""
    l00, l01 = logpsi[..., 0, 0], logpsi[..., 0, 1]
    l10, l11 = logpsi[..., 1, 0], logpsi[..., 1, 1]
    J = (l00 + l11 - l01 - l10) / 4
    bi = (l00 + l01 - l10 - l11) / 4
    bj = (l00 + l10 - l01 - l11) / 4
    return J, bi, bj


def fields(logpsi, n):
    """logpsi [B, E, 2, 2] -> (J [B, E] couplings, f [B, P] total field of every point)."""
    g = board_graph(n)
    J, bi, bj = decompose(logpsi)
    B = logpsi.shape[0]
    f = jnp.zeros((B, n * n), logpsi.dtype)
    f = f.at[:, g.edges[:, 0]].add(bi).at[:, g.edges[:, 1]].add(bj)
    return J, f


def _local_field(s, J, f, n):
    g = board_graph(n)
    sj = s[:, g.edges[:, 1]] * J
    si = s[:, g.edges[:, 0]] * J
    return f + jnp.zeros_like(f).at[:, g.edges[:, 0]].add(sj).at[:, g.edges[:, 1]].add(si)


def gibbs_sweep(key, s, J, f, n):
    parity = jnp.asarray((np.add.outer(np.arange(n), np.arange(n)) % 2).reshape(-1))
    for colour in (0, 1):
        key, sub = jax.random.split(key)
        loc = _local_field(s, J, f, n)
        p_up = jax.nn.sigmoid(2 * loc)
        new = jnp.where(jax.random.uniform(sub, s.shape) < p_up, 1.0, -1.0)
        s = jnp.where(parity == colour, new, s)
    return s


def sw_sweep(key, s, J, f, n):
    g = board_graph(n)
    k1, k2 = jax.random.split(key)
    si, sj = s[:, g.edges[:, 0]], s[:, g.edges[:, 1]]
    satisfied = (J * si * sj) > 0
    bond = satisfied & (jax.random.uniform(k1, J.shape) < 1 - jnp.exp(-2 * jnp.abs(J)))
    lab = cluster_labels(bond, n)
    P = n * n
    F = jax.vmap(lambda fs, labels: jax.ops.segment_sum(fs, labels, num_segments=P))(f * s, lab)
    u = jax.random.uniform(k2, F.shape)
    flip = u < jax.nn.sigmoid(-2 * F)                          # per cluster root
    flip_pt = jnp.take_along_axis(flip, lab, axis=1)
    return jnp.where(flip_pt, -s, s)


@partial(jax.jit, static_argnames=("n", "sweeps", "method", "trace", "burn_in"))
def sample_marginals(key, logpsi, n: int, sweeps: int = 100, method: str = "sw", burn_in: int = 0,
                     trace: bool = False):
    """Running-average P(s=Black) [B, P] after `sweeps` whole-board sweeps (after burn_in).

    With trace=True also returns the running average after each sweep [sweeps, B, P].
    Also returns the final spins (for expected score / win probability)."""
    J, f = fields(logpsi, n)
    step = sw_sweep if method == "sw" else gibbs_sweep
    key, sub = jax.random.split(key)
    s = jnp.where(jax.random.uniform(sub, f.shape) < 0.5, 1.0, -1.0)

    def burn(s, k):
        return step(k, s, J, f, n), None

    key, sub = jax.random.split(key)
    s, _ = jax.lax.scan(burn, s, jax.random.split(sub, burn_in)) if burn_in > 0 else (s, None)

    def body(carry, k):
        s, acc, t = carry
        s = step(k, s, J, f, n)
        acc = acc + (s > 0)
        t = t + 1
        return (s, acc, t), (acc / t if trace else None)

    (s, acc, t), tr = jax.lax.scan(body, (s, jnp.zeros_like(f), 0.0), jax.random.split(key, sweeps))
    mean = acc / sweeps
    return (mean, s, tr) if trace else (mean, s)


@partial(jax.jit, static_argnames=("n", "sweeps", "method", "burn_in"))
def edge_expectations(key, logpsi, n: int, s0, sweeps: int = 5, method: str = "sw", stones=None,
                      burn_in: int = 0):
    """Model expectations of the edge indicator statistics from a (persistent) chain.

    logpsi [B, E, 2, 2]; s0 [B, P] spins (+1/-1) to start from.  Runs `sweeps` sweeps and averages
    one_hot(index(s_i), index(s_j)) over them (after `burn_in` sweeps that are not averaged)
    -> ([B, E, 2, 2], final spins [B, P]).
    With stones [B, P] given, every SW sweep is followed by whole-chain flips (`chain_flip_sweep`)."""
    g = board_graph(n)
    J, f = fields(logpsi, n)
    if method == "sw" and stones is not None:
        lab = chain_labels(stones, n)

        def step(k, s, J, f, n):
            ka, kb = jax.random.split(k)
            return chain_flip_sweep(kb, sw_sweep(ka, s, J, f, n), J, f, n, lab, stones)
    else:
        step = sw_sweep if method == "sw" else gibbs_sweep
    ei, ej = jnp.asarray(g.edges[:, 0]), jnp.asarray(g.edges[:, 1])

    def body(carry, k):
        s, acc = carry
        s = step(k, s, J, f, n)
        ii = (s[:, ei] < 0).astype(jnp.int32)
        jj = (s[:, ej] < 0).astype(jnp.int32)
        return (s, acc + jax.nn.one_hot(ii * 2 + jj, 4, dtype=logpsi.dtype)), None

    acc0 = jnp.zeros(logpsi.shape[:2] + (4,), logpsi.dtype)
    key, kb = jax.random.split(key)
    if burn_in:
        s0, _ = jax.lax.scan(lambda s, k: (step(k, s, J, f, n), None), s0, jax.random.split(kb, burn_in))
    (s, acc), _ = jax.lax.scan(body, (s0, acc0), jax.random.split(key, sweeps))
    return (acc / sweeps).reshape(logpsi.shape), s


def chain_flip_sweep(key, s, J, f, n, lab, stones):
    """Flip whole chains (Barker acceptance), first all Black chains at once, then all White chains.

    Chains of one colour are never adjacent, so their flips are conditionally independent and each half
    step is an exact block update.  Flipping block C changes log p by
    -2 [sum_{i in C} f_i s_i + sum_{boundary edges (i in C, j not in C)} J_ij s_i s_j].
    This complements Swendsen-Wang, whose bonds between a chain and a neighbouring chain of the other
    colour can hold both in a wrong joint state (e.g. both +1 against their fields) for very long.
    lab [B, P] chain labels (min point index), stones [B, P] in {1,-1,0}."""
    g = board_graph(n)
    ei, ej = jnp.asarray(g.edges[:, 0]), jnp.asarray(g.edges[:, 1])
    P = n * n

    def seg(v, ids):  # [P] values summed per segment id
        return jax.ops.segment_sum(v, ids, num_segments=P)

    for colour in (1, -1):
        key, sub = jax.random.split(key)
        li, lj = lab[:, ei], lab[:, ej]
        cross = (li != lj).astype(s.dtype) * J * s[:, ei] * s[:, ej]          # boundary edges only
        D = jax.vmap(seg)(f * s, lab) + jax.vmap(seg)(cross, li) + jax.vmap(seg)(cross, lj)
        flip = jax.random.uniform(sub, D.shape) < jax.nn.sigmoid(-2 * D)       # per chain root
        flip_pt = jnp.take_along_axis(flip, lab, axis=1) & (stones == colour)
        s = jnp.where(flip_pt, -s, s)
    return s
