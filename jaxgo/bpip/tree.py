"""The BPIP-DFISA search tree: leaf staircases, product-rule propagation, BPIP values, Q^L and QSS.

Viewpoint: every node's distribution is of the value *for the player to move at that node* (negamax), so a
parent's distribution is that of max over children of minus the child's value (independent children,
product of CDFs).  Leaves carry the staircase of eq. (14) built from the evaluator's (M, Up, Lw), or a single
spike when the domain says the position is decided (``terminal_value``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from jaxgo.bpip import distributions as D


class Domain(Protocol):
    """The small game interface the controller needs (values are for the side to move)."""

    def moves(self, state) -> list: ...

    def play(self, state, move): ...

    def terminal_value(self, state) -> float | None: ...

    def evaluate(self, state) -> tuple[float, float, float]:
        """(M, Up, Lw): expected value and upper/lower bounds."""

    def features(self, state) -> frozenset: ...

    def expansion_time(self, state) -> float:
        """OET: expected time units to find the exact value with the original value function."""

    def move_name(self, move) -> str: ...

    # Optional: ``expand_batch(state) -> list[Child]`` generates and evaluates all children of a position at
    # once (one device call for a whole batch of playouts, say); used instead of moves/play/evaluate.


@dataclass(frozen=True)
class Child:
    """One child from ``Domain.expand_batch``: its move, state and evaluation (exact value or (M, Up, Lw))."""

    move: Any
    state: Any
    exact: float | None = None
    est: tuple = (0.0, 0.0, 0.0)
    features: frozenset = frozenset()
    oet: float = 1.0


@dataclass
class Settings:
    """Every number the paper leaves ad hoc, with the defaults used in docs/bpip.md."""

    alpha: float = 0.5  # weight of the central spike of the staircase (eq. 14)
    gamma: float = 0.5  # discount of future utility (eqs. 12-13); V = V_I + gamma * V_F
    cost_per_etu: float = 0.01  # TC(t) = cost_per_etu * t, value units per expansion time unit
    srf: float = 0.5  # self reduce factor (eq. 16)
    sim_scale: float = 10.0  # sim(y, x) = 1 / (1 + hamming(features) / sim_scale)
    adapt_time: float = 10.0  # ET(a(y)) in ETU
    adapt_max_depth: int = 1  # adaptation candidates: unadapted interior nodes up to this depth
    adapt_trials: int = 30  # Adapter: stochastic trials per adaptation (Figure 2, n)
    adapt_steps: int = 12  # Adapter: MAX_ADAPT_STEPS
    adapt_rate: float = 0.3  # Adapter: normalised LMS step
    max_expansions: int = 3000  # safety budget (leaf expansions)
    trace: bool = False  # record the chosen root move after every operation (SearchResult.trace)
    grid: D.Grid = field(default_factory=D.Grid)
    seed: int = 0


@dataclass(eq=False)
class Node:
    """One search-tree node."""

    state: Any
    parent: "Node | None"
    move: Any
    depth: int
    spikes: list = field(default_factory=list)  # leaf opinion distribution [(value, prob)]
    exact: bool = False
    children: list = field(default_factory=list)
    pmf: np.ndarray | None = None
    others: np.ndarray | None = None  # product of the siblings' neg-CDFs (parent CDF without this child)
    index: int = 0  # position among the parent's children
    est: tuple = (0.0, 0.0, 0.0)
    features: frozenset = frozenset()
    oet: float = 1.0
    nid: int = 0  # row in the tree's node arrays

    @property
    def is_leaf(self) -> bool:
        return not self.children


class Tree:
    """Search tree with DFISA distributions; the root is expanded at construction (1 expansion)."""

    def __init__(self, domain: Domain, root_state, settings: Settings | None = None):
        self.domain = domain
        self.settings = settings or Settings()
        self.grid = self.settings.grid
        self._count = 0
        self._parent = np.zeros(64, dtype=np.int64)
        self._depth = np.zeros(64, dtype=np.int64)
        self._others = np.ones((64, self.grid.size))
        self.root = self._leaf(root_state, None, None, 0)
        self.leaves: dict[int, Node] = {self.root.nid: self.root}  # insertion-ordered: deterministic ties
        self.expansions = 0
        self.adapted: list[frozenset] = []  # features of the nodes where adaptation was applied
        if not self.root.exact:
            self.expand(self.root)

    # ------------------------------------------------------------------ construction
    def _leaf(self, state, parent, move, depth, given: "Child | None" = None) -> Node:
        node = Node(state=state, parent=parent, move=move, depth=depth, nid=self._count)
        if self._count == len(self._parent):
            grow = len(self._parent)
            self._parent = np.concatenate([self._parent, np.zeros(grow, dtype=np.int64)])
            self._depth = np.concatenate([self._depth, np.zeros(grow, dtype=np.int64)])
            self._others = np.concatenate([self._others, np.ones((grow, self.grid.size))])
        self._parent[node.nid] = parent.nid if parent is not None else -1
        self._depth[node.nid] = depth
        self._count += 1
        if given is None:
            self._set_opinion(node)
        else:
            self._set_given(node, given)
        return node

    def _set_given(self, node: Node, c: Child) -> None:
        """Leaf distribution from a batch-evaluated child."""
        if c.exact is not None:
            node.exact, node.spikes, node.est = True, [(float(c.exact), 1.0)], (c.exact,) * 3
        else:
            node.est, node.features, node.oet = c.est, c.features, float(c.oet)
            node.spikes = D.staircase(*c.est, self.settings.alpha)
        node.pmf = D.spikes_to_pmf(node.spikes, self.grid)

    def _set_opinion(self, node: Node) -> None:
        """Leaf distribution: a spike at the exact value, else the staircase of the evaluator's triple."""
        value = self.domain.terminal_value(node.state)
        if value is not None:
            node.exact, node.spikes, node.est = True, [(float(value), 1.0)], (value, value, value)
        else:
            m, up, lw = self.domain.evaluate(node.state)
            node.est = (m, up, lw)
            node.spikes = D.staircase(m, up, lw, self.settings.alpha)
            node.features = self.domain.features(node.state)
            node.oet = float(self.domain.expansion_time(node.state))
        node.pmf = D.spikes_to_pmf(node.spikes, self.grid)

    def expand(self, node: Node) -> None:
        """Generate the immediate children of a leaf and propagate the new distributions to the root."""
        assert node.is_leaf and not node.exact
        batch = getattr(self.domain, "expand_batch", None)
        given = batch(node.state) if batch is not None else None
        moves = [c.move for c in given] if given is not None else self.domain.moves(node.state)
        self.expansions += 1
        if not moves:  # defensive: a domain without a terminal value for a no-move position
            node.exact, node.spikes = True, [(0.0, 1.0)]
            node.pmf = D.spikes_to_pmf(node.spikes, self.grid)
        for i, mv in enumerate(moves):
            if given is not None:
                child = self._leaf(given[i].state, node, mv, node.depth + 1, given[i])
            else:
                child = self._leaf(self.domain.play(node.state, mv), node, mv, node.depth + 1)
            child.index = i
            node.children.append(child)
            self.leaves[child.nid] = child
        self.leaves.pop(node.nid, None)
        self.propagate(node)

    def propagate(self, node: Node | None) -> None:
        """Recompute distributions (and the siblings' exclusive products) from ``node`` up to the root."""
        while node is not None:
            if node.children:
                fneg = D.neg_cdf(np.stack([c.pmf for c in node.children]))
                excl = D.exclusive_products(fneg)
                for c, row in zip(node.children, excl):
                    c.others = row
                self._others[[c.nid for c in node.children]] = excl
                node.pmf = np.diff(np.prod(fneg, axis=0), prepend=0.0)
            node = node.parent

    def reevaluate_leaves(self) -> None:
        """Re-run the evaluator on every non-exact leaf (after the value function was adapted)."""
        for leaf in self.leaves.values():
            if not leaf.exact:
                self._set_opinion(leaf)
        for node in sorted(self._interior(), key=lambda n: -n.depth):  # children before parents
            self.propagate_one(node)

    def propagate_one(self, node: Node) -> None:
        """Recompute one interior node's distribution from its children."""
        fneg = D.neg_cdf(np.stack([c.pmf for c in node.children]))
        excl = D.exclusive_products(fneg)
        for c, row in zip(node.children, excl):
            c.others = row
        self._others[[c.nid for c in node.children]] = excl
        node.pmf = np.diff(np.prod(fneg, axis=0), prepend=0.0)

    def _interior(self):
        stack, out = [self.root], []
        while stack:
            n = stack.pop()
            if n.children:
                out.append(n)
                stack.extend(n.children)
        return out

    # ------------------------------------------------------------------ values
    def child_means(self) -> np.ndarray:
        """Expected desirability of each root move for the root player: E[-X_child]."""
        return np.array([-D.mean(c.pmf, self.grid) for c in self.root.children])

    def q_value(self) -> float:
        """Q^L (eq. 2): E[max_m value of move m] - max_m E[value of move m] = utility of knowing all leaves."""
        return float(D.mean(self.root.pmf, self.grid) - self.child_means().max())

    def bpip_values(self) -> dict:
        """BPIP values of Definition 1 for every node (id -> value for the side to move there).

        Leaves: expected desirability (mean of the opinion distribution).  Interior: sum_m Pr(m) * (-V(m)),
        Pr(m) the probability that m is the best move under the children's distributions.  Root: max_m -V(m).
        """
        values: dict[int, float] = {}

        def visit(n: Node) -> float:
            if n.is_leaf:
                v = float(D.mean(n.pmf, self.grid))
            else:
                child_v = np.array([-visit(c) for c in n.children])
                if n is self.root:
                    v = float(child_v.max())
                else:
                    pr = D.best_probabilities(D.negate(np.stack([c.pmf for c in n.children])))
                    v = float(pr @ child_v)
            values[id(n)] = v
            return v

        visit(self.root)
        return values

    def best_move(self) -> Node:
        """Root child with the greatest BPIP value for the root player (Definition 1, 'best play')."""
        values = self.bpip_values()
        return max(self.root.children, key=lambda c: -values[id(c)])

    # ------------------------------------------------------------------ value of information per leaf
    def leaf_information(self) -> tuple[list[Node], np.ndarray, np.ndarray, float]:
        """For every non-exact leaf x: (leaves, QSS(x) = V_Q (eq. 3), V_I(x) (eq. 7), Q^L).

        Q^L_j(x) is Q^L with x's distribution replaced by the spike at its j-th value.  The spikes are pushed
        up the tree as rows, all leaves at once: parent pmf' = diff(others(child) * negCDF(child pmf')).
        V_I(x) = Q^L - sum_j p_j Q^L_j(x) = E_j[max_m E[move m | x = z_j]] - max_m E[move m] >= 0, the myopic
        value of learning x exactly (the sign convention of eq. 7 that makes it a gain).
        """
        q = self.q_value()
        leaves = [x for x in self.leaves.values() if not x.exact and x.parent is not None]
        if not leaves:
            return [], np.zeros(0), np.zeros(0), q
        rows_node, rows_leaf, rows_p, values = [], [], [], []
        for li, x in enumerate(leaves):
            for z, p in x.spikes:
                rows_node.append(x)
                rows_leaf.append(li)
                rows_p.append(p)
                values.append(z)
        pmf = D.snap(values, self.grid)
        nid = np.array([n.nid for n in rows_node])
        depth = self._depth[nid]
        while True:
            active = np.nonzero(depth > 1)[0]
            if active.size == 0:
                break
            cdf = self._others[nid[active]] * D.neg_cdf(pmf[active])
            pmf[active] = np.diff(cdf, prepend=0.0, axis=1)
            nid[active] = self._parent[nid[active]]
            depth[active] -= 1
        # rows now hold the distribution of a root child
        means = self.child_means()
        order = np.argsort(-means)
        best = means[order[0]]
        second = means[order[1]] if len(means) > 1 else -np.inf
        child_index = {c.nid: c.index for c in self.root.children}
        idx = np.array([child_index[i] for i in nid])
        best_excl = np.where(idx == order[0], second, best)
        root_cdf = self._others[nid] * D.neg_cdf(pmf)
        emax = D.mean(np.diff(root_cdf, prepend=0.0, axis=1), self.grid)
        own = -D.mean(pmf, self.grid)
        q_rows = emax - np.maximum(own, best_excl)
        rows_leaf = np.array(rows_leaf)
        rows_p = np.array(rows_p)
        v_q = np.bincount(rows_leaf, weights=rows_p * np.abs(q - q_rows), minlength=len(leaves))
        v_i = q - np.bincount(rows_leaf, weights=rows_p * q_rows, minlength=len(leaves))
        return leaves, v_q, np.maximum(v_i, 0.0), q
