"""The linear-model failure of sections 5.3-5.4: Monte Carlo policy iteration (Algorithm 2) and TD(lambda)
policy iteration (Algorithm 3) on a sum of games, with the value of a state approximated by a sum of one weight
per subgame node, V(w, s) = sum_i w[i, s[i]] (11 weights for the toy sum, named a..t as in Figure 5.5).

Epochs of ``N`` playouts use a frozen policy (weights ``w_pi``); the greedy policy is Left: argmax, Right:
argmin of V(w_pi, s.play(a)), epsilon-greedy, ties broken at random.  Since V is linear, a move's effect on V is
the *incentive* w[i, child] - w[i, node], the same in every state: the model can only express a fixed order of
preference over moves, never "which subgame first" depending on the others (section 5.4).

Algorithm 3 as printed never uses the result R (its delta is V(s_{i+1}) - V(s_i) all the way to the end, so
nothing ties the weights to the score); as in standard TD, the last step here uses delta = R - V(s_i).  After an
exploratory (random) move the trace is cleared and not incremented, exactly as printed, so that step does not
learn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from jaxgo.cgt.games import (
    LEFT,
    RIGHT,
    Minimax,
    all_states,
    initial_state,
    is_terminal,
    legal_moves,
    opponent,
    play,
    score,
)

TOY_WEIGHT_NAMES = ["a", "b", "c", "k", "l", "m", "p", "q", "r", "s", "t"]  # Figure 5.5: G (a,b,c), H (k,l,m), I (p..t)


@dataclass
class LinearModel:
    """One weight per (subgame, node); ``offsets[i]`` is subgame i's first weight index."""

    games: tuple
    w: list[float] = field(default_factory=list)

    def __post_init__(self):
        self.games = tuple(self.games)
        self.offsets = []
        k = 0
        for g in self.games:
            self.offsets.append(k)
            k += g.n_nodes
        if not self.w:
            self.w = [0.0] * k

    def features(self, state) -> list[int]:
        """Indices of the weights with coefficient 1 in V(w, state) (the gradient's non-zeros)."""
        return [o + n for o, n in zip(self.offsets, state)]

    def value(self, state, w=None) -> float:
        w = self.w if w is None else w
        return sum(w[f] for f in self.features(state))

    def incentive(self, i: int, node: int, child: int, w=None) -> float:
        """Change of V when subgame i moves from ``node`` to ``child`` (state independent)."""
        w = self.w if w is None else w
        return w[self.offsets[i] + child] - w[self.offsets[i] + node]


def greedy_move(model: LinearModel, w_pi, state, player: int, rng: random.Random):
    """argmax (Left) / argmin (Right) of V(w_pi, s.play(a)), random tie-break."""
    moves = legal_moves(model.games, state, player)
    sign = 1.0 if player == LEFT else -1.0
    scores = [sign * model.incentive(i, state[i], c, w_pi) for i, c in moves]
    best = max(scores)
    return rng.choice([m for m, v in zip(moves, scores) if v >= best - 1e-12])


def policy_move(model, w_pi, state, player, epsilon, rng):
    """epsilon-greedy move; returns (move, was_random)."""
    if rng.random() < epsilon:
        return rng.choice(legal_moves(model.games, state, player)), True
    return greedy_move(model, w_pi, state, player, rng), False


def mc_playout_update(model: LinearModel, w_pi, epsilon, alpha, rng, policy=None) -> float:
    """One playout of Algorithm 2 and its gradient updates on every visited state (terminal included).
    ``policy(state, player) -> move`` overrides the epsilon-greedy policy (used for a fixed optimal policy)."""
    state, player = initial_state(model.games), LEFT
    visited = [state]
    while not is_terminal(model.games, state):
        if policy is not None and rng.random() >= epsilon:
            move = policy(state, player)
        elif policy is not None:
            move = rng.choice(legal_moves(model.games, state, player))
        else:
            move, _ = policy_move(model, w_pi, state, player, epsilon, rng)
        state, player = play(state, move), opponent(player)
        visited.append(state)
    result = score(model.games, state)
    w = model.w
    for s in visited:
        err = model.value(s) - result
        for f in model.features(s):
            w[f] -= alpha * err
    return result


def td_playout_update(model: LinearModel, w_pi, epsilon, alpha, lam, rng) -> float:
    """One playout of Algorithm 3 (TD(lambda) with traces cleared after exploratory moves)."""
    state, player = initial_state(model.games), LEFT
    trace: dict[int, float] = {}
    w = model.w
    while not is_terminal(model.games, state):
        move, was_random = policy_move(model, w_pi, state, player, epsilon, rng)
        if was_random:
            trace = {}
        else:
            trace = {f: lam * e for f, e in trace.items()}
            for f in model.features(state):
                trace[f] = trace.get(f, 0.0) + 1.0
        nxt = play(state, move)
        target = score(model.games, nxt) if is_terminal(model.games, nxt) else model.value(nxt)
        delta = target - model.value(state)
        for f, e in trace.items():
            w[f] += alpha * delta * e
        state, player = nxt, opponent(player)
    return score(model.games, state)


def move_list(games) -> list[tuple[int, int, int, int]]:
    """Every (player, subgame, node, child) move of the sum, Left's first."""
    out = []
    for player in (LEFT, RIGHT):
        for i, g in enumerate(games):
            for n in range(g.n_nodes):
                out.extend((player, i, n, c) for c in g.options(n, player))
    return out


