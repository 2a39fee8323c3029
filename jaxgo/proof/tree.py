"""AND/OR tree with transpositions; proof-number search (Allis) and probability propagation (Stern et al. 2007).

A *problem* supplies: ``key(state)`` (transposition key), ``is_or(state)`` (attacker to move),
``evaluate(state)`` -> True / False / None (goal function g), ``children(state)`` -> list of (move, state),
and optionally ``prior(state, move, child)`` -> P(TRUE) for a new leaf, or the batched
``prior_batch(state, moves, children)`` -> (priors, infos) (one call per development; ``infos[i]`` is kept as
``Node.info`` of a newly created child, e.g. its pattern keys, so that a learner can update from solved nodes).
Priors are the leaf beliefs of PP; with ``order_by_prior`` both solvers also order children by prior
(OR: most likely TRUE first, AND: least likely first), which breaks PNS ties.  With ``prior_init`` = s > 0, PNS
starts a new unknown leaf at pn = exp(-s l), dn = exp(s l) for its prior's log-odds l (clipped to +-20) instead
of (1, 1): a likely TRUE leaf looks cheap to prove and dear to disprove, pn * dn = 1 as for (1, 1), prior 0.5
gives (1, 1); the sums and minima of PNS then still count the effort of every AND child (PP's product does not).

Nodes live in host lists indexed by id; a transposition table maps key -> id, so the tree is a DAG.  A child
whose key repeats an ancestor (on the current path, or found by walking up the parents of the node being
developed) is not shared (that would make a cycle) but becomes a fresh leaf valued FALSE for the attacker
(repetition = failure to prove), a conservative choice.

PNS: OR node pn = min pn_c, dn = sum dn_c; AND node pn = sum pn_c, dn = min dn_c; unknown leaf (1, 1);
proved (0, inf); disproved (inf, 0).  Most-proving node: min pn at OR nodes, min dn at AND nodes.

PP (Algorithms 1-4): beliefs are kept as log-odds l = log P/(1-P) (±inf for solved nodes).
AND: P = prod P_c  -> log P = -sum softplus(-l_c);  OR: 1-P = prod (1-P_c) -> log(1-P) = -sum softplus(l_c).
FindBestNode descends by argmax P at OR nodes and argmin P at AND nodes.
Updates of a developed node go to all its parents (worklist), so transpositions stay consistent.
"""

from __future__ import annotations

import heapq
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


def prob(log_odds: float) -> float:
    if log_odds == INF:
        return 1.0
    if log_odds == -INF:
        return 0.0
    return 1.0 / (1.0 + math.exp(-log_odds)) if log_odds >= 0 else math.exp(log_odds) / (1.0 + math.exp(log_odds))


def _from_log_p(log_p: float) -> float:
    """log-odds from log P (log P <= 0)."""
    if log_p == -INF:
        return -INF
    if log_p >= 0.0:
        return INF
    return log_p - (math.log(-math.expm1(log_p)))


def and_logodds(children: list[float]) -> float:
    """log-odds of an AND node: P = prod P_c."""
    return _from_log_p(-sum(softplus(-log_odds) for log_odds in children))


def or_logodds(children: list[float]) -> float:
    """log-odds of an OR node: 1 - P = prod (1 - P_c)."""
    return -_from_log_p(-sum(softplus(log_odds) for log_odds in children))


