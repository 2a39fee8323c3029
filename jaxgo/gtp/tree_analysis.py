"""Live analysis on the Player's own tree: ``TreeStream``, one search of the tree that ``genmove`` and pondering
search and reuse, read like a query's stream of analysis responses.

``jaxgo gtp`` without ``--server`` keeps one search tree per game, the Player's (``Player.tree_searcher``):
``lz-analyze``, ``kata-analyze``, ``*-genmove_analyze`` and ``jaxgo-pv_gfx`` continue the tree that genmove or
pondering left on the position, and the next genmove starts from the analysed tree (its visits carry over:
``prepare_tree`` keeps the subtree of the position).  The search runs on the GTP read loop's thread, whole batches
inside ``get``, so nothing else touches the tree while it runs (the read loop stops pondering before every
command, and an analysis ends before the next command is answered) and ending it never cuts a batch short.

``TreeStream`` answers as a query's stream of ``jaxgo.server.client`` does: ``get(timeout)`` runs batches
(``Searcher.select_leaves``, ``evaluate_batch``, ``backup_leaves``) until a report is due (``interval`` seconds
after the last: a response with ``isDuringSearch``), the search has ended (budget spent, ``terminate`` called,
nothing left to search: the final response) or ``timeout`` has passed (``queue.Empty``).  The responses are the
analysis server's (``jaxgo.server.responses.build_response``, win rates for the side to move), made from the
tree (visits, win rates, priors, principal variations) and from what a tree does not keep, summed over this
search's playouts (``RootStatistics``: each root move's final scores, the final ownership).  A move whose visits
all come from an earlier search has no score of its own yet: it shows the root's mean score (the shrunk
estimate of a move with no playouts).  The tree stops growing at ``TREE_MEMORY_MB``, as a server search does.
"""

from __future__ import annotations

import queue
import time

import numpy as np

from jaxgo.go.coords import WHITE
from jaxgo.search.budget import auto_leaves
from jaxgo.search.limits import SearchLimits
from jaxgo.search.tree import rank_actions
from jaxgo.server import responses, round_sums, score_estimate
from jaxgo.server.tasks import mean_and_stdev, node_cap, visits_shown

ANALYSIS_LEAVES = 64  # most leaves per batch without leaves_per_batch (the analysis server's max_leaves_per_search)
TREE_MEMORY_MB = 512.0  # an analysis search's tree grows no more beyond this (the analysis server's max_tree_mb)
PV_LENGTH = 10  # moves of each principal variation (the analysis server's default pvLen)
MAX_PV_MOVES = 40  # root moves given a principal variation (the analysis server's max_pv_moves)
SCORE_ESTIMATE = "shrunk"  # each root move's scoreLead (the analysis server's default, score_estimate.py)
PERSPECTIVE = "SIDETOMOVE"  # win rates, scores and ownership for the side to move, as GTP analysis reports them
UNTIL_TERMINATED = 1 << 40  # visits of lz-analyze / kata-analyze: until the next command (127 days at 100 k/s)
NO_MOVES_OWNERSHIP = np.zeros((0, 0))  # round_sums.add_round's per-move ownership, not kept here


def analysis_leaves(config, playouts: int) -> int:
    """K of an analysis search of ``playouts``: ``leaves_per_batch``, else ``auto_leaves`` of the budget, at most
    ``ANALYSIS_LEAVES`` (the analysis server's rule)."""
    return config.leaves_per_batch or min(ANALYSIS_LEAVES, auto_leaves(playouts, config.playouts_per_leaf))


