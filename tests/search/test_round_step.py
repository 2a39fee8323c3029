"""``jaxgo.search.round_step``: the compiled leaf selection of a round gives the tree, leaves and random stream of
``TreeSearch.select_leaves``, bit for bit, and seeded searches through it play the recorded games."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import gtp_to_point  # noqa: E402
from jaxgo.go.game import new_game  # noqa: E402
from jaxgo.playouts.evaluator import evaluator_for  # noqa: E402
from jaxgo.search.arena import BufferPool  # noqa: E402
from jaxgo.search.budget import first_batch_size  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.limits import SearchLimits  # noqa: E402
from jaxgo.search.round_batch import BUFFER_FIELDS  # noqa: E402
from jaxgo.search.round_step import RoundStep  # noqa: E402
from jaxgo.search.searcher import Searcher  # noqa: E402
from jaxgo.search.tree import STATE_FIELDS, Tree  # noqa: E402
from tests.search import test_recorded as recorded  # noqa: E402

TREE_CASES = ["uct", "rave_default", "rave_light", "rave_forbid_pass", "rave_max_nodes"]


def search_by_rounds(searcher: Searcher, step: RoundStep, game, limits: SearchLimits, check=None):
    """``Searcher.search`` of a tree strategy on a playout budget, its leaves selected by ``step``."""
    start = time.perf_counter()
    if searcher.config.late_playout_policy:
        searcher.evaluator = evaluator_for(searcher.config, stones=game.state.stones)
    leaves = first_batch_size(searcher.config, limits.playouts, None, game.size)
    job = searcher.start_tree_search(game, limits, leaves=leaves)
    while job.done == 0 or not searcher.out_of_budget(job.done, limits, start):
        states = step.select(job)
        if states is None:
            if job.exhausted:
                break
            continue
        batch = searcher.evaluate_batch(states, searcher.config.playouts_per_leaf, job.last_moves,
                                        active=job.pending.count)
        searcher.backup_leaves(job, batch.winner, batch.first_colour, batch.score)
        if check is not None:
            check(job.tree)
    return searcher.finish_tree_search(game, job, start)


def run_case_by_rounds(fields: dict, playouts: int, limits: dict) -> list[dict]:
    """``test_recorded.run_case`` with the leaves selected by a ``RoundStep``; every tree checked each round."""
    game = new_game(size=9, komi=7.5)
    for i, move in enumerate(recorded.OPENING):
        game.play(1 if i % 2 == 0 else -1, gtp_to_point(move, 9))
    searcher = Searcher(game.rules, SearchConfig(backend="native", **fields), seed=7)
    step = RoundStep(searcher, seed=7)
    results = []
    for _ in range(2):
        result = search_by_rounds(searcher, step, game, SearchLimits(playouts=playouts, **limits),
                                  check=lambda tree: tree.check_consistency())
        results.append(dict(move=int(result.move), playouts=int(result.playouts), pv=[int(m) for m in result.pv[:4]],
                            visits=[round(float(v), 6) for v in result.visits],
                            win_rate=round(float(result.win_rate), 6)))
        game.play(game.to_play, result.move)
    return results


@pytest.mark.parametrize("name", TREE_CASES)
def test_searches_by_rounds_play_the_recorded_games(name):
    assert run_case_by_rounds(*recorded.CASES[name]) == json.loads(recorded.FIXTURE.read_text())[name]


def _same_trees(a, b) -> None:
    assert a.size == b.size and a.root == b.root
    for name in Tree.ARRAYS:
        np.testing.assert_array_equal(getattr(a, name)[: a.size], getattr(b, name)[: b.size], err_msg=name)
    for name in STATE_FIELDS:
        np.testing.assert_array_equal(a.states[name][: a.size], b.states[name][: b.size], err_msg=name)


def used_buffers_pool(searcher: Searcher, tree: Tree, k: int, seed: int) -> BufferPool:
    """A ``BufferPool`` holding the staging buffers of K descents of another search, every array of them
    (paths, leaves, leaf positions) filled with random values."""
    pool = BufferPool()
    other = RoundStep(searcher, seed=seed, pool=pool)
    buffers = other.buffers(tree, k).with_leaf_states(tree)
    rng = np.random.default_rng(seed)
    for array in [getattr(buffers, name) for name in BUFFER_FIELDS + ("waiting", "last_moves")] + \
            list(buffers.states.values()):
        array[...] = rng.integers(-3, 100, array.shape)
    other.release()
    return pool


@pytest.mark.parametrize("pooled", [False, True], ids=["new_buffers", "used_buffers"])
@pytest.mark.parametrize("fields,ko_rule,limits", [
    (dict(strategy="uct", bias_c2=0.0, prior_pattern=0.0), "simple", {}),
    (dict(bias_c2=0.0, prior_pattern=0.0, n_expand=1), "positional", {}),  # inline expansion, superko
    (dict(), "positional", {"max_nodes": 60}),  # gammas: priors in Python; a node cap
    (dict(ladder_prune_tree=True, bias_c2=0.0, prior_pattern=0.0), "simple", {"forbid_pass": True}),
])
def test_each_round_gives_the_tree_and_leaves_of_select_leaves(fields, ko_rule, limits, pooled):
    """... also with staging buffers that another search used (``BufferPool``): what they held changes nothing."""
    game = new_game(size=5, komi=0.5, ko_rule=ko_rule)
    game.play(1, 12)
    config = SearchConfig(backend="native", playout_policy="light", leaves_per_batch=16, **fields)
    old, new = (Searcher(game.rules, config, seed=3) for _ in range(2))
    other = Searcher(game.rules, config, seed=5)
    pool = used_buffers_pool(other, other.start_tree_search(game, SearchLimits(playouts=16)).tree, 16, 11) \
        if pooled else None
    step = RoundStep(new, seed=3, pool=pool)
    jobs = [s.start_tree_search(game, SearchLimits(playouts=2000, **limits)) for s in (old, new)]
    rng = np.random.default_rng(0)
    for _ in range(40):
        states_old, states_new = old.select_leaves(jobs[0]), step.select(jobs[1])
        assert (states_old is None) == (states_new is None)
        _same_trees(jobs[0].tree, jobs[1].tree)
        if states_old is None:
            assert jobs[0].exhausted == jobs[1].exhausted
            if jobs[0].exhausted:
                break
            continue
        n = jobs[0].pending.count
        for name in ("nodes", "actions", "lengths", "leaves"):
            got = getattr(jobs[1].pending, name)
            want = getattr(jobs[0].pending, name)
            if name in ("nodes", "actions"):  # the paths, up to their lengths (the buffers hold old entries after)
                on_path = np.arange(got.shape[1])[None, :] < jobs[0].pending.lengths[:, None]
                width = want.shape[1]
                got, want = np.where(on_path[:, :width], got[:, :width], 0), np.where(on_path[:, :width], want, 0)
            np.testing.assert_array_equal(got, want, err_msg=name)
        np.testing.assert_array_equal(jobs[1].last_moves, jobs[0].last_moves)
        for name in STATE_FIELDS:
            np.testing.assert_array_equal(getattr(states_new, name), getattr(states_old, name), err_msg=name)
        k, points = 16, 25
        winner = rng.choice(np.array([-1, 1], np.int8), (k, 2))
        first = rng.choice(np.array([0, 1, -1], np.int8), (k, 2, points))
        score = (winner * rng.uniform(0.5, 9.0, (k, 2))).astype(np.float32)
        for searcher, job in zip((old, new), jobs):
            searcher.backup_leaves(job, winner[:n], first[:n], score[:n])
        _same_trees(jobs[0].tree, jobs[1].tree)
        jobs[1].tree.check_consistency()
    assert jobs[1].tree.size > 20


def test_pairwise_sum_adds_in_numpys_order():
    from jaxgo.search.compiled_prior import pairwise_sum

    rng = np.random.default_rng(1)
    for count in (1, 7, 8, 26, 50, 82, 122, 128):
        for _ in range(50):
            row = rng.exponential(1.0, count) * (rng.random(count) < 0.7)
            assert pairwise_sum(row, 0, count) == row.sum()


def test_expansion_mode_by_config():
    from types import SimpleNamespace

    from jaxgo.search.expansion import GAMMAS, IN_PYTHON, UNIFORM, expansion_mode

    plain = SimpleNamespace(on_expand=None)
    light = SearchConfig(bias_c2=0.0, prior_pattern=0.0).for_size(9)
    assert expansion_mode(light, 9, plain)[0] == UNIFORM
    mode, tables = expansion_mode(SearchConfig().for_size(9), 9, plain)
    assert mode == GAMMAS and len(tables) == 6
    assert expansion_mode(SearchConfig().for_size(19), 19, plain)[0] == IN_PYTHON  # large patterns
    assert expansion_mode(SearchConfig(prior_model="base").for_size(13), 13, plain)[0] == IN_PYTHON  # 170 actions
    assert expansion_mode(light, 9, SimpleNamespace(on_expand=print))[0] == IN_PYTHON


def test_created_children_take_the_rows_of_dropped_repeats():
    """``create_leaves`` on random pending edges of a searched tree, a random share of their new positions put in
    the game's history: the kept children in the free rows in order (a dropped one's row taken by the next), each
    the position ``positions.children_batch`` gives, linked under its parent; the dropped edges no longer searched;
    the rows after the last child as a new tree's."""
    from jaxgo.go import rules
    from jaxgo.search import descent, positions
    from jaxgo.search.round_step import create_leaves

    game = new_game(size=5, komi=0.5, ko_rule="positional")
    game.play(1, 12)
    config = SearchConfig(backend="native", playout_policy="light", leaves_per_batch=16, bias_c2=0.0,
                          prior_pattern=0.0)
    searcher = Searcher(game.rules, config, seed=3)
    search_by_rounds(searcher, RoundStep(searcher, seed=3), game, SearchLimits(playouts=400))
    tree = searcher.tree
    rng = np.random.default_rng(7)
    dropped_then_kept = 0
    for _ in range(60):
        free = np.argwhere((tree.children_index[:tree.size] < 0) & tree.children_legal[:tree.size]
                           & ~tree.terminal[:tree.size, None])
        k = 16
        pick = free[rng.integers(len(free), size=k)]  # repeats: descents ending on the same edge
        nodes, actions = pick[:, 0].astype(np.int32), pick[:, 1].astype(np.int32)
        edges = list(dict.fromkeys(zip(nodes.tolist(), actions.tolist())))  # in order of first use
        children, _ = positions.children_batch(tree.gather_states(np.array([n for n, _ in edges])),
                                               np.array([a for _, a in edges]), searchable=False)
        keys = rules.hash_key(children.hash)
        drop = (rng.random(len(edges)) < 0.3) & (np.array([a for _, a in edges]) != tree.num_actions - 1)
        copy = Tree(tree.num_actions, tree.capacity)
        for name in Tree.ARRAYS:
            getattr(copy, name)[:] = getattr(tree, name)
        copy.states = {name: array.copy() for name, array in tree.states.items()}
        copy.size, copy.root = tree.size, tree.root
        depth = 4
        path_nodes, path_actions = np.zeros((k, depth), np.int32), np.zeros((k, depth), np.int32)
        path_nodes[:, 0], path_actions[:, 0] = nodes, actions
        lengths, ends = np.ones(k, np.int32), np.full(k, descent.PENDING, np.int32)
        outs = (np.zeros((k, depth), np.int32), np.zeros((k, depth), np.int32), np.zeros(k, np.int32),
                np.zeros(k, np.int32))
        n, size = create_leaves(copy.size, copy.root, True, np.sort(keys[drop]), rules.zobrist_table(5), copy.parents,
                                copy.action_from_parent, copy.to_play, copy.hashes, copy.terminal,
                                copy.children_index, copy.children_visits, copy.children_legal,
                                *[copy.states[name] for name in STATE_FIELDS], path_nodes, path_actions, lengths, ends,
                                *outs)
        kept = np.flatnonzero(~drop)
        assert size == tree.size + len(kept)
        for row, e in zip(range(tree.size, size), kept):
            node, action = edges[e]
            assert copy.parents[row] == node and copy.action_from_parent[row] == action
            assert copy.children_index[node, action] == row and copy.hashes[row] == keys[e]
            assert copy.to_play[row] == children.to_play[e] and copy.terminal[row] == (children.passes[e] >= 2)
            for name in STATE_FIELDS:
                np.testing.assert_array_equal(copy.states[name][row], getattr(children, name)[e], err_msg=name)
        for e in np.flatnonzero(drop):
            node, action = edges[e]
            assert not copy.children_legal[node, action] and copy.children_index[node, action] < 0
        for name in STATE_FIELDS:
            assert not copy.states[name][size:].any(), name
        assert n == sum(not drop[edges.index(edge)] for edge in zip(nodes.tolist(), actions.tolist()))
        dropped_then_kept += int(np.any(drop[:-1] & ~drop[1:]))
    assert dropped_then_kept > 20
