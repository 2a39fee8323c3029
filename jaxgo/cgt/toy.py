"""The thesis's toy experiment (sections 5.1, 5.8): G + H + I of Figure 5.2, exact analysis vs CG-TD(0).

:func:`run_toy` collects everything ``jaxgo cgt toy --json`` prints:

* the 45 configurations, the principal variation checked move by move against exact minimax;
* exact thermographs and recursive triangles of every node;
* CG-TD(0) learnt triangles, the largest |learnt - exact| temperature over all nodes (the temperature trace for
  Figure 5.10 is optional);
* HOTSTRAT from exact thermographs and from the learnt triangles, checked against minimax in every
  configuration for both players to move, with the failing decisions listed and marked reachable or not;
* the linear-model policy iteration of section 5.3 (TD(lambda) by default) and whether its greedy policy
  oscillates.
"""

from __future__ import annotations

from jaxgo.cgt.cgtd import CGTD
from jaxgo.cgt.games import (
    LEFT,
    RIGHT,
    Minimax,
    all_states,
    initial_state,
    is_terminal,
    opponent,
    play,
    reachable,
    score,
    state_name,
    toy_sum,
)
from jaxgo.cgt.linear_failure import greedy_line, policy_iteration
from jaxgo.cgt.strategies import hotstrat, optimal_everywhere, value_loss
from jaxgo.cgt.thermograph import shape, thermographs
from jaxgo.cgt.triangle import triangles

THESIS_PV = ["H^L", "I^R", "I^RL", "G^R"]


def check_pv(games, solver: Minimax, pv_names=THESIS_PV) -> dict:
    """Play the named principal variation from the roots (Left first); check every move is minimax-optimal."""
    by_name = {g.node_name(c): (i, c) for i, g in enumerate(games) for c in range(g.n_nodes)}
    state, player, all_optimal, line = initial_state(games), LEFT, True, [state_name(games, initial_state(games))]
    for name in pv_names:
        move = by_name[name]
        all_optimal &= move in solver.optimal_moves(state, player)
        state, player = play(state, move), opponent(player)
        line.append(state_name(games, state))
    return {"line": line, "all_moves_optimal": bool(all_optimal), "score": score(games, state),
            "minimax_value": solver.value(initial_state(games), LEFT)}


def selfplay_line(games, strategy, player: int = LEFT) -> dict:
    """Both players follow ``strategy`` from the roots."""
    state, line = initial_state(games), []
    while not is_terminal(games, state):
        i, c = strategy(games, state, player)
        line.append(games[i].node_name(c))
        state, player = play(state, (i, c)), opponent(player)
    return {"moves": line, "score": score(games, state)}


def hotstrat_report(games, solver, model, states) -> dict:
    """HOTSTRAT under ``model`` checked in every configuration; failures named, with reachability."""
    r = optimal_everywhere(games, solver, hotstrat(model), states)
    strat = hotstrat(model)
    fails = []
    for s, p in r.pop("failures"):
        i, c = strat(games, s, p)
        fails.append({
            "state": state_name(games, s),
            "to_move": "Left" if p == LEFT else "Right",
            "hotstrat_move": games[i].node_name(c),
            "hotstrat_value": solver.value(play(s, (i, c)), opponent(p)),
            "minimax_value": solver.value(s, p),
            "optimal_moves": [games[j].node_name(d) for j, d in solver.optimal_moves(s, p)],
            "reachable_from_roots": reachable(games, s, p),
        })
    r["failures"] = fails
    r["reachable_decisions"] = sum(reachable(games, s, p) for s in states if not is_terminal(games, s)
                                   for p in (LEFT, RIGHT))
    r["reachable_optimal"] = r["reachable_decisions"] - sum(f["reachable_from_roots"] for f in fails)
    r["loss_from_root"] = {
        who: value_loss(games, solver, strat, initial_state(games), first, hero)
        for who, first, hero in (("left_first_left", LEFT, LEFT), ("left_first_right", LEFT, RIGHT),
                                 ("right_first_left", RIGHT, LEFT), ("right_first_right", RIGHT, RIGHT))
    }
    return r


