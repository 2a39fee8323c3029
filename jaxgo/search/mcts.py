"""Monte Carlo search family over playouts (light, heavy or rule policy), evaluating leaves in fixed-shape batches.

Strategies (Lew's thesis, chapter 3):
    ``uct``    MCTS with UCB1: argmax_a mu(s+a) + c * sqrt(log n(s) / n(s+a)) (+ progressive bias).
    ``rave``   UCT+RAVE+PB: (1 - alpha) mu + alpha mu_RAVE + c1 sqrt(log n(s) / n(s+a)) + c2 K(s,a) / n(s+a),
               alpha = n_RAVE / (n_RAVE + n + c3 n n_RAVE) (Silver).
    ``mc``     vanilla Monte Carlo: equal playouts for every legal first move, best first-move mean.
    ``amaf``   all-moves-as-first: playouts from the position, each move credited with the games in which the
               player to move played it first anywhere.
    ``pp``     progressive pruning (Bouzy): vanilla rounds, moves c-dominated (disjoint confidence intervals
               mu +- c sigma / sqrt(n)) are no longer sampled.
    ``depth2`` depth-2 min-of-means: every reply to every move is sampled; a move's value is the lowest mean of
               its replies (the opponent minimises); the move with the highest value is chosen.

Tree search: each iteration descends ``leaves_per_batch`` (K) times from the root with a virtual loss on every
edge taken, creates the new nodes of the batch with one device call, and runs ``playouts_per_leaf`` (L) light
playouts from every leaf in one call of the injected ``Evaluator`` (``jaxgo.playouts.evaluator``: light, heavy or
rule-policy playouts, chosen by ``SearchConfig.playouts``) of fixed shape [K] x L.  Backup adds the results along the
paths and the AMAF (RAVE) credit from the playouts' first-play records.  Positional/situational superko is
checked when a node is created (against the game history and the tree path).  Own true eyes (the playout eye
rule) are not searched.  Pass has no AMAF statistics (light playouts pass only when forced): under RAVE its
value is its own mean shrunk towards the node's mean (``pass_prior_playouts`` pseudo-playouts), not RAVE's
neutral 0.5, which made a losing side's search visit pass early.  ``K(s, a)`` (progressive bias) is the move
model's probability (``jaxgo.search.priors``, shipped gammas) when ``bias_c2 > 0``, uniform otherwise; its
features see the same last two moves as the playouts (the game's at the root).  The same K can instead (or
also) enter as virtual experience in the RAVE statistics (``prior_even``, ``prior_pattern``; ``virtual_rave``),
which fades with a move's AMAF count rather than with its visits.  The search reports the best action by
``tree.rank_actions`` and the principal variation that starts with it; the move played, resignation and passing
are the ``Player``'s (``jaxgo.search.player``).  The edge scores, the descents and the backup run as compiled loops
(``jaxgo.search.descent``); their numpy definitions are kept here as the reference (``edge_scores_reference``,
``descend_reference``, ``backup_reference``) that the compiled ones are tested against.
"""

from __future__ import annotations

import dataclasses
import math
import time

import jax
import numpy as np

from jaxgo.go.hostboard import state_board
from jaxgo.go.kernels import kernels
from jaxgo.go.ladder import failed_escapes
from jaxgo.playouts.evaluator import Evaluator, evaluator_for, resolve_backend
from jaxgo.playouts.native import positions
from jaxgo.playouts.native.runner import default_threads
from jaxgo.search import descent, priors  # descent: the compiled tree loops; K(s, a): uniform unless bias_c2 > 0
from jaxgo.search.config import SearchConfig
from jaxgo.search.tree import STATE_FIELDS, Tree, best_action, hash_key, move_decided

STRATEGIES = ("uct", "rave", "mc", "amaf", "pp", "depth2")  # the searches (SearchConfig also has "random")
KEYS_PER_SPLIT = 256  # random keys split at once for the batches of a search


def _to_numpy(state) -> dict:
    return {name: np.asarray(getattr(state, name)) for name in STATE_FIELDS}


def stack_state(state, count: int):
    """``count`` copies of one unbatched ``rules.State`` as a batched numpy state [count, ...]."""
    return jax.tree_util.tree_map(lambda x: np.broadcast_to(np.asarray(x), (count,) + np.shape(x)).copy(), state)


@dataclasses.dataclass
class SearchResult:
    move: int  # point or pass = P: the best action by ``tree.rank_actions``, the PV's first move

    win_rate: float  # for the player to move
    playouts: int
    seconds: float
    visits: np.ndarray  # [A] root visits (or playouts per move for flat strategies)
    values: np.ndarray  # [A] root win rates (NaN where unknown)
    pv: list
    stopped_early: bool = False  # a time-limited search ended because more playouts could not change the move


