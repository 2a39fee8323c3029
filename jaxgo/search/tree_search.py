"""The tree search of a ``Searcher`` (strategies ``uct`` and ``rave``), in steps a server can interleave.

``search_tree`` is the search function the searcher runs for them (``searcher.STRATEGY_SEARCHES``); the
searcher's ``TreeSearch`` part holds the tree kept between moves and the descents' state, and reads the
searcher's shared parts (config, rules kernels, evaluator, root moves, budget check) through its public names.

Each iteration descends ``leaves_per_batch`` (K) times from the root with a virtual loss on every edge taken,
creates the new nodes of the batch in one call (on the host: ``Searcher.tree_backend``), and runs
``playouts_per_leaf`` (L) playouts from every leaf in one call of the searcher's ``Evaluator``
(``jaxgo.playouts.evaluator``: light, heavy or rule-policy playouts, chosen by ``SearchConfig.playout_policy``) of
fixed shape [K] x L.  Backup adds the results along the paths
and the AMAF (RAVE) credit from the playouts' first-play records.  Positional/situational superko is checked when
a node is created (against the game history and the tree path).  Own true eyes (the playout eye rule) are not
searched.  Pass has no AMAF statistics (light playouts pass only when forced): under RAVE its value is its own
mean shrunk towards the node's mean (``pass_prior_playouts`` pseudo-playouts), not RAVE's neutral 0.5, which
made a losing side's search visit pass early.  ``K(s, a)`` (progressive bias) is the move model's probability
(``jaxgo.search.priors``, shipped gammas) when ``bias_c2 > 0``, uniform otherwise; its features see the same last
two moves as the playouts (the game's at the root).  A node gets its K when a descent first goes through it
(``Tree.expanded``), not when it is created: most nodes stay leaves.  The same K can instead (or also) enter as virtual
experience in the RAVE statistics (``prior_even``, ``prior_pattern``; ``reference.virtual_rave``), which fades
with a move's AMAF count rather than with its visits.  The edge scores, the descents and the backup run as
compiled loops (``jaxgo.search.descent``); their numpy definitions are ``jaxgo.search.reference``.

The steps are public so that a server can run many searches at once and merge their leaf batches into shared
device calls: ``start_tree_search``, then repeatedly ``select_leaves`` -> (evaluate the states, L playouts each)
-> ``backup_leaves``, then ``finish_tree_search``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from jaxgo.go.hostboard import state_board
from jaxgo.go.ladder import failed_escapes
from jaxgo.go.rules import hash_key
from jaxgo.search import backup, descent, komi, priors  # the compiled tree loops; K(s, a): uniform unless bias_c2 > 0
from jaxgo.search.budget import first_batch_size
from jaxgo.search.limits import SearchLimits
from jaxgo.search.result import SearchResult, search_result
from jaxgo.search.tree import Tree, move_decided, stack_state, states_to_numpy

NO_LIMITS = SearchLimits()  # a job's limits when its owner checks the budget itself


@dataclasses.dataclass
class PendingLeaves:
    """The n leaves of a batch waiting for their playouts and their descent paths (D: the longest recorded)."""

    nodes: np.ndarray  # int32 [n, D]: the nodes along each path (root first)
    actions: np.ndarray  # int32 [n, D]: the action taken at each of them
    lengths: np.ndarray  # int32 [n]: each path's length (0: the leaf is the root)
    leaves: np.ndarray  # int32 [n]: each path's leaf node

    @property
    def count(self) -> int:
        return len(self.leaves)

    def root_actions(self) -> np.ndarray:
        """int64 [n]: the root move each path took (-1 where the leaf is the root)."""
        return np.where(self.lengths > 0, self.actions[:, 0], -1).astype(np.int64)


@dataclasses.dataclass
class TreeJob:
    """One tree search in progress (see ``Searcher.start_tree_search``)."""

    tree: Tree
    history: np.ndarray  # uint64 [H], sorted: the position keys a new node may not repeat (``Searcher.history``)
    limits: SearchLimits = NO_LIMITS  # the node cap and forbid_pass apply while the job runs
    leaves: int = 128  # K, boards per select_leaves batch
    done: int = 0  # playouts backed up
    iterations: int = 0
    exhausted: bool = False  # the root has no move left to search
    pending: PendingLeaves | None = None  # the leaves selected and waiting for their playouts
    started: float = dataclasses.field(default_factory=time.perf_counter)
    root_last: tuple = (-1, -1)  # the game's last move and the one before (P = pass, -1 = none)
    last_moves: np.ndarray | None = None  # int32 [K, 2]: last two moves of each selected leaf's position
    stopped_early: bool = False  # a time-limited search ended because its move was decided (``early_stop``)
    on_expand: object = None  # called with the nodes int32 [n] an expansion completes, before their priors
    extra_komi: float = 0.0  # points added to White's komi in the playouts' values (``komi.extra_komi``)


def search_tree(searcher, game, limits: SearchLimits, start: float) -> SearchResult:
    """The search function of the tree strategies: a whole tree search by the searcher's ``trees``."""
    return searcher.trees.search(game, limits, start)