def run_toy(episodes: int = 3000, seed: int = 0, alpha: float = 0.1, epsilon: float = 0.5,
            linear_epochs: int = 150, trace_every: int = 0) -> dict:
    """The full toy experiment; returns a JSON-able dict (see module docstring)."""
    games = toy_sum()
    solver = Minimax(games)
    states = all_states(games)
    exact = [thermographs(g) for g in games]
    tri = [triangles(g) for g in games]

    learner = CGTD(games, alpha=alpha, alpha_leaves=alpha, epsilon=epsilon, seed=seed)
    trace = []
    record = lambda lr: trace.append([lr.episodes] + [t for row in lr.temperatures() for t in row])  # noqa: E731
    learner.run(episodes, every=trace_every, callback=record if trace_every else None)

    nodes = []
    for i, g in enumerate(games):
        for n in range(g.n_nodes):
            e, a, lt = exact[i][n], tri[i][n], learner.model[i][n]
            nodes.append({
                "node": g.node_name(n),
                "exact": {"temperature": e.temperature, "mean": e.mean, "ls": e.ls, "rs": e.rs, "shape": shape(e)},
                "triangle": {"temperature": a.temperature, "mean": a.mean, "ls": a.ls, "rs": a.rs},
                "learnt": {"temperature": lt.temperature, "mean": lt.mean, "ls": lt.ls, "rs": lt.rs},
            })
    temp_err = max(abs(x["learnt"]["temperature"] - x["exact"]["temperature"]) for x in nodes)

    learnt_report = hotstrat_report(games, solver, learner.model, states)
    exact_report = hotstrat_report(games, solver, exact, states)
    same = sum(hotstrat(learner.model)(games, s, p) == hotstrat(exact)(games, s, p)
               for s in states if not is_terminal(games, s) for p in (LEFT, RIGHT))

    out = {
        "games": {g.name: str(g) for g in games},
        "configurations": len(states),
        "principal_variation": check_pv(games, solver),
        "hotstrat_optimal": learnt_report["configurations_optimal"],
        "hotstrat_optimal_exact_thermographs": exact_report["configurations_optimal"],
        "hotstrat_learnt_equals_exact_decisions": f"{same}/{learnt_report['decisions']}",
        "hotstrat_learnt": learnt_report,
        "hotstrat_exact": exact_report,
        "hotstrat_selfplay_left_first": selfplay_line(games, hotstrat(learner.model), LEFT),
        "temperature_error_max": temp_err,
        "cgtd": {"episodes": episodes, "alpha": alpha, "epsilon": epsilon, "seed": seed},
        "nodes": nodes,
    }
    if trace_every:
        out["temperature_trace"] = {
            "columns": ["episode"] + [g.node_name(n) for g in games for n in range(g.n_nodes)], "rows": trace,
        }
    if not linear_epochs:
        out["td_lambda_oscillates"] = None
        return out
    out["linear_model"] = {alg: linear_summary(games, alg, linear_epochs, seed) for alg in ("td", "mc")}
    out["td_lambda_oscillates"] = out["linear_model"]["td"]["oscillates"]
    out["mc_oscillates"] = out["linear_model"]["mc"]["oscillates"]
    return out


def linear_summary(games, algorithm: str, epochs: int, seed: int) -> dict:
    """Algorithm 2 or 3 with the thesis's N = 1000, epsilon = 0.2, alpha = 0.001, lambda = 0.9, summarised:
    oscillation over the second half of the epochs, per-epoch policy changes, final incentives, and the greedy
    self-play line of the final weights."""
    lin = policy_iteration(games, algorithm, epochs=epochs, seed=seed)
    changes = [k + 1 for k, (a, b) in enumerate(zip(lin["policies"], lin["policies"][1:])) if a != b]
    return {
        "epochs": epochs, "N": 1000, "epsilon": 0.2, "alpha": 0.001, "lambda": 0.9 if algorithm == "td" else None,
        "policy_change_epochs": changes, "last_policy_change_epoch": changes[-1] if changes else 0,
        "policy_changes_second_half": lin["changes"], "distinct_policies_second_half": lin["distinct"],
        "oscillates": lin["oscillates"], "greedy_optimal_fraction_last": lin["optimal_fraction"][-1],
        "greedy_line_left_first_last": greedy_line(games, lin["weights"][-1], LEFT),
        "incentives_last": {
            ("Left " if p == LEFT else "Right ") + games[i].node_name(c): round(v, 4)
            for (p, i, _, c), v in zip(lin["moves"], lin["incentives"][-1])
        },
    }
