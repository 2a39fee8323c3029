"""The ``Searcher``: one engine's Monte Carlo search of a game's positions, over playouts evaluated in batches.

Strategies (Lew's thesis, chapter 3; ``config.STRATEGIES``):
    ``uct``    MCTS with UCB1: argmax_a mu(s+a) + c * sqrt(log n(s) / n(s+a)) (+ progressive bias).
    ``rave``   UCT+RAVE+PB: (1 - alpha) mu + alpha mu_RAVE + c1 sqrt(log n(s) / n(s+a)) + c2 K(s,a) / n(s+a),
               alpha = n_RAVE / (n_RAVE + n + c3 n n_RAVE) (Silver).
    ``mc``, ``amaf``, ``pp``, ``depth2``: the flat strategies of ``jaxgo.search.flat``.

A strategy is a search function injected into the searcher, as mctx injects its action-selection functions:
``strategy(searcher, game, limits, start) -> SearchResult`` (``STRATEGY_SEARCHES``: ``tree_search.search_tree``
for the tree strategies, ``jaxgo.search.flat`` for the others).  The searcher holds what every strategy shares:
the rules kernels, the injected ``Evaluator`` (``jaxgo.playouts.evaluator``: light, heavy or rule-policy
playouts, chosen by ``SearchConfig.playout_policy``), the random streams, the moves searched at the root and the
budget check; its ``trees`` part (``tree_search.TreeSearch``) keeps the tree between moves (subtree reuse) and
runs the steps a server interleaves.  The search reports the best action by ``tree.rank_actions`` and the principal
variation that starts with it; the move played, resignation and passing are the ``Player``'s
(``jaxgo.search.player``).
"""

from __future__ import annotations

import time

import jax
import numpy as np

from jaxgo.go.kernels import kernels
from jaxgo.playouts.evaluator import Evaluator, evaluator_for, resolve_backend
from jaxgo.search import flat, positions
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.result import SearchResult
from jaxgo.search.tree import stack_state
from jaxgo.search.tree_search import NO_LIMITS, TreeSearch, prune_failed_escapes, search_tree

KEYS_PER_SPLIT = 256  # random keys split at once for the batches of a search
# The search function of each strategy a Searcher runs (random needs no search):
# (searcher, game, limits, start time from time.perf_counter) -> SearchResult.
STRATEGY_SEARCHES = {"uct": search_tree, "rave": search_tree, **flat.SEARCHES}


class KeyStream:
    """Random keys handed out one at a time, split from one key ``KEYS_PER_SPLIT`` at a time (one host call),
    not one device call per batch."""

    def __init__(self, key):
        self.key = key  # a key, or an int seed made into one when the first key is asked for
        self._keys = []  # split from ``key``, taken from the end

    def next(self):
        if not self._keys:
            if isinstance(self.key, int):
                self.key = jax.random.PRNGKey(self.key)
            keys = np.asarray(jax.random.split(self.key, KEYS_PER_SPLIT + 1))
            self.key = keys[0]
            self._keys = list(keys[:0:-1])
        return self._keys.pop()