def greedy_table(model: LinearModel, games, states) -> tuple:
    """The deterministic greedy policy (ties -> first move) in every non-terminal (state, player): the
    policy's identity, used to detect oscillation."""
    table = []
    for s in states:
        if is_terminal(games, s):
            continue
        for p in (LEFT, RIGHT):
            moves = legal_moves(games, s, p)
            sign = 1.0 if p == LEFT else -1.0
            table.append(max(moves, key=lambda m: sign * model.incentive(m[0], s[m[0]], m[1])))
    return tuple(table)


def greedy_line(games, weights, player: int = LEFT) -> dict:
    """Deterministic greedy self-play (ties -> first move) from the roots under the given weights."""
    model = LinearModel(games, list(weights))
    state, moves = initial_state(games), []
    while not is_terminal(games, state):
        sign = 1.0 if player == LEFT else -1.0
        i, c = max(legal_moves(games, state, player), key=lambda m: sign * model.incentive(m[0], state[m[0]], m[1]))
        moves.append(games[i].node_name(c))
        state, player = play(state, (i, c)), opponent(player)
    return {"moves": moves, "score": score(games, state)}


def policy_iteration(games, algorithm: str = "td", epochs: int = 60, n: int = 1000, epsilon: float = 0.2,
                     alpha: float = 0.001, lam: float = 0.9, seed: int = 0) -> dict:
    """Run Algorithm 2 (``"mc"``) or 3 (``"td"``) for ``epochs`` epochs of ``n`` playouts.

    Returns per-epoch ``incentives`` (after the epoch, i.e. of the next policy, in :func:`move_list` order),
    ``weights``, greedy ``policies`` (tables), ``optimal`` (greedy policy optimal in every decision) and the
    oscillation summary of :func:`oscillation`."""
    rng = random.Random(seed)
    model = LinearModel(games)
    solver = Minimax(games)
    states = all_states(games)
    moves = move_list(games)
    hist = {"incentives": [], "weights": [], "policies": [], "optimal_fraction": [], "moves": moves}
    for _ in range(epochs):
        w_pi = list(model.w)
        for _ in range(n):
            if algorithm == "mc":
                mc_playout_update(model, w_pi, epsilon, alpha, rng)
            else:
                td_playout_update(model, w_pi, epsilon, alpha, lam, rng)
        hist["incentives"].append([model.incentive(i, node, c) for _, i, node, c in moves])
        hist["weights"].append(list(model.w))
        table = greedy_table(model, games, states)
        hist["policies"].append(table)
        hist["optimal_fraction"].append(_optimal_fraction(solver, games, states, table))
    hist.update(oscillation(hist["policies"]))
    return hist


def _optimal_fraction(solver, games, states, table) -> float:
    decisions = [(s, p) for s in states if not is_terminal(games, s) for p in (LEFT, RIGHT)]
    ok = sum(m in solver.optimal_moves(s, p) for (s, p), m in zip(decisions, table))
    return ok / len(decisions)


def oscillation(policies: list) -> dict:
    """Does the greedy policy keep changing and come back to earlier policies?  Looks at the second half of
    the epochs: ``changes`` (epochs whose policy differs from the previous one), ``distinct`` policies, and
    ``oscillates`` = at least 2 changes and some policy recurring after a different one."""
    tail = policies[len(policies) // 2 :]
    changes = sum(a != b for a, b in zip(tail, tail[1:]))
    seen, recur = set(), False
    for k, p in enumerate(tail):
        if p in seen and k > 0 and tail[k - 1] != p:
            recur = True
        seen.add(p)
    return {"changes": changes, "distinct": len(seen), "oscillates": bool(changes >= 2 and recur)}


def indifference_limits(games, playouts: int = 20000, alpha: float = 0.01, seed: int = 0) -> dict:
    """Section 5.4: learn the linear weights with Algorithm 2's update under the fixed optimal policy (the
    principal variation, no exploration) and return the limit quantities, which all go to 0:
    V(root) - R and, for each move on the principal variation, its incentive (w_k - w_l, w_p - w_r, ... in
    the thesis's naming, sign aside).  Also returns the greedy policy those weights induce at the root."""
    rng = random.Random(seed)
    model = LinearModel(games)
    solver = Minimax(games)
    opt = lambda s, p: solver.optimal_moves(s, p)[0]  # noqa: E731
    for _ in range(playouts):
        mc_playout_update(model, None, 0.0, alpha, rng, policy=opt)
    root = initial_state(games)
    pv = solver.principal_variation(root, LEFT)
    result = solver.value(root, LEFT)
    out = {"root_error": model.value(root) - result, "pv_incentives": {}, "weights": list(model.w)}
    state = root
    for i, c in pv:
        out["pv_incentives"][games[i].node_name(c)] = model.incentive(i, state[i], c)
        state = play(state, (i, c))
    # the two root moves the thesis singles out: Right's G -> G^R and I -> I^R (w_a - w_c, w_p - w_r)
    out["root_incentives"] = {
        games[i].node_name(c): model.incentive(i, 0, c) for i, g in enumerate(games) for c in g.left[0] + g.right[0]
    }
    out["pv"] = [games[i].node_name(c) for i, c in pv]
    table = greedy_table(model, games, all_states(games))
    out["greedy_optimal_fraction"] = _optimal_fraction(solver, games, all_states(games), table)
    return out