def initial_proof_numbers(prior: float, strength: float) -> tuple[float, float]:
    """(pn, dn) of a new unknown PNS leaf from its prior P(TRUE): (exp(-s l), exp(s l)), l = log-odds in [-20, 20]."""
    log_odds = min(max(logodds(prior), -20.0), 20.0)
    return math.exp(-strength * log_odds), math.exp(strength * log_odds)


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
    log_odds: float = 0.0  # PP log-odds
    info: object = None  # learner data from prior_batch (pattern stack of the generating move)

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
    def __init__(self, problem, solver: str = "pns", order_by_prior: bool = False, prior_init: float = 0.0):
        if solver not in ("pns", "pp"):
            raise ValueError(f"unknown solver {solver!r}")
        if not prior_init >= 0.0:
            raise ValueError(f"prior_init must be >= 0, got {prior_init}")
        self.problem = problem
        self.solver = solver
        self.order_by_prior = order_by_prior
        self.prior_init = float(prior_init) if solver == "pns" else 0.0
        self.nodes: list[Node] = []
        self.table: dict = {}
        self.developed = 0

    # -- node creation ---------------------------------------------------------------------------------------
    def _set_terminal(self, node: Node, value: bool) -> None:
        node.expanded = True
        if value:
            node.pn, node.dn, node.log_odds = 0.0, INF, INF
        else:
            node.pn, node.dn, node.log_odds = INF, 0.0, -INF

    def new_node(self, state, prior: float = 0.5, shared: bool = True, forced=None) -> int:
        key = self.problem.key(state)
        if shared and key in self.table:
            return self.table[key]
        node = Node(state, self.problem.is_or(state))
        node.log_odds = logodds(prior)
        if self.prior_init:
            node.pn, node.dn = initial_proof_numbers(prior, self.prior_init)
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
        seen = {root}
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
                    nid = max(kids, key=lambda c: self.nodes[c].log_odds)
                else:
                    nid = min(kids, key=lambda c: self.nodes[c].log_odds)
            if nid in seen:   # a cycle slipped through: give up this descent (search() then stops)
                return nid, path
            seen.add(nid)
            path.add(self.problem.key(self.nodes[nid].state))

    def _is_ancestor(self, anc: int, nid: int, limit: int = 5000) -> bool | None:
        """Whether ``anc`` is an ancestor of (or equal to) ``nid``; None if more than ``limit`` nodes were visited."""
        stack, seen = [nid], {nid}
        while stack:
            q = stack.pop()
            if q == anc:
                return True
            for p in self.nodes[q].parents:
                if p not in seen:
                    if len(seen) >= limit:
                        return None
                    seen.add(p)
                    stack.append(p)
        return False

    # -- development and update ------------------------------------------------------------------------------
    def develop(self, nid: int, path: set) -> None:
        node = self.nodes[nid]
        node.expanded = True
        self.developed += 1
        kids = self.problem.children(node.state)
        batch_fn = getattr(self.problem, "prior_batch", None)
        prior_fn = getattr(self.problem, "prior", None)
        infos = [None] * len(kids)
        if batch_fn is not None and kids:
            priors, infos = batch_fn(node.state, [m for m, _ in kids], [c for _, c in kids])
        elif prior_fn is not None:
            priors = [prior_fn(node.state, m, c) for m, c in kids]
        else:
            priors = [0.5] * len(kids)
        order = range(len(kids))
        if self.order_by_prior:
            order = sorted(order, key=lambda i: -priors[i] if node.is_or else priors[i])
        use_prior = self.solver == "pp" or self.prior_init > 0
        for i in order:
            move, child_state = kids[i]
            p = priors[i] if use_prior else 0.5
            if self.problem.key(child_state) in path:
                cid = self.new_node(child_state, p, shared=False, forced=False)
            else:
                n_before = len(self.nodes)
                cid = self.new_node(child_state, p)
                if cid >= n_before:
                    self.nodes[cid].info = infos[i]
                else:
                    cyc = self._is_ancestor(cid, nid)
                    if cyc is None:     # too many ancestors to check: a fresh, unshared copy is always safe
                        cid = self.new_node(child_state, p, shared=False)
                        self.nodes[cid].info = infos[i]
                    elif cyc:           # the position repeats an ancestor on another path: a cycle, FALSE
                        cid = self.new_node(child_state, p, shared=False, forced=False)
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
        ls = [k.log_odds for k in kids]
        log_odds = or_logodds(ls) if node.is_or else and_logodds(ls)
        if pn == 0:
            log_odds = INF
        elif dn == 0:
            log_odds = -INF
        same = abs(log_odds - node.log_odds) <= 1e-12 or log_odds == node.log_odds
        changed = pn != node.pn or dn != node.dn or not same
        node.pn, node.dn, node.log_odds = pn, dn, log_odds
        return changed

    def propagate(self, nid: int, limit: int = 100000) -> None:
        """Recompute the ancestors of ``nid``: a max-heap on node id (children are mostly newer than their
        parents, so most ancestors are recomputed once per update even in a DAG); each queued id once."""
        heap = [-p for p in set(self.nodes[nid].parents)]
        heapq.heapify(heap)
        queued = set(self.nodes[nid].parents)
        steps = 0
        while heap and steps < limit:
            steps += 1
            p = -heapq.heappop(heap)
            queued.discard(p)
            if self.recompute(p):
                for q in self.nodes[p].parents:
                    if q not in queued:
                        queued.add(q)
                        heapq.heappush(heap, -q)

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


def solve(problem, root_state, solver: str = "pns", max_nodes: int = 10000, max_seconds: float = 10.0,
          order_by_prior: bool = False, prior_init: float = 0.0) -> Result:
    return Tree(problem, solver, order_by_prior, prior_init).search(root_state, max_nodes, max_seconds)


def solved_infos(tree: Tree):
    """(info, value) for every solved node of ``tree`` that carries learner info (value True = proved)."""
    for node in tree.nodes:
        if node.info is not None and node.solved:
            yield node.info, node.pn == 0
