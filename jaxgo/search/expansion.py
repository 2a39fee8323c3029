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

from jaxgo.search import positions, priors
from jaxgo.search.compiled_prior import PAIRWISE_BLOCK, gamma_tables, prior_row

IN_PYTHON, UNIFORM, GAMMAS = 0, 1, 2  # where descend_round's expansions happen (``expansion_mode``)


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
