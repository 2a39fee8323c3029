"""The compiled tree loops (jaxgo.search.descent) against the numpy reference in jaxgo.search.reference, on random
trees: edge scores of thousands of random nodes, whole batches of descents with virtual loss, and backups."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.search import backup, descent  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.reference import backup_reference, descend_reference, edge_scores_reference  # noqa: E402
from jaxgo.search.tree import Tree  # noqa: E402

CONFIGS = {
    "rave-defaults": SearchConfig(),
    "rave-c1-priors": SearchConfig(rave_c1=0.1, bias_c2=3.0, prior_even=5.0, prior_pattern=20.0),
    "rave-widening": SearchConfig(widen_playouts=40.0, n_expand=2),
    "rave-no-bias": SearchConfig(bias_c2=0.0, pass_prior_playouts=8.0),
    "uct": SearchConfig(strategy="uct", uct_c=0.5, bias_c2=0.5),
    "rave-eqex": SearchConfig(eqex_even=14.0, eqex_pattern=210.0, bias_c2=0.0, prior_pattern=0.0),
    "rave-eqex-and-virtual-rave": SearchConfig(eqex_even=3.0, eqex_pattern=50.0, prior_even=2.0),
}


def add_node(tree: Tree, parent: int, action: int, to_play: int) -> None:
    """Append one node (a placeholder position: the loops read only the statistics) under ``parent``."""
    states = {name: np.zeros((1, 2), np.int32) for name in ("stones", "chain", "lib_count", "lib_sum", "lib_sumsq")}
    states.update(ko=np.zeros(1, np.int32), passes=np.zeros(1, np.int32), captures=np.zeros((1, 2), np.int32),
                  hash=np.zeros((1, 2), np.uint32), move_count=np.zeros(1, np.int32),
                  to_play=np.array([to_play], np.int8))
    tree.add_nodes(states, np.array([parent], np.int32), np.array([action], np.int32))


def random_tree(rng: np.random.Generator, nodes: int, num_actions: int = 26) -> Tree:
    """A tree of ``nodes`` nodes with random links and statistics (integer visits and wins, so that exact ties
    occur as in a real search), a few terminal nodes and illegal moves."""
    tree = Tree(num_actions)
    for node in range(nodes):
        if node == 0:
            parent, action, to_play = -1, -1, 1
        else:
            parent = node - 1 if rng.random() < 0.5 else int(rng.integers(node))  # some long lines
            free = np.flatnonzero(tree.children_index[parent] < 0)
            if not len(free):
                parent, free = 0, np.flatnonzero(tree.children_index[0] < 0)
            action, to_play = int(rng.choice(free)), -int(tree.to_play[parent])
        add_node(tree, parent, action, to_play)
    a = num_actions
    visits = rng.integers(0, 60, (nodes, a)) * (rng.random((nodes, a)) < 0.7)
    tree.children_visits[:nodes] = visits
    tree.children_values[:nodes] = np.floor(visits * rng.random((nodes, a)))
    rave = rng.integers(0, 400, (nodes, a)) * (rng.random((nodes, a)) < 0.8)
    tree.children_rave_visits[:nodes] = rave
    tree.children_rave_values[:nodes] = np.floor(rave * rng.random((nodes, a)))
    prior = rng.random((nodes, a)) ** 3
    tree.children_prior[:nodes] = (prior / prior.sum(axis=1, keepdims=True)).astype(np.float32)
    tree.children_legal[:nodes] = rng.random((nodes, a)) < 0.85
    tree.children_legal[:nodes][rng.random(nodes) < 0.02] = False  # a few nodes without a searched move
    tree.terminal[:nodes] = rng.random(nodes) < 0.03
    # An edge into an existing child has been visited (else the child would not exist), most of them often.
    linked = tree.children_index[:nodes] >= 0
    tree.children_visits[:nodes][linked] += 30
    tree.children_values[:nodes][linked] += 28
    tree.children_rave_visits[:nodes][linked] += 200
    tree.children_rave_values[:nodes][linked] += 190
    return tree


@pytest.mark.parametrize("name", list(CONFIGS))
def test_edge_scores_match_the_reference_on_random_nodes(name):
    config = CONFIGS[name]
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(8):
        tree = random_tree(rng, 300)
        for node in range(tree.size):
            ref = edge_scores_reference(config, tree, node)
            fast = descent.node_scores(config, tree, node)
            assert np.array_equal(np.isfinite(ref), np.isfinite(fast))
            np.testing.assert_allclose(fast[np.isfinite(fast)], ref[np.isfinite(ref)], rtol=1e-12, atol=1e-15)
            checked += 1
    assert checked == 2400


def test_tie_noise_is_small_and_reproducible():
    rng = np.random.default_rng(2)
    tree = random_tree(rng, 50)
    config = SearchConfig()
    ref = edge_scores_reference(config, tree, 0)
    first = descent.node_scores(config, tree, 0, noise=descent.TIE_NOISE, rng=descent.new_rng(7))
    again = descent.node_scores(config, tree, 0, noise=descent.TIE_NOISE, rng=descent.new_rng(7))
    other = descent.node_scores(config, tree, 0, noise=descent.TIE_NOISE, rng=descent.new_rng(8))
    finite = np.isfinite(ref)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    gap = first[finite] - ref[finite]
    assert np.all(gap >= 0) and np.all(gap < descent.TIE_NOISE) and len(np.unique(gap)) == finite.sum()


KEPT = [name for name, config in CONFIGS.items() if config.strategy == "rave" and config.rave_c1 == 0.0]


@pytest.mark.parametrize("name", KEPT)
def test_kept_scores_choose_as_edge_scores_with_the_same_noise(name):
    """``cached_choice`` against ``edge_scores`` of the same node in the same state, each with its own copy of the
    noise stream: the same scores and edge bit for bit, the same numbers drawn, over visits again and again of the
    same nodes with a virtual loss on each edge taken (some nodes with no visit, pass not always searched, a cache
    that runs out of rows)."""
    params = descent.score_params(CONFIGS[name].for_size(5))
    assert descent.keeps_scores(params)
    rng = np.random.default_rng(6)
    chosen = 0
    for trial in range(6):
        tree = random_tree(rng, 150)
        tree.children_legal[:tree.size, -1] &= rng.random(tree.size) < 0.9
        tree.children_visits[:tree.size][rng.random(tree.size) < 0.05] = 0.0  # nodes without a visit
        cache = descent.new_score_cache(tree.capacity, 20 if trial % 2 else 200, tree.num_actions)
        kept_rng, plain_rng = descent.new_rng(trial), descent.new_rng(trial)
        scores, expect = np.empty(tree.num_actions), np.empty(tree.num_actions)
        for _ in range(800):
            node = int(rng.integers(tree.size)) if rng.random() < 0.3 else int(rng.integers(min(tree.size, 12)))
            mean = descent.node_mean(tree.children_visits, tree.children_values, tree.parents, tree.action_from_parent,
                                     tree.root, node)
            descent.edge_scores(tree.children_visits[node], tree.children_values[node], tree.children_rave_visits[node],
                                tree.children_rave_values[node], tree.children_prior[node], tree.children_legal[node],
                                mean, params, plain_rng, expect)
            action = descent.cached_choice(node, tree.root, tree.parents, tree.action_from_parent, tree.children_visits,
                                           tree.children_values, tree.children_rave_visits, tree.children_rave_values,
                                           tree.children_prior, tree.children_legal, params, kept_rng, cache, scores)
            assert action == descent.best_edge(expect) and kept_rng[0] == plain_rng[0]
            assert np.array_equal(scores, expect)
            if action >= 0:
                tree.children_visits[node, action] += 1  # the virtual loss of a descent
                descent.update_cached(node, action, tree.children_visits, tree.children_values,
                                      tree.children_rave_visits, tree.children_rave_values, tree.children_prior,
                                      tree.children_legal, params, cache)
                chosen += 1
    assert chosen > 4000


def test_descents_keep_scores_only_where_they_cannot_change():
    assert not descent.keeps_scores(descent.score_params(CONFIGS["uct"].for_size(5)))
    assert not descent.keeps_scores(descent.score_params(CONFIGS["rave-c1-priors"].for_size(5)))  # log_n weighs


def _compiled_descents(config, tree, k, max_nodes=None, depth=64):
    """``descent.descend`` (no tie noise) as [(path [(node, action)], leaf)], like ``descend_reference``."""
    room = k + 1 if max_nodes is None else max_nodes - tree.size
    (nodes, actions, lengths, leaves), _ = descent.descend(tree, k, descent.score_params(config.for_size(5), 0.0),
                                                           descent.new_rng(0), room, depth)
    return [(list(zip(nodes[i, :lengths[i]].tolist(), actions[i, :lengths[i]].tolist())), int(leaves[i]))
            for i in range(k)]


def _copy(tree: Tree) -> Tree:
    copy = Tree(tree.num_actions, capacity=tree.capacity)
    for name in Tree.ARRAYS:
        setattr(copy, name, getattr(tree, name).copy())
    copy.size, copy.root = tree.size, tree.root
    return copy


@pytest.mark.parametrize("name", list(CONFIGS))
def test_descents_with_virtual_loss_match_the_reference(name):
    config = CONFIGS[name]
    rng = np.random.default_rng(3)
    for trial in range(40):
        tree = random_tree(rng, int(rng.integers(1, 200)))
        max_nodes = None if trial % 2 else tree.size + int(rng.integers(0, 4))
        fast_tree, k = _copy(tree), int(rng.integers(1, 33))
        ref = descend_reference(config, tree, k, max_nodes)
        fast = _compiled_descents(config, fast_tree, k, max_nodes)
        assert fast == ref
        assert np.array_equal(fast_tree.children_visits, tree.children_visits)  # the same virtual losses


def test_a_path_longer_than_the_buffer_is_reported_undone_and_retried():
    rng = np.random.default_rng(4)
    tree = Tree(5)
    for node in range(12):  # a chain of 12 nodes through action 0
        add_node(tree, node - 1, 0 if node else -1, 1 - 2 * (node % 2))
    tree.children_legal[:12, 0] = True  # the only move searched
    tree.children_visits[:12, 0] = 100
    tree.children_values[:12, 0] = 90
    tree.children_rave_visits[:12] = rng.integers(0, 5, (12, 5))
    before = tree.children_visits.copy()
    small = (np.zeros((3, 8), np.int32), np.zeros((3, 8), np.int32), np.zeros(3, np.int32), np.zeros(3, np.int32))
    done = descent.descend_batch(3, tree.root, 4, tree.terminal, np.ones(tree.capacity, bool), tree.parents,
                                 tree.action_from_parent,
                                 tree.children_index, tree.children_visits, tree.children_values,
                                 tree.children_rave_visits, tree.children_rave_values, tree.children_prior,
                                 tree.children_legal, descent.score_params(SearchConfig().for_size(5), 0.0),
                                 descent.new_rng(0), *small)
    assert done == descent.PATH_OVERFLOW
    assert np.array_equal(tree.children_visits, before)
    (_, _, lengths, _), depth = descent.descend(tree, 3, descent.score_params(SearchConfig().for_size(5), 0.0),
                                                descent.new_rng(0), 4, depth=8)
    assert depth == 16 and lengths.tolist() == [12, 12, 12]


@pytest.mark.parametrize("strategy", ["rave", "uct"])
def test_backup_matches_the_reference(strategy):
    config = SearchConfig(strategy=strategy)
    rng = np.random.default_rng(5)
    for _ in range(30):
        tree = random_tree(rng, 120)
        fast_tree = _copy(tree)
        k, playouts, points = 16, int(rng.integers(1, 9)), tree.num_actions - 1
        paths = _compiled_descents(config, fast_tree, k)
        descend_reference(config, tree, k)
        winner = rng.choice(np.array([-1, 0, 1], np.int8), (k, playouts), p=[0.45, 0.1, 0.45])
        score = winner * rng.uniform(0.5, 40.0, (k, playouts))
        value = backup.playout_values(winner, score, float(rng.choice([0.0, 0.1, 0.3])), 9.0)
        first = rng.choice(np.array([-1, 0, 1], np.int8), (k, playouts, points))
        rows = [i for i, (path, leaf) in enumerate(paths) if leaf != descent.PENDING]
        depth = max([len(p) for p, _ in paths] + [1])
        nodes = np.zeros((k, depth), np.int32)
        actions = np.zeros((k, depth), np.int32)
        for i, (path, _) in enumerate(paths):
            nodes[i, :len(path)] = [n for n, _ in path]
            actions[i, :len(path)] = [a for _, a in path]
        lengths = np.array([len(p) for p, _ in paths], np.int32)
        leaves = np.array([leaf for _, leaf in paths], np.int32)
        backup.backup_batch(np.array(rows, np.int64), nodes, actions, lengths, leaves, value, first,
                             fast_tree.to_play, fast_tree.children_visits, fast_tree.children_values,
                             fast_tree.children_rave_visits, fast_tree.children_rave_values, strategy == "rave")
        for i in rows:
            backup_reference(config, tree, paths[i][0], paths[i][1], value[i], first[i])
        for name in ("children_visits", "children_rave_visits"):
            assert np.array_equal(getattr(fast_tree, name), getattr(tree, name)), name
        for name in ("children_values", "children_rave_values"):  # summed in another order when u > 0
            np.testing.assert_allclose(getattr(fast_tree, name), getattr(tree, name), rtol=1e-12, err_msg=name)


def test_score_params_pack_each_field_at_its_index():
    config = SearchConfig(strategy="uct", uct_c=0.3, rave_c1=0.2, rave_c3=0.01, bias_c2=1.5, pass_prior_playouts=8.0,
                          prior_even=2.0, prior_pattern=30.0, widen_playouts=5.0, widen_factor=1.7, n_expand=3)
    params = descent.score_params(config, noise=0.5)
    assert params.shape == (descent.N_PARAMS,)
    for index, name in descent.PARAM_FIELDS.items():
        assert params[index] == getattr(config, name)
    assert (params[descent.EDGE_RULE], params[descent.NOISE]) == (descent.UCT_EDGES, 0.5)
    rave = descent.score_params(dataclasses.replace(config, strategy="rave"))
    assert rave[descent.EDGE_RULE] == descent.RAVE_EDGES != descent.UCT_EDGES
    assert len(set(descent.PARAM_FIELDS) | {descent.EDGE_RULE, descent.NOISE}) == descent.N_PARAMS
    with pytest.raises(ValueError, match="for_size"):
        descent.score_params(SearchConfig())
