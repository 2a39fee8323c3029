"""Learning protocol of Stern, Herbrich, Graepel (2007, sec. 5.2): train pattern priors by searching, then time.

- ``attempt``: one capture problem (attacker to move, or the defender with ``attacker_to_move`` False as in the
  mined ``defend`` problems; L-iteration) with a solver and an optional pattern model;
  with ``learn`` the model is updated after the search from every solved node that carries a pattern stack:
  proved nodes from every L-iteration's tree (a proof does not depend on L), disproved nodes only from the last
  tree (a disproof at a smaller L may be an artefact of the liberty limit).
- ``train``: passes over the training set, the first attempting every problem, later ones re-attempting the
  failures, until a pass solves nothing new or ``max_passes``; harvesting goes on throughout (new nodes add
  their patterns to H while the search runs).  ``tune_after`` > 0 re-estimates the hierarchical model's
  beta_i^2 after that many passes ("tuned" variant).
- ``evaluate``: time every test problem with the frozen model (no harvesting, no updates; ``temperature`` T
  divides the priors' log-odds, ``temper``) and with PNS;
  with ``fallback`` = f in (0, 1) the model's search gets only the fraction f of the node and time budgets and,
  if it has not proved the goal by then, PNS without knowledge goes on with what is left (a safety net against
  misleading priors: nodes and seconds count both searches);
  ``compare`` reports newly solved / newly failed and speedup factors (mean, median, geometric mean of
  PNS time / model time over problems both solve).
"""

from __future__ import annotations

import math
import statistics

from jaxgo.proof.capture import solve_capture
from jaxgo.proof.problems import problem_board
from jaxgo.proof.tree import logodds, prob, solved_infos


def temper(p: float, temperature: float) -> float:
    """The prior ``p`` with its log-odds divided by ``temperature`` (1: unchanged; larger: nearer 0.5)."""
    if temperature == 1.0:
        return p
    log_odds = min(max(logodds(p), -50.0), 50.0) / temperature
    return prob(log_odds)


class Frozen:
    """A model wrapper that predicts but neither harvests nor learns (evaluation on the test set); with
    ``temperature`` T > 0 its priors are tempered (``temper``: log-odds / T, a cap on the prior's strength)."""

    def __init__(self, model, temperature: float = 1.0):
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.model = model
        self.temperature = float(temperature)
        self.name = getattr(model, "name", "model")

    def predict(self, stack):
        return temper(self.model.predict(stack), self.temperature)

    def harvest(self, stack):
        return None

    def update(self, stack, value):
        return None


def update_model(model, trees) -> int:
    """Apply the post-search update to ``model`` from ``trees`` (one per L); returns observations used."""
    n = 0
    for i, tree in enumerate(trees):
        last = i == len(trees) - 1
        for stack, value in solved_infos(tree):
            if value or last:
                model.update(stack, value)
                n += 1
    return n


def attempt(problem: dict, solver: str = "pns", model=None, max_nodes: int = 20000, max_seconds: float = 2.0,
            learn: bool = False, order_by_prior: bool = True, max_l: int = 5, fallback: float = 0.0,
            prior_init: float = 0.0) -> dict:
    """Search one problem; returns dict(name, solved, nodes, seconds, move, L, observations, fallback_used).

    ``prior_init`` > 0 with ``solver`` "pns": PNS with proof numbers initialised from the model's priors
    (``tree.initial_proof_numbers``).

    ``fallback`` in (0, 1): the search with ``model`` gets that fraction of both budgets; unless it proves the
    goal, PNS without knowledge searches again with the rest (``fallback_used`` True; totals count both).
    """
    if not 0.0 <= fallback < 1.0:
        raise ValueError(f"fallback must be in [0, 1), got {fallback}")
    board = problem_board(problem)
    trees = [] if learn else None
    split = bool(fallback) and model is not None
    first_nodes, first_seconds = max_nodes, max_seconds
    if split:
        first_nodes, first_seconds = max(1, int(fallback * max_nodes)), fallback * max_seconds
    attack = problem.get("attacker_to_move", True)
    res, L = solve_capture(board, problem["goal"], attack, solver, max_nodes=first_nodes, max_seconds=first_seconds,
                           max_l=max_l, model=model, trees=trees, order_by_prior=order_by_prior and model is not None,
                           prior_init=prior_init)
    obs = update_model(model, trees) if (learn and model is not None) else 0
    nodes, seconds, used = res.nodes, res.seconds, False
    if split and res.value is not True:
        used = True
        res, L = solve_capture(board, problem["goal"], attack, "pns", max_nodes=max(1, max_nodes - nodes),
                               max_seconds=max(0.0, max_seconds - seconds), max_l=max_l)
        nodes, seconds = nodes + res.nodes, seconds + res.seconds
    return dict(name=problem["name"], solved=res.value is True, nodes=nodes, seconds=seconds,
                move=res.move, L=L, observations=obs, fallback_used=used)


def train(model, problems, solver: str = "pp", max_passes: int = 3, tune_after: int = 0, log=None, **kw) -> list:
    """Repeated passes with harvesting and learning; returns per-pass dicts(pass, attempted, solved)."""
    solved = set()
    history = []
    for k in range(max_passes):
        todo = [p for p in problems if p["name"] not in solved]
        new = 0
        for p in todo:
            r = attempt(p, solver, model, learn=True, **kw)
            if r["solved"]:
                solved.add(p["name"])
                new += 1
        history.append(dict(pass_=k + 1, attempted=len(todo), newly_solved=new, solved=len(solved),
                            table=len(model)))
        if log:
            log(f"  pass {k + 1}: attempted {len(todo)}, newly solved {new}, solved {len(solved)}, "
                f"table {len(model)}")
        if tune_after and k + 1 == tune_after and hasattr(model, "estimate_betas"):
            betas = model.estimate_betas()
            if log:
                log("  tuned beta^2: " + ", ".join(f"{b:.3g}" for b in betas))
        if new == 0 and k > 0:
            break
    return history


def evaluate(problems, solver: str = "pp", model=None, temperature: float = 1.0, **kw) -> list[dict]:
    """``attempt`` every problem with the model frozen (and tempered by ``temperature``)."""
    frozen = Frozen(model, temperature) if model is not None else None
    return [attempt(p, solver, frozen, learn=False, **kw) for p in problems]


def compare(base: list[dict], other: list[dict]) -> dict:
    """Newly solved / newly failed and speedups of ``other`` over ``base`` (same problem order)."""
    both = [(b, o) for b, o in zip(base, other) if b["solved"] and o["solved"]]
    ratios = [max(b["seconds"], 1e-4) / max(o["seconds"], 1e-4) for b, o in both]
    node_ratios = [max(b["nodes"], 1) / max(o["nodes"], 1) for b, o in both]
    return dict(
        problems=len(base), solved_base=sum(b["solved"] for b in base), solved=sum(o["solved"] for o in other),
        newly_solved=sum((not b["solved"]) and o["solved"] for b, o in zip(base, other)),
        newly_failed=sum(b["solved"] and not o["solved"] for b, o in zip(base, other)),
        both=len(both),
        mean_speedup=statistics.fmean(ratios) if ratios else float("nan"),
        median_speedup=statistics.median(ratios) if ratios else float("nan"),
        geomean_speedup=math.exp(statistics.fmean(math.log(r) for r in ratios)) if ratios else float("nan"),
        mean_node_ratio=statistics.fmean(node_ratios) if node_ratios else float("nan"),
        median_node_ratio=statistics.median(node_ratios) if node_ratios else float("nan"),
    )
