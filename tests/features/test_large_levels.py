"""The compiled large-pattern levels equal ``large.candidate_levels`` (the XLA code the move model trains on)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.features import gammas as gamma_files
from jaxgo.features import large, large_levels
from jaxgo.go import rules
from jaxgo.playouts import evaluator
from jaxgo.playouts.native import runner
from jaxgo.playouts.xla import heavy


@functools.lru_cache(maxsize=None)
def shipped():
    return gamma_files.load_default_large().large


@functools.lru_cache(maxsize=None)
def reference(size):
    tables = tuple(jnp.asarray(x) for x in shipped().tables())
    return jax.jit(jax.vmap(lambda state, legal: large.candidate_levels(state, legal, tables)))


play = jax.jit(rules.play)
legal_mask = jax.jit(rules.legal_mask)


def game_positions(size, count, seed):
    """Positions along heavy playouts from the empty board (the shapes real games make, so that many points
    have frequent large patterns), plus a few random ones."""
    points = size * size
    policy = runner.heavy_policy(heavy.policy_tables(evaluator.load_log_gammas(None)), size)
    raw = runner.play_batch(policy, np.zeros((1, points), np.int8), [1], [-1], [0], [[-1, -1]], count, seed,
                            threads=1, record_moves=True)
    states = []
    for j in range(count):
        state = rules.new_state(size)
        for move in raw.trace[j][: 4 + (j * 7) % (points // 2)]:
            if move < 0:
                break
            state = play(state, jnp.int32(move))
        states.append(state)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        board = np.where(rng.random(points) < 0.3, rng.choice([-1, 1], points), 0).astype(np.int8)
        states.append(rules.from_board(board.reshape(size, size), to_play=int(rng.choice([-1, 1]))))
    return states


@pytest.mark.parametrize("size,count", [(9, 40), (19, 40)])
def test_levels_equal_the_xla_levels(size, count):
    states = game_positions(size, count, seed=size)
    stones = np.stack([np.asarray(s.stones) for s in states])
    to_play = np.array([int(s.to_play) for s in states], np.int32)
    legal = np.stack([np.asarray(legal_mask(s)) for s in states])
    mine = large_levels.candidate_levels(stones, to_play, legal, shipped())
    batched = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    expected = np.asarray(reference(size)(batched, jnp.asarray(legal)))
    np.testing.assert_array_equal(mine, expected)
    assert (mine > 0).sum() > 0.3 * legal.sum()  # the shapes of games are in the dictionary
    assert not mine[:, -1].any()  # pass has no pattern


def test_empty_corner_patterns_are_known():
    """On the empty 19x19 board the 4-4 and 3-4 points have the largest patterns (size 10) in the dictionary."""
    size = 19
    state = rules.new_state(size)
    legal = np.asarray(rules.legal_mask(state))[None]
    levels = large_levels.candidate_levels(np.asarray(state.stones)[None], [1], legal, shipped())[0]
    sizes = np.asarray(shipped().size_index)
    for r, c in [(3, 3), (2, 3), (3, 15), (15, 2)]:
        level = levels[r * size + c]
        assert level > 0 and large.SIZES[sizes[level - 1]] == large.MAX_SIZE


def test_table_maps_every_entry():
    dictionary = shipped()
    table = large_levels.level_table(dictionary)
    hashes, levels = dictionary.tables()
    assert table.keys.shape[0] >= 2 * int((levels > 0).sum())
    assert large_levels.level_table(dictionary) is table  # built once
