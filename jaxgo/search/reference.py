"""The numpy definitions of the tree search's edge scores, descent and backup, readable.

The compiled loops of ``jaxgo.search.descent`` compute what these compute and are held to them on random trees
(tests/search/test_descent.py); the search itself runs the compiled ones.  Also here: the move model's virtual
RAVE experience (``virtual_rave``), progressive widening (``widening_width``, ``widened``) and a node's mean
(``node_mean``), which the edge scores use.
"""

from __future__ import annotations

import math

import numpy as np

from jaxgo.search import descent
from jaxgo.search.config import SearchConfig
from jaxgo.search.tree import Tree


def virtual_rave(cfg: SearchConfig, rave_visits, rave_values, prior):
    """(visits, wins) float [A]: a node's AMAF statistics plus virtual experience from the move model (Gelly &
    Silver 2007, "Combining online and offline knowledge in UCT": priors as equivalent experience).  Every move
    gets ``prior_even`` virtual playouts won half the time and ``prior_pattern * sqrt(K(s, a))`` virtual won
    playouts, so a likely move starts with a RAVE value above 1/2 that real AMAF results outweigh after about
    as many playouts.  Unlike progressive bias (c2 K / (n + 1)), which is gone after a few visits of the edge,
    this fades with the move's AMAF count, which deep nodes gather slowly."""
    if cfg.prior_pattern is None:
        cfg = cfg.for_actions(len(prior))
    if not (cfg.prior_even or cfg.prior_pattern):
        return rave_visits, rave_values
    good = cfg.prior_pattern * np.sqrt(np.maximum(prior, 0.0))
    return rave_visits + cfg.prior_even + good, rave_values + 0.5 * cfg.prior_even + good


def widening_width(visits: float, start: float, factor: float) -> int:
    """Moves a node searches after ``visits`` visits under progressive widening (Chaslot et al. 2007; Coulom
    2007): 2 until ``start`` visits, then one more each time the visits grow by ``factor``."""
    if visits < start:
        return 2
    return 2 + int(math.floor(math.log(visits / start) / math.log(factor))) + 1


def widened(prior, legal, visits: float, cfg: SearchConfig) -> np.ndarray:
    """bool [A]: the ``widening_width`` legal moves with the highest prior K(s, a) (ties: lower index first)
    of a node with ``visits`` visits; prior float [A], legal bool [A].  Moves beyond the width stay unsearched,
    so a few thousand playouts on 19x19 go to the move model's likeliest moves instead of a flat sweep."""
    legal = np.asarray(legal, bool)
    if cfg.widen_playouts is None:
        cfg = cfg.for_actions(len(legal))
    width = widening_width(visits, cfg.widen_playouts, cfg.widen_factor)
    if width >= legal.sum():
        return legal
    order = np.lexsort((np.arange(len(legal)), -np.where(legal, prior, -np.inf)))
    keep = np.zeros_like(legal)
    keep[order[:width]] = True
    return keep & legal


def node_mean(tree: Tree, node: int) -> float:
    """Mean win rate of ``node`` for its player to move: over the playouts through its edges, or before any,
    one minus its parent edge's mean (0.5 at an unvisited root)."""
    visits = tree.children_visits[node].sum()
    if visits > 0:
        return float(tree.children_values[node].sum() / visits)
    parent = int(tree.parents[node])
    if node == tree.root or parent < 0:
        return 0.5
    action = int(tree.action_from_parent[node])
    edge = tree.children_visits[parent, action]
    return 1.0 - float(tree.children_values[parent, action] / edge) if edge > 0 else 0.5