class Searcher:
    """One engine's search state for a game; keeps the tree between moves (subtree reuse).  ``strategy``: the
    search function to run (default: ``STRATEGY_SEARCHES`` of ``config.strategy``)."""

    def __init__(self, rules_config, config: SearchConfig | None = None, seed: int = 0, log=None,
                 evaluator: Evaluator | None = None, strategy=None):
        self.rules = rules_config
        self.config = (config or SearchConfig()).for_size(rules_config.size)  # the board-size defaults set
        if strategy is None and self.config.strategy not in STRATEGY_SEARCHES:
            raise ValueError(f"unknown search strategy {self.config.strategy!r}; one of {tuple(STRATEGY_SEARCHES)}")
        self.strategy = strategy or STRATEGY_SEARCHES[self.config.strategy]
        # the empty board's playouts until the first search picks its position's (late_playout_policy)
        self.evaluator = evaluator or evaluator_for(self.config, stones=np.zeros(self.rules.size ** 2, np.int8))
        self.tree_backend = tree_backend(self.rules.suicide)
        self.children_batch, self.searchable_batch = position_kernels(self.rules.suicide, self.tree_backend)
        self._chooses_evaluator = evaluator is None  # per search, by the position (late_playout_policy), unless given
        self._keys = KeyStream(int(seed))  # the batches' random keys (the first made when needed)
        self.log = log
        self.trees = TreeSearch(self, seed)  # the tree kept between moves and the steps of a tree search
        self.total_playouts = 0

    @property
    def num_actions(self) -> int:
        return self.rules.size ** 2 + 1

    @property
    def tree(self):
        """The tree kept from the last tree search (None before the first)."""
        return self.trees.tree

    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def reset(self) -> None:
        self.trees.reset()

    # The steps of a tree search, which a server interleaves across searches (``tree_search.TreeSearch``).
    def prepare_tree(self, game, forbid_pass: bool = False):
        return self.trees.prepare_tree(game, forbid_pass)

    def start_tree_search(self, game, limits: SearchLimits = NO_LIMITS, leaves: int | None = None, storage=None):
        return self.trees.start_tree_search(game, limits, leaves, storage)

    def select_leaves(self, job):
        return self.trees.select_leaves(job)

    def backup_leaves(self, job, winner, first, score) -> None:
        self.trees.backup_leaves(job, winner, first, score)

    def finish_tree_search(self, game, job, start: float | None = None) -> SearchResult:
        return self.trees.finish_tree_search(game, job, start)

    def history(self, game) -> np.ndarray:
        """uint64 [H], sorted: the position keys a new node may not repeat: the game's (none under simple ko)."""
        if self.rules.ko_rule == "simple":
            return np.zeros(0, np.uint64)
        return np.sort(np.fromiter(game.position_keys(), np.uint64))

    def root_legal(self, game, forbid_pass: bool = False) -> np.ndarray:
        """[A] moves searched at the root: legal under the game's ko rule, own eyes excluded, pass allowed (with
        ``forbid_pass`` only when nothing else is); with ``ladder_prune`` (or ``ladder_prune_tree``) also
        without the atari escapes that a ladder still captures (``go.ladder.failed_escapes``)."""
        if self.tree_backend == "native":  # searchable is legal under simple ko: superko from the children's hashes
            mask, words = positions.root_moves(game.state)  # (one compiled call: the board set up once)
            moves = np.flatnonzero(mask[:-1])
            if self.rules.ko_rule != "simple" and len(moves):
                mask[moves[game.repeats(words[moves], game.to_play)]] = False
        else:
            mask = np.array(self.searchable_batch(stack_state(game.state, 1))[0], bool)
            mask &= game.legal_moves(game.to_play)
        if self.config.ladder_prune or self.config.ladder_prune_tree:
            prune_failed_escapes(mask, game.state.stones, game.to_play, game.state.ko)
        mask[-1] = not (forbid_pass and mask[:-1].any())
        return mask

    def evaluate(self, states, num_per_state: int, last_moves=None, active: int | None = None):
        """Playouts of the evaluator from the first ``active`` (default all) of a batched state [S]; (winner
        [active, L], first_colour [active, L, P]).  last_moves: int [S, 2] (the positions' last two moves), used
        by the heavy and rule policies for the first playout move's distance features."""
        batch = self.evaluate_batch(states, num_per_state, last_moves, active)
        return batch.winner, batch.first_colour

    def evaluate_batch(self, states, num_per_state: int, last_moves=None, active: int | None = None):
        """The evaluator's ``PlayoutBatch`` of the first ``active`` of a batched state [S] (see ``evaluate``)."""
        return self.evaluator.evaluate(states, self._keys.next(), num_per_state, self.rules.komi, last_moves, active)

    def search(self, game, limits: SearchLimits) -> SearchResult:
        """Search the game's current position for its side to move within ``limits`` (its budget, stop check,
        node cap, whether pass is searched)."""
        start = time.perf_counter()
        self.use_position_playouts(game)
        result = self.strategy(self, game, limits, start)
        result.seconds = time.perf_counter() - start
        self.total_playouts += result.playouts
        return result

    def use_position_playouts(self, game) -> None:
        """Play out with the playouts of the game's position (``late_playout_policy``) unless an evaluator was
        given: what ``search`` does first, and a caller running the tree's steps itself (live analysis)."""
        if self._chooses_evaluator and self.config.late_playout_policy:
            self.evaluator = evaluator_for(self.config, stones=game.state.stones)

    @staticmethod
    def out_of_budget(done: int, limits: SearchLimits, start: float) -> bool:
        """Whether a search that has run ``done`` playouts since ``start`` has spent its budget or was stopped."""
        playouts, seconds = limits.budget()
        if playouts is not None and done >= playouts:
            return True
        if limits.stopped():
            return True
        return seconds is not None and time.perf_counter() - start >= seconds


def tree_backend(suicide: bool) -> str:
    """Where a tree search computes its new nodes' positions, searched moves and priors: on the host
    (``"native"``: numba, no device call, on a GPU machine too, so a server's tree work never waits behind the
    playouts on the device) unless the rules allow suicide, which only the XLA rules kernels play (``"xla"``).
    The playouts' backend (``SearchConfig.backend``) is chosen apart from this."""
    return "xla" if suicide else "native"


def position_kernels(suicide: bool, backend: str):
    """(children_batch, searchable_batch) of the tree: ``jaxgo.search.positions`` (no XLA call) with
    the native backend and no suicide, else the jitted ``jaxgo.go.kernels``; same arguments and values."""
    if not suicide and resolve_backend(backend) == "native":
        return positions.children_batch, positions.searchable_batch
    rule_kernels = kernels(suicide)
    return rule_kernels.children_batch, rule_kernels.searchable_batch
