"""``jaxgo.search.arena``: tree storage reused from search to search, handed back clean."""

import numpy as np

from jaxgo.go.game import new_game
from jaxgo.search.arena import TreeArena, tree_nbytes
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.searcher import Searcher
from jaxgo.search.tree import Tree


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
