"""The bias of RAVE's values measured in search trees, and the constant of Silver's schedule it implies.

The RAVE tree search mixes each edge's Monte Carlo value Q (n playouts through the edge) with its RAVE value Q~
(n~ playouts in which the move was played later, by the same side) as (1 - beta) Q + beta Q~.  Silver's
minimum-MSE schedule (Gelly & Silver 2011; Lew's thesis, section 3.3.2) assumes Q~ is off by a bias b and both
are means of Bernoulli outcomes with variance sigma^2; the beta that minimises the mixture's squared error is

    beta = (sigma^2 / n) / (sigma^2 / n + sigma^2 / n~ + b^2) = n~ / (n + n~ + (b^2 / sigma^2) n n~),

which is ``descent``'s ``rv / (rv + n + rave_c3 n rv)`` with **rave_c3 = b^2 / sigma^2** (4 b^2 when sigma^2 = 1/4).

b is measured on finished trees: for every edge with at least ``min_visits`` Monte Carlo playouts and at least
``min_visits`` RAVE playouts besides them (the RAVE counts include the edge's own playouts; the others are
independent of Q), d = Q - Q_other has E[d^2] = b^2 + sigma_Q^2 / n + sigma_O^2 / n_other, so

    b^2 = mean(d^2 - Q (1 - Q) / n - Q_other (1 - Q_other) / n_other),   sigma^2 = mean(Q (1 - Q)).

The virtual experience of ``prior_pattern`` / ``prior_even`` is added only when an edge is scored, so the
tree's counts are the playouts' own.  ``jaxgo eval rave-bias`` runs the searches and prints the estimate.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class EdgeStatistics:
    """Per-edge playout counts of the edges that qualify; all arrays [E]."""
    depth: np.ndarray  # int: depth of the edge's node below the root (0: the root's moves)
    visits: np.ndarray  # float: n, Monte Carlo playouts through the edge
    wins: np.ndarray  # float: their wins for the side to move at the node
    other_visits: np.ndarray  # float: RAVE playouts that did not go through the edge
    other_wins: np.ndarray  # float: their wins

    @classmethod
    def concatenate(cls, parts: list["EdgeStatistics"]) -> "EdgeStatistics":
        if not parts:
            return cls(*(np.zeros(0) for _ in dataclasses.fields(cls)))
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(cls)))

    def __len__(self) -> int:
        return len(self.visits)

    def at_depths(self, low: int, high: int | None = None) -> "EdgeStatistics":
        """The edges whose node is ``low`` to ``high`` (None: any deeper) below the root."""
        keep = (self.depth >= low) & (self.depth <= (np.inf if high is None else high))
        return EdgeStatistics(*(getattr(self, f.name)[keep] for f in dataclasses.fields(self)))


def node_depths(parents: np.ndarray, root: int) -> np.ndarray:
    """int [N]: each node's depth below ``root`` from the parent links int [N] (-1 for a node with none; nodes
    are stored after their parents, as ``Tree.add_nodes`` does)."""
    depth = np.zeros(len(parents), np.int64)
    for node in range(len(parents)):
        parent = parents[node]
        depth[node] = 0 if node == root or parent < 0 else depth[parent] + 1
    return depth


def edge_statistics(tree, min_visits: int = 20) -> EdgeStatistics:
    """The edges of a ``jaxgo.search.tree.Tree`` (pass left out: it has no RAVE term) with at least
    ``min_visits`` Monte Carlo playouts and at least ``min_visits`` other RAVE playouts."""
    size = tree.size
    visits = tree.children_visits[:size, :-1]
    wins = tree.children_values[:size, :-1]
    other_visits = tree.children_rave_visits[:size, :-1] - visits
    other_wins = tree.children_rave_values[:size, :-1] - wins
    nodes, actions = np.nonzero((visits >= min_visits) & (other_visits >= min_visits))
    depth = node_depths(tree.parents[:size], tree.root)
    return EdgeStatistics(depth[nodes], visits[nodes, actions], wins[nodes, actions],
                          other_visits[nodes, actions], other_wins[nodes, actions])


@dataclasses.dataclass(frozen=True)
class RaveBias:
    edges: int
    mean_difference: float  # mean of Q - Q_other (negative: RAVE values above the Monte Carlo ones)
    bias_squared: float  # b^2
    sigma_squared: float  # sigma^2
    rave_c3: float  # b^2 / sigma^2: Silver's schedule's constant in descent's form


def rave_bias(stats: EdgeStatistics) -> RaveBias:
    """The estimate of b^2, sigma^2 and rave_c3 = b^2 / sigma^2 from edge statistics (NaN without edges)."""
    if len(stats) == 0:
        return RaveBias(0, float("nan"), float("nan"), float("nan"), float("nan"))
    q = stats.wins / stats.visits
    q_other = stats.other_wins / stats.other_visits
    noise = q * (1 - q) / stats.visits + q_other * (1 - q_other) / stats.other_visits
    b2 = float(np.mean((q - q_other) ** 2 - noise))
    sigma2 = float(np.mean(q * (1 - q)))
    return RaveBias(len(stats), float(np.mean(q - q_other)), b2, sigma2, b2 / sigma2 if sigma2 > 0 else float("nan"))


def bootstrap_c3(per_position: list[EdgeStatistics], resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% interval of ``rave_c3`` by resampling whole positions (the edges of one tree are not independent)."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        pick = rng.integers(0, len(per_position), len(per_position))
        values.append(rave_bias(EdgeStatistics.concatenate([per_position[i] for i in pick])).rave_c3)
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return float(low), float(high)

