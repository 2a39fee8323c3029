"""``jaxgo.search.round_batch``: one compiled selection over many searches gives each search the tree, leaves and
random stream of its own ``RoundStep``, bit for bit; searches of different configurations and positions share
the call and see only their own rows; the recorded games replay through it."""

from __future__ import annotations

import json
import os
import time

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import gtp_to_point  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.search import backup, expansion  # noqa: E402
from jaxgo.search.budget import first_batch_size  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import SearchLimits  # noqa: E402
from jaxgo.search.round_batch import SearchSlots, backup_search, select_searches, slot_arrays  # noqa: E402
from jaxgo.search.round_step import DONE, RoundStep  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402
from jaxgo.search.tree import STATE_FIELDS, Tree  # noqa: E402
from jaxgo.search.tree_search import PendingLeaves  # noqa: E402
from tests.search import test_recorded as recorded  # noqa: E402
from tests.search.test_round_step import TREE_CASES  # noqa: E402

NO_STATS = {"score_sum": np.zeros(1), "score_sq_sum": np.zeros(1), "score_n": np.zeros(1), "owner_sum": np.zeros(1),
            "owner_abs_sum": np.zeros(1), "moves_owner_sum": np.zeros((0, 0))}


class Batch:
    """Searches selected together: (searcher, RoundStep, job) each, in one ``SearchSlots`` table."""

    def __init__(self, searches):
        self.searches = searches
        self.table = SearchSlots()
        self.slots = [self.table.take() for _ in searches]

    def select(self, active: list[int]) -> dict:
        """One ``select_searches`` call for the searches ``active``: {index: (offset, count)} of those that
        selected leaves into ``self.rows`` (a search whose path outgrew its buffer goes through its RoundStep,
        as a server does: offset None, its leaves in the returned states)."""
        count = len(active)
        slots, ks, rooms, roots, sizes, modes = (np.zeros(count, np.int64) for _ in range(6))
        superko = np.zeros(count, np.bool_)
        tables = None
        for i, index in enumerate(active):
            searcher, step, job = self.searches[index]
            tree, k = job.tree, job.leaves
            tree.reserve(k)
            mode, found = step.expansion(job)
            tables = found if tables is None or mode == expansion.GAMMAS else tables
            search = {"rng": step.rng, "params": step.params, "history": job.history,
                      "root_last": np.asarray(job.root_last, np.int64), **NO_STATS}
            self.table.set(self.slots[index], slot_arrays(tree, step.buffers(tree, k), search))
            slots[i], ks[i], roots[i], sizes[i], modes[i] = self.slots[index], k, tree.root, tree.size, mode
            rooms[i] = k + 1 if job.limits.max_nodes is None else job.limits.max_nodes - tree.size
            superko[i] = searcher.rules.ko_rule != "simple"
        points = self.searches[active[0]][0].rules.size ** 2
        rows = int(ks.sum())
        self.rows = {name: np.full((rows,) + self.searches[active[0]][2].tree.states[name].shape[1:], 99,
                                   self.searches[active[0]][2].tree.states[name].dtype) for name in STATE_FIELDS}
        self.rows["last_moves"] = np.full((rows, 2), 99, np.int32)
        offsets, counts, status = (np.zeros(count, np.int64) for _ in range(3))
        zobrist = self.searches[active[0]][1].zobrist
        end = select_searches(np.arange(count), 0, slots, ks, rooms, roots, sizes, modes, superko, self.table.entries,
                              zobrist, tables, *[self.rows[name] for name in STATE_FIELDS], self.rows["last_moves"],
                              offsets, counts, status)
        assert end == counts.sum() <= rows and points > 0
        out = {}
        for i, index in enumerate(active):
            searcher, step, job = self.searches[index]
            if status[i] != DONE:
                step.depth *= 2
                out[index] = (None, step.select(job))
                continue
            job.tree.size = int(sizes[i])
            n = int(counts[i])
            job.exhausted = n == 0 and not job.tree.children_legal[job.tree.root].any()
            b = step.buffers(job.tree, job.leaves)
            job.pending = PendingLeaves(b.nodes[:n], b.actions[:n], b.lengths[:n], b.leaves[:n]) if n else None
            out[index] = (int(offsets[i]), n)
        return out

    def leaf_states(self, index: int, offset: int, n: int):
        """The K-row batch of search ``index``'s leaves as ``RoundStep.select`` gives it (its rows of the shared
        batch, then the root) and their last moves."""
        from jaxgo.go import rules

        _, _, job = self.searches[index]
        tree, k = job.tree, job.leaves
        fields = {}
        for name in STATE_FIELDS:
            root = tree.states[name][tree.root]
            fields[name] = np.concatenate([self.rows[name][offset:offset + n],
                                           np.broadcast_to(root, (k - n,) + root.shape)])
        last = np.concatenate([self.rows["last_moves"][offset:offset + n],
                               np.broadcast_to(np.asarray(job.root_last, np.int32), (k - n, 2))])
        return rules.State(**fields), last