@dataclasses.dataclass
class TreeJob:
    """One tree search in progress (see ``Searcher.start_tree_search``)."""

    tree: Tree
    history: set
    leaves: int = 128  # K, boards per select_leaves batch
    done: int = 0  # playouts backed up
    iterations: int = 0
    exhausted: bool = False  # the root has no move left to search
    pending: tuple | None = None  # (paths, leaves) selected and waiting for their playouts
    started: float = dataclasses.field(default_factory=time.perf_counter)
    root_last: tuple = (-1, -1)  # the game's last move and the one before (P = pass, -1 = none)
    last_moves: np.ndarray | None = None  # int32 [K, 2]: last two moves of each selected leaf's position
    pending_paths: tuple | None = None  # the pending paths as arrays (nodes [n, D], actions [n, D], lengths [n])
    stopped_early: bool = False  # a time-limited search ended because its move was decided (``early_stop``)


class Searcher:
    """One engine's search state for a game; keeps the tree between moves (subtree reuse)."""

    def __init__(self, rules_config, config: SearchConfig | None = None, seed: int = 0, log=None,
                 evaluator: Evaluator | None = None):
        self.rules = rules_config
        self.config = config or SearchConfig()
        if self.config.strategy not in STRATEGIES:
            raise ValueError(f"unknown search strategy {self.config.strategy!r}; one of {STRATEGIES}")
        self.evaluator = evaluator or evaluator_for(self.config)
        self.children_batch, self.searchable_batch = position_kernels(self.rules.suicide, self.config.backend)
        self._chooses_evaluator = evaluator is None  # per search, by the position (late_playouts), unless given
        self.key = jax.random.PRNGKey(seed)
        self._keys = []  # keys split in bulk from ``key``, taken from the end
        self._tie_rng = descent.new_rng(seed)  # the edge scores' tie-breaking noise
        self._path_depth = 64  # D: the longest descent path recorded (doubled when a descent is longer)
        self.log = log
        self.tree = None
        self._tree_moves = None  # the game's move list when the tree's root was its position
        self.total_playouts = 0
        self.timed_leaves: int | None = None  # K of every search on a time budget, set by the first one
        self.forbid_pass = False  # kgs-genmove_cleanup: pass only when nothing else is searched
        # Most tree nodes (None: no limit).  A full tree stops growing: a descent that reaches a missing child
        # below the root plays out from the node it is at (the root's children are always created).
        self.max_nodes: int | None = None
        self._stop = None  # the running search's stop check

    @property
    def num_actions(self) -> int:
        return self.rules.size ** 2 + 1

    def _next_key(self):
        """The next batch's random key: split from ``self.key`` in bulk (``KEYS_PER_SPLIT`` at a time, one host
        call), not one device call per batch."""
        if not self._keys:
            keys = np.asarray(jax.random.split(self.key, KEYS_PER_SPLIT + 1))
            self.key = keys[0]
            self._keys = list(keys[:0:-1])
        return self._keys.pop()

    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def reset(self) -> None:
        self.tree = None
        self._tree_moves = None

    # -- common ---------------------------------------------------------------------------------------------
    def _history(self, game) -> set:
        if self.rules.ko_rule == "simple":
            return set()
        return game.position_keys()

    def _root_legal(self, game) -> np.ndarray:
        """[A] moves searched at the root: legal under the game's ko rule, own eyes excluded, pass allowed; with
        ``ladder_prune`` (or ``ladder_prune_tree``) also the atari escapes that a ladder still captures
        (``go.ladder.failed_escapes``)."""
        legal = game.legal_moves(game.to_play)
        eyes_excluded = np.asarray(self.searchable_batch(stack_state(game.state, 1)))[0]
        mask = legal & eyes_excluded
        if self.config.ladder_prune or self.config.ladder_prune_tree:
            prune_failed_escapes(mask, game.state.stones, game.to_play, game.state.ko)
        mask[-1] = not (self.forbid_pass and mask[:-1].any())
        return mask

    def _evaluate(self, states, num_per_state: int, last_moves=None, active: int | None = None):
        """Playouts of the evaluator from the first ``active`` (default all) of a batched state [S]; (winner
        [active, L], first_colour [active, L, P]).  last_moves: int [S, 2] (the positions' last two moves), used
        by the heavy and rule policies for the first playout move's distance features."""
        batch = self._evaluate_batch(states, num_per_state, last_moves, active)
        return batch.winner, batch.first_colour

    def _evaluate_batch(self, states, num_per_state: int, last_moves=None, active: int | None = None):
        """The evaluator's ``PlayoutBatch`` of the first ``active`` of a batched state [S] (see ``_evaluate``)."""
        return self.evaluator.evaluate(states, self._next_key(), num_per_state, self.rules.komi, last_moves, active)

    def search(self, game, playouts: int | None = None, seconds: float | None = None, stop=None) -> SearchResult:
        """Search the game's current position for its side to move, within a playout and/or time budget.
        ``stop``: () -> bool, checked after every batch; True ends the search with what it has (GTP interrupt,
        the end of pondering)."""
        if playouts is None and seconds is None:
            playouts = 1000
        start = time.perf_counter()
        method = {"uct": self._search_tree, "rave": self._search_tree, "mc": self._search_flat,
                  "pp": self._search_flat, "amaf": self._search_amaf, "depth2": self._search_depth2}
        self._stop = stop
        if self._chooses_evaluator and self.config.late_playouts:
            self.evaluator = evaluator_for(self.config, stones=game.state.stones)
        try:
            result = method[self.config.strategy](game, playouts, seconds, start)
        finally:
            self._stop = None
        result.seconds = time.perf_counter() - start
        self.total_playouts += result.playouts
        return result

    def _out_of_budget(self, done: int, playouts, seconds, start) -> bool:
        if playouts is not None and done >= playouts:
            return True
        if self._stop is not None and self._stop():
            return True
        return seconds is not None and time.perf_counter() - start >= seconds

    def _finish(self, game, visits, values, playouts, pv=()) -> SearchResult:
        """The result from per-action visits and win rates: the move is the best by ``tree.rank_actions`` and
        the first move of the principal variation (which is the move alone for the flat strategies)."""
        p = self.num_actions - 1
        if not np.any(visits > 0):
            return SearchResult(p, 0.5, playouts, 0.0, visits, values, [p])
        pv = list(pv)
        best = pv[0] if pv else best_action(visits, values)
        return SearchResult(best, float(values[best]), playouts, 0.0, visits, values, pv or [best])

    # -- tree search ----------------------------------------------------------------------------------------
    def _prepare_tree(self, game) -> Tree:
        """The tree rooted at the game's position: the old subtree if the game went on from the old root."""
        moves = list(game.moves)
        tree = self.tree
        if tree is not None and self._tree_moves is not None and moves[: len(self._tree_moves)] == self._tree_moves:
            node = tree.root
            for color, move in moves[len(self._tree_moves):]:
                if node < 0 or int(tree.to_play[node]) != color:
                    node = -1
                    break
                node = int(tree.children_index[node, move])
            root_key = int(hash_key(np.asarray(game.state.hash)))
            if node >= 0 and int(tree.hashes[node]) == root_key and int(tree.to_play[node]) == game.to_play:
                tree.reroot(node)
                tree.children_legal[0] = self._root_legal(game)
                tree.expanded[0] = True
                self._tree_moves = moves
                return tree
        tree = Tree(self.num_actions)
        root = tree.add_nodes(_to_numpy(stack_state(game.state, 1)), np.array([-1], np.int32), np.array([-1], np.int32))
        tree.children_legal[root[0]] = self._root_legal(game)
        tree.children_prior[root[0]] = priors.root_prior(self.config, game, tree.children_legal[root[0]])
        tree.expanded[root[0]] = True
        self.tree, self._tree_moves = tree, moves
        return tree

    def _search_tree(self, game, playouts, seconds, start) -> SearchResult:
        if playouts is None and not self.config.leaves_per_batch:
            leaves = self.leaves_for_seconds(seconds, game.size)
        else:
            leaves = first_batch_size(self.config, playouts, seconds, game.size)
        job = self.start_tree_search(game, leaves=leaves)
        while job.done == 0 or not self._out_of_budget(job.done, playouts, seconds, start):
            leaf_states = self.select_leaves(job)
            if leaf_states is None:
                if job.exhausted:
                    break
                continue
            batch = self._evaluate_batch(leaf_states, self.config.playouts_per_leaf, job.last_moves,
                                         active=len(job.pending[1]))
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

    # The three steps of one tree-search iteration, public so that a server can run many searches at once and
    # merge their leaf batches into shared device calls: start_tree_search, then repeatedly select_leaves ->
    # (evaluate the states, L playouts each) -> backup_leaves, then finish_tree_search.
    def start_tree_search(self, game, budget: int | None = None, leaves: int | None = None) -> "TreeJob":
        """A tree search of the game's position (the kept subtree when the game went on from the old root).

        K: ``leaves``, else ``leaves_per_batch``, else from ``budget`` (expected playouts; without it K is 128).
        """
        leaves = leaves or first_batch_size(self.config, budget, None, game.size)
        return TreeJob(tree=self._prepare_tree(game), history=self._history(game), leaves=leaves,
                       root_last=priors.game_last_moves(game))

    def leaves_for_seconds(self, seconds: float, size: int) -> int:
        """K for a search on a time budget: chosen by the first such search (``first_batch_size``, as the GTP
        warm-up compiles it) and kept, so that a game on a clock never waits inside a move for a new batch shape
        to compile (the clock's share changes from move to move)."""
        if self.timed_leaves is None:
            self.timed_leaves = first_batch_size(self.config, None, seconds, size)
        return self.timed_leaves

    def _descend(self, tree: Tree, k: int):
        """``descent.descend`` of K descents (the path buffer kept as long as the longest path seen)."""
        room = k + 1 if self.max_nodes is None else self.max_nodes - tree.size
        out, self._path_depth = descent.descend(tree, k, descent.score_params(self.config), self._tie_rng, room,
                                                self._path_depth)
        return out

    def select_leaves(self, job: "TreeJob"):
        """Descend ``leaves_per_batch`` (K) times with virtual loss and create the new nodes (one device call).

        Returns the leaf states as a batched ``rules.State`` of exactly K boards (padded with the root), or None
        when no leaf survived this round (superko); then ``job.exhausted`` tells whether the root has no move.
        """
        tree = job.tree
        children = self.children_batch
        k = job.leaves
        pass_action = self.num_actions - 1
        descended = self._descend(tree, k)
        path_nodes, path_actions, lengths, ends = descended
        paths, leaves, pending = [], [], {}
        for i in range(k):
            path = list(zip(path_nodes[i, :lengths[i]].tolist(), path_actions[i, :lengths[i]].tolist()))
            leaf = int(ends[i])
            if leaf == descent.PENDING:
                leaf = pending.setdefault(path[-1], -1 - len(pending))
            paths.append(path)
            leaves.append(leaf)
        # Create the new nodes of this batch in one device call.
        created = {}
        if pending:
            pairs = list(pending)
            parents = np.array([p for p, _ in pairs], np.int32)
            actions = np.array([a for _, a in pairs], np.int32)
            pad = k - len(pairs)
            states = tree.gather_states(np.concatenate([parents, np.full(pad, parents[0], np.int32)]))
            child_states, child_legal = children(states, np.concatenate([actions, np.full(pad, pass_action, np.int32)]))
            child_np = _to_numpy(child_states)
            child_legal = np.asarray(child_legal)
            keys = hash_key(child_np["hash"])
            keep = np.ones(len(pairs), bool)
            if self.rules.ko_rule != "simple":
                for i, (parent, action) in enumerate(pairs):
                    if action == pass_action:
                        continue
                    key = int(keys[i])
                    if key in job.history or key in tree.path_hashes(parent):
                        keep[i] = False
                        tree.children_legal[parent, action] = False
            rows = np.flatnonzero(keep)
            if len(rows):
                index = tree.add_nodes({n: v[rows] for n, v in child_np.items()}, parents[rows], actions[rows])
                tree.children_legal[index] = child_legal[rows]
                if self.config.ladder_prune_tree:
                    for row, node in zip(rows, index):
                        prune_failed_escapes(tree.children_legal[node], child_np["stones"][row],
                                             child_np["to_play"][row], child_np["ko"][row])
                # The move before each new node's last move: the parent's own last move (the game's last
                # move for children of the root), from the same source as the playouts' last moves.
                tree.children_prior[index] = priors.children_prior(
                    self.config, child_states, rows, child_legal[rows], actions[rows],
                    _last_moves(tree, parents[rows], job.root_last)[:, 0])
                for row, node in zip(rows, index):
                    created[pairs[row]] = int(node)
        valid = []
        for i, (path, leaf) in enumerate(zip(paths, leaves)):
            if leaf < 0:
                leaf = created.get(path[-1])
                if leaf is None:  # superko: take the virtual loss back and drop this leaf
                    for node, action in path:
                        tree.children_visits[node, action] -= 1
                    continue
                leaves[i] = leaf
            valid.append(i)
        job.exhausted = not valid and not tree.children_legal[tree.root].any()
        if not valid:
            job.pending = None
            return None
        job.pending = ([paths[i] for i in valid], [leaves[i] for i in valid])
        job.pending_paths = tuple(array[valid] for array in descended[:3])
        leaf_nodes = np.array(job.pending[1] + [tree.root] * (k - len(valid)), np.int32)
        job.last_moves = _last_moves(tree, leaf_nodes, job.root_last)
        return tree.gather_states(leaf_nodes)

    def backup_leaves(self, job: "TreeJob", winner: np.ndarray, first: np.ndarray, score: np.ndarray) -> None:
        """Back up the playouts of the last ``select_leaves``: winner int [K, L], first colour int [K, L, P],
        score float [K, L] (Black - White - komi) (rows beyond the valid leaves are padding and ignored); each
        playout's value is ``descent.playout_values`` under the config's ``score_utility``."""
        paths, leaves = job.pending
        tree, n = job.tree, len(leaves)
        path_nodes, path_actions, lengths = job.pending_paths
        value = descent.playout_values(np.asarray(winner)[:n], np.asarray(score)[:n], self.config.score_utility,
                                       self.rules.size)
        descent.backup_batch(np.arange(n), path_nodes, path_actions, lengths, np.asarray(leaves, np.int32),
                             value, np.asarray(first, np.int8)[:n], tree.to_play,
                             tree.children_visits, tree.children_values, tree.children_rave_visits,
                             tree.children_rave_values, self.config.strategy == "rave")
        job.pending_paths = None
        job.done += len(leaves) * int(np.shape(winner)[1])
        job.iterations += 1
        job.pending = None

    def finish_tree_search(self, game, job: "TreeJob", start: float | None = None) -> SearchResult:
        """The root's visits and win rates, the chosen move and the principal variation."""
        tree = job.tree
        visits = tree.children_visits[tree.root].copy()
        visits[~tree.children_legal[tree.root]] = 0
        rates = tree.root_win_rates()
        elapsed = time.perf_counter() - (job.started if start is None else start)
        self.debug(f"{self.config.strategy}: {job.done} playouts in {job.iterations} batches, "
                   f"tree {tree.size} nodes, {elapsed:.2f} s" + (" (stopped: the move is decided)"
                                                                   if job.stopped_early else ""))
        result = self._finish(game, visits, rates, job.done, tree.principal_variation())
        result.stopped_early = job.stopped_early
        return result

    # -- flat strategies ------------------------------------------------------------------------------------
    def _root_children(self, game):
        """(child states [A], legal [A], child legal masks [A, A]) of the current position."""
        children = self.children_batch
        moves = np.arange(self.num_actions, dtype=np.int32)
        child_states, child_legal = children(stack_state(game.state, self.num_actions), moves)
        return child_states, self._root_legal(game), np.asarray(child_legal)

    def _search_flat(self, game, playouts, seconds, start) -> SearchResult:
        """Vanilla Monte Carlo (``mc``) and progressive pruning (``pp``)."""
        cfg = self.config
        color = game.to_play
        child_states, legal, _ = self._root_children(game)
        a = self.num_actions
        lpm = cfg.flat_playouts_per_move
        n = np.zeros(a)
        w = np.zeros(a)
        active = legal.copy()  # pass included: without it a lost position is played out by filling own areas
        done = 0
        while (done == 0 or not self._out_of_budget(done, playouts, seconds, start)) and active.any():
            moves = np.flatnonzero(active)
            slots = np.resize(moves, a)  # fill the fixed batch cyclically with the active moves
            states = jax.tree_util.tree_map(lambda x: np.asarray(x)[slots], child_states)
            winner, _ = self._evaluate(states, lpm)
            won = (winner == color).sum(axis=1) + 0.5 * (winner == 0).sum(axis=1)
            np.add.at(n, slots, lpm)
            np.add.at(w, slots, won)
            done += a * lpm
            if cfg.strategy == "pp" and len(moves) > 1:
                mean = w / np.maximum(n, 1)
                sigma = np.sqrt(np.maximum(mean * (1 - mean), 1e-4))
                half = cfg.pp_c * sigma / np.sqrt(np.maximum(n, 1))
                ready = active & (n >= cfg.pp_min_samples)
                if ready.any():
                    best_lower = np.max(np.where(ready, mean - half, -np.inf))
                    active &= ~(ready & (mean + half < best_lower))
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(n > 0, w / n, np.nan)
        # Move choice: highest mean among the moves still in the race.
        choice = np.where(active if active.any() else n > 0, np.nan_to_num(rates, nan=-1.0), -1.0)
        self.debug(f"{cfg.strategy}: {done} playouts, {int(active.sum())} moves left")
        visits = np.where(choice >= 0, choice + 1.0, 0.0)  # rank by mean
        result = self._finish(game, visits, rates, done)
        return result

    def _search_amaf(self, game, playouts, seconds, start) -> SearchResult:
        """All-moves-as-first from the position itself (Bruegmann)."""
        color = game.to_play
        legal = self._root_legal(game)
        a = self.num_actions
        lpm = self.config.flat_playouts_per_move
        states = stack_state(game.state, a)
        n = np.zeros(a)
        w = np.zeros(a)
        done = 0
        while done == 0 or not self._out_of_budget(done, playouts, seconds, start):
            winner, first = self._evaluate(states, lpm)
            winner, first = winner.reshape(-1), first.reshape(-1, a - 1)
            mine = first == color
            n[:-1] += mine.sum(axis=0)
            w[:-1] += (mine & (winner == color)[:, None]).sum(axis=0)
            done += a * lpm
        legal_points = legal.copy()
        legal_points[-1] = False
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(n > 0, w / n, np.nan)
        score = np.where(legal_points & (n > 0), np.nan_to_num(rates, nan=-1.0), -1.0)
        visits = np.where(score >= 0, score + 1.0, 0.0)
        if not visits.any():
            visits[-1] = 1.0
            rates[-1] = 0.5
        return self._finish(game, visits, rates, done)

    def _search_depth2(self, game, playouts, seconds, start) -> SearchResult:
        """Depth-2 min-of-means: each (move, reply) pair is sampled round-robin; value = min over replies."""
        children = self.children_batch
        color = game.to_play
        child_states, legal, child_legal = self._root_children(game)
        a = self.num_actions
        lpm = self.config.flat_playouts_per_move
        moves = np.flatnonzero(legal[:-1]) if legal[:-1].any() else np.array([a - 1])
        child_np = jax.tree_util.tree_map(np.asarray, child_states)
        n = np.zeros((a, a))
        w = np.zeros((a, a))
        grand_cache = {}
        done, turn = 0, 0
        while done == 0 or not self._out_of_budget(done, playouts, seconds, start):
            move = int(moves[turn % len(moves)])
            turn += 1
            if move not in grand_cache:
                one = jax.tree_util.tree_map(lambda x: np.broadcast_to(x[move], (a,) + x.shape[1:]).copy(), child_np)
                grand_cache[move] = children(one, np.arange(a, dtype=np.int32))[0]
            replies = child_legal[move].copy()
            replies[-1] = replies[-1] and not replies[:-1].any()
            winner, _ = self._evaluate(grand_cache[move], max(1, lpm // 4))
            won = (winner == color).sum(axis=1) + 0.5 * (winner == 0).sum(axis=1)
            n[move] += np.where(replies, winner.shape[1], 0)
            w[move] += np.where(replies, won, 0)
            done += int(replies.sum()) * winner.shape[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(n > 0, w / n, np.inf)
        values = np.full(a, np.nan)
        for move in moves:
            if np.isfinite(means[move]).any():
                values[move] = means[move].min()
        visits = np.where(np.isnan(values), 0.0, np.nan_to_num(values) + 1.0)
        return self._finish(game, visits, values, done)


def position_kernels(suicide: bool, backend: str):
    """(children_batch, searchable_batch) of the tree: ``jaxgo.playouts.native.positions`` (no XLA call) with
    the native backend and no suicide, else the jitted ``jaxgo.go.kernels``; same arguments and values."""
    if not suicide and resolve_backend(backend) == "native":
        return positions.children_batch, positions.searchable_batch
    rule_kernels = kernels(suicide)
    return rule_kernels.children_batch, rule_kernels.searchable_batch


def virtual_rave(cfg: SearchConfig, rave_visits, rave_values, prior):
    """(visits, wins) float [A]: a node's AMAF statistics plus virtual experience from the move model (Gelly &
    Silver 2007, "Combining online and offline knowledge in UCT": priors as equivalent experience).  Every move
    gets ``prior_even`` virtual playouts won half the time and ``prior_pattern * sqrt(K(s, a))`` virtual won
    playouts, so a likely move starts with a RAVE value above 1/2 that real AMAF results outweigh after about
    as many playouts.  Unlike progressive bias (c2 K / (n + 1)), which is gone after a few visits of the edge,
    this fades with the move's AMAF count, which deep nodes gather slowly."""
    if not (cfg.prior_even or cfg.prior_pattern):
        return rave_visits, rave_values
    good = cfg.prior_pattern * np.sqrt(np.maximum(prior, 0.0))
    return rave_visits + cfg.prior_even + good, rave_values + 0.5 * cfg.prior_even + good


def widening_width(visits: float, start: float, factor: float) -> int:
    """Moves a node searches after ``visits`` visits under progressive widening (Chaslot et al. 2007; Coulom
    2007): 2 until ``start`` visits, then one more each time the visits grow by ``factor``."""
    if visits < start:
        return 2
    return 2 + int(math.floor(math.log(visits / start) / math.log(factor))) + 1


def widened(prior, legal, visits: float, cfg: SearchConfig) -> np.ndarray:
    """bool [A]: the ``widening_width`` legal moves with the highest prior K(s, a) (ties: lower index first)
    of a node with ``visits`` visits; prior float [A], legal bool [A].  Moves beyond the width stay unsearched,
    so a few thousand playouts on 19x19 go to the move model's likeliest moves instead of a flat sweep."""
    legal = np.asarray(legal, bool)
    width = widening_width(visits, cfg.widen_playouts, cfg.widen_factor)
    if width >= legal.sum():
        return legal
    order = np.lexsort((np.arange(len(legal)), -np.where(legal, prior, -np.inf)))
    keep = np.zeros_like(legal)
    keep[order[:width]] = True
    return keep & legal


def node_mean(tree: Tree, node: int) -> float:
    """Mean win rate of ``node`` for its player to move: over the playouts through its edges, or before any,
    one minus its parent edge's mean (0.5 at an unvisited root)."""
    visits = tree.children_visits[node].sum()
    if visits > 0:
        return float(tree.children_values[node].sum() / visits)
    parent = int(tree.parents[node])
    if node == tree.root or parent < 0:
        return 0.5
    action = int(tree.action_from_parent[node])
    edge = tree.children_visits[parent, action]
    return 1.0 - float(tree.children_values[parent, action] / edge) if edge > 0 else 0.5


# The numpy reference of the compiled tree loops (``jaxgo.search.descent``), which are held to it in
# tests/search/test_descent.py: the definitions of the edge scores, the descent and the backup, readable.

def edge_scores_reference(cfg: SearchConfig, tree: Tree, node: int, noise: np.ndarray | None = None) -> np.ndarray:
    """float64 [A]: the selection score of every edge of ``node`` (-inf where not searched); ``noise`` float [A]
    is added before masking (the search adds 1e-7 times uniform numbers to break ties)."""
    visits = tree.children_visits[node]
    values = tree.children_values[node]
    parent_visits = visits.sum()
    log_n = math.log(parent_visits + 1.0)
    q = values / np.maximum(visits, 1.0)
    if cfg.strategy == "uct":
        explore = cfg.uct_c * np.sqrt(log_n / np.maximum(visits, 1.0))
        score = np.where(visits > 0, q + explore, 1e3)
    else:
        rv, rw = virtual_rave(cfg, tree.children_rave_visits[node], tree.children_rave_values[node],
                              tree.children_prior[node])
        qr = (rw + 0.5) / (rv + 1.0)
        denom = rv + visits + cfg.rave_c3 * visits * rv
        alpha = np.where(denom > 0, rv / np.maximum(denom, 1e-12), 1.0)
        # Pass has no AMAF statistics (playouts pass only when forced), so RAVE would value it at its neutral
        # 0.5 until visited and then trust a handful of playouts: instead no RAVE term, and its own mean
        # shrunk towards the node's mean with ``pass_prior_playouts`` pseudo-playouts.
        m = cfg.pass_prior_playouts
        alpha[-1] = 0.0
        q[-1] = (values[-1] + m * node_mean(tree, node)) / max(visits[-1] + m, 1e-12)
        score = (1 - alpha) * q + alpha * qr + cfg.rave_c1 * np.sqrt(log_n / (visits + 1.0))
    if cfg.bias_c2:
        score = score + cfg.bias_c2 * tree.children_prior[node] / (visits + 1.0)
    if noise is not None:
        score = score + noise
    searched = tree.children_legal[node]
    if cfg.widen_playouts:
        searched = searched & widened(tree.children_prior[node], searched, parent_visits, cfg)
    return np.where(searched, score, -np.inf)


def descend_reference(cfg: SearchConfig, tree: Tree, k: int, max_nodes: int | None = None):
    """K descents from the root by the best ``edge_scores_reference`` (no noise) with a virtual loss on every
    edge taken: [(path [(node, action)], leaf)], leaf a node or ``descent.PENDING`` (the last edge's child
    does not exist yet).  A descent below the root stops at its node when the tree already holds ``max_nodes``
    nodes plus the new ones of this batch."""
    out, pending = [], set()
    for _ in range(k):
        node, path, leaf = tree.root, [], tree.root
        while True:
            leaf = node
            if tree.terminal[node] or (node != tree.root and tree.children_visits[
                    tree.parents[node], tree.action_from_parent[node]] < cfg.n_expand):
                break
            scores = edge_scores_reference(cfg, tree, node)
            action = int(np.argmax(scores))
            if not np.isfinite(scores[action]):
                break
            child = int(tree.children_index[node, action])
            if max_nodes is not None and node != tree.root and child < 0 and tree.size + len(pending) >= max_nodes:
                break
            path.append((node, action))
            tree.children_visits[node, action] += 1  # virtual loss (value 0)
            if child < 0:
                pending.add((node, action))
                leaf = descent.PENDING
                break
            node = child
        out.append((path, leaf))
    return out


def backup_reference(cfg: SearchConfig, tree: Tree, path, leaf: int, value: np.ndarray, first: np.ndarray) -> None:
    """Add a leaf's L playout results along ``path`` [(node, action)] (its virtual loss already counted one
    visit per edge): value float [L] (Black's value of each playout in [0, 1], ``descent.playout_values``),
    first int [L, P] (the colour that played each point first)."""
    value = np.asarray(value, np.float64)
    count = len(value)
    wins = {1: float(value.sum()), -1: float(count - value.sum())}
    use_rave = cfg.strategy == "rave"
    if use_rave:
        amaf_n = {c: (first == c).sum(axis=0) for c in (1, -1)}
        amaf_w = {c: ((first == c) * (value if c == 1 else 1.0 - value)[:, None]).sum(axis=0) for c in (1, -1)}
    nodes = [node for node, _ in path] + [leaf]
    actions = [action for _, action in path]
    pass_action = tree.num_actions - 1
    for depth, node in enumerate(nodes):
        color = int(tree.to_play[node])
        if depth < len(actions):
            action = actions[depth]
            tree.children_visits[node, action] += count - 1
            tree.children_values[node, action] += wins[color]
        if use_rave:
            tree.children_rave_visits[node, :-1] += amaf_n[color]
            tree.children_rave_values[node, :-1] += amaf_w[color]
            for later in range(depth, len(actions), 2):  # the same player's later tree moves
                if actions[later] != pass_action:
                    tree.children_rave_visits[node, actions[later]] += count
                    tree.children_rave_values[node, actions[later]] += wins[color]


def _last_moves(tree: Tree, nodes: np.ndarray, root_last: tuple) -> np.ndarray:
    """int32 [len(nodes), 2]: the last move and the one before it in each node's position (actions; P = pass,
    -1 = none), from the tree's edges and, above the root, the game's last moves ``root_last``."""
    parent = tree.parents[nodes]
    at_root = nodes == tree.root
    last = np.where(at_root, root_last[0], tree.action_from_parent[nodes])
    grand = tree.action_from_parent[np.maximum(parent, 0)]
    before = np.where(at_root, root_last[1], np.where(parent == tree.root, root_last[0], grand))
    return np.stack([last, before], axis=1).astype(np.int32)


# Playouts per second a search on a time budget expects (its batch size K follows), by board size and playout
# backend: heavy playouts inside a RAVE search on this project's 2-core CPU, XLA on one core with small batches
# (benchmarks/RESULTS.md history, "Batch size on a clock"), native per thread (``jaxgo bench search --defaults``
# and genmoves on a clock: 9x9 5,000-6,000/s on one core, 19x19 2,400/s on two).
FIRST_SEARCH_RATES = {9: 2500.0, 13: 1000.0, 19: 240.0}
NATIVE_SEARCH_RATES = {9: 5000.0, 13: 2000.0, 19: 1200.0}


def first_search_rate(size: int, backend: str = "xla", threads: int = 0) -> float:
    """Playouts/s assumed for a time budget on a ``size`` board (``FIRST_SEARCH_RATES``, or for the native
    backend ``NATIVE_SEARCH_RATES`` times its ``threads``, 0 = one per core this process may use), interpolated
    on a log-log scale of the number of points between the measured sizes (the last slope beyond them); boards
    below 9x9 get the 9x9 rate (there a device call costs more than its playouts)."""
    native = resolve_backend(backend) == "native"
    rates = NATIVE_SEARCH_RATES if native else FIRST_SEARCH_RATES
    scale = (threads or default_threads()) if native else 1
    sizes = sorted(rates)
    if size <= sizes[0]:
        return scale * rates[sizes[0]]
    upper = next((s for s in sizes if s >= size), sizes[-1])
    lower = sizes[max(0, sizes.index(upper) - 1)]
    slope = math.log(rates[upper] / rates[lower]) / math.log(upper ** 2 / lower ** 2)
    return scale * rates[lower] * (size ** 2 / lower ** 2) ** slope


def first_batch_size(config: SearchConfig, playouts: int | None, seconds: float | None, size: int) -> int:
    """K of a search with this budget when none is kept: ``leaves_per_batch``, else ``auto_leaves`` of the
    playouts, else of the seconds at ``first_search_rate(size, config.backend, config.threads)`` playouts/s (128
    with neither)."""
    if config.leaves_per_batch:
        return config.leaves_per_batch
    if playouts is None and seconds is not None:
        playouts = int(seconds * first_search_rate(size, config.backend, config.threads))
    return auto_leaves(playouts, config.playouts_per_leaf)


def prune_failed_escapes(searched, stones, to_play, ko) -> None:
    """Unmark in ``searched`` bool [A] (pass last; changed in place) the atari escapes of the side to move that a
    ladder still captures, in the position of stones int [P], ``to_play`` and simple-ko point ``ko``; pass stays."""
    board = state_board(stones, to_play, ko)
    searched[failed_escapes(board)] = False


def auto_leaves(budget: int | None, playouts_per_leaf: int, iterations: int = 48) -> int:
    """K for a search of ``budget`` playouts: the largest power of two giving at least ``iterations`` batches,
    between 4 and 128 (128 without a budget).  Few big batches make a wide, shallow tree (with 1k playouts and
    K = 128, L = 4 the tree is two batches deep); powers of two bound the number of compiled shapes."""
    if budget is None:
        return 128
    target = budget / (playouts_per_leaf * iterations)
    k = 4
    while k * 2 <= min(target, 128):
        k *= 2
    return k


def ownership_estimate(game, playouts: int = 256, seed: int = 0, evaluator: Evaluator | None = None) -> np.ndarray:
    """float [size, size] mean playout area owner (+1 Black, -1 White) of every point, from the game's position,
    with ``evaluator``'s playouts (default light)."""
    from jaxgo.playouts.evaluator import make_evaluator

    evaluator = evaluator or make_evaluator("light")
    state = game.state.replace(passes=np.int32(0))  # after two passes the stones' fate is still played out
    last = np.asarray([priors.game_last_moves(game)], np.int32)
    batch = evaluator.evaluate(stack_state(state, 1), jax.random.PRNGKey(seed), playouts, game.rules.komi, last)
    return batch.ownership[0].astype(np.float64).mean(axis=0).reshape(game.size, game.size)
