"""The base move model's prior of a position on the native board, compiled: the gammas of
``positions.gammas_into`` normalised over the searched moves as ``priors.prior_probabilities`` does, in numpy's
summation order (``prior_row``), for one position (``position_prior``: a query's root) and for the tree's
expansions (``jaxgo.search.expansion.expand_gammas``).  Boards up to 11x11 (``PAIRWISE_BLOCK``), no large
patterns.
"""

from __future__ import annotations

import numba
import numpy as np

from jaxgo.features import moves as mf
from jaxgo.playouts import tables as policy_tables
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import runner
from jaxgo.search import positions

# numpy sums a row of at most this many entries in one block: the compiled priors up to 11x11 (122 actions)
PAIRWISE_BLOCK = 128
_GAMMA_TABLES: dict = {}  # (id of a log-gamma array, board size) -> (that array, ``gamma_tables``)


def gamma_tables(log_gamma: np.ndarray, size: int) -> tuple:
    """(tables, line levels, dist1, dist2, board index of padded points, pass gammas float64 [3]): what
    ``positions.gammas_into`` reads for log-gammas float32 [K] (``priors.model_gammas``'s, cached arrays: found
    by identity) on an N x N board, built once."""
    key = (id(log_gamma), size)
    hit = _GAMMA_TABLES.get(key)
    if hit is not None and hit[0] is log_gamma:
        return hit[1]
    arrays = runner.heavy_policy(policy_tables.policy_tables(log_gamma), size)
    offset = int(mf.group_offsets()[mf.GROUPS.index("pass")])
    pass_gammas = np.exp(np.asarray(log_gamma[offset:offset + 3], np.float64))
    out = (arrays.tables, ft.line_levels(size), arrays.dist1, arrays.dist2, runner.plain_index(size), pass_gammas)
    if len(_GAMMA_TABLES) >= 32:
        _GAMMA_TABLES.clear()
    _GAMMA_TABLES[key] = (log_gamma, out)
    return out


@numba.njit(nogil=True, cache=True)
def pairwise_sum(a, start, count):
    """The sum of a[start : start + count] (float64, count <= ``PAIRWISE_BLOCK``) in numpy's order (one block of
    its pairwise summation: eight running sums), so that a compiled normalisation equals ``np.sum``'s to the last
    bit.  (Longer rows split in halves first; not needed here, and numba's cache mishandles recursion.)"""
    if count < 8:
        res = 0.0
        for i in range(start, start + count):
            res += a[i]
        return res
    r = a[start:start + 8].copy()
    tail = count - count % 8
    for i in range(8, tail, 8):
        for j in range(8):
            r[j] += a[start + i + j]
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for i in range(start + tail, start + count):
        res += a[i]
    return res


@numba.njit(nogil=True, cache=True)
def prior_row(gammas, searched, weights, out):
    """K over one position's searched moves (``priors.prior_probabilities`` on the native board): its gammas float64
    [A] normalised over searched bool [A] (summed in numpy's order, ``pairwise_sum``; A <= ``PAIRWISE_BLOCK``),
    uniform over them where those gammas are all 0, into out float32 [A]; weights float64 [A]: scratch."""
    actions = searched.shape[0]
    count = np.float32(0.0)
    for a in range(actions):
        weights[a] = gammas[a] if searched[a] else 0.0
        count += np.float32(1.0) if searched[a] else np.float32(0.0)
    total = pairwise_sum(weights, 0, actions)
    count = max(count, np.float32(1.0))
    for a in range(actions):
        if total > 0:
            out[a] = np.float32(weights[a] / max(total, 1e-300))
        else:
            out[a] = (np.float32(1.0) if searched[a] else np.float32(0.0)) / count


@numba.njit(nogil=True, cache=True)
def position_prior_into(stones, to_play, ko, last, searched, tables, lines, dist1, dist2, plain_of, pass_gammas, out):
    """``prior_row`` of one position: stones int8 [1, P], to_play / ko int32 [1], its last two moves last int32
    [1, 2], searched bool [P + 1], the gamma tables as ``gamma_tables``; out float32 [P + 1]."""
    gammas = np.zeros((1, stones.shape[1] + 1), np.float64)
    positions.gammas_into(stones, to_play, ko, last, tables, lines, dist1, dist2, plain_of, pass_gammas, gammas)
    prior_row(gammas[0], searched, np.empty(stones.shape[1] + 1, np.float64), out)


def position_prior(state, searched, last: tuple, log_gamma: np.ndarray) -> np.ndarray:
    """float32 [A]: ``priors.prior_probabilities`` (native board, no large patterns) of one unbatched position
    ``state`` over searched bool [A] (A <= ``PAIRWISE_BLOCK``), its last two moves ``last`` (P = pass, -1 = none),
    under log-gammas float32 [K] (a cached array, ``priors.model_gammas``'s), in one compiled call."""
    stones = np.asarray(state.stones, np.int8).reshape(1, -1)
    size = int(round(stones.shape[1] ** 0.5))
    out = np.empty(stones.shape[1] + 1, np.float32)
    position_prior_into(stones, np.asarray(state.to_play, np.int32).reshape(1),
                        np.asarray(state.ko, np.int32).reshape(1), np.asarray(last, np.int32).reshape(1, 2),
                        np.asarray(searched, np.bool_), *gamma_tables(log_gamma, size), out)
    return out