def edge_scores_reference(cfg: SearchConfig, tree: Tree, node: int, noise: np.ndarray | None = None) -> np.ndarray:
    """float64 [A]: the selection score of every edge of ``node`` (-inf where not searched); ``noise`` float [A]
    is added before masking (the search adds 1e-7 times uniform numbers to break ties)."""
    cfg = cfg.for_actions(tree.num_actions)
    visits = tree.children_visits[node]
    values = tree.children_values[node]
    parent_visits = visits.sum()
    log_n = math.log(parent_visits + 1.0)
    q = values / np.maximum(visits, 1.0)
    if cfg.strategy == "uct":
        explore = cfg.uct_c * np.sqrt(log_n / np.maximum(visits, 1.0))
        score = np.where(visits > 0, q + explore, 1e3)
    else:
        rv, rw = virtual_rave(cfg, tree.children_rave_visits[node], tree.children_rave_values[node],
                              tree.children_prior[node])
        qr = (rw + 0.5) / (rv + 1.0)
        # Pachi's priors as equivalent experience: virtual playouts in the edge's own statistics (not pass's).
        own = cfg.eqex_pattern * np.sqrt(np.maximum(tree.children_prior[node].astype(np.float64), 0.0))
        own[-1] = 0.0
        even = np.full(len(visits), cfg.eqex_even)
        even[-1] = 0.0
        n = visits + even + own  # the edges' counts with them (pass: its own visits)
        q = np.where(n > 0, (values + 0.5 * even + own) / np.maximum(n, 1e-12), q)
        denom = rv + n + cfg.rave_c3 * n * rv
        alpha = np.where(denom > 0, rv / np.maximum(denom, 1e-12), 1.0)
        # Pass has no AMAF statistics (playouts pass only when forced), so RAVE would value it at its neutral
        # 0.5 until visited and then trust a handful of playouts: instead no RAVE term, and its own mean
        # shrunk towards the node's mean with ``pass_prior_playouts`` pseudo-playouts.
        m = cfg.pass_prior_playouts
        alpha[-1] = 0.0
        q[-1] = (values[-1] + m * node_mean(tree, node)) / max(visits[-1] + m, 1e-12)
        score = (1 - alpha) * q + alpha * qr + cfg.rave_c1 * np.sqrt(log_n / (n + 1.0))
    if cfg.bias_c2:
        score = score + cfg.bias_c2 * tree.children_prior[node] / (visits + 1.0)
    if noise is not None:
        score = score + noise
    searched = tree.children_legal[node]
    if cfg.widen_playouts:
        searched = searched & widened(tree.children_prior[node], searched, parent_visits, cfg)
    return np.where(searched, score, -np.inf)


def descend_reference(cfg: SearchConfig, tree: Tree, k: int, max_nodes: int | None = None):
    """K descents from the root by the best ``edge_scores_reference`` (no noise) with a virtual loss on every
    edge taken: [(path [(node, action)], leaf)], leaf a node or ``descent.PENDING`` (the last edge's child
    does not exist yet).  A descent below the root stops at its node when the tree already holds ``max_nodes``
    nodes plus the new ones of this batch."""
    out, pending = [], set()
    for _ in range(k):
        node, path, leaf = tree.root, [], tree.root
        while True:
            leaf = node
            if tree.terminal[node] or (node != tree.root and tree.children_visits[
                    tree.parents[node], tree.action_from_parent[node]] < cfg.n_expand):
                break
            scores = edge_scores_reference(cfg, tree, node)
            action = int(np.argmax(scores))
            if not np.isfinite(scores[action]):
                break
            child = int(tree.children_index[node, action])
            if max_nodes is not None and node != tree.root and child < 0 and tree.size + len(pending) >= max_nodes:
                break
            path.append((node, action))
            tree.children_visits[node, action] += 1  # virtual loss (value 0)
            if child < 0:
                pending.add((node, action))
                leaf = descent.PENDING
                break
            node = child
        out.append((path, leaf))
    return out


def backup_reference(cfg: SearchConfig, tree: Tree, path, leaf: int, value: np.ndarray, first: np.ndarray) -> None:
    """Add a leaf's L playout results along ``path`` [(node, action)] (its virtual loss already counted one
    visit per edge): value float [L] (Black's value of each playout in [0, 1], ``backup.playout_values``),
    first int [L, P] (the colour that played each point first)."""
    value = np.asarray(value, np.float64)
    count = len(value)
    wins = {1: float(value.sum()), -1: float(count - value.sum())}
    use_rave = cfg.strategy == "rave"
    if use_rave:
        amaf_n = {c: (first == c).sum(axis=0) for c in (1, -1)}
        amaf_w = {c: ((first == c) * (value if c == 1 else 1.0 - value)[:, None]).sum(axis=0) for c in (1, -1)}
    nodes = [node for node, _ in path] + [leaf]
    actions = [action for _, action in path]
    pass_action = tree.num_actions - 1
    for depth, node in enumerate(nodes):
        color = int(tree.to_play[node])
        if depth < len(actions):
            action = actions[depth]
            tree.children_visits[node, action] += count - 1
            tree.children_values[node, action] += wins[color]
        if use_rave:
            tree.children_rave_visits[node, :-1] += amaf_n[color]
            tree.children_rave_values[node, :-1] += amaf_w[color]
            for later in range(depth, len(actions), 2):  # the same player's later tree moves
                if actions[later] != pass_action:
                    tree.children_rave_visits[node, actions[later]] += count
                    tree.children_rave_values[node, actions[later]] += wins[color]

