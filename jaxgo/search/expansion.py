"""The expansion of tree nodes a descent reaches for the first time -- their searched moves and priors -- as
``TreeSearch`` does it, for ``jaxgo.search.round_step``: compiled (``expand_uniform``, ``expand_gammas``: the base
move model's gammas of ``positions.gammas_into`` normalised as ``priors.children_prior`` does, in numpy's
summation order) or in Python (``TreeSearch.expand_nodes``: large patterns, ladder pruning, a job's
``on_expand``).
``expansion_mode`` says which a search's configuration takes.
"""

from __future__ import annotations

import numba
import numpy as np

from jaxgo.features import moves as mf
from jaxgo.playouts import tables as policy_tables
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import runner
from jaxgo.search import positions, priors

IN_PYTHON, UNIFORM, GAMMAS = 0, 1, 2  # where descend_round's expansions happen (``expansion_mode``)
# numpy sums a row of at most this many entries in one block: GAMMAS up to 11x11 (122 actions)
PAIRWISE_BLOCK = priors.PAIRWISE_BLOCK
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


def expansion_mode(config, size: int, job) -> tuple:
    """(mode, gamma tables or None): ``UNIFORM`` without gammas, ``GAMMAS`` with the base move model (no large
    patterns, boards up to 11x11: ``PAIRWISE_BLOCK``), ``IN_PYTHON`` with large patterns, larger boards, ladder
    pruning in the tree or an ``on_expand``."""
    if config.ladder_prune_tree or job.on_expand is not None:
        return IN_PYTHON, None
    if not config.uses_gammas:
        return UNIFORM, None
    log_gamma, large = priors.model_gammas(config.gammas, config.prior_model, size, priors.tactics_of(config, size))
    if large is not None or size * size + 1 > PAIRWISE_BLOCK:
        return IN_PYTHON, None
    return GAMMAS, gamma_tables(log_gamma, size)


@numba.njit(nogil=True, cache=True)
def expand_uniform(nodes, stones, to_play, ko, children_legal, children_prior, expanded):
    """Searched moves (``positions.searchable_into``) and uniform priors (``priors.uniform``) of nodes int [n]."""
    count = nodes.shape[0]
    points = stones.shape[1]
    rows_stones = np.empty((count, points), np.int8)
    rows_to_play = np.empty(count, np.int32)
    rows_ko = np.empty(count, np.int32)
    for r in range(count):
        node = nodes[r]
        rows_stones[r] = stones[node]
        rows_to_play[r] = to_play[node]
        rows_ko[r] = ko[node]
    legal = np.zeros((count, points + 1), np.bool_)
    positions.searchable_into(rows_stones, rows_to_play, rows_ko, legal)
    for r in range(count):
        node = nodes[r]
        total = np.float32(0.0)
        for a in range(points + 1):
            children_legal[node, a] = legal[r, a]
            total += np.float32(1.0) if legal[r, a] else np.float32(0.0)
        total = max(total, np.float32(1.0))
        for a in range(points + 1):
            children_prior[node, a] = (np.float32(1.0) if legal[r, a] else np.float32(0.0)) / total
        expanded[node] = True


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
def node_last_moves(node, root, root_last, parents, action_from_parent, out):
    """Write the last two moves before ``node``'s position (tree path, then the game's ``root_last`` int32 [2])
    into ``out`` int32 [2]."""
    if node == root:
        out[0], out[1] = root_last[0], root_last[1]
    else:
        parent = parents[node]
        out[0] = action_from_parent[node]
        out[1] = root_last[0] if parent == root else action_from_parent[max(parent, 0)]


@numba.njit(nogil=True, cache=True)
def expand_gammas(nodes, stones, to_play, ko, parents, action_from_parent, root, root_last, children_legal,
                   children_prior, expanded, tables, lines, dist1, dist2, plain_of, pass_gammas):
    """Searched moves (``positions.searchable_into``) and the move model's priors (``priors.children_prior`` on
    the native board without large patterns: gammas normalised over the searched moves, uniform where they are
    all 0) of nodes int [n]; the gamma tables as ``gamma_tables``."""
    count = nodes.shape[0]
    points = stones.shape[1]
    rows_stones = np.empty((count, points), np.int8)
    rows_to_play = np.empty(count, np.int32)
    rows_ko = np.empty(count, np.int32)
    last = np.empty((count, 2), np.int32)
    for r in range(count):
        node = nodes[r]
        rows_stones[r] = stones[node]
        rows_to_play[r] = to_play[node]
        rows_ko[r] = ko[node]
        node_last_moves(node, root, root_last, parents, action_from_parent, last[r])
    legal = np.zeros((count, points + 1), np.bool_)
    positions.searchable_into(rows_stones, rows_to_play, rows_ko, legal)
    gammas = np.zeros((count, points + 1), np.float64)
    positions.gammas_into(rows_stones, rows_to_play, rows_ko, last, tables, lines, dist1, dist2, plain_of,
                          pass_gammas, gammas)
    weights = np.empty(points + 1, np.float64)
    for r in range(count):
        node = nodes[r]
        for a in range(points + 1):
            children_legal[node, a] = legal[r, a]
        prior_row(gammas[r], legal[r], weights, children_prior[node])
        expanded[node] = True


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
