"""The ownership estimate: the mean final owner of every point over playouts from a position."""

from __future__ import annotations

import jax
import numpy as np

from jaxgo.playouts.evaluator import Evaluator, make_evaluator
from jaxgo.search import priors
from jaxgo.search.tree import stack_state


def ownership_estimate(game, playouts: int = 256, seed: int = 0, evaluator: Evaluator | None = None) -> np.ndarray:
    """float [size, size] mean playout area owner (+1 Black, -1 White) of every point, from the game's position,
    with ``evaluator``'s playouts (default light)."""
    evaluator = evaluator or make_evaluator("light")
    state = game.state.replace(passes=np.int32(0))  # after two passes the stones' fate is still played out
    last = np.asarray([priors.game_last_moves(game)], np.int32)
    batch = evaluator.evaluate(stack_state(state, 1), jax.random.PRNGKey(seed), playouts, game.rules.komi, last)
    return batch.ownership[0].astype(np.float64).mean(axis=0).reshape(game.size, game.size)