def tree_leaves(config, limits: SearchLimits, size: int) -> int:
    """K of a tree search within ``limits``: on a time budget without ``leaves_per_batch``, the limits'
    ``timed_leaves`` (the shape compiled for the game's clock, which its owner keeps from move to move) or else
    one from the seconds; otherwise ``first_batch_size`` of the budget."""
    playouts, seconds = limits.budget()
    if playouts is None and not config.leaves_per_batch and limits.timed_leaves is not None:
        return limits.timed_leaves
    return first_batch_size(config, playouts, seconds, size)


class TreeSearch:
    """A searcher's tree strategies: the tree kept between moves (``tree``, rooted at the game's position after
    ``tree_moves``), the descents' tie-breaking stream and path buffer depth, and the steps of a search.
    ``searcher``: the ``jaxgo.search.searcher.Searcher`` whose shared parts it uses."""

    def __init__(self, searcher, seed: int = 0):
        self.searcher = searcher
        self.tree: Tree | None = None
        self.tree_moves: list | None = None  # the game's move list when the tree's root was its position
        self._tie_rng = descent.new_rng(seed)  # the edge scores' tie-breaking noise
        self._path_depth = 64  # D: the longest descent path recorded (doubled when a descent is longer)

    @property
    def config(self):
        return self.searcher.config

    def reset(self) -> None:
        self.tree = None
        self.tree_moves = None

    def prepare_tree(self, game, forbid_pass: bool = False, storage: Tree | None = None) -> Tree:
        """The tree rooted at the game's position: the old subtree if the game went on from the old root, else a
        new tree (in ``storage``, a clean ``Tree`` of size 0 such as ``arena.TreeArena.take`` gives, when given)."""
        searcher = self.searcher
        moves = list(game.moves)
        tree = self.tree
        if tree is not None and self.tree_moves is not None and moves[: len(self.tree_moves)] == self.tree_moves:
            node = tree.root
            for color, move in moves[len(self.tree_moves):]:
                if node < 0 or int(tree.to_play[node]) != color:
                    node = -1
                    break
                node = int(tree.children_index[node, move])
            root_key = int(hash_key(np.asarray(game.state.hash)))
            if node >= 0 and int(tree.hashes[node]) == root_key and int(tree.to_play[node]) == game.to_play:
                tree.reroot(node)
                tree.children_legal[0] = searcher.root_legal(game, forbid_pass)
                if not tree.expanded[0]:
                    tree.children_prior[0] = priors.root_prior(self.config, game, tree.children_legal[0],
                                                               backend=searcher.tree_backend)
                tree.expanded[0] = True
                self.tree_moves = moves
                return tree
        if storage is not None and storage.states is not None:
            tree, root = storage, storage.add_root(game.state)  # (as add_nodes, without the batch of one)
        else:
            tree = Tree(searcher.num_actions) if storage is None else storage
            root = int(tree.add_nodes(states_to_numpy(stack_state(game.state, 1)), np.array([-1], np.int32),
                                      np.array([-1], np.int32))[0])
        tree.children_legal[root] = searcher.root_legal(game, forbid_pass)
        tree.children_prior[root] = priors.root_prior(self.config, game, tree.children_legal[root],
                                                      backend=searcher.tree_backend)
        tree.expanded[root] = True
        self.tree, self.tree_moves = tree, moves
        return tree

    def search(self, game, limits: SearchLimits, start: float) -> SearchResult:
        """A whole tree search within ``limits``, started at ``start`` (``time.perf_counter``)."""
        searcher = self.searcher
        playouts, seconds = limits.budget()
        job = self.start_tree_search(game, limits, leaves=tree_leaves(self.config, limits, game.size))
        while job.done == 0 or not searcher.out_of_budget(job.done, limits, start):
            leaf_states = self.select_leaves(job)
            if leaf_states is None:
                if job.exhausted:
                    break
                continue
            batch = searcher.evaluate_batch(leaf_states, self.config.playouts_per_leaf, job.last_moves,
                                             active=job.pending.count)
            self.backup_leaves(job, batch.winner, batch.first_colour, batch.score)
            if self.config.early_stop and seconds is not None and self._move_decided(job, playouts, seconds, start):
                job.stopped_early = True
                break
        return self.finish_tree_search(game, job, start)

    @staticmethod
    def _move_decided(job: "TreeJob", playouts, seconds: float, start: float) -> bool:
        """Whether the rest of a time-limited search (the playouts its measured rate gives in the time left, at
        most the rest of a playout budget) cannot change the move: the time saved stays on the game clock."""
        elapsed = time.perf_counter() - start
        remaining = job.done / max(elapsed, 1e-9) * max(0.0, seconds - elapsed)
        if playouts is not None:
            remaining = min(remaining, playouts - job.done)
        tree = job.tree
        visits = np.where(tree.children_legal[tree.root], tree.children_visits[tree.root], 0.0)
        return move_decided(visits, remaining)

    def start_tree_search(self, game, limits: SearchLimits = NO_LIMITS, leaves: int | None = None,
                          storage: Tree | None = None) -> "TreeJob":
        """A tree search of the game's position (the kept subtree when the game went on from the old root) within
        ``limits`` (its node cap and whether pass is searched; the budget is the caller's to check); a new tree
        goes into ``storage`` when given (``prepare_tree``).

        K: ``leaves``, else ``leaves_per_batch``, else from the limits' playouts (without them K is 128).
        """
        leaves = leaves or first_batch_size(self.config, limits.playouts, None, game.size)
        return TreeJob(tree=self.prepare_tree(game, limits.forbid_pass, storage), history=self.searcher.history(game),
                       limits=limits,
                       leaves=leaves, root_last=priors.game_last_moves(game),
                       extra_komi=komi.extra_komi(self.config, game))

    def _descend(self, job: "TreeJob"):
        """``descent.descend`` of the job's K descents (the path buffer kept as long as the longest path seen)."""
        tree, k, max_nodes = job.tree, job.leaves, job.limits.max_nodes
        room = k + 1 if max_nodes is None else max_nodes - tree.size
        out, self._path_depth = descent.descend(tree, k, descent.score_params(self.config), self._tie_rng, room,
                                                self._path_depth, lambda nodes: self.expand_nodes(job, nodes))
        return out

    def expand_nodes(self, job: "TreeJob", nodes: np.ndarray) -> None:
        """Complete tree nodes int32 [n] that a descent is about to go through for the first time and mark them
        expanded: their searched moves (on the host tree; the XLA kernels give them at creation), the ladder
        pruning of those, the job's ``on_expand`` (a server's avoid/allowMoves) and their priors.  Most nodes stay
        leaves (about 4 in 5 in a search of 8,000 nodes) and the move model is most of the tree's host work, so a
        node gets these here rather than when it is created."""
        tree = job.tree
        count = len(nodes)
        backend = self.searcher.tree_backend
        pad = job.leaves - count if backend == "xla" and count < job.leaves else 0  # one jitted shape
        padded = np.concatenate([nodes, np.full(pad, nodes[0], np.int32)]).astype(np.int32)
        states = tree.gather_states(padded)
        if backend == "native":
            tree.children_legal[nodes] = self.searcher.searchable_batch(states)[:count]
        if self.config.ladder_prune_tree:
            for row, node in enumerate(nodes):
                prune_failed_escapes(tree.children_legal[node], states.stones[row], states.to_play[row],
                                     states.ko[row])
        if job.on_expand is not None:
            job.on_expand(nodes)
        recent = last_moves(tree, padded, job.root_last)
        tree.children_prior[nodes] = priors.children_prior(
            self.config, states, np.arange(count), tree.children_legal[nodes], recent[:count, 0], recent[:count, 1],
            backend)
        tree.expanded[nodes] = True

    def select_leaves(self, job: "TreeJob"):
        """Descend ``leaves_per_batch`` (K) times with virtual loss and create the new nodes (host work, no device
        call unless the rules allow suicide; ``tree_backend``).

        Returns the leaf states as a batched ``rules.State`` of exactly K boards (padded with the root), or None
        when no leaf survived this round (superko); then ``job.exhausted`` tells whether the root has no move.
        """
        tree = job.tree
        k = job.leaves
        path_nodes, path_actions, lengths, ends = self._descend(job)
        pair_nodes, pair_actions, pair_of = (np.empty(k, np.int32) for _ in range(3))
        count = backup.number_pending(path_nodes, path_actions, lengths, ends, tree.children_index, pair_nodes,
                                       pair_actions, pair_of)
        created = self._create_nodes(job, pair_nodes[:count], pair_actions[:count])
        valid = np.empty(k, np.int32)
        n = backup.resolve_leaves(created, pair_of, ends, path_nodes, path_actions, lengths, tree.children_visits,
                                   valid)
        valid = valid[:n]
        job.exhausted = n == 0 and not tree.children_legal[tree.root].any()
        if n == 0:
            job.pending = None
            return None
        job.pending = PendingLeaves(path_nodes[valid], path_actions[valid], lengths[valid], ends[valid])
        leaf_nodes = np.concatenate([job.pending.leaves, np.full(k - n, tree.root, np.int32)])
        job.last_moves = last_moves(tree, leaf_nodes, job.root_last)
        return tree.gather_states(leaf_nodes)

    def _create_nodes(self, job: "TreeJob", parents: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Create the children of the edges (parents int32 [R], actions int32 [R]) in one batch: their positions
        (and with the XLA kernels their searched moves); returns int32 [R], each edge's new node or -1 where its
        position repeats one of the game or of its tree path (superko: the edge is no longer searched)."""
        tree = job.tree
        count = len(parents)
        created = np.full(count, -1, np.int32)
        if count == 0:
            return created
        searcher = self.searcher
        pass_action = searcher.num_actions - 1
        if searcher.tree_backend == "native":  # the searched moves come with the expansion
            child_states, child_legal = searcher.children_batch(tree.gather_states(parents), actions,
                                                                searchable=False)
        else:  # jitted kernels: one shape per K
            pad = job.leaves - count
            child_states, child_legal = searcher.children_batch(
                tree.gather_states(np.concatenate([parents, np.full(pad, parents[0], np.int32)])),
                np.concatenate([actions, np.full(pad, pass_action, np.int32)]))
        child_np = states_to_numpy(child_states)
        child_legal = np.asarray(child_legal)
        keep = np.ones(count, bool)
        if searcher.rules.ko_rule != "simple":
            repeated = np.empty(count, bool)
            backup.repeated_positions(hash_key(child_np["hash"][:count]), parents, actions, pass_action, tree.parents,
                                       tree.hashes, tree.root, job.history, repeated)
            tree.children_legal[parents[repeated], actions[repeated]] = False
            keep = ~repeated
        rows = np.flatnonzero(keep)
        if len(rows) == 0:
            return created
        index = tree.add_nodes({n: v[rows] for n, v in child_np.items()}, parents[rows], actions[rows])
        if searcher.tree_backend == "xla":
            tree.children_legal[index] = child_legal[rows]
        created[rows] = index  # not expanded: ``expand_nodes`` completes those a descent goes through
        return created

    def backup_leaves(self, job: "TreeJob", winner: np.ndarray, first: np.ndarray, score: np.ndarray) -> None:
        """Back up the playouts of the last ``select_leaves``: winner int [K, L], first colour int [K, L, P],
        score float [K, L] (Black - White - komi) (rows beyond the valid leaves are padding and ignored); each
        playout's value is ``backup.playout_values`` under the config's ``score_utility``, of the results
        re-scored with the job's dynamic komi (``komi.shifted_results``; none in an even game)."""
        pending, tree = job.pending, job.tree
        n = pending.count
        winner, score = komi.shifted_results(np.asarray(winner)[:n], np.asarray(score)[:n], job.extra_komi)
        value = backup.playout_values(winner, score, self.config.score_utility, self.searcher.rules.size)
        backup.backup_batch(np.arange(n), pending.nodes, pending.actions, pending.lengths, pending.leaves, value,
                             np.asarray(first, np.int8)[:n], tree.to_play, tree.children_visits,
                             tree.children_values, tree.children_rave_visits, tree.children_rave_values,
                             self.config.strategy == "rave")
        job.done += n * int(np.shape(winner)[1])
        job.iterations += 1
        job.pending = None

    def finish_tree_search(self, game, job: "TreeJob", start: float | None = None) -> SearchResult:
        """The root's visits and win rates, the chosen move and the principal variation."""
        tree = job.tree
        visits = tree.children_visits[tree.root].copy()
        visits[~tree.children_legal[tree.root]] = 0
        rates = tree.root_win_rates()
        elapsed = time.perf_counter() - (job.started if start is None else start)
        self.searcher.debug(f"{self.config.strategy}: {job.done} playouts in {job.iterations} batches, "
                   f"tree {tree.size} nodes, {elapsed:.2f} s" + (" (stopped: the move is decided)"
                                                                   if job.stopped_early else ""))
        result = search_result(visits, rates, job.done, tree.principal_variation())
        result.stopped_early = job.stopped_early
        return result


def last_moves(tree: Tree, nodes: np.ndarray, root_last: tuple) -> np.ndarray:
    """int32 [len(nodes), 2]: the last move and the one before it in each node's position (actions; P = pass,
    -1 = none), from the tree's edges and, above the root, the game's last moves ``root_last``."""
    parent = tree.parents[nodes]
    at_root = nodes == tree.root
    last = np.where(at_root, root_last[0], tree.action_from_parent[nodes])
    grand = tree.action_from_parent[np.maximum(parent, 0)]
    before = np.where(at_root, root_last[1], np.where(parent == tree.root, root_last[0], grand))
    return np.stack([last, before], axis=1).astype(np.int32)


def prune_failed_escapes(searched, stones, to_play, ko) -> None:
    """Unmark in ``searched`` bool [A] (pass last; changed in place) the atari escapes of the side to move that a
    ladder still captures, in the position of stones int [P], ``to_play`` and simple-ko point ``ko``; pass stays."""
    board = state_board(stones, to_play, ko)
    searched[failed_escapes(board)] = False

