"""Random sums of small games: how much HOTSTRAT loses with exact thermographs, with recursive triangles and
with CG-TD learnt triangles, against exact minimax (the table in ``docs/cgt.md``).

A random game is a tree of depth <= ``depth``; each inner node has 1..``max_options`` options per player and the
leaves are integers in [-``value_range``, ``value_range``].  Games above ``max_nodes`` nodes are redrawn.

Per sum and strategy we report the *value loss* of the strategy's user against a perfect opponent (the
opponent's best response, found by search), for both roles and both players starting, and the *decision
accuracy*: the fraction of all (non-terminal configuration, player to move) pairs in which the strategy's move
keeps the minimax value.
"""

from __future__ import annotations

import random

import numpy as np

from jaxgo.cgt.cgtd import CGTD
from jaxgo.cgt.games import LEFT, RIGHT, Minimax, all_states, from_nested, initial_state, is_terminal
from jaxgo.cgt.strategies import hotstrat, is_optimal_move, random_strategy, value_loss
from jaxgo.cgt.thermograph import thermographs
from jaxgo.cgt.triangle import triangles


def random_spec(rng: random.Random, depth: int, max_options: int, value_range: int, p_leaf: float = 0.35,
                hot: bool = False, offset: int = 0):
    """A random nested game spec (see :func:`jaxgo.cgt.games.from_nested`).

    ``hot=False``: leaves uniform in [-value_range, value_range] (cold and zugzwang positions are common).
    ``hot=True``: Go-like, every move gains for its player: a Left option's values are shifted up by
    1..value_range from its parent's, a Right option's down, leaves = shift + a value in [-1, 1]."""
    if depth == 0 or rng.random() < p_leaf:
        return offset + rng.randint(-1, 1) if hot else rng.randint(-value_range, value_range)

    def side(sign):
        return [random_spec(rng, depth - 1, max_options, value_range, p_leaf, hot,
                            offset + sign * rng.randint(1, value_range) if hot else 0)
                for _ in range(rng.randint(1, max_options))]

    return (side(+1), side(-1))


def random_game(rng: random.Random, name: str, depth: int = 3, max_options: int = 2, value_range: int = 6,
                max_nodes: int = 13, hot: bool = False):
    """A random game whose root is an inner node, with at most ``max_nodes`` nodes."""
    while True:
        g = from_nested(_root_spec(rng, depth, max_options, value_range, hot), name)
        if 3 <= g.n_nodes <= max_nodes:
            return g


def _root_spec(rng, depth, max_options, value_range, hot):
    """An inner root whose options are ordinary random specs."""
    def side(sign):
        return [random_spec(rng, depth - 1, max_options, value_range, hot=hot,
                            offset=sign * rng.randint(1, value_range) if hot else 0)
                for _ in range(rng.randint(1, max_options))]

    return (side(+1), side(-1))


def random_sum(rng: random.Random, n_games: int = 3, **kw):
    """A sum of ``n_games`` random games named A, B, C, ..."""
    return tuple(random_game(rng, chr(ord("A") + k), **kw) for k in range(n_games))


def evaluate_sum(games, strategies: dict) -> dict:
    """Value losses (4 per strategy: Left/Right user x Left/Right first) and decision accuracy."""
    solver = Minimax(games)
    root = initial_state(games)
    decisions = [(s, p) for s in all_states(games) if not is_terminal(games, s) for p in (LEFT, RIGHT)]
    out = {}
    for name, strat in strategies.items():
        losses = [value_loss(games, solver, strat, root, first, hero)
                  for first in (LEFT, RIGHT) for hero in (LEFT, RIGHT)]
        acc = np.mean([is_optimal_move(solver, s, p, strat(games, s, p)) for s, p in decisions])
        out[name] = {"losses": losses, "accuracy": float(acc)}
    return out


def value_loss_table(n_sums: int = 100, n_games: int = 3, seed: int = 0, cgtd_episodes: int = 0,
                     random_baseline: bool = True, **game_kw) -> dict:
    """Aggregate :func:`evaluate_sum` over ``n_sums`` random sums.  ``cgtd_episodes`` > 0 adds HOTSTRAT on
    CG-TD(0) triangles learnt with that many episodes per sum (epsilon = 1: uniformly random play);
    ``game_kw`` goes to :func:`random_game` (e.g. ``hot=True``)."""
    rng = random.Random(seed)
    rows: dict[str, dict[str, list]] = {}
    for k in range(n_sums):
        games = random_sum(rng, n_games, **game_kw)
        strategies = {
            "hotstrat_exact": hotstrat([thermographs(g) for g in games]),
            "hotstrat_triangle": hotstrat([triangles(g) for g in games]),
        }
        if cgtd_episodes:
            learner = CGTD(games, alpha=0.1, alpha_leaves=0.1, epsilon=1.0, seed=seed * 100003 + k)
            learner.run(cgtd_episodes)
            strategies["hotstrat_cgtd"] = hotstrat(learner.model)
        if random_baseline:
            strategies["random"] = random_strategy(random.Random(k))
        for name, res in evaluate_sum(games, strategies).items():
            r = rows.setdefault(name, {"losses": [], "accuracy": []})
            r["losses"].extend(res["losses"])
            r["accuracy"].append(res["accuracy"])
    table = {}
    for name, r in rows.items():
        losses = np.array(r["losses"])
        table[name] = {
            "mean_loss": float(losses.mean()),
            "max_loss": float(losses.max()),
            "games_with_loss": float((losses > 1e-9).mean()),
            "decision_accuracy": float(np.mean(r["accuracy"])),
        }
    return {"n_sums": n_sums, "n_games": n_games, "seed": seed, "cgtd_episodes": cgtd_episodes,
            "game_params": game_kw, "table": table}


def format_table(result: dict) -> str:
    """Markdown table of :func:`value_loss_table`."""
    lines = ["| strategy | mean value loss | max loss | games with a loss | optimal decisions |",
             "|---|---|---|---|---|"]
    for name, r in result["table"].items():
        lines.append(f"| {name} | {r['mean_loss']:.3f} | {r['max_loss']:.1f} | {100 * r['games_with_loss']:.1f}% | "
                     f"{100 * r['decision_accuracy']:.1f}% |")
    return "\n".join(lines)