def _same_trees(a: Tree, b: Tree) -> None:
    assert a.size == b.size and a.root == b.root
    for name in Tree.ARRAYS:
        np.testing.assert_array_equal(getattr(a, name)[: a.size], getattr(b, name)[: b.size], err_msg=name)
    for name in STATE_FIELDS:
        np.testing.assert_array_equal(a.states[name][: a.size], b.states[name][: b.size], err_msg=name)


SEARCHES = [  # (SearchConfig fields, ko rule, limits, moves played, K): expansions uniform and by the gammas
    (dict(strategy="uct", bias_c2=0.0, prior_pattern=0.0), "simple", {}, [12], 16),
    (dict(bias_c2=0.0, prior_pattern=0.0, n_expand=1), "positional", {}, [6, 18], 8),
    (dict(), "positional", {"max_nodes": 60}, [12, 13, 7], 16),
    (dict(score_utility=0.0), "situational", {"forbid_pass": True}, [], 4),
]


def test_one_call_over_searches_of_different_configs_gives_each_its_own_round():
    """Four searches of different configurations, positions, K and superko rules select in one call, round after
    round; each gets what its own ``RoundStep`` gives (trees, leaves, positions, last moves), and its backup
    through ``backup_search`` the trees of ``backup_leaves``; every tree is consistent after every round."""
    old, new = [], []
    for fields, ko_rule, limits, moves, k in SEARCHES:
        game = new_game(size=5, komi=0.5, ko_rule=ko_rule)
        for i, move in enumerate(moves):
            game.play(1 if i % 2 == 0 else -1, move)
        config = SearchConfig(backend="native", playout_policy="light", leaves_per_batch=k, **fields)
        for out in (old, new):
            searcher = Searcher(game.rules, config, seed=3 + len(out))
            out.append((searcher, RoundStep(searcher, seed=3 + len(out)),
                        searcher.start_tree_search(game, SearchLimits(playouts=2000, **limits))))
    batch = Batch(new)
    rng = np.random.default_rng(0)
    active = list(range(len(new)))
    for _ in range(30):
        selected = batch.select(active)
        for index in list(active):
            searcher, step, job = old[index]
            _, _, new_job = new[index]
            states_old = step.select(job)
            _same_trees(job.tree, new_job.tree)
            offset, n = selected[index]
            if states_old is None:
                assert (offset is not None and n == 0) or (offset is None and n is None)
                assert job.exhausted == new_job.exhausted
                if job.exhausted:
                    active.remove(index)
                continue
            if offset is None:  # retried by its RoundStep
                states_new, last_new, n = n, new_job.last_moves, new_job.pending.count
            else:
                states_new, last_new = batch.leaf_states(index, offset, n)
            assert n == job.pending.count
            for name in ("nodes", "actions", "lengths", "leaves"):
                got, want = getattr(new_job.pending, name), getattr(job.pending, name)
                if name in ("nodes", "actions"):
                    on_path = np.arange(want.shape[1])[None, :] < job.pending.lengths[:, None]
                    got, want = np.where(on_path, got[:, :want.shape[1]], 0), np.where(on_path, want, 0)
                np.testing.assert_array_equal(got, want, err_msg=name)
            np.testing.assert_array_equal(last_new, job.last_moves)
            for name in STATE_FIELDS:
                np.testing.assert_array_equal(getattr(states_new, name), getattr(states_old, name), err_msg=name)
            k, points = job.leaves, 25
            winner = rng.choice(np.array([-1, 1], np.int8), (k, 3))
            first = rng.choice(np.array([0, 1, -1], np.int8), (k, 3, points))
            score = (winner * rng.uniform(0.5, 9.0, (k, 3))).astype(np.float32)
            searcher.backup_leaves(job, winner[:n], first[:n], score[:n])
            if offset is None:
                new[index][0].backup_leaves(new_job, winner[:n], first[:n], score[:n])
            else:
                value = backup.playout_values(winner, score, new[index][0].config.score_utility, 5)
                entry = batch.table.entries[batch.slots[index]]
                backup_search(entry, 0, n, 3, new[index][0].config.strategy == "rave", value, first)
                new_job.done += 3 * n
            _same_trees(job.tree, new_job.tree)
            new_job.tree.check_consistency()
    assert all(job.tree.size > 20 for _, _, job in new)


