"""Boltzmann5 (eq. 2 of the paper): log psi_ij(si,sj) = w(ci,cj) si sj + h(ci) si + h(cj) sj.

Spin index 0 means s=+1 (Black territory), index 1 means s=-1 (White).
Parameters (in this order): w_chains, w_inter_chain, w_chain_empty, w_empty, h_stones.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.graph import board_graph

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


# ---------------------------------------------------------------------------------------------------
# BoltzmannLiberties (eq. 3): log psi_ij = w(t_i, t_j, s_i, s_j) with point types
# t = 0 empty, 1..4 Black chain with 1,2,3,4+ liberties, 5..8 White chain with 1,2,3,4+ liberties.
# Parameterised (gauge-fixed, see docs/crf.md) as J(ti,tj) si sj + b(ti,tj) si + b(tj,ti) sj with
# J(ti,tj) = J(tj,ti) = J(-ti,-tj) and b(-ti,-tj) = -b(ti,tj), over type pairs that can be neighbours
# (two adjacent stones of one colour are one chain, so they have the same liberty class).
# ---------------------------------------------------------------------------------------------------
NUM_TYPES = 9


def reverse_type(t: int) -> int:
    """Colour reversal of a point type."""
    return 0 if t == 0 else (t + 4 if t <= 4 else t - 4)


def type_name(t: int) -> str:
    return "E" if t == 0 else ("B" if t <= 4 else "W") + ("1", "2", "3", "4+")[(t - 1) % 4]


def feasible_pair(ti: int, tj: int) -> bool:
    """Can points of these types be neighbours?  Same-colour stones must share the liberty class."""
    same_colour = ti != 0 and tj != 0 and (ti <= 4) == (tj <= 4)
    return not same_colour or ti == tj


def _blib_tables():
    """Index tables [9, 9]: coupling index, field index and field sign; -1 index = fixed at 0."""
    j_idx = -np.ones((NUM_TYPES, NUM_TYPES), np.int32)
    b_idx = -np.ones((NUM_TYPES, NUM_TYPES), np.int32)
    b_sign = np.zeros((NUM_TYPES, NUM_TYPES), np.float32)
    names = []
    for ti in range(NUM_TYPES):
        for tj in range(NUM_TYPES):
            if not feasible_pair(ti, tj) or j_idx[ti, tj] >= 0:
                continue
            k = len(names)
            names.append(f"J[{type_name(ti)},{type_name(tj)}]")
            ri, rj = reverse_type(ti), reverse_type(tj)
            for a, b in ((ti, tj), (tj, ti), (ri, rj), (rj, ri)):
                j_idx[a, b] = k
    for ti in range(NUM_TYPES):
        for tj in range(NUM_TYPES):
            if not feasible_pair(ti, tj) or b_idx[ti, tj] >= 0 or (ti, tj) == (0, 0):
                continue
            k = len(names)
            names.append(f"b[{type_name(ti)}|{type_name(tj)}]")
            b_idx[ti, tj], b_sign[ti, tj] = k, 1.0
            b_idx[reverse_type(ti), reverse_type(tj)], b_sign[reverse_type(ti), reverse_type(tj)] = k, -1.0
    return j_idx, b_idx, b_sign, tuple(names)


BLIB_J, BLIB_B, BLIB_SIGN, BLIB_NAMES = _blib_tables()


def point_types(stones, n: int):
    """stones [B, P] in {1,-1,0} -> int32 [B, P] point types 0..8."""
    from jaxgo.crf.liberties import liberty_counts
    cls = jnp.clip(liberty_counts(stones, n), 1, 4)
    return jnp.where(stones == 0, 0, jnp.where(stones > 0, cls, cls + 4)).astype(jnp.int32)


def blib_pair_tables(params):
    """params [47] -> log factor tables [9, 9, 2, 2] indexed [t_i, t_j, s_i index, s_j index]."""
    p = jnp.concatenate([jnp.asarray(params), jnp.zeros(1, jnp.asarray(params).dtype)])   # index -1 -> 0
    J = p[jnp.asarray(BLIB_J)]
    b = jnp.asarray(BLIB_SIGN) * p[jnp.asarray(BLIB_B)]
    si, sj = SPIN[:, None], SPIN[None, :]
    return J[..., None, None] * si * sj + b[..., None, None] * si + b.T[..., None, None] * sj


@partial(jax.jit, static_argnames=("n",))
def blib_log_potentials(params, stones, n: int):
    """Log factor tables [B, E, 2, 2] (index 0 = Black) of BoltzmannLiberties."""
    g = board_graph(n)
    t = point_types(stones, n)
    return blib_pair_tables(params)[t[:, g.edges[:, 0]], t[:, g.edges[:, 1]]]


def blib_from_b5(b5):
    """BoltzmannLiberties parameters that reproduce a Boltzmann5 model exactly (for initialisation)."""
    b5 = np.asarray(b5, np.float32)
    out = np.zeros(len(BLIB_NAMES), np.float32)
    colour = lambda t: 0 if t == 0 else (1 if t <= 4 else -1)   # noqa: E731
    for ti in range(NUM_TYPES):
        for tj in range(NUM_TYPES):
            ci, cj = colour(ti), colour(tj)
            if BLIB_J[ti, tj] >= 0:
                k = 0 if ci != 0 and ci == cj else 1 if ci * cj < 0 else 3 if ci == cj == 0 else 2
                out[BLIB_J[ti, tj]] = b5[k]
            if BLIB_B[ti, tj] >= 0:
                out[BLIB_B[ti, tj]] = BLIB_SIGN[ti, tj] * b5[4] * ci
    return out


class _Model:
    def __init__(self, name, names, fn):
        self.name, self.names, self.log_potentials = name, names, fn

    @property
    def num_params(self) -> int:
        return len(self.names)


MODELS = {"b5": _Model("b5", B5_NAMES, b5_log_potentials),
          "blib": _Model("blib", BLIB_NAMES, blib_log_potentials)}
