"""One search's leaf selection of a round in a few compiled calls: the same tree, leaves and random stream as
``TreeSearch.select_leaves``, without its Python and numpy work per step.

``select_leaves`` of ``jaxgo.search.tree_search`` descends K times (``descent.descend_batch``), expands the nodes
the descents reach for the first time (their searched moves and priors) and goes on (``continue_batch``), numbers
the edges without a node (``backup.number_pending``), creates their positions (``positions.children_into``), drops
those that repeat a position (``backup.repeated_positions``), gives every descent its leaf
(``backup.resolve_leaves``) and gathers the leaves' positions and last moves -- some forty numpy calls and a
dozen Python functions a round.  ``RoundStep.select`` does all of it in two nogil calls (``descend_round`` and
``create_round``) when the priors are uniform (``SearchConfig.uses_gammas`` False) or the base move model's
(``expansion.expand_gammas``: the gammas of ``positions.gammas_into`` normalised as ``priors.children_prior``
does, in numpy's summation order), no ladder pruning runs in the tree and nothing is called on expansion
(``TreeJob.on_expand``); otherwise (large patterns, 13x13 and up by default) the compiled descent stops where
nodes need expanding and Python computes their priors (``TreeSearch.expand_nodes``, the same call), then
the call goes on.  The leaves go into the caller's staging buffers (``LeafBuffers``: the leaves' positions,
padded with the root to K rows, and their last two moves), which a server hands to the device.

The kernels call the compiled tree loops of ``descent`` and ``backup`` and the host board of ``positions`` in the
same order as ``TreeSearch``, so a seeded search gives the same tree, bit for bit (tests/search/test_round_step.py).
Only the native tree backend (``Searcher.tree_backend``) is served here; under suicide rules ``select_leaves``
stays the path.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from jaxgo.go import rules
from jaxgo.search import backup, compiled_prior, descent, expansion, positions, priors
from jaxgo.search.tree import STATE_FIELDS, Tree
from jaxgo.search.tree_search import PendingLeaves

DONE, NEEDS_EXPAND = 0, 1  # descend_round: all descents have a leaf or a pending edge / nodes wait for Python
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
    states: dict | None  # field -> array [K, ...] (``tree.STATE_FIELDS``, the tree's dtypes): leaf positions
    last_moves: np.ndarray | None  # int32 [K, 2]: each leaf position's last move and the one before (P pass, -1 none)

    @staticmethod
    def new(tree: Tree, k: int, depth: int) -> "LeafBuffers":
        """The buffers of K descents D long; the leaf positions' only when ``with_leaf_states`` asks (a server's
        compiled round writes the leaves into the device batch instead)."""
        paths = [np.zeros((k, depth), np.int32) if d else np.zeros(k, np.int32) for d in (1, 1, 0, 0, 0, 1, 1, 0, 0)]
        return LeafBuffers(*paths, None, None)

    def with_leaf_states(self, tree: Tree) -> "LeafBuffers":
        if self.states is None:
            k = len(self.ends)
            self.states = {name: np.zeros((k,) + tree.states[name].shape[1:], tree.states[name].dtype)
                           for name in STATE_FIELDS}
            self.last_moves = np.zeros((k, 2), np.int32)
        return self

    @property
    def depth(self) -> int:
        return self.path_nodes.shape[1]


class RoundStep:
    """The leaf selection of one ``Searcher``'s tree searches through ``select_into`` (one per search owner: it
    keeps the tie-breaking stream, seeded as the searcher's, the path length D and the staging buffers)."""

    def __init__(self, searcher, seed: int, depth: int = 64, pool=None):
        """``pool``: a ``jaxgo.search.arena.BufferPool`` the staging buffers come from and go back to (``release``);
        None: they are made new."""
        if searcher.tree_backend != "native":
            raise ValueError("RoundStep: the native tree backend only (no suicide rules)")
        self.searcher = searcher
        self.rng = descent.new_rng(seed)
        self.depth = depth
        self._buffers: dict[int, LeafBuffers] = {}
        self.pool = pool
        self.params = descent.score_params(searcher.config)  # float64 [N_PARAMS]: ``descent.score_params``
        self.zobrist = rules.zobrist_table(searcher.rules.size)
        self._tables = None
        self._mode = None  # (expansion_mode, gamma tables) of the searcher's config

    def _no_tables(self, size: int) -> tuple:
        """Gamma tables of the shipped model for the compiled call's arguments when it expands otherwise (so
        that one compiled version serves every mode)."""
        if self._tables is None:
            self._tables = compiled_prior.gamma_tables(priors.log_gammas(None), size)
        return self._tables

    def expansion(self, job) -> tuple:
        """(mode, gamma tables) of ``expansion.expansion_mode`` for the job (found once unless the job has an
        ``on_expand``); the shipped model's tables where the mode reads none."""
        if self._mode is None or job.on_expand is not None:
            self._mode = expansion.expansion_mode(self.searcher.config, self.searcher.rules.size, job)
        mode, tables = self._mode
        if job.on_expand is not None:
            self._mode = None
        return mode, (tables if tables is not None else self._no_tables(self.searcher.rules.size))

    def buffers(self, tree: Tree, k: int) -> LeafBuffers:
        """The staging buffers of K descents at the current path length (kept per K; from the pool when there is
        one: what they hold does not matter, every kernel writes before it reads)."""
        found = self._buffers.get(k)
        if found is None or found.depth != self.depth:
            found = self.pool.take(self._pool_key(k)) if self.pool is not None else None
            if found is None:
                found = LeafBuffers.new(tree, k, self.depth)
            self._buffers[k] = found
        return found

    def _pool_key(self, k: int, depth: int | None = None) -> tuple:
        return ("leaf_buffers", k, self.depth if depth is None else depth, self.searcher.num_actions)

    def release(self) -> None:
        """The search is over: its staging buffers go back to the pool (when there is one)."""
        if self.pool is not None:
            for k, buffers in self._buffers.items():
                self.pool.give_back(self._pool_key(k, buffers.depth), buffers)
        self._buffers = {}

    def select(self, job):
        """As ``TreeSearch.select_leaves(job)``: the K leaf positions as a batched ``rules.State`` (views of the
        staging buffers, valid until the next call), or None when no leaf survived; sets ``job.pending``,
        ``job.last_moves`` and ``job.exhausted``."""
        searcher, tree, k = self.searcher, job.tree, job.leaves
        tree.reserve(k)
        room = k + 1 if job.limits.max_nodes is None else job.limits.max_nodes - tree.size
        mode, tables = self.expansion(job)
        root_last = np.asarray(job.root_last, np.int64)
        while True:
            b = self.buffers(tree, k)
            arrays = (k, tree.root, room, tree.terminal, tree.expanded, tree.parents, tree.action_from_parent,
                      tree.children_index, tree.children_visits, tree.children_values, tree.children_rave_visits,
                      tree.children_rave_values, tree.children_prior, tree.children_legal, self.params, self.rng,
                      b.path_nodes, b.path_actions, b.path_lengths, b.ends, tree.states["stones"],
                      tree.states["to_play"], tree.states["ko"], mode, b.waiting, root_last, tables)
            status, count = descend_round(True, *arrays)
            while status == NEEDS_EXPAND:
                searcher.trees.expand_nodes(job, b.waiting[:count].copy())
                status, count = descend_round(False, *arrays)
            if status == DONE:
                break
            self.depth *= 2
        st = tree.states
        out = b.with_leaf_states(tree).states
        n, tree.size = create_round(
            tree.size, tree.root, searcher.rules.ko_rule != "simple", job.history, self.zobrist, tree.parents,
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


@numba.njit(nogil=True, cache=True)
def descend_round(first, k, root, room, terminal, expanded, parents, action_from_parent, children_index,
                  children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
                  children_legal, params, rng, path_nodes, path_actions, lengths, leaves, stones, to_play, ko,
                  inline, waiting, root_last, gamma_tables):
    """The descents of ``descent.descend`` with its expansion loop: ``first`` starts them (``descend_batch``),
    else they go on from the nodes expanded since the last call (``continue_batch``).  With ``inline``
    ``UNIFORM`` or ``GAMMAS`` (``expansion``'s modes) the nodes to expand get their searched moves and priors here
    (``expansion.expand_uniform``, ``expand_gammas`` with gamma_tables, the tuple of ``compiled_prior.gamma_tables``;
    root_last int [2]: the game's last two moves); with ``IN_PYTHON`` their indices go to waiting int32 [>= K]
    and the call returns (``NEEDS_EXPAND``, their count).  Returns (``DONE``, 0),
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
        if inline == expansion.IN_PYTHON:
            waiting[:nodes.shape[0]] = nodes
            return NEEDS_EXPAND, nodes.shape[0]
        if inline == expansion.UNIFORM:
            expansion.expand_uniform(nodes, stones, to_play, ko, children_legal, children_prior, expanded)
        else:
            expansion.expand_gammas(nodes, stones, to_play, ko, parents, action_from_parent, root, root_last,
                                    children_legal, children_prior, expanded, *gamma_tables)
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
    """After ``descend_round`` (its buffers path_nodes ... ends): ``create_leaves``, then the K leaf positions
    (valid leaves first, then the root) with their last two moves (``tree_search.last_moves``; root_last int [2])
    into the ``out_*`` buffers (``copy_leaf``).  Returns (n, the tree's new size)."""
    n, size = create_leaves(size, root, superko, history, zobrist, parents, action_from_parent, to_play_node, hashes,
                            terminal, children_index, children_visits, children_legal, stones, chain, lib_count,
                            lib_sum, lib_sumsq, ko, to_play, passes, captures, hash_words, move_count, path_nodes,
                            path_actions, lengths, ends, out_nodes, out_actions, out_lengths, out_leaves)
    for r in range(ends.shape[0]):
        copy_leaf(r, out_leaves[r] if r < n else root, root, root_last, parents, action_from_parent, stones, chain,
                  lib_count, lib_sum, lib_sumsq, ko, to_play, passes, captures, hash_words, move_count, out_stones,
                  out_chain, out_lib_count, out_lib_sum, out_lib_sumsq, out_ko, out_to_play, out_passes,
                  out_captures, out_hash, out_move_count, out_last)
    return n, size


@numba.njit(nogil=True, cache=True)
def copy_leaf(row, leaf, root, root_last, parents, action_from_parent, stones, chain, lib_count, lib_sum, lib_sumsq,
              ko, to_play, passes, captures, hash_words, move_count, out_stones, out_chain, out_lib_count,
              out_lib_sum, out_lib_sumsq, out_ko, out_to_play, out_passes, out_captures, out_hash, out_move_count,
              out_last):
    """Write node ``leaf``'s position (the tree's [C, ...] fields) and its last two moves
    (``expansion.node_last_moves``) into row ``row`` of the ``out_*`` arrays."""
    for p in range(stones.shape[1]):  # element by element: no row views (each takes and gives back a reference)
        out_stones[row, p] = stones[leaf, p]
        out_chain[row, p] = chain[leaf, p]
        out_lib_count[row, p] = lib_count[leaf, p]
        out_lib_sum[row, p] = lib_sum[leaf, p]
        out_lib_sumsq[row, p] = lib_sumsq[leaf, p]
    out_ko[row] = ko[leaf]
    out_to_play[row] = to_play[leaf]
    out_passes[row] = passes[leaf]
    for j in range(2):
        out_captures[row, j] = captures[leaf, j]
        out_hash[row, j] = hash_words[leaf, j]
    out_move_count[row] = move_count[leaf]
    expansion.node_last_moves(leaf, root, root_last, parents, action_from_parent, out_last[row])


@numba.njit(nogil=True, cache=True)
def _move_row(row, to, stones, chain, lib_count, lib_sum, lib_sumsq, ko, to_play, passes, captures, hash_words,
              move_count):
    """Copy the node position of row ``row`` to row ``to`` (the tree's [C, ...] fields)."""
    stones[to] = stones[row]
    chain[to] = chain[row]
    lib_count[to] = lib_count[row]
    lib_sum[to] = lib_sum[row]
    lib_sumsq[to] = lib_sumsq[row]
    ko[to] = ko[row]
    to_play[to] = to_play[row]
    passes[to] = passes[row]
    captures[to] = captures[row]
    hash_words[to] = hash_words[row]
    move_count[to] = move_count[row]


@numba.njit(nogil=True, cache=True)
def _clear_row(row, stones, chain, lib_count, lib_sum, lib_sumsq, ko, to_play, passes, captures, hash_words,
               move_count):
    """Zero the node position of row ``row`` (the tree's [C, ...] fields)."""
    stones[row] = 0
    chain[row] = 0
    lib_count[row] = 0
    lib_sum[row] = 0
    lib_sumsq[row] = 0
    ko[row] = 0
    to_play[row] = 0
    passes[row] = 0
    captures[row] = 0
    hash_words[row] = 0
    move_count[row] = 0


@numba.njit(nogil=True, cache=True)
def create_leaves(size, root, superko, history, zobrist, parents, action_from_parent, to_play_node, hashes, terminal,
                  children_index, children_visits, children_legal, stones, chain, lib_count, lib_sum, lib_sumsq, ko,
                  to_play, passes, captures, hash_words, move_count, path_nodes, path_actions, lengths, ends,
                  out_nodes, out_actions, out_lengths, out_leaves):
    """After ``descend_round`` (its buffers path_nodes ... ends): create the nodes of the pending edges (in the
    tree's free rows from ``size``; the caller reserved K of them), drop those that repeat a position (``superko``:
    of the game, history uint64 [H] sorted, or of the tree path), resolve every descent's leaf, and write the valid
    descents' paths and leaves into out_nodes ... out_leaves (their first n rows).  Returns (n, the tree's new
    size)."""
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
        for r in range(count):  # the parents' positions (element by element, as in copy_leaf)
            node = pair_nodes[r]
            for p in range(points):
                c_stones[r, p] = stones[node, p]
            c_to_play[r] = to_play[node]
            c_ko[r] = ko[node]
            c_passes[r] = passes[node]
            for j in range(2):
                c_captures[r, j] = captures[node, j]
                c_hash[r, j] = hash_words[node, j]
            c_move_count[r] = move_count[node]
        # The children straight into the tree's free rows (the caller reserved K); a dropped one's row is
        # taken by the next kept child.
        end = size + count
        unused = np.zeros((count, points + 1), np.bool_)
        positions.children_into(c_stones, c_to_play, c_ko, c_passes, c_captures, c_hash, c_move_count, pair_actions,
                                zobrist, stones[size:end], chain[size:end], lib_count[size:end], lib_sum[size:end],
                                lib_sumsq[size:end], ko[size:end], to_play[size:end], passes[size:end],
                                captures[size:end], hash_words[size:end], move_count[size:end], unused, False)
        keys = np.empty(count, np.uint64)
        for r in range(count):
            row = size + r
            keys[r] = np.uint64(hash_words[row, 0]) | (np.uint64(hash_words[row, 1]) << np.uint64(32))
        repeated = np.zeros(count, np.bool_)
        if superko:
            backup.repeated_positions(keys, pair_nodes[:count], pair_actions[:count], pass_action, parents, hashes,
                                      root, history, repeated)
        index = size
        for r in range(count):
            if repeated[r]:
                children_legal[pair_nodes[r], pair_actions[r]] = False
                continue
            row = size + r
            if row != index:
                _move_row(row, index, stones, chain, lib_count, lib_sum, lib_sumsq, ko, to_play, passes, captures,
                          hash_words, move_count)
            parents[index] = pair_nodes[r]
            action_from_parent[index] = pair_actions[r]
            to_play_node[index] = to_play[index]
            hashes[index] = keys[r]
            terminal[index] = passes[index] >= 2
            children_index[pair_nodes[r], pair_actions[r]] = index
            created[r] = index
            index += 1
        for row in range(index, end):  # the rows of dropped children back to a new tree's values
            _clear_row(row, stones, chain, lib_count, lib_sum, lib_sumsq, ko, to_play, passes, captures, hash_words,
                       move_count)
        size = index
    valid = np.empty(k, np.int32)
    n = backup.resolve_leaves(created, pair_of, ends, path_nodes, path_actions, lengths, children_visits, valid)
    for r in range(n):
        i = valid[r]
        out_nodes[r, :path_nodes.shape[1]] = path_nodes[i]
        out_actions[r, :path_nodes.shape[1]] = path_actions[i]
        out_lengths[r] = lengths[i]
        out_leaves[r] = ends[i]
    return n, size