class RootStatistics:
    """What the tree does not keep, summed over one search's playouts (float64): per root move [A] the final
    scores (Black - White - komi), their squares and the playout count; per point [P] the final owner (+1 Black)
    and its absolute value; the sum of all final scores."""

    def __init__(self, size: int):
        actions = size * size + 1
        self.score_sum, self.score_sq_sum, self.score_n = (np.zeros(actions) for _ in range(3))
        self.owner_sum, self.owner_abs_sum = np.zeros(actions - 1), np.zeros(actions - 1)
        self.owner_n = 0  # playouts summed
        self.root_score_sum = 0.0

    def add(self, batch, root_actions: np.ndarray) -> None:
        """One batch's playouts: a ``PlayoutBatch`` (score float [n, L], ownership int8 [n, L, P]) and the root move
        each leaf's path took, root_actions int64 [n] (-1: the leaf is the root)."""
        count, cols = np.shape(batch.score)
        self.root_score_sum += round_sums.add_round(
            0, count, cols, root_actions, batch.score, batch.ownership, self.score_sum, self.score_sq_sum,
            self.score_n, self.owner_sum, self.owner_abs_sum, NO_MOVES_OWNERSHIP, False)
        self.owner_n += count * cols

    def root_mean(self) -> float:
        """The mean final score of all the playouts (NaN before the first)."""
        return self.root_score_sum / self.owner_n if self.owner_n else float("nan")

    def ownership(self) -> np.ndarray | None:
        """float [P] mean final owner (+1 Black), None before the first playout."""
        return mean_and_stdev(self.owner_sum, self.owner_abs_sum, self.owner_n)[0] if self.owner_n else None