def test_the_recorded_games_replay_through_one_call_per_round():
    """Every recorded search case (``test_recorded``) at once: each round selects the leaves of all the cases'
    searches in one call, each search plays out its own rows (its evaluator, its random keys) and backs them up;
    the moves, visits and principal variations are the recorded ones."""
    games, searches, budgets = [], [], []
    for name in TREE_CASES:
        fields, playouts, limits = recorded.CASES[name]
        game = new_game(size=9, komi=7.5)
        for i, move in enumerate(recorded.OPENING):
            game.play(1 if i % 2 == 0 else -1, gtp_to_point(move, 9))
        searcher = Searcher(game.rules, SearchConfig(backend="native", **fields), seed=7)
        games.append(game)
        searches.append([searcher, RoundStep(searcher, seed=7), None])
        budgets.append(SearchLimits(playouts=playouts, **limits))
    results = [[] for _ in TREE_CASES]
    for _ in range(2):
        for i, (searcher, _, _) in enumerate(searches):
            if searcher.config.late_playout_policy:
                from jaxgo.playouts.evaluator import evaluator_for

                searcher.evaluator = evaluator_for(searcher.config, stones=games[i].state.stones)
            leaves = first_batch_size(searcher.config, budgets[i].playouts, None, games[i].size)
            searches[i][2] = searcher.start_tree_search(games[i], budgets[i], leaves=leaves)
        batch = Batch(searches)
        start = time.perf_counter()
        active = list(range(len(searches)))
        while active:
            selected = batch.select(active)
            for index in list(active):
                searcher, _, job = searches[index]
                offset, n = selected[index]
                if offset is None:
                    states, last, n = n, job.last_moves, (job.pending.count if n is not None else 0)
                elif n:
                    states, last = batch.leaf_states(index, offset, n)
                if not n:
                    if job.exhausted:
                        active.remove(index)
                    continue
                played = searcher.evaluate_batch(states, searcher.config.playouts_per_leaf, last, active=n)
                searcher.backup_leaves(job, played.winner, played.first_colour, played.score)
                job.tree.check_consistency()
                if searcher.out_of_budget(job.done, budgets[index], start):
                    active.remove(index)
        for i, (searcher, _, job) in enumerate(searches):
            result = searcher.finish_tree_search(games[i], job, start)
            results[i].append(dict(move=int(result.move), playouts=int(result.playouts),
                                   pv=[int(m) for m in result.pv[:4]],
                                   visits=[round(float(v), 6) for v in result.visits],
                                   win_rate=round(float(result.win_rate), 6)))
            games[i].play(games[i].to_play, result.move)
    fixture = json.loads(recorded.FIXTURE.read_text())
    for name, got in zip(TREE_CASES, results):
        assert got == fixture[name], name
