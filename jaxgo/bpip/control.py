"""Search control: QSS (Baum & Smith), TRQSS and ATRQSS (time-relevance, with adaptation operations).

Time is counted in expansion time units (ETU): one leaf expansion costs 1 ETU, one adaptation
``settings.adapt_time`` ETU.  The time-cost function is linear, TC(t) = ``cost_per_etu`` * t (value units).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from jaxgo.bpip.adapter import AdapterSettings, adapt_vf
from jaxgo.bpip.tree import Node, Settings, Tree

METHODS = ("qss", "trqss", "atrqss")


@dataclass
class SearchResult:
    """Outcome of one controlled search."""

    move: object
    move_name: str
    expansions: int
    adaptations: int
    time_units: float
    q_value: float
    root_values: dict  # move name -> BPIP value for the root player
    seconds: float
    stop_reason: str
    log: list = field(default_factory=list)  # (operation, depth) per step
    trace: list = field(default_factory=list)  # (expansions, time units, chosen move name) per step if traced

    def settled_at(self) -> int | None:
        """Expansions after which the chosen move no longer changed (needs ``Settings.trace``)."""
        if not self.trace:
            return None
        final, at = self.trace[-1][2], self.trace[-1][0]
        for exp, _tu, name in reversed(self.trace):
            if name != final:
                break
            at = exp
        return at


def similarity(a: frozenset, b: frozenset, scale: float = 1.0) -> float:
    """sim(y, x) = 1 / (1 + d / scale), d the Hamming distance between the binary feature sets."""
    return 1.0 / (1.0 + len(a ^ b) / scale)


def expected_time(x: Node, adapted: list[frozenset], srf: float, scale: float = 1.0) -> float:
    """ET(e(x)): OET(x) reduced by the best adaptation so far (eqs. 15-16, no accumulation)."""
    et = x.oet
    for feats in adapted:
        et = min(et, (1.0 - similarity(feats, x.features, scale) * srf) * x.oet)
    return et


def expansion_relevance(v_q, v_i, et, s: Settings):
    """R(e(x)) = U(e(x)) / C(e(x)) with U = (1 - gamma)(V - C) (eq. 12) and V = V_I + gamma (V_Q - V_I)."""
    value = v_i + s.gamma * (v_q - v_i)
    cost = s.cost_per_etu * et
    return (1.0 - s.gamma) * (value - cost) / cost, value


def adaptation_relevance(y: Node, leaves, values, ets, s: Settings) -> float:
    """R(a(y)) = U(a(y)) / C(a(y)), U = gamma * TC(ETG_P(y)) - TC(ET(a(y))) (eq. 13).

    ETG(y, x) = ET(e(x)) - min(ET(e(x)), (1 - sim(y, x) SRF) OET(x)) (eqs. 4, 15, 16), summed over the
    potential set after the adaptation, P(T.a(y)) = {x : V(e(x)) > C(e(x.a(y)))} (eq. 8).
    """
    gain = 0.0
    for x, v, et in zip(leaves, values, ets):
        after = min(et, (1.0 - similarity(y.features, x.features, s.sim_scale) * s.srf) * x.oet)
        if v > s.cost_per_etu * after:
            gain += et - after
    cost = s.cost_per_etu * s.adapt_time
    return (s.gamma * s.cost_per_etu * gain - cost) / cost


def adaptation_candidates(tree: Tree) -> list[Node]:
    """Interior nodes (root included) up to ``adapt_max_depth`` where no adaptation was applied yet."""
    out, stack = [], [tree.root]
    done = {id(n) for n in getattr(tree, "adapted_nodes", [])}
    while stack:
        n = stack.pop()
        if n.children and n.depth <= tree.settings.adapt_max_depth:
            if id(n) not in done:
                out.append(n)
            stack.extend(n.children)
    return out


def run_search(domain, root_state, method: str = "qss", settings: Settings | None = None) -> SearchResult:
    """Grow a BPIP-DFISA tree under QSS, TRQSS or ATRQSS control and return the chosen root move.

    qss:    while Q^L > TC(1 ETU): expand the leaf with the greatest QSS.
    trqss:  apply the expansion with the greatest R(e(x)); stop when it is negative (Figure 1).
    atrqss: as trqss, the candidate operations also include adaptations a(y) (Adapter + ETG model) when the
            domain has an adaptable linear value function ``domain.vf`` (else it is TRQSS).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    s = settings or Settings()
    rng = np.random.default_rng(s.seed)
    start = time.perf_counter()
    tree = Tree(domain, root_state, s)
    if not tree.root.children:
        raise ValueError("the root position has no moves to choose from")
    tree.adapted_nodes = []
    time_units, adaptations, log, reason = float(tree.expansions), 0, [("e", 0)], "budget"
    trace = []

    def record():
        if s.trace:
            trace.append((tree.expansions, time_units, domain.move_name(tree.best_move().move)))

    record()
    exhausted = getattr(domain, "exhausted", lambda: False)  # a domain-side budget (e.g. playouts)
    while tree.expansions < s.max_expansions and not exhausted():
        leaves, v_q, v_i, q = tree.leaf_information()
        if not leaves:
            reason = "all leaves exact"
            break
        if method == "qss":
            if q <= s.cost_per_etu:
                reason = "Q^L <= expansion cost"
                break
            x = leaves[int(np.argmax(v_q))]
            tree.expand(x)
            time_units += 1.0
            log.append(("e", x.depth))
            record()
            continue
        ets = np.array([expected_time(x, tree.adapted, s.srf, s.sim_scale) for x in leaves])
        rel, value = expansion_relevance(v_q, v_i, ets, s)
        best_i = int(np.argmax(rel))
        best_r, best_op = rel[best_i], ("e", leaves[best_i])
        if method == "atrqss" and hasattr(domain, "vf"):  # adaptation needs an adaptable value function
            for y in adaptation_candidates(tree):
                r = adaptation_relevance(y, leaves, value, ets, s)
                if r > best_r:
                    best_r, best_op = r, ("a", y)
        if best_r < 0:
            reason = "best relevance < 0"
            break
        kind, node = best_op
        if kind == "e":
            tree.expand(node)
            time_units += 1.0
        else:
            ad = AdapterSettings(trials=s.adapt_trials, max_steps=s.adapt_steps, rate=s.adapt_rate)
            adapt_vf(domain, domain.vf, node.state, ad, rng)
            tree.adapted.append(node.features or domain.features(node.state))
            tree.adapted_nodes.append(node)
            tree.reevaluate_leaves()
            adaptations += 1
            time_units += s.adapt_time
        log.append((kind, node.depth))
        record()
    best = tree.best_move()
    values = tree.bpip_values()
    root_values = {domain.move_name(c.move): -values[id(c)] for c in tree.root.children}
    return SearchResult(
        move=best.move,
        move_name=domain.move_name(best.move),
        expansions=tree.expansions,
        adaptations=adaptations,
        time_units=time_units,
        q_value=tree.q_value(),
        root_values=root_values,
        seconds=time.perf_counter() - start,
        stop_reason=reason,
        log=log,
        trace=trace,
    )
