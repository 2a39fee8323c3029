"""Boltzmann5 (eq. 2 of the paper): log psi_ij(si,sj) = w(ci,cj) si sj + h(ci) si + h(cj) sj.

Spin index 0 means s=+1 (Black territory), index 1 means s=-1 (White).
Parameters (in this order): w_chains, w_inter_chain, w_chain_empty, w_empty, h_stones.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .graph import board_graph

B5_NAMES = ("w_chains", "w_inter_chain", "w_chain_empty", "w_empty", "h_stones")
# Values reported in the paper (trained on 290 positions at move 80).
B5_PAPER = np.array([2.74, 0.521, 0.442, 0.427, 0.265], dtype=np.float32)
SPIN = jnp.array([1.0, -1.0])


def b5_edge_features(colours, n: int):
    """colours [..., P] in {1,-1,0}.  Returns per-edge (coupling one-hot [...,E,4], field sums).

    field term h(ci) si + h(cj) sj = h_stones * (ci si + cj sj).
    """
    g = board_graph(n)
    ci = colours[..., g.edges[:, 0]]
    cj = colours[..., g.edges[:, 1]]
    same = (ci != 0) & (ci == cj)
    inter = (ci != 0) & (cj != 0) & (ci != cj)
    empty = (ci == 0) & (cj == 0)
    chain_empty = ~(same | inter | empty)
    onehot = jnp.stack([same, inter, chain_empty, empty], axis=-1).astype(jnp.float32)
    return onehot, ci.astype(jnp.float32), cj.astype(jnp.float32)


def b5_log_potentials(params, colours, n: int):
    """Log factor tables [..., E, 2, 2] indexed [s_i index, s_j index]."""
    onehot, ci, cj = b5_edge_features(colours, n)
    w = onehot @ params[:4]                                      # [..., E]
    h = params[4]
    si = SPIN[:, None]
    sj = SPIN[None, :]
    return (w[..., None, None] * si * sj
            + h * ci[..., None, None] * si + h * cj[..., None, None] * sj)
