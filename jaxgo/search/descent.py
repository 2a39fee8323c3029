"""Compiled host-side tree work: edge scores and the K descents of a batch (numba); the rest of a batch (new nodes,
leaves, backup) is in ``jaxgo.search.backup``.

A tree search spends its host time in three loops over small arrays: scoring a node's edges (UCT or RAVE with
progressive bias, ``searcher`` module docstring), descending from the root K times with a virtual loss on every edge
taken, and adding each leaf's L playout results along its path.  In numpy each of them is a few dozen array
calls of a few microseconds on arrays of A = N * N + 1 entries; with one playout per leaf (L = 1) they cost more
than the playouts.  Here they are compiled loops (``numba.njit``, cached on disk), called once per batch.

They compute what the readable numpy reference in ``jaxgo.search.reference`` computes (``edge_scores_reference``,
``backup_reference``, with ``node_mean``, ``virtual_rave`` and ``widened``) and are held to it on random trees
in tests/search/test_descent.py.  The only difference is the tie-breaking noise added to every score
(``NOISE`` = 1e-7 times a uniform number): here an xorshift64* stream per searcher (``new_rng``) instead of
numpy's generator; ``params[NOISE] = 0`` turns it off (ties go to the lowest action).

Under RAVE without its UCB term (``rave_c1`` 0, the default: ``keeps_scores``) an edge's score changes only with
its own statistics (pass's also with the node's mean), and within a batch only the descents' virtual losses
change those: a batch keeps each node's scores from its first visit (``cached_choice``, ``new_score_cache``) and
updates the one edge a virtual loss changes, so that a node visited again costs its tie noise and the choice, not
82 scores (9x9).  The scores, the noise drawn and the edges chosen are the same, bit for bit
(tests/search/test_descent.py).

The bookkeeping after the descents (which new nodes to create, superko, the leaf of every descent) and the backup
are compiled too, in ``jaxgo.search.backup``.  None of these loops holds the GIL, so a server runs many searches'
tree work on several threads.

Shapes: A actions (pass last), P = A - 1 points, C tree capacity, K leaves per batch, L playouts per leaf, D the
longest path a call may record (``descend_batch`` reports ``PATH_OVERFLOW`` beyond it, with its virtual losses
taken back, and the caller retries with a longer D).
"""

from __future__ import annotations

import math

import numba
import numpy as np

# params: float64 [N_PARAMS], from ``score_params(config)``: a SearchConfig field at each index of PARAM_FIELDS;
# at EDGE_RULE the strategy's edge formula (EDGE_RULES: ``uct_edge_score`` or ``rave_edge_score``).
EDGE_RULE, UCT_C, RAVE_C1, RAVE_C3, BIAS_C2, PASS_M, PRIOR_EVEN, PRIOR_PATTERN, WIDEN_START, WIDEN_FACTOR, \
    N_EXPAND, NOISE, EQEX_EVEN, EQEX_PATTERN = range(14)
N_PARAMS = 14
PARAM_FIELDS = {UCT_C: "uct_c", RAVE_C1: "rave_c1", RAVE_C3: "rave_c3", BIAS_C2: "bias_c2", PRIOR_EVEN: "prior_even",
                PASS_M: "pass_prior_playouts", PRIOR_PATTERN: "prior_pattern", WIDEN_START: "widen_playouts",
                WIDEN_FACTOR: "widen_factor", N_EXPAND: "n_expand", EQEX_EVEN: "eqex_even",
                EQEX_PATTERN: "eqex_pattern"}
TIE_NOISE = 1e-7
RAVE_EDGES, UCT_EDGES = 0, 1  # params[EDGE_RULE]: the edge formula of each tree strategy, EDGE_RULES
EDGE_RULES = {"rave": RAVE_EDGES, "uct": UCT_EDGES}

PENDING = -1  # a descent ended on an edge without a node yet (the caller creates it)
EXPAND = -2  # a descent stopped at a node not expanded yet (the caller computes its priors and goes on)
PATH_OVERFLOW = -1  # descend_batch's return value when a path is longer than D


