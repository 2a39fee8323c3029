"""One search's leaf selection of a round in a few compiled calls: the same tree, leaves and random stream as
``TreeSearch.select_leaves``, without its Python and numpy work per step.

``select_leaves`` of ``jaxgo.search.tree_search`` descends K times (``descent.descend_batch``), expands the nodes
the descents reach for the first time (their searched moves and priors) and goes on (``continue_batch``), numbers
the edges without a node (``backup.number_pending``), creates their positions (``positions.children_into``), drops
those that repeat a position (``backup.repeated_positions``), gives every descent its leaf
(``backup.resolve_leaves``) and gathers the leaves' positions and last moves -- some forty numpy calls and a
dozen Python functions a round.  ``RoundStep.select`` does all of it in two nogil calls (``descend_round`` and
``create_round``) when the priors are uniform (``SearchConfig.uses_gammas`` False) or the base move model's
(``_expand_gammas``: the gammas of ``positions.gammas_into`` normalised as ``priors.children_prior`` does, in
numpy's summation order), no ladder pruning runs in the tree and nothing is called on expansion
(``TreeJob.on_expand``); otherwise (large patterns, 13x13 and up by default) the compiled descent stops where
nodes need expanding and Python computes their priors (``expand_nodes``, as ``TreeSearch`` does), then the call
goes on.  The leaves go into the caller's staging buffers (``LeafBuffers``: the leaves' positions, padded with the
root to K rows, and their last two moves), which a server hands to the device.

The kernels call the compiled tree loops of ``descent`` and ``backup`` and the host board of ``positions`` in the
same order as ``TreeSearch``, so a seeded search gives the same tree, bit for bit (tests/search/test_round_step.py).
Only the native tree backend (``Searcher.tree_backend``) is served here; under suicide rules ``select_leaves``
stays the path.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.playouts import tables as policy_tables
from jaxgo.playouts.native import features as ft
from jaxgo.playouts.native import runner
from jaxgo.search import backup, descent, positions, priors
from jaxgo.search.tree import STATE_FIELDS, Tree
from jaxgo.search.tree_search import PendingLeaves, last_moves, prune_failed_escapes

DONE, NEEDS_EXPAND = 0, 1  # descend_round: all descents have a leaf or a pending edge / nodes wait for Python
IN_PYTHON, UNIFORM, GAMMAS = 0, 1, 2  # where descend_round's expansions happen (``expansion_mode``)
PAIRWISE_BLOCK = 128  # numpy sums a row of at most this many entries in one block: GAMMAS up to 11x11 (122 actions)
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


@dataclasses.dataclass
class LeafBuffers:
    """Staging buffers of one search's K leaves, allocated once per K (and path length D) and reused every round:
    the descents' paths and the valid leaves' (``PendingLeaves``), the K leaf positions and their last moves."""

    path_nodes: np.ndarray  # int32 [K, D]: the descents' paths (root first)
    path_actions: np.ndarray  # int32 [K, D]
    path_lengths: np.ndarray  # int32 [K]
    ends: np.ndarray  # int32 [K]: each descent's end (a node, ``descent.PENDING`` or ``EXPAND``)
    waiting: np.ndarray  # int32 [K]: nodes to expand in Python
    nodes: np.ndarray  # int32 [K, D]: the valid leaves' paths, the first n rows
    actions: np.ndarray  # int32 [K, D]
    lengths: np.ndarray  # int32 [K]
    leaves: np.ndarray  # int32 [K]
    states: dict  # field -> array [K, ...] (``tree.STATE_FIELDS``, the tree's dtypes): leaf positions
    last_moves: np.ndarray  # int32 [K, 2]: each leaf position's last move and the one before (P pass, -1 none)

    @staticmethod
    def new(tree: Tree, k: int, depth: int) -> "LeafBuffers":
        paths = [np.zeros((k, depth), np.int32) if d else np.zeros(k, np.int32) for d in (1, 1, 0, 0, 0, 1, 1, 0, 0)]
        states = {name: np.zeros((k,) + tree.states[name].shape[1:], tree.states[name].dtype)
                  for name in STATE_FIELDS}
        return LeafBuffers(*paths, states, np.zeros((k, 2), np.int32))

    @property
    def depth(self) -> int:
        return self.path_nodes.shape[1]


class RoundStep:
    """The leaf selection of one ``Searcher``'s tree searches through ``select_into`` (one per search owner: it
    keeps the tie-breaking stream, seeded as the searcher's, the path length D and the staging buffers)."""

    def __init__(self, searcher, seed: int, depth: int = 64):
        if searcher.tree_backend != "native":
            raise ValueError("RoundStep: the native tree backend only (no suicide rules)")
        self.searcher = searcher
        self.rng = descent.new_rng(seed)
        self.depth = depth
        self._buffers: dict[int, LeafBuffers] = {}
        self._params = descent.score_params(searcher.config)
        self._zobrist = rules.zobrist_table(searcher.rules.size)
        self._tables = None
        self._mode = None  # (expansion_mode, gamma tables) of the searcher's config

    def _no_tables(self, size: int) -> tuple:
        """Gamma tables of the shipped model for the compiled call's arguments when it expands otherwise (so
        that one compiled version serves every mode)."""
        if self._tables is None:
            self._tables = gamma_tables(priors.log_gammas(None), size)
        return self._tables

    def buffers(self, tree: Tree, k: int) -> LeafBuffers:
        found = self._buffers.get(k)
        if found is None or found.depth != self.depth:
            found = self._buffers[k] = LeafBuffers.new(tree, k, self.depth)
        return found

    def select(self, job):
        """As ``TreeSearch.select_leaves(job)``: the K leaf positions as a batched ``rules.State`` (views of the
        staging buffers, valid until the next call), or None when no leaf survived; sets ``job.pending``,
        ``job.last_moves`` and ``job.exhausted``."""
        searcher, tree, k = self.searcher, job.tree, job.leaves
        tree.reserve(k)
        room = k + 1 if job.limits.max_nodes is None else job.limits.max_nodes - tree.size
        if self._mode is None or job.on_expand is not None:
            self._mode = expansion_mode(searcher.config, searcher.rules.size, job)
        mode, tables = self._mode
        if job.on_expand is not None:
            self._mode = None
        if tables is None:
            tables = self._no_tables(searcher.rules.size)
        root_last = np.asarray(job.root_last, np.int64)
        while True:
            b = self.buffers(tree, k)
            arrays = (k, tree.root, room, tree.terminal, tree.expanded, tree.parents, tree.action_from_parent,
                      tree.children_index, tree.children_visits, tree.children_values, tree.children_rave_visits,
                      tree.children_rave_values, tree.children_prior, tree.children_legal, self._params, self.rng,
                      b.path_nodes, b.path_actions, b.path_lengths, b.ends, tree.states["stones"],
                      tree.states["to_play"], tree.states["ko"], mode, b.waiting, root_last, tables)
            status, count = descend_round(True, *arrays)
            while status == NEEDS_EXPAND:
                expand_nodes(searcher, job, b.waiting[:count].copy())
                status, count = descend_round(False, *arrays)
            if status == DONE:
                break
            self.depth *= 2
        st = tree.states
        out = b.states
        n, tree.size = create_round(
            tree.size, tree.root, searcher.rules.ko_rule != "simple", job.history, self._zobrist, tree.parents,
            tree.action_from_parent, tree.to_play, tree.hashes, tree.terminal, tree.children_index,
            tree.children_visits, tree.children_legal, *[st[name] for name in STATE_FIELDS], b.path_nodes,
            b.path_actions, b.path_lengths, b.ends, root_last, b.nodes, b.actions,
            b.lengths, b.leaves, *[out[name] for name in STATE_FIELDS], b.last_moves)
        job.exhausted = n == 0 and not tree.children_legal[tree.root].any()
        if n == 0:
            job.pending = None
            return None
        job.pending = PendingLeaves(b.nodes[:n], b.actions[:n], b.lengths[:n], b.leaves[:n])
        job.last_moves = b.last_moves
        return rules.State(**out)


