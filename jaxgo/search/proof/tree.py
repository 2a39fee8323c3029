"""AND/OR tree with transpositions; proof-number search (Allis) and probability propagation (Stern et al. 2007).

A *problem* supplies: ``key(state)`` (transposition key), ``is_or(state)`` (attacker to move),
``evaluate(state)`` -> True / False / None (goal function g), ``children(state)`` -> list of (move, state),
and optionally ``prior(state, move)`` -> P(TRUE) for a new leaf (PP only; default 0.5).

Nodes live in host lists indexed by id; a transposition table maps key -> id, so the tree is a DAG.  A child
whose key repeats an ancestor on the current path is not shared (that would make a cycle) but becomes a
fresh leaf valued FALSE for the attacker (repetition = failure to prove), a conservative choice.

PNS: OR node pn = min pn_c, dn = sum dn_c; AND node pn = sum pn_c, dn = min dn_c; unknown leaf (1, 1);
proved (0, inf); disproved (inf, 0).  Most-proving node: min pn at OR nodes, min dn at AND nodes.

PP (Algorithms 1-4): beliefs are kept as log-odds l = log P/(1-P) (±inf for solved nodes).
AND: P = prod P_c  -> log P = -sum softplus(-l_c);  OR: 1-P = prod (1-P_c) -> log(1-P) = -sum softplus(l_c).
FindBestNode descends by argmax P at OR nodes and argmin P at AND nodes.
Updates of a developed node go to all its parents (worklist), so transpositions stay consistent.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

INF = math.inf


def softplus(x: float) -> float:
    """log(1 + e^x), safe for large |x| and ±inf."""
    if x == INF:
        return INF
    if x == -INF:
        return 0.0
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def logodds(p: float) -> float:
    if p <= 0.0:
        return -INF
    if p >= 1.0:
        return INF
    return math.log(p) - math.log1p(-p)


def prob(l: float) -> float:
    if l == INF:
        return 1.0
    if l == -INF:
        return 0.0
    return 1.0 / (1.0 + math.exp(-l)) if l >= 0 else math.exp(l) / (1.0 + math.exp(l))


def _from_log_p(log_p: float) -> float:
    """log-odds from log P (log P <= 0)."""
    if log_p == -INF:
        return -INF
    if log_p >= 0.0:
        return INF
    return log_p - (math.log(-math.expm1(log_p)))


def and_logodds(children: list[float]) -> float:
    """log-odds of an AND node: P = prod P_c."""
    return _from_log_p(-sum(softplus(-l) for l in children))


def or_logodds(children: list[float]) -> float:
    """log-odds of an OR node: 1 - P = prod (1 - P_c)."""
    return -_from_log_p(-sum(softplus(l) for l in children))


def pns_values(is_or: bool, children: list[tuple[float, float]]) -> tuple[float, float]:
    pns = [c[0] for c in children]
    dns = [c[1] for c in children]
    if is_or:
        return min(pns), sum(dns)
    return sum(pns), min(dns)


@dataclass
class Node:
    state: object
    is_or: bool
    parents: list = field(default_factory=list)
    children: list = field(default_factory=list)   # node ids
    moves: list = field(default_factory=list)
    expanded: bool = False
    pn: float = 1.0
    dn: float = 1.0
    l: float = 0.0       # PP log-odds

    @property
    def solved(self) -> bool:
        return self.pn == 0 or self.dn == 0


@dataclass
class Result:
    value: bool | None          # True proved, False disproved, None unknown (budget)
    move: int | None            # best first move (proving move at an OR root, refuting move at AND root)
    nodes: int                  # nodes developed (expanded)
    created: int                # nodes created
    seconds: float
    solver: str
    tree: "Tree | None" = None

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


class Tree:
    def __init__(self, problem, solver: str = "pns"):
        if solver not in ("pns", "pp"):
            raise ValueError(f"unknown solver {solver!r}")
        self.problem = problem
        self.solver = solver
        self.nodes: list[Node] = []
        self.table: dict = {}
        self.developed = 0

    # -- node creation ---------------------------------------------------------------------------------------
    def _set_terminal(self, node: Node, value: bool) -> None:
        node.expanded = True
        if value:
            node.pn, node.dn, node.l = 0.0, INF, INF
        else:
            node.pn, node.dn, node.l = INF, 0.0, -INF

    def new_node(self, state, prior: float = 0.5, shared: bool = True, forced=None) -> int:
        key = self.problem.key(state)
        if shared and key in self.table:
            return self.table[key]
        node = Node(state, self.problem.is_or(state))
        node.l = logodds(prior)
        value = forced if forced is not None else self.problem.evaluate(state)
        if value is not None:
            self._set_terminal(node, value)
        self.nodes.append(node)
        nid = len(self.nodes) - 1
        if shared:
            self.table[key] = nid
        return nid

    # -- selection -------------------------------------------------------------------------------------------
    def select(self, root: int) -> tuple[int, set]:
        nid, path = root, {self.problem.key(self.nodes[root].state)}
        while True:
            node = self.nodes[nid]
            if not node.expanded:
                return nid, path
            kids = [c for c in node.children if not self.nodes[c].solved]
            if not kids:   # cannot happen for an unsolved node; safeguard
                return nid, path
            if self.solver == "pns":
                if node.is_or:
                    nid = min(kids, key=lambda c: self.nodes[c].pn)
                else:
                    nid = min(kids, key=lambda c: self.nodes[c].dn)
            else:
                if node.is_or:
                    nid = max(kids, key=lambda c: self.nodes[c].l)
                else:
                    nid = min(kids, key=lambda c: self.nodes[c].l)
            path.add(self.problem.key(self.nodes[nid].state))

    # -- development and update ------------------------------------------------------------------------------
    def develop(self, nid: int, path: set) -> None:
        node = self.nodes[nid]
        node.expanded = True
        self.developed += 1
        prior_fn = getattr(self.problem, "prior", None)
        for move, child_state in self.problem.children(node.state):
            p = prior_fn(node.state, move, child_state) if (prior_fn and self.solver == "pp") else 0.5
            if self.problem.key(child_state) in path:
                cid = self.new_node(child_state, p, shared=False, forced=False)
            else:
                cid = self.new_node(child_state, p)
            if cid == nid:
                continue
            self.nodes[cid].parents.append(nid)
            node.children.append(cid)
            node.moves.append(move)
        if not node.children:
            # no candidate move: the side to move cannot reach its goal from here
            self._set_terminal(node, not node.is_or)
        else:
            self.recompute(nid)

    def recompute(self, nid: int) -> bool:
        node = self.nodes[nid]
        if not node.children:
            return False
        kids = [self.nodes[c] for c in node.children]
        pn, dn = pns_values(node.is_or, [(k.pn, k.dn) for k in kids])
        ls = [k.l for k in kids]
        l = or_logodds(ls) if node.is_or else and_logodds(ls)
        if pn == 0:
            l = INF
        elif dn == 0:
            l = -INF
        changed = (pn, dn, l) != (node.pn, node.dn, node.l)
        node.pn, node.dn, node.l = pn, dn, l
        return changed

    def propagate(self, nid: int, limit: int = 100000) -> None:
        work = list(self.nodes[nid].parents)
        steps = 0
        while work and steps < limit:
            steps += 1
            p = work.pop()
            if self.recompute(p):
                work.extend(self.nodes[p].parents)

    # -- search ----------------------------------------------------------------------------------------------
    def search(self, root_state, max_nodes: int = 10000, max_seconds: float = 10.0) -> Result:
        t0 = time.perf_counter()
        root = self.new_node(root_state)
        while not self.nodes[root].solved and self.developed < max_nodes:
            if time.perf_counter() - t0 > max_seconds:
                break
            leaf, path = self.select(root)
            if self.nodes[leaf].expanded:
                break
            self.develop(leaf, path)
            self.propagate(leaf)
        node = self.nodes[root]
        value = True if node.pn == 0 else False if node.dn == 0 else None
        move = None
        if node.expanded and node.children:
            kids = list(zip(node.children, node.moves))
            if node.is_or:
                best = [m for c, m in kids if self.nodes[c].pn == 0]
            else:
                best = [m for c, m in kids if self.nodes[c].dn == 0]
            if best:
                move = best[0]
        return Result(value, move, self.developed, len(self.nodes), time.perf_counter() - t0, self.solver, self)


def solve(problem, root_state, solver: str = "pns", max_nodes: int = 10000, max_seconds: float = 10.0) -> Result:
    return Tree(problem, solver).search(root_state, max_nodes, max_seconds)