def tree_snapshot(tree, stats: RootStatistics, game, scale: int = 1) -> responses.Snapshot:
    """What the tree and the search's playouts (``stats``) know of the root, ``game``'s position, for
    ``responses.build_response`` (as ``jaxgo.server.tasks.Task.snapshot`` makes it for a server's search);
    ``scale`` playouts a reported visit (``playouts_per_visit``)."""
    root = tree.root
    legal = tree.children_legal[root].copy()
    visits = np.where(legal, tree.children_visits[root], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(visits > 0, tree.children_values[root] / np.maximum(visits, 1e-9), np.nan)
    raw, score_stdev = mean_and_stdev(stats.score_sum, stats.score_sq_sum, stats.score_n)
    where = score_estimate.Position(game.size, float(game.rules.komi), len(game.moves))
    root_mean = float(score_estimate.calibrated(SCORE_ESTIMATE, stats.root_mean(), where))
    score = score_estimate.move_scores(SCORE_ESTIMATE, raw, score_stdev, stats.score_n, where)
    score = np.where(np.isnan(score) & (visits > 0), root_mean, score)  # visits of an earlier search only
    pvs = {}
    for action in rank_actions(visits, values)[:MAX_PV_MOVES]:
        if visits[action] <= 0:
            break
        child = int(tree.children_index[root, action])
        rest = tree.principal_variation(PV_LENGTH - 1, node=child) if child >= 0 else []
        pvs[int(action)] = [int(action)] + rest
    total = float(visits.sum())
    root_rate = float(np.nansum(tree.children_values[root][legal]) / total) if total > 0 else 0.5
    shown = visits_shown(visits, scale) if scale > 1 else visits
    return responses.Snapshot(
        size=game.size, to_play=int(tree.to_play[root]), visits=shown, values=values, score=score,
        score_stdev=score_stdev, prior=np.where(legal, tree.children_prior[root], 0.0), legal=legal, pvs=pvs,
        root_visits=int(round(total / scale)), root_winrate=root_rate,
        root_score=score_estimate.root_score(score, shown, root_mean), ownership=stats.ownership())


class TreeStream:
    """One search of ``searcher``'s tree (the Player's) on ``game``'s position within ``limits`` (its playouts,
    node cap and stop check), K = ``leaves``, read as a query's stream (module docstring): reports every
    ``interval`` seconds (None: only the final response), with the ownership when ``ownership``."""

    def __init__(self, searcher, game, limits: SearchLimits, leaves: int, *, interval: float | None = None,
                 ownership: bool = False, ident: str = "tree"):
        self.searcher, self.game, self.limits = searcher, game, limits
        self.interval, self.ownership, self.ident = interval, ownership, ident
        searcher.use_position_playouts(game)
        self.started = self.last_report = time.perf_counter()
        self.job = searcher.start_tree_search(game, limits, leaves)
        self.stats = RootStatistics(game.size)
        self.terminated = False
        self.ended = False
        self.result = None  # the SearchResult once the search has ended (genmove_analyze's move is decided on it)

    def terminate(self) -> None:
        """End the search: the next ``get`` answers its final response (no batch is cut short)."""
        self.terminated = True

    def get(self, timeout: float | None = None) -> dict:
        """The next response: a report when due, the final one when the search has ended; ``queue.Empty`` when
        neither within ``timeout`` seconds (at least one batch runs first) or after the final response."""
        if self.ended:
            raise queue.Empty
        deadline = None if timeout is None else time.perf_counter() + timeout
        while not self._over():
            self._batch()
            now = time.perf_counter()
            if self.interval is not None and now - self.last_report >= self.interval:
                self.last_report = now
                return self.response(during_search=True)
            if deadline is not None and now >= deadline:
                raise queue.Empty
        return self._end()

    def _over(self) -> bool:
        job = self.job
        if self.terminated or job.exhausted:
            return True
        return job.done > 0 and self.searcher.out_of_budget(job.done, self.limits, self.started)

    def _batch(self) -> None:
        """One batch: K descents, the leaves' playouts, their statistics and backup."""
        searcher, job = self.searcher, self.job
        states = searcher.select_leaves(job)
        if states is None:  # no leaf survived this round (superko), or nothing is left to search
            return
        batch = searcher.evaluate_batch(states, searcher.config.playouts_per_leaf, job.last_moves,
                                        active=job.pending.count)
        self.stats.add(batch, job.pending.root_actions())
        done = job.done
        searcher.backup_leaves(job, batch.winner, batch.first_colour, batch.score)
        searcher.total_playouts += job.done - done

    def _end(self) -> dict:
        """The final response (``noResults`` when the tree has no visit at all); the search's ``result``."""
        self.ended = True
        job, searcher = self.job, self.searcher
        if job.done == 0 and not job.tree.children_visits[job.tree.root].any():
            return {"id": self.ident, "turnNumber": len(self.game.moves), "isDuringSearch": False, "noResults": True}
        self.result = searcher.finish_tree_search(self.game, job, self.started)
        return self.response(during_search=False)

    def response(self, during_search: bool) -> dict:
        """The analysis response of the tree as it stands (``responses.build_response``)."""
        snap = tree_snapshot(self.job.tree, self.stats, self.game, self.searcher.config.playouts_per_visit)
        response = responses.build_response(self.ident, len(self.game.moves), snap, during_search,
                                            perspective=PERSPECTIVE)
        if self.ownership and snap.ownership is not None:
            sign = -1.0 if snap.to_play == WHITE else 1.0  # for the side to move
            response["ownership"] = np.round(sign * np.nan_to_num(snap.ownership), 4).tolist()
        return response


def open_tree_stream(searcher, game, colour: int, visits: int, *, interval: float | None = None,
                     ownership: bool = False) -> TreeStream:
    """A ``TreeStream`` of ``visits`` visits (x ``playouts_per_visit`` playouts) for ``colour`` to move in
    ``game``'s position (a copy with ``colour`` to move when it is not: that position has a tree of its own),
    with the analysis server's K (``analysis_leaves``) and node cap (``TREE_MEMORY_MB``)."""
    if colour != game.to_play:
        game = game.copy()
        game.set_to_play(colour)
    config = searcher.config
    playouts = visits * config.playouts_per_visit
    leaves = analysis_leaves(config, playouts)
    limits = SearchLimits(playouts=playouts, max_nodes=node_cap(game.size, TREE_MEMORY_MB * 2 ** 20, leaves))
    return TreeStream(searcher, game, limits, leaves, interval=interval, ownership=ownership)


__all__ = ["TreeStream", "RootStatistics", "open_tree_stream", "tree_snapshot", "analysis_leaves"]