def expand_nodes(searcher, job, nodes: np.ndarray) -> None:
    """What ``TreeSearch`` does to nodes int32 [n] a descent reaches for the first time (native tree backend):
    their searched moves, the ladder pruning of those, the job's ``on_expand``, their priors; marks them
    expanded."""
    tree, config = job.tree, searcher.config
    states = tree.gather_states(nodes)
    tree.children_legal[nodes] = searcher.searchable_batch(states)
    if config.ladder_prune_tree:
        for row, node in enumerate(nodes):
            prune_failed_escapes(tree.children_legal[node], states.stones[row], states.to_play[row], states.ko[row])
    if job.on_expand is not None:
        job.on_expand(nodes)
    recent = last_moves(tree, nodes, job.root_last)
    tree.children_prior[nodes] = priors.children_prior(config, states, np.arange(len(nodes)),
                                                       tree.children_legal[nodes], recent[:, 0], recent[:, 1],
                                                       searcher.tree_backend)
    tree.expanded[nodes] = True


@numba.njit(nogil=True, cache=True)
def _expand_uniform(nodes, stones, to_play, ko, children_legal, children_prior, expanded):
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
def _expand_gammas(nodes, stones, to_play, ko, parents, action_from_parent, root, root_last, children_legal,
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
        parent = parents[node]
        if node == root:
            last[r, 0], last[r, 1] = root_last[0], root_last[1]
        else:
            last[r, 0] = action_from_parent[node]
            last[r, 1] = root_last[0] if parent == root else action_from_parent[max(parent, 0)]
    legal = np.zeros((count, points + 1), np.bool_)
    positions.searchable_into(rows_stones, rows_to_play, rows_ko, legal)
    gammas = np.zeros((count, points + 1), np.float64)
    positions.gammas_into(rows_stones, rows_to_play, rows_ko, last, tables, lines, dist1, dist2, plain_of,
                          pass_gammas, gammas)
    weights = np.empty(points + 1, np.float64)
    for r in range(count):
        node = nodes[r]
        searched = np.float32(0.0)
        for a in range(points + 1):
            children_legal[node, a] = legal[r, a]
            weights[a] = gammas[r, a] if legal[r, a] else 0.0
            searched += np.float32(1.0) if legal[r, a] else np.float32(0.0)
        total = pairwise_sum(weights, 0, points + 1)
        searched = max(searched, np.float32(1.0))
        for a in range(points + 1):
            if total > 0:
                children_prior[node, a] = np.float32(weights[a] / max(total, 1e-300))
            else:
                children_prior[node, a] = (np.float32(1.0) if legal[r, a] else np.float32(0.0)) / searched
        expanded[node] = True


@numba.njit(nogil=True, cache=True)
def descend_round(first, k, root, room, terminal, expanded, parents, action_from_parent, children_index,
                  children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
                  children_legal, params, rng, path_nodes, path_actions, lengths, leaves, stones, to_play, ko,
                  inline, waiting, root_last, gamma_tables):
    """The descents of ``descent.descend`` with its expansion loop: ``first`` starts them (``descend_batch``),
    else they go on from the nodes expanded since the last call (``continue_batch``).  With ``inline``
    ``UNIFORM`` or ``GAMMAS`` the nodes to expand get their searched moves and priors here (``_expand_uniform``,
    ``_expand_gammas`` with gamma_tables, the tuple of ``gamma_tables``; root_last int [2]: the game's last two
    moves); with ``IN_PYTHON`` their indices go to waiting int32 [>= K] and the call returns (``NEEDS_EXPAND``,
    their count).  Returns (``DONE``, 0),
    (``NEEDS_EXPAND``, n) or (``descent.PATH_OVERFLOW``, 0) when a path outgrew the buffers (every virtual loss
    taken back).  stones / to_play / ko: the tree's node positions [C, ...]."""
    if first:
        done = descent.descend_batch(k, root, room, terminal, expanded, parents, action_from_parent, children_index,
                                     children_visits, children_values, children_rave_visits, children_rave_values,
                                     children_prior, children_legal, params, rng, path_nodes, path_actions, lengths,
                                     leaves)
    else:
        done = descent.continue_batch(np.flatnonzero(leaves == descent.EXPAND), root, room, terminal, expanded,
                                      parents, action_from_parent, children_index, children_visits, children_values,
                                      children_rave_visits, children_rave_values, children_prior, children_legal,
                                      params, rng, path_nodes, path_actions, lengths, leaves)
    while done != descent.PATH_OVERFLOW:
        rows = np.flatnonzero(leaves == descent.EXPAND)
        if rows.shape[0] == 0:
            return DONE, 0
        reached = np.empty(rows.shape[0], np.int32)
        for r in range(rows.shape[0]):
            last = lengths[rows[r]] - 1
            reached[r] = children_index[path_nodes[rows[r], last], path_actions[rows[r], last]]
        nodes = np.unique(reached)
        if inline == IN_PYTHON:
            waiting[:nodes.shape[0]] = nodes
            return NEEDS_EXPAND, nodes.shape[0]
        if inline == UNIFORM:
            _expand_uniform(nodes, stones, to_play, ko, children_legal, children_prior, expanded)
        else:
            _expand_gammas(nodes, stones, to_play, ko, parents, action_from_parent, root, root_last, children_legal,
                           children_prior, expanded, *gamma_tables)
        done = descent.continue_batch(rows, root, room, terminal, expanded, parents, action_from_parent,
                                      children_index, children_visits, children_values, children_rave_visits,
                                      children_rave_values, children_prior, children_legal, params, rng, path_nodes,
                                      path_actions, lengths, leaves)
    return descent.PATH_OVERFLOW, 0


@numba.njit(nogil=True, cache=True)
def create_round(size, root, superko, history, zobrist, parents, action_from_parent, to_play_node, hashes, terminal,
                 children_index, children_visits, children_legal, stones, chain, lib_count, lib_sum, lib_sumsq, ko,
                 to_play, passes, captures, hash_words, move_count, path_nodes, path_actions, lengths, ends,
                 root_last, out_nodes, out_actions, out_lengths, out_leaves, out_stones, out_chain, out_lib_count,
                 out_lib_sum, out_lib_sumsq, out_ko, out_to_play, out_passes, out_captures, out_hash,
                 out_move_count, out_last):
    """After ``descend_round`` (its buffers path_nodes ... ends): create the nodes of the pending edges (in the tree's free rows from ``size``; the
    caller reserved K of them), drop those that repeat a position (``superko``: of the game, history uint64 [H]
    sorted, or of the tree path), resolve every descent's leaf, and write the valid descents' paths (out_nodes
    ... out_leaves, first n rows) and the K leaf positions (valid leaves first, then the root) with their last
    two moves (``tree_search.last_moves``; root_last int [2]) into the ``out_*`` buffers.  Returns (n, the
    tree's new size)."""
    k = ends.shape[0]
    points = stones.shape[1]
    pass_action = points
    pair_nodes = np.empty(k, np.int32)
    pair_actions = np.empty(k, np.int32)
    pair_of = np.empty(k, np.int32)
    count = backup.number_pending(path_nodes, path_actions, lengths, ends, children_index, pair_nodes, pair_actions,
                                  pair_of)
    created = np.full(count, -1, np.int32)
    if count > 0:
        c_stones = np.empty((count, points), np.int8)
        c_to_play = np.empty(count, np.int32)
        c_ko = np.empty(count, np.int32)
        c_passes = np.empty(count, np.int32)
        c_captures = np.empty((count, 2), np.int32)
        c_hash = np.empty((count, 2), np.uint32)
        c_move_count = np.empty(count, np.int32)
        for r in range(count):
            node = pair_nodes[r]
            c_stones[r] = stones[node]
            c_to_play[r] = to_play[node]
            c_ko[r] = ko[node]
            c_passes[r] = passes[node]
            c_captures[r] = captures[node]
            c_hash[r] = hash_words[node]
            c_move_count[r] = move_count[node]
        n_stones = np.zeros((count, points), np.int8)
        n_chain = np.zeros((count, points), np.int32)
        n_count = np.zeros((count, points), np.int32)
        n_sum = np.zeros((count, points), np.int32)
        n_sumsq = np.zeros((count, points), np.int32)
        n_ko = np.zeros(count, np.int32)
        n_to_play = np.zeros(count, np.int8)
        n_passes = np.zeros(count, np.int32)
        n_captures = np.zeros((count, 2), np.int32)
        n_hash = np.zeros((count, 2), np.uint32)
        n_move_count = np.zeros(count, np.int32)
        unused = np.zeros((count, points + 1), np.bool_)
        positions.children_into(c_stones, c_to_play, c_ko, c_passes, c_captures, c_hash, c_move_count, pair_actions,
                                zobrist, n_stones, n_chain, n_count, n_sum, n_sumsq, n_ko, n_to_play, n_passes,
                                n_captures, n_hash, n_move_count, unused, False)
        keys = np.empty(count, np.uint64)
        for r in range(count):
            keys[r] = np.uint64(n_hash[r, 0]) | (np.uint64(n_hash[r, 1]) << np.uint64(32))
        repeated = np.zeros(count, np.bool_)
        if superko:
            backup.repeated_positions(keys, pair_nodes[:count], pair_actions[:count], pass_action, parents, hashes,
                                      root, history, repeated)
        for r in range(count):
            if repeated[r]:
                children_legal[pair_nodes[r], pair_actions[r]] = False
                continue
            index = size
            size += 1
            stones[index] = n_stones[r]
            chain[index] = n_chain[r]
            lib_count[index] = n_count[r]
            lib_sum[index] = n_sum[r]
            lib_sumsq[index] = n_sumsq[r]
            ko[index] = n_ko[r]
            to_play[index] = n_to_play[r]
            passes[index] = n_passes[r]
            captures[index] = n_captures[r]
            hash_words[index] = n_hash[r]
            move_count[index] = n_move_count[r]
            parents[index] = pair_nodes[r]
            action_from_parent[index] = pair_actions[r]
            to_play_node[index] = n_to_play[r]
            hashes[index] = keys[r]
            terminal[index] = n_passes[r] >= 2
            children_index[pair_nodes[r], pair_actions[r]] = index
            created[r] = index
    valid = np.empty(k, np.int32)
    n = backup.resolve_leaves(created, pair_of, ends, path_nodes, path_actions, lengths, children_visits, valid)
    for r in range(k):
        if r < n:
            i = valid[r]
            out_nodes[r, :path_nodes.shape[1]] = path_nodes[i]
            out_actions[r, :path_nodes.shape[1]] = path_actions[i]
            out_lengths[r] = lengths[i]
            out_leaves[r] = ends[i]
            leaf = ends[i]
        else:
            leaf = root
        out_stones[r] = stones[leaf]
        out_chain[r] = chain[leaf]
        out_lib_count[r] = lib_count[leaf]
        out_lib_sum[r] = lib_sum[leaf]
        out_lib_sumsq[r] = lib_sumsq[leaf]
        out_ko[r] = ko[leaf]
        out_to_play[r] = to_play[leaf]
        out_passes[r] = passes[leaf]
        out_captures[r] = captures[leaf]
        out_hash[r] = hash_words[leaf]
        out_move_count[r] = move_count[leaf]
        parent = parents[leaf]
        if leaf == root:
            out_last[r, 0], out_last[r, 1] = root_last[0], root_last[1]
        else:
            out_last[r, 0] = action_from_parent[leaf]
            out_last[r, 1] = root_last[0] if parent == root else action_from_parent[max(parent, 0)]
    return n, size
