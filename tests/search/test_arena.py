"""``jaxgo.search.arena``: tree storage reused from search to search, handed back clean."""

import numpy as np

from jaxgo.go.game import new_game
from jaxgo.search.arena import TreeArena, tree_nbytes
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.searcher import Searcher
from jaxgo.search.tree import Tree, state_specs


def _searched_tree(seed: int) -> tuple:
    game = new_game(size=5, komi=0.5)
    searcher = Searcher(game.rules, SearchConfig(backend="native", playout_policy="light", leaves_per_batch=8),
                        seed=seed)
    searcher.search(game, SearchLimits(playouts=256))
    return searcher.tree, searcher


def test_an_adopted_tree_equals_the_original_and_comes_back_clean():
    tree, _ = _searched_tree(1)
    arena = TreeArena(max_bytes=2 ** 30)
    copy = arena.adopt(tree, 256)
    assert copy.capacity == 256 and copy.size == tree.size and arena.allocated == 1
    for name in Tree.ARRAYS:
        np.testing.assert_array_equal(getattr(copy, name)[: tree.size], getattr(tree, name)[: tree.size])
    copy.check_consistency(positions=True)
    assert arena.give_back(copy, 256) and arena.free_bytes == tree_nbytes(copy)
    fresh = Tree(tree.num_actions, 256)
    for name in Tree.ARRAYS:  # every row as a new tree's
        np.testing.assert_array_equal(getattr(copy, name), getattr(fresh, name), err_msg=name)
    assert not any(array.any() for array in copy.states.values())
    again = arena.adopt(_searched_tree(2)[0], 256)
    assert again is copy and arena.reused == 1 and arena.free_bytes == 0
    again.check_consistency()


def test_the_arena_keeps_no_more_than_its_bound_nor_a_tree_that_grew():
    tree, _ = _searched_tree(1)
    small = TreeArena(max_bytes=1)
    copy = small.adopt(tree, 256)
    assert not small.give_back(copy, 256) and small.free_bytes == 0
    arena = TreeArena(max_bytes=2 ** 30)
    copy = arena.adopt(tree, 256)
    copy.reserve(300)  # grew past its storage: not kept
    assert copy.capacity > 256 and not arena.give_back(copy, 256)


def test_a_taken_tree_is_a_new_trees_storage_and_roots_a_search_as_an_adopted_one():
    game = new_game(size=5, komi=0.5)
    game.play(1, 12)
    config = SearchConfig(backend="native", playout_policy="light", leaves_per_batch=8)
    arena = TreeArena(max_bytes=2 ** 30)
    taken = arena.take(26, 256, state_specs(game.state))
    fresh = Tree(26, 256)
    assert taken.size == 0 and taken.capacity == 256 and arena.allocated == 1
    for name in Tree.ARRAYS:  # (lazy zeros, the links written in the compiled call)
        assert getattr(taken, name).dtype == getattr(fresh, name).dtype
        np.testing.assert_array_equal(getattr(taken, name), getattr(fresh, name), err_msg=name)
    assert not any(array.any() for array in taken.states.values())
    trees = []
    for storage in (taken, None):  # the root put into the storage, or a fresh tree adopted as before
        searcher = Searcher(game.rules, config, seed=3)
        job = searcher.start_tree_search(game, SearchLimits(max_nodes=200), storage=storage)
        tree = job.tree if storage is not None else arena.adopt(job.tree, 256)
        searcher.trees.tree = job.tree = tree
        for _ in range(6):
            states = searcher.select_leaves(job)
            if states is None:
                continue
            winner, first = searcher.evaluate(states, 4, job.last_moves, active=job.pending.count)
            searcher.backup_leaves(job, winner, first, np.zeros(winner.shape, np.float32))
        tree.check_consistency(positions=True)
        trees.append(tree)
    assert trees[0] is taken and trees[0].size == trees[1].size > 1
    for name in Tree.ARRAYS:
        np.testing.assert_array_equal(getattr(trees[0], name), getattr(trees[1], name), err_msg=name)
    for name in trees[0].states:
        np.testing.assert_array_equal(trees[0].states[name], trees[1].states[name], err_msg=name)


def test_lazy_zeros_are_writable_zero_arrays():
    from jaxgo.search.arena import lazy_zeros

    for shape, dtype in (((4096, 82), np.float64), ((3,), np.int8), ((0, 5), np.int32), ((7, 2), np.uint32),
                         ((1 << 18,), np.uint32)):
        array = lazy_zeros(shape, dtype)
        assert array.shape == shape and array.dtype == dtype and array.flags.c_contiguous and array.flags.writeable
        assert not array.any()
        array[...] = 1
        assert array.all()
