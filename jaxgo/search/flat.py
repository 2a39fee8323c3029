"""The flat strategies of a ``Searcher``: playouts from the root's children or the root itself, no tree.

    ``mc``     vanilla Monte Carlo: equal playouts for every legal first move, best first-move mean.
    ``pp``     progressive pruning (Bouzy): vanilla rounds, moves c-dominated (disjoint confidence intervals
               mu +- c sigma / sqrt(n)) are no longer sampled.
    ``amaf``   all-moves-as-first: playouts from the position, each move credited with the games in which the
               player to move played it first anywhere.
    ``depth2`` depth-2 min-of-means: every reply to every move is sampled; a move's value is the lowest mean of
               its replies (the opponent minimises); the move with the highest value is chosen.

Each is a function of the searcher (its rules kernels, evaluator, budget check and result) and the game.  Their
"visits" rank the moves (mean + 1, 0 for a move not chosen); their values are the moves' mean win rates.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxgo.search.limits import SearchLimits
from jaxgo.search.result import SearchResult, search_result
from jaxgo.search.tree import stack_state


def root_children(searcher, game, forbid_pass: bool = False):
    """(child states [A], legal [A], child legal masks [A, A]) of the current position."""
    children = searcher.children_batch
    moves = np.arange(searcher.num_actions, dtype=np.int32)
    child_states, child_legal = children(stack_state(game.state, searcher.num_actions), moves)
    return child_states, searcher.root_legal(game, forbid_pass), np.asarray(child_legal)


def search_flat(searcher, game, limits: SearchLimits, start: float) -> SearchResult:
    """Vanilla Monte Carlo (``mc``) and progressive pruning (``pp``)."""
    cfg = searcher.config
    color = game.to_play
    child_states, legal, _ = root_children(searcher, game, limits.forbid_pass)
    a = searcher.num_actions
    lpm = cfg.flat_playouts_per_move
    n = np.zeros(a)
    w = np.zeros(a)
    active = legal.copy()  # pass included: without it a lost position is played out by filling own areas
    done = 0
    while (done == 0 or not searcher.out_of_budget(done, limits, start)) and active.any():
        moves = np.flatnonzero(active)
        slots = np.resize(moves, a)  # fill the fixed batch cyclically with the active moves
        states = jax.tree_util.tree_map(lambda x: np.asarray(x)[slots], child_states)
        winner, _ = searcher.evaluate(states, lpm)
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
    searcher.debug(f"{cfg.strategy}: {done} playouts, {int(active.sum())} moves left")
    visits = np.where(choice >= 0, choice + 1.0, 0.0)  # rank by mean
    result = search_result(visits, rates, done)
    return result


def search_amaf(searcher, game, limits: SearchLimits, start: float) -> SearchResult:
    """All-moves-as-first from the position itself (Bruegmann)."""
    color = game.to_play
    legal = searcher.root_legal(game, limits.forbid_pass)
    a = searcher.num_actions
    lpm = searcher.config.flat_playouts_per_move
    states = stack_state(game.state, a)
    n = np.zeros(a)
    w = np.zeros(a)
    done = 0
    while done == 0 or not searcher.out_of_budget(done, limits, start):
        winner, first = searcher.evaluate(states, lpm)
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
    return search_result(visits, rates, done)


def search_depth2(searcher, game, limits: SearchLimits, start: float) -> SearchResult:
    """Depth-2 min-of-means: each (move, reply) pair is sampled round-robin; value = min over replies."""
    children = searcher.children_batch
    color = game.to_play
    child_states, legal, child_legal = root_children(searcher, game, limits.forbid_pass)
    a = searcher.num_actions
    lpm = searcher.config.flat_playouts_per_move
    moves = np.flatnonzero(legal[:-1]) if legal[:-1].any() else np.array([a - 1])
    child_np = jax.tree_util.tree_map(np.asarray, child_states)
    n = np.zeros((a, a))
    w = np.zeros((a, a))
    grand_cache = {}
    done, turn = 0, 0
    while done == 0 or not searcher.out_of_budget(done, limits, start):
        move = int(moves[turn % len(moves)])
        turn += 1
        if move not in grand_cache:
            one = jax.tree_util.tree_map(lambda x: np.broadcast_to(x[move], (a,) + x.shape[1:]).copy(), child_np)
            grand_cache[move] = children(one, np.arange(a, dtype=np.int32))[0]
        replies = child_legal[move].copy()
        replies[-1] = replies[-1] and not replies[:-1].any()
        winner, _ = searcher.evaluate(grand_cache[move], max(1, lpm // 4))
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
    return search_result(visits, values, done)


# The flat search of each strategy: (searcher, game, limits, start time) -> SearchResult.
SEARCHES = {"mc": search_flat, "pp": search_flat, "amaf": search_amaf, "depth2": search_depth2}
