"""Strategies for sums of games: HOTSTRAT, exact minimax, random, and their evaluation (thesis section 5.6).

A *model* gives, for every subgame ``i`` and node ``n``, an object with ``.temperature``, ``.mean`` and
``.stop(player, t)`` (the taxed stop when ``player`` moves first at ambient temperature ``t``): a list of
exact :class:`~jaxgo.cgt.thermograph.Thermograph` per game, or of
:class:`~jaxgo.cgt.triangle.Triangle` (recursive or learnt by CG-TD).

HOTSTRAT plays in the hottest subgame (highest temperature; ties go to the lowest index).  Inside it, Left
picks the option whose taxed right stop at t(G) -- the value of the option where Right moves next, with the
tax of the ambient temperature -- is highest (Right: lowest taxed left stop); remaining ties go to the better
mean, then to the first option.  With one option per side (the toy) the second choice is forced.
"""

from __future__ import annotations

import random

from jaxgo.cgt.games import LEFT, RIGHT, Minimax, Move, is_terminal, legal_moves, opponent, play, score


def hotstrat_move(games, state, player: int, model) -> Move:
    """HOTSTRAT's move for ``player`` in ``state`` under ``model``."""
    live = [i for i, (g, n) in enumerate(zip(games, state)) if not g.is_leaf(n)]
    i = max(live, key=lambda k: (model[k][state[k]].temperature, -k))
    node_th = model[i][state[i]]
    t = node_th.temperature
    opts = games[i].options(state[i], player)
    sign = 1.0 if player == LEFT else -1.0
    nxt = opponent(player)
    best = max(opts, key=lambda c: (sign * model[i][c].stop(nxt, t), sign * model[i][c].mean, -c))
    return (i, best)


def hotstrat(model):
    """HOTSTRAT as a strategy function ``(games, state, player) -> move``."""
    return lambda games, state, player: hotstrat_move(games, state, player, model)


def minimax_strategy(solver: Minimax):
    """Exact optimal play (first optimal move)."""
    return lambda games, state, player: solver.optimal_moves(state, player)[0]


def random_strategy(rng: random.Random):
    """Uniformly random legal move."""
    return lambda games, state, player: rng.choice(legal_moves(games, state, player))


def is_optimal_move(solver: Minimax, state, player: int, move: Move, tol: float = 1e-9) -> bool:
    """Whether ``move`` keeps the minimax value of ``state``."""
    return abs(solver.value(play(state, move), opponent(player)) - solver.value(state, player)) <= tol


def optimal_everywhere(games, solver: Minimax, strategy, states) -> dict:
    """Check ``strategy`` against minimax in every non-terminal state for both players to move.

    Returns counts: ``configurations``, ``terminal``, ``decisions`` (non-terminal states x 2 players),
    ``optimal_decisions`` and ``configurations_optimal`` (states where the strategy is optimal for both
    players; terminal states count as optimal since nobody has a move) plus ``failures`` (state, player)."""
    failures = []
    ok_states = 0
    terminal = 0
    for s in states:
        if is_terminal(games, s):
            terminal += 1
            ok_states += 1
            continue
        ok = True
        for p in (LEFT, RIGHT):
            if not is_optimal_move(solver, s, p, strategy(games, s, p)):
                failures.append((s, p))
                ok = False
        ok_states += ok
    decisions = 2 * (len(states) - terminal)
    return {
        "configurations": len(states),
        "terminal": terminal,
        "decisions": decisions,
        "optimal_decisions": decisions - len(failures),
        "configurations_optimal": ok_states,
        "failures": failures,
    }


def value_against_perfect(games, solver: Minimax, strategy, state, player: int, hero: int, memo=None) -> float:
    """Score when ``hero`` follows the (deterministic) ``strategy`` and the opponent replies perfectly
    (the opponent's best response to that strategy, found by search)."""
    memo = {} if memo is None else memo
    key = (state, player)
    if key in memo:
        return memo[key]
    if is_terminal(games, state):
        v = score(games, state)
    elif player == hero:
        v = value_against_perfect(games, solver, strategy, play(state, strategy(games, state, player)),
                                  opponent(player), hero, memo)
    else:
        vals = [value_against_perfect(games, solver, strategy, play(state, m), opponent(player), hero, memo)
                for m in legal_moves(games, state, player)]
        v = max(vals) if player == LEFT else min(vals)
    memo[key] = v
    return v


def value_loss(games, solver: Minimax, strategy, state, player: int, hero: int) -> float:
    """Points ``hero`` loses by following ``strategy`` instead of playing perfectly (>= 0)."""
    best = solver.value(state, player)
    got = value_against_perfect(games, solver, strategy, state, player, hero)
    return (best - got) if hero == LEFT else (got - best)


__all__ = [
    "LEFT",
    "RIGHT",
    "hotstrat",
    "hotstrat_move",
    "minimax_strategy",
    "random_strategy",
    "is_optimal_move",
    "optimal_everywhere",
    "value_against_perfect",
    "value_loss",
]