def score_params(config, noise: float = TIE_NOISE) -> np.ndarray:
    """float64 [N_PARAMS]: the ``SearchConfig`` fields the edge scores and the descent read (its board-size
    defaults set: ``SearchConfig.for_size``)."""
    if config.prior_pattern is None or config.widen_playouts is None:
        raise ValueError("score_params: set the board-size defaults first (SearchConfig.for_size)")
    p = np.zeros(N_PARAMS)
    for index, name in PARAM_FIELDS.items():
        p[index] = getattr(config, name)
    p[EDGE_RULE], p[NOISE] = EDGE_RULES.get(config.strategy, RAVE_EDGES), noise
    return p


def new_rng(seed: int) -> np.ndarray:
    """uint64 [1]: the state of an xorshift64* stream (never 0) for the tie-breaking noise."""
    state = (int(seed) * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % (1 << 64)
    return np.array([state or 1], np.uint64)


@numba.njit(nogil=True, cache=True)
def _uniform(rng):
    """A float in [0, 1) from the xorshift64* state rng uint64 [1] (advanced)."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return float((x * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(nogil=True, cache=True)
def node_mean(children_visits, children_values, parents, action_from_parent, root, node):
    """As ``reference.node_mean``: the node's mean win rate for its player to move (0.5 when nothing is known)."""
    visits = children_visits[node].sum()
    if visits > 0:
        return children_values[node].sum() / visits
    parent = parents[node]
    if node == root or parent < 0:
        return 0.5
    action = action_from_parent[node]
    edge = children_visits[parent, action]
    return 1.0 - children_values[parent, action] / edge if edge > 0 else 0.5


@numba.njit(nogil=True, cache=True)
def _widened(prior, legal, visits, start, factor, out):
    """As ``reference.widened`` into out bool [A]: the likeliest legal moves by prior (ties: lower index first)."""
    count = 0
    for a in range(legal.shape[0]):
        out[a] = legal[a]
        count += legal[a]
    if visits < start:
        width = 2
    else:
        width = 2 + int(math.floor(math.log(visits / start) / math.log(factor))) + 1
    if width >= count:
        return
    for a in range(out.shape[0]):
        out[a] = False
    for _ in range(width):
        best = -1
        for a in range(legal.shape[0]):
            if legal[a] and not out[a] and (best < 0 or prior[a] > prior[best]):
                best = a
        out[best] = True


@numba.njit(nogil=True, cache=True)
def uct_edge_score(n, q, log_n, params):
    """UCB1 of an edge with n visits and mean q under a node of log_n = log(visits + 1): q + c sqrt(log_n / n),
    1e3 for an unvisited edge."""
    return q + params[UCT_C] * math.sqrt(log_n / max(n, 1.0)) if n > 0 else 1e3


@numba.njit(nogil=True, cache=True)
def rave_edge_score(n, q, value, rave_visits, rave_values, prior, is_pass, mean, log_n, pattern, params):
    """UCT+RAVE of an edge (Silver's alpha, the prior's virtual RAVE experience ``prior_even`` and
    ``prior_pattern``: pattern float32, and its equivalent experience in the edge's own statistics ``eqex_even``
    and ``eqex_pattern``); pass: its own mean shrunk towards the node's ``mean``, no RAVE term, no prior."""
    rv, rw = rave_visits, rave_values
    if params[PRIOR_EVEN] != 0.0 or params[PRIOR_PATTERN] != 0.0:
        good = pattern * np.float32(math.sqrt(max(prior, np.float32(0.0))))
        rv = rv + params[PRIOR_EVEN] + good
        rw = rw + 0.5 * params[PRIOR_EVEN] + good
    if (params[EQEX_EVEN] != 0.0 or params[EQEX_PATTERN] != 0.0) and not is_pass:
        own = params[EQEX_PATTERN] * math.sqrt(max(np.float64(prior), 0.0))
        n = n + params[EQEX_EVEN] + own
        q = (value + 0.5 * params[EQEX_EVEN] + own) / n if n > 0 else q
    qr = (rw + 0.5) / (rv + 1.0)
    denom = rv + n + params[RAVE_C3] * n * rv
    alpha = rv / max(denom, 1e-12) if denom > 0 else 1.0
    if is_pass:
        alpha = 0.0
        q = (value + params[PASS_M] * mean) / max(n + params[PASS_M], 1e-12)
    return (1.0 - alpha) * q + alpha * qr + params[RAVE_C1] * math.sqrt(log_n / (n + 1.0))


@numba.njit(nogil=True, cache=True)
def edge_score(n, value, rave_visits, rave_values, prior, is_pass, mean, log_n, pattern, c2, params):
    """The selection score of one edge without the tie noise (``edge_scores``' term for it): n visits, value its
    wins, its RAVE counts, prior float32, pattern / c2 float32 (``PRIOR_PATTERN``, ``BIAS_C2``)."""
    q = value / max(n, 1.0)
    if params[EDGE_RULE] == UCT_EDGES:
        score = uct_edge_score(n, q, log_n, params)
    else:
        score = rave_edge_score(n, q, value, rave_visits, rave_values, prior, is_pass, mean, log_n, pattern, params)
    if params[BIAS_C2] != 0.0:
        score += (c2 * prior) / (n + 1.0)
    return score


@numba.njit(nogil=True, cache=True)
def edge_scores(visits, values, rave_visits, rave_values, prior, legal, mean, params, rng, out):
    """out float64 [A]: the selection score of every edge of one node (-inf where not searched).

    visits, values, rave_visits, rave_values float64 [A], prior float32 [A], legal bool [A]; mean: the node's
    mean (``node_mean``, for pass under RAVE); params [N_PARAMS]; rng uint64 [1] (the tie noise)."""
    a_count = visits.shape[0]
    parent_visits = visits.sum()
    log_n = math.log(parent_visits + 1.0)
    c2 = np.float32(params[BIAS_C2])
    pattern = np.float32(params[PRIOR_PATTERN])
    for a in range(a_count):
        n = visits[a]
        q = values[a] / max(n, 1.0)
        if params[EDGE_RULE] == UCT_EDGES:
            score = uct_edge_score(n, q, log_n, params)
        else:
            score = rave_edge_score(n, q, values[a], rave_visits[a], rave_values[a], prior[a], a == a_count - 1,
                                    mean, log_n, pattern, params)
        if params[BIAS_C2] != 0.0:
            score += (c2 * prior[a]) / (n + 1.0)
        out[a] = score + params[NOISE] * _uniform(rng)
    if params[WIDEN_START] != 0.0:
        searched = np.empty(a_count, np.bool_)
        _widened(prior, legal, parent_visits, params[WIDEN_START], params[WIDEN_FACTOR], searched)
    else:
        searched = legal
    for a in range(a_count):
        if not searched[a]:
            out[a] = -np.inf


@numba.njit(nogil=True, cache=True)
def _mask_unsearched(prior, legal, parent_visits, params, out):
    """out[a] = -inf for the edges a node with ``parent_visits`` visits does not search: illegal, or beyond the
    progressive widening's width.  ``edge_scores`` keeps its own copy of these lines: calling this from there made
    it 5% slower (912-917 against 860-872 ns a node, benchmarks/history/2026-12-07-host-descent.md)."""
    a_count = legal.shape[0]
    if params[WIDEN_START] != 0.0:
        searched = np.empty(a_count, np.bool_)
        _widened(prior, legal, parent_visits, params[WIDEN_START], params[WIDEN_FACTOR], searched)
    else:
        searched = legal
    for a in range(a_count):
        if not searched[a]:
            out[a] = -np.inf


@numba.njit(nogil=True, cache=True)
def keeps_scores(params):
    """Whether a descent may keep an edge's score (``new_score_cache``) until the edge's own statistics change: under
    RAVE without the UCB term (``RAVE_C1`` 0).  There the node's visits, which change with every descent through
    it, enter an edge's score only through that term (log_n) and, for pass, the node's mean."""
    return params[EDGE_RULE] == RAVE_EDGES and params[RAVE_C1] == 0.0


@numba.njit(nogil=True, cache=True)
def new_score_cache(capacity, rows, a_count):
    """The kept scores of one batch of descents (``cached_choice``): (row_of int32 [C]: each node's row or -1,
    kept float64 [rows, A]: the edges' scores without noise, pass's excepted, value_sums float64 [rows]: each
    node's sum of values, used int64 [1]: rows taken)."""
    return (np.full(capacity, -1, np.int32), np.empty((rows, a_count)), np.empty(rows), np.zeros(1, np.int64))


@numba.njit(nogil=True, cache=True)
def cached_choice(node, root, parents, action_from_parent, children_visits, children_values, children_rave_visits,
                  children_rave_values, children_prior, children_legal, params, rng, cache, scores):
    """The edge a descent takes at ``node`` (-1: none searched), when ``keeps_scores(params)``: the first best of
    what ``edge_scores`` gives (with ``node_mean``), bit for bit, the same tie noise drawn.  The scores of the
    node's edges other than pass are computed at its first visit in the batch and kept in ``cache``
    (``new_score_cache``; a virtual loss updates its edge: ``update_cached``), pass's (it reads the node's mean)
    each time; the node's sum of values, which virtual losses leave alone, is kept too.  Without a free row:
    ``edge_scores``.  scores float64 [A]: scratch."""
    row_of, kept, value_sums, used = cache
    row = row_of[node]
    if row < 0:
        if used[0] == kept.shape[0]:
            mean = node_mean(children_visits, children_values, parents, action_from_parent, root, node)
            edge_scores(children_visits[node], children_values[node], children_rave_visits[node],
                        children_rave_values[node], children_prior[node], children_legal[node], mean, params, rng,
                        scores)
            return best_edge(scores)
        row = used[0]
        used[0] += 1
        row_of[node] = row
        value_sums[row] = children_values[node].sum()
        _fill_row(children_visits[node], children_values[node], children_rave_visits[node],
                  children_rave_values[node], children_prior[node], children_legal[node], params, kept[row])
    # The hot path indexes the 2-d arrays (no row views: each costs a reference count taken and given back).
    last = children_visits.shape[1] - 1
    parent_visits = 0.0
    for a in range(last + 1):  # visits.sum()'s order: from 0, left to right
        parent_visits += children_visits[node, a]
    if parent_visits > 0:
        mean = value_sums[row] / parent_visits
    else:
        mean = node_mean(children_visits, children_values, parents, action_from_parent, root, node)
    # log_n 0: under keeps_scores the UCB term weighs 0 whatever log_n is (0 * sqrt(...) = +0).
    pass_score = edge_score(children_visits[node, last], children_values[node, last],
                            children_rave_visits[node, last], children_rave_values[node, last],
                            children_prior[node, last], True, mean, 0.0, np.float32(params[PRIOR_PATTERN]),
                            np.float32(params[BIAS_C2]), params)
    _add_noise(kept, row, last, params[NOISE], rng, scores)
    scores[last] = pass_score + params[NOISE] * _uniform(rng)
    if params[WIDEN_START] != 0.0 or not children_legal[node, last]:
        _mask_unsearched(children_prior[node], children_legal[node], parent_visits, params, scores)
    return best_edge(scores)


@numba.njit(nogil=True, cache=True)
def best_edge(scores):
    """The first index of the highest of scores float64 [A] above -inf, -1 when there is none."""
    action = -1
    for a in range(scores.shape[0]):
        if scores[a] > -np.inf and (action < 0 or scores[a] > scores[action]):
            action = a
    return action


@numba.njit(nogil=True, cache=True)
def _add_noise(kept, row, count, noise, rng, out):
    """out[a] = kept[row, a] + noise * ``_uniform(rng)`` for a < count, in order: the same numbers as ``_uniform``
    draws, with the stream's state in a register (rng uint64 [1] written back once)."""
    x = rng[0]
    for a in range(count):
        x ^= x >> np.uint64(12)
        x ^= x << np.uint64(25)
        x ^= x >> np.uint64(27)
        out[a] = kept[row, a] + noise * (float((x * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(11))
                                         * (1.0 / 9007199254740992.0))
    rng[0] = x


@numba.njit(nogil=True, cache=True)
def _fill_row(visits, values, rave_visits, rave_values, prior, legal, params, out):
    """out float64 [A]: the noise-free score of every edge but pass (``edge_score``, log_n 0: see
    ``cached_choice``), -inf where illegal.  The loop spells ``edge_score`` out: a call per edge in such a loop
    made ``edge_scores`` about 2x slower (benchmarks/history/2026-12-07-host-descent.md)."""
    c2 = np.float32(params[BIAS_C2])
    pattern = np.float32(params[PRIOR_PATTERN])
    for a in range(visits.shape[0] - 1):
        if not legal[a]:
            out[a] = -np.inf
            continue
        n = visits[a]
        q = values[a] / max(n, 1.0)
        score = rave_edge_score(n, q, values[a], rave_visits[a], rave_values[a], prior[a], False, 0.5, 0.0, pattern,
                                params)
        if params[BIAS_C2] != 0.0:
            score += (c2 * prior[a]) / (n + 1.0)
        out[a] = score


@numba.njit(nogil=True, cache=True)
def update_cached(node, action, children_visits, children_values, children_rave_visits, children_rave_values,
                  children_prior, children_legal, params, cache):
    """After a virtual loss on (node, action): the kept score of that edge again (``cached_choice``)."""
    row_of, kept, _, _ = cache
    row = row_of[node]
    if row < 0 or action == children_visits.shape[1] - 1 or not children_legal[node, action]:
        return
    kept[row, action] = edge_score(children_visits[node, action], children_values[node, action],
                                   children_rave_visits[node, action], children_rave_values[node, action],
                                   children_prior[node, action], False, 0.5, 0.0, np.float32(params[PRIOR_PATTERN]),
                                   np.float32(params[BIAS_C2]), params)


@numba.njit(nogil=True, cache=True)
def _add_pending(node, action, pending_nodes, pending_actions, pending):
    """Add the edge (node, action) to the first ``pending`` of pending_nodes / pending_actions unless it is
    there; returns the new count."""
    for j in range(pending):
        if pending_nodes[j] == node and pending_actions[j] == action:
            return pending
    pending_nodes[pending] = node
    pending_actions[pending] = action
    return pending + 1


@numba.njit(nogil=True, cache=True)
def _descend_one(i, node, length, root, room, terminal, expanded, parents, action_from_parent, children_index,
                 children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
                 children_legal, params, rng, scores, pending_nodes, pending_actions, pending, path_nodes,
                 path_actions, keep, cache):
    """Descent ``i`` of a batch from ``node``, its path so far ``length`` edges long (see ``descend_batch``):
    returns (length, leaf, pending edges), length -1 when the path outgrew the buffer (its virtual losses, the
    first ``length`` edges' too, taken back).  With ``keep`` (``keeps_scores``) the edge comes from
    ``cached_choice`` and its ``cache``."""
    depth_limit = path_nodes.shape[1]
    leaf = root
    while True:
        if terminal[node]:
            leaf = node
            break
        if node != root:
            edge = children_visits[parents[node], action_from_parent[node]]
            if edge < params[N_EXPAND]:
                leaf = node
                break
            if not expanded[node]:
                leaf = EXPAND
                break
        if keep:
            action = cached_choice(node, root, parents, action_from_parent, children_visits, children_values,
                                   children_rave_visits, children_rave_values, children_prior, children_legal, params,
                                   rng, cache, scores)
        else:
            mean = node_mean(children_visits, children_values, parents, action_from_parent, root, node)
            edge_scores(children_visits[node], children_values[node], children_rave_visits[node],
                        children_rave_values[node], children_prior[node], children_legal[node], mean, params, rng,
                        scores)
            action = best_edge(scores)
        if action < 0:
            leaf = node
            break
        child = children_index[node, action]
        if child < 0 and node != root and pending >= room:
            leaf = node  # the tree is full: this node is the leaf
            break
        if length == depth_limit:
            for j in range(length):
                children_visits[path_nodes[i, j], path_actions[i, j]] -= 1
            return -1, leaf, pending
        path_nodes[i, length] = node
        path_actions[i, length] = action
        length += 1
        children_visits[node, action] += 1  # virtual loss (value 0)
        if keep:
            update_cached(node, action, children_visits, children_values, children_rave_visits,
                          children_rave_values, children_prior, children_legal, params, cache)
        if child < 0:
            pending = _add_pending(node, action, pending_nodes, pending_actions, pending)
            leaf = PENDING
            break
        node = child
    return length, leaf, pending


@numba.njit(nogil=True, cache=True)
def _undo_others(skip, rows, path_nodes, path_actions, lengths, children_visits):
    """Take back the virtual losses of the paths of rows [R] other than ``skip``."""
    for r in rows:
        if r != skip:
            for j in range(lengths[r]):
                children_visits[path_nodes[r, j], path_actions[r, j]] -= 1


@numba.njit(nogil=True, cache=True)
def descend_batch(k, root, room, terminal, expanded, parents, action_from_parent, children_index, children_visits,
                  children_values, children_rave_visits, children_rave_values, children_prior, children_legal,
                  params, rng, path_nodes, path_actions, lengths, leaves):
    """Descend ``k`` times from ``root``, each time by the best edge score, with a virtual loss (one visit, no
    win) on every edge taken; returns k, or ``PATH_OVERFLOW`` (every virtual loss of the call taken back).

    A descent stops at a terminal node, at a node (not the root) whose parent edge has fewer than
    ``params[N_EXPAND]`` visits, at a node with no searched edge (leaf: that node), on an edge without a
    node (leaf ``PENDING``: the caller creates the child), or at a node not yet expanded (``expanded`` bool [C]
    False: its priors are not computed; leaf ``EXPAND``, the path ends with the edge into it: the caller
    expands it and goes on with ``continue_batch``).  ``room``: how many new nodes the tree may still take (a
    descent below the root that would need one more stops at its node instead).
    Out: path_nodes / path_actions int32 [k, D], lengths int32 [k], leaves int32 [k]."""
    lengths[:] = 0
    return _descend_rows(np.arange(k), root, room, terminal, expanded, parents, action_from_parent, children_index,
                         children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
                         children_legal, params, rng, path_nodes, path_actions, lengths, leaves, 0)


@numba.njit(nogil=True, cache=True)
def continue_batch(rows, root, room, terminal, expanded, parents, action_from_parent, children_index,
                   children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
                   children_legal, params, rng, path_nodes, path_actions, lengths, leaves):
    """Go on with the descents ``rows`` int [R] of a ``descend_batch`` that stopped at a node since expanded
    (leaf ``EXPAND``), from that node, in the same buffers; returns R, or ``PATH_OVERFLOW`` (every virtual loss
    of the batch taken back).  The other descents' pending edges count against ``room``."""
    return _descend_rows(rows, root, room, terminal, expanded, parents, action_from_parent, children_index,
                         children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
                         children_legal, params, rng, path_nodes, path_actions, lengths, leaves, leaves.shape[0])


@numba.njit(nogil=True, cache=True)
def _descend_rows(rows, root, room, terminal, expanded, parents, action_from_parent, children_index, children_visits,
                  children_values, children_rave_visits, children_rave_values, children_prior, children_legal, params,
                  rng, path_nodes, path_actions, lengths, leaves, earlier):
    """The descents ``rows`` int [R] of ``descend_batch`` / ``continue_batch``, each from the end of its recorded
    path (the root when it is empty); the pending edges of the first ``earlier`` descents (those that ended on
    one) count against ``room``.  Returns R, or ``PATH_OVERFLOW`` with every virtual loss of the batch taken
    back."""
    k = leaves.shape[0]
    scores = np.empty(children_visits.shape[1])
    pending_nodes = np.empty(k, np.int64)
    pending_actions = np.empty(k, np.int64)
    pending = 0
    keep = keeps_scores(params)
    kept_rows = min(children_visits.shape[0], 4 * k + 64) if keep else 1  # nodes kept (later ones: each visit)
    cache = new_score_cache(children_visits.shape[0] if keep else 1, kept_rows, children_visits.shape[1])
    for i in range(earlier):
        if leaves[i] == PENDING:
            pending = _add_pending(path_nodes[i, lengths[i] - 1], path_actions[i, lengths[i] - 1], pending_nodes,
                                   pending_actions, pending)
    for i in rows:
        start = root
        if lengths[i] > 0:
            start = children_index[path_nodes[i, lengths[i] - 1], path_actions[i, lengths[i] - 1]]
        length, leaf, pending = _descend_one(
            i, start, lengths[i], root, room, terminal, expanded, parents, action_from_parent, children_index,
            children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
            children_legal, params, rng, scores, pending_nodes, pending_actions, pending, path_nodes, path_actions,
            keep, cache)
        if length < 0:
            _undo_others(i, np.arange(k), path_nodes, path_actions, lengths, children_visits)
            return PATH_OVERFLOW
        lengths[i] = length
        leaves[i] = leaf
    return rows.shape[0]


@numba.njit(nogil=True, cache=True)
def best_line(children_index, children_visits, children_values, children_legal, node, out):
    """The line of best actions from ``node``, into out int32 [M]; returns its length (at most M).  At each node
    the best is ``tree.rank_actions``' first among the searched moves: most visits, then highest win rate (an
    unvisited edge's counts as -1), then lowest index; the line ends where no searched move has a visit or the
    edge has no node."""
    a_count = children_visits.shape[1]
    length = 0
    while length < out.shape[0] and node >= 0:
        best = -1
        best_visits = 0.0
        best_rate = 0.0
        for a in range(a_count):
            if not children_legal[node, a]:
                continue
            n = children_visits[node, a]
            if n <= 0:
                continue
            rate = children_values[node, a] / n
            if best < 0 or n > best_visits or (n == best_visits and rate > best_rate):
                best, best_visits, best_rate = a, n, rate
        if best < 0:
            break
        out[length] = best
        length += 1
        node = children_index[node, best]
    return length


def descend(tree, k: int, params: np.ndarray, rng: np.ndarray, room: int, depth: int = 64, expand=None):
    """``descend_batch`` of K descents in ``tree`` (a ``jaxgo.search.tree.Tree``), retried with twice the path
    buffer while a path overflows it: ((path nodes int32 [K, D], path actions int32 [K, D], lengths int32 [K],
    leaves int32 [K]: a node or ``PENDING``), D).

    ``expand(nodes int32 [n])``: computes the priors of nodes not expanded yet (``Tree.expanded``) that descents
    reached and marks them expanded; those descents then go on from them (``continue_batch``).  Without it every
    node counts as expanded."""
    expanded = tree.expanded if expand is not None else np.ones(len(tree.expanded), bool)
    arrays = (tree.terminal, expanded, tree.parents, tree.action_from_parent, tree.children_index,
              tree.children_visits, tree.children_values, tree.children_rave_visits, tree.children_rave_values,
              tree.children_prior, tree.children_legal, params, rng)
    while True:
        out = (np.zeros((k, depth), np.int32), np.zeros((k, depth), np.int32), np.zeros(k, np.int32),
               np.zeros(k, np.int32))
        path_nodes, path_actions, lengths, leaves = out
        done = descend_batch(k, tree.root, room, *arrays, *out)
        while done != PATH_OVERFLOW:  # each pass expands nodes for good, so this ends
            rows = np.flatnonzero(leaves == EXPAND)
            if not len(rows):
                return out, depth
            last = lengths[rows] - 1
            expand(np.unique(tree.children_index[path_nodes[rows, last], path_actions[rows, last]]))
            done = continue_batch(rows, tree.root, room, *arrays, *out)
        depth *= 2


def node_scores(config, tree, node: int, noise: float = 0.0, rng: np.ndarray | None = None) -> np.ndarray:
    """float64 [A]: ``edge_scores`` of one node of a ``Tree`` under a ``SearchConfig`` (no tie noise unless
    ``noise``; rng as ``new_rng``)."""
    out = np.empty(tree.num_actions)
    mean = node_mean(tree.children_visits, tree.children_values, tree.parents, tree.action_from_parent,
                     tree.root, node)
    edge_scores(tree.children_visits[node], tree.children_values[node], tree.children_rave_visits[node],
                tree.children_rave_values[node], tree.children_prior[node], tree.children_legal[node], mean,
                score_params(config.for_actions(tree.num_actions), noise),
                new_rng(0) if rng is None else rng, out)
    return out
