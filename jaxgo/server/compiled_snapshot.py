"""A search's answer read from its tree and statistics in compiled nogil calls (the reply thread's work).

``Task.snapshot`` took some forty numpy calls (root values, score means and deviations, the shrunk scores, the
ranking, the principal variations, the root's win rate and score, the ownership) and ``responses.move_infos``
twenty more (the moves' order, win rates, LCB, rounded columns): hundreds of microseconds under the GIL per answer.
``snapshot_arrays`` and ``move_columns`` compute the same values in one call each, bit for bit: every sum numpy
took with its pairwise summation is taken here in numpy's order (``pairwise_total``), elementwise arithmetic is
the same IEEE operations in the same order, and ``np.round(x, d)`` is ``rint(x * 10**d) / 10**d`` as numpy does
it.  tests/server/test_compiled_snapshot.py checks each against the former numpy code on random inputs.

Shapes: A = P + 1 root actions (pass last), P board points, M moves given a principal variation, D its length.
"""

from __future__ import annotations

import numba
import numpy as np

from jaxgo.search import descent
from jaxgo.search.compiled_prior import PAIRWISE_BLOCK, pairwise_sum

STACK_DEPTH = 64  # frames of ``pairwise_total``'s halving: rows up to 128 * 2**63 entries


@numba.njit(nogil=True, cache=True)
def pairwise_half(count):
    """Where numpy's pairwise summation splits a run of ``count`` (> ``PAIRWISE_BLOCK``) entries: half of it,
    rounded down to a multiple of 8."""
    half = count // 2
    return half - half % 8


@numba.njit(nogil=True, cache=True)
def pairwise_total(a, start, count):
    """The sum of float64 a[start : start + count] exactly as ``np.sum`` of that contiguous run gives it: blocks
    of at most ``PAIRWISE_BLOCK`` summed by ``pairwise_sum``, longer runs split by ``pairwise_half`` and the two
    halves' sums added (numpy's recursion, here with an explicit stack: numba's cache mishandles recursion)."""
    if count <= PAIRWISE_BLOCK:
        return pairwise_sum(a, start, count)
    starts = np.empty(STACK_DEPTH, np.int64)
    counts = np.empty(STACK_DEPTH, np.int64)
    lefts = np.empty(STACK_DEPTH, np.float64)
    has_left = np.zeros(STACK_DEPTH, np.bool_)
    top = 0
    starts[0], counts[0] = start, count
    value = 0.0
    while top >= 0:
        if counts[top] > PAIRWISE_BLOCK:  # descend into the left half first
            top += 1
            starts[top], counts[top], has_left[top] = starts[top - 1], pairwise_half(counts[top - 1]), False
            continue
        value = pairwise_sum(a, starts[top], counts[top])
        top -= 1
        while top >= 0:  # hand the finished sum up: a left half waits for its right, a right one completes
            if not has_left[top]:
                lefts[top], has_left[top] = value, True
                half = pairwise_half(counts[top])
                top += 1
                starts[top], counts[top], has_left[top] = starts[top - 1] + half, counts[top - 1] - half, False
                break
            value = lefts[top] + value
            top -= 1
    return value


@numba.njit(nogil=True, cache=True)
def sum_all(a):
    """``np.sum`` of float64 a [n] (contiguous)."""
    return pairwise_total(a, 0, a.shape[0])


@numba.njit(nogil=True, cache=True)
def compress(a, keep):
    """float64 a[keep] for a float [n] and keep bool [n] (numpy's boolean indexing: a new contiguous array)."""
    out = np.empty(a.shape[0], np.float64)
    m = 0
    for i in range(a.shape[0]):
        if keep[i]:
            out[m] = a[i]
            m += 1
    return out[:m]


@numba.njit(nogil=True, cache=True)
def mean_and_stdev_into(sums, square_sums, count, mean, stdev):
    """``tasks.mean_and_stdev`` of float [n] sums / square_sums with float [n] counts into float64 [n] mean and
    stdev (NaN where the count is 0)."""
    for i in range(sums.shape[0]):
        if count[i] > 0:
            m = sums[i] / count[i]
            mean[i] = m
            stdev[i] = np.sqrt(max(square_sums[i] / count[i] - m * m, 0.0))
        else:
            mean[i] = np.nan
            stdev[i] = np.nan


@numba.njit(nogil=True, cache=True)
def shrunk_means_into(mean, stdev, count, out):
    """``score_estimate.shrunk_means`` of float64 [A] mean / stdev / count into float64 out [A]."""
    played = np.empty(mean.shape[0], np.bool_)
    k = 0
    for a in range(mean.shape[0]):
        played[a] = count[a] > 0 and np.isfinite(mean[a])
        k += played[a]
        out[a] = mean[a]
    if k < 2:
        return
    n, x, s = compress(count, played), compress(mean, played), compress(stdev, played)
    total = sum_all(n)
    centre = sum_all(n * x) / total
    noise = sum_all(n * (s * s)) / total
    sampling = noise / n
    spread = sum_all(n * ((x - centre) * (x - centre))) / total
    tau2 = max(0.0, spread - sum_all(n * sampling) / total)
    j = 0
    for a in range(mean.shape[0]):
        if played[a]:
            out[a] = centre + tau2 / (tau2 + sampling[j] + 1e-12) * (x[j] - centre)
            j += 1


@numba.njit(nogil=True, cache=True)
def rank_order(visits, values):
    """``tree.rank_actions`` of float64 [A] visits and values: int64 [A] actions by most visits, then highest win
    rate (NaN as -1, +-inf clipped to the largest finite float64), then lowest index (numpy's ``lexsort``: two
    stable sorts)."""
    keys = np.empty(values.shape[0], np.float64)
    for a in range(values.shape[0]):
        v = values[a]
        keys[a] = 1.0 if np.isnan(v) else -min(max(v, -np.finfo(np.float64).max), np.finfo(np.float64).max)
    by_value = np.argsort(keys, kind="mergesort")
    negative_visits = np.empty(values.shape[0], np.float64)
    for i in range(values.shape[0]):
        negative_visits[i] = -visits[by_value[i]]
    return by_value[np.argsort(negative_visits, kind="mergesort")]


@numba.njit(nogil=True, cache=True)
def visits_shown(playouts, scale):
    """``tasks.visits_shown`` of float64 playouts [A] at ``scale`` playouts a visit: float64 [A]."""
    exact = playouts / scale
    shown = np.floor(exact)
    extra = int(np.rint(sum_all(exact))) - int(sum_all(shown))
    if extra > 0:
        order = np.argsort(-(exact - shown), kind="mergesort")
        for i in range(min(extra, order.shape[0])):
            shown[order[i]] += 1
    return shown


@numba.njit(nogil=True, cache=True)
def weighted_score(scores, visits, fallback):
    """``score_estimate.root_score``: the visits-weighted mean of float64 scores [A] over the moves with visits
    and a finite score; ``fallback`` when there is none."""
    ok = np.empty(scores.shape[0], np.bool_)
    any_ok = False
    for a in range(scores.shape[0]):
        ok[a] = visits[a] > 0 and np.isfinite(scores[a])
        any_ok = any_ok or ok[a]
    if not any_ok:
        return fallback
    weights = compress(visits, ok)
    return sum_all(weights * compress(scores, ok)) / sum_all(weights)


@numba.njit(nogil=True, cache=True)
def root_rows(children_visits, children_values, children_legal, children_prior, root):
    """The root's searched moves: (legal bool [A], visits float64 [A] (0 where not searched), win rates float64
    [A] (value sums / visits, NaN unvisited), prior [A] of children_prior's dtype (0 where not searched), the
    root's win rate (``np.nansum`` of the searched moves' value sums over all their visits; 0.5 before any))."""
    actions = children_visits.shape[1]
    legal = children_legal[root].copy()
    visits = np.empty(actions, np.float64)
    values = np.empty(actions, np.float64)
    prior = np.zeros(actions, children_prior.dtype)
    sums = np.empty(actions, np.float64)
    m = 0
    for a in range(actions):
        visits[a] = children_visits[root, a] if legal[a] else 0.0
        values[a] = children_values[root, a] / max(visits[a], 1e-9) if visits[a] > 0 else np.nan
        if legal[a]:
            prior[a] = children_prior[root, a]
        if legal[a]:
            v = children_values[root, a]
            sums[m] = 0.0 if np.isnan(v) else v
            m += 1
    total = sum_all(visits)
    rate = pairwise_total(sums, 0, m) / total if total > 0 else 0.5
    return legal, visits, values, prior, rate


@numba.njit(nogil=True, cache=True)
def principal_lines(children_index, children_visits, children_values, children_legal, root, ranking, visits,
                    most_moves, depth):
    """The lines of the first ``most_moves`` moves of ranking int64 [A] with visits: int32 [M, depth + 1] (each
    row the move and then its ``descent.best_line`` from the move's node) and their lengths int64 [M] (the move
    counted)."""
    m = 0
    for i in range(min(most_moves, ranking.shape[0])):
        m += visits[ranking[i]] > 0
    lines = np.empty((m, depth + 1), np.int32)
    lengths = np.empty(m, np.int64)
    j = 0
    for i in range(min(most_moves, ranking.shape[0])):
        action = ranking[i]
        if visits[action] > 0:
            lines[j, 0] = action
            lengths[j] = 1 + descent.best_line(children_index, children_visits, children_values, children_legal,
                                               children_index[root, action], lines[j, 1:])
            j += 1
    return lines, lengths


@numba.njit(nogil=True, cache=True)
def snapshot_arrays(children_index, children_visits, children_values, children_legal, children_prior, root,
                    score_sum, score_sq_sum, score_n, shrink, scale, most_moves, depth):
    """A task's snapshot of its tree at ``root`` and its root-move score statistics float64 [A] (score_sum,
    score_sq_sum, score_n), in one call.  Returns (legal bool [A], visits float64 [A], values float64 [A], prior
    [A] (children_prior's dtype), the root's win rate, raw score means and stdev float64 [A], score float64 [A]
    (shrunk when ``shrink``, else the raw means), shown visits float64 [A] (``visits_shown`` at ``scale``; the
    visits when it is 1), ranking int64 [A] of the shown visits, principal lines int32 [M, depth + 1] and lengths
    int64 [M] of the first ``most_moves`` moves ranked by the visits)."""
    legal, visits, values, prior, rate = root_rows(children_visits, children_values, children_legal,
                                                   children_prior, root)
    actions = visits.shape[0]
    raw = np.empty(actions, np.float64)
    stdev = np.empty(actions, np.float64)
    mean_and_stdev_into(score_sum, score_sq_sum, score_n, raw, stdev)
    score = np.empty(actions, np.float64)
    if shrink:
        shrunk_means_into(raw, stdev, score_n, score)
    else:
        score[:] = raw
    ranking = rank_order(visits, values)
    lines, lengths = principal_lines(children_index, children_visits, children_values, children_legal, root,
                                     ranking, visits, most_moves, depth)
    shown = visits
    shown_ranking = ranking
    if scale > 1:
        shown = visits_shown(visits, scale)
        shown_ranking = rank_order(shown, values)
    return legal, visits, values, prior, rate, raw, stdev, score, shown, shown_ranking, lines, lengths


@numba.njit(nogil=True, cache=True)
def owner_means(owner_sum, owner_abs_sum, owner_n, moves_owner_sum, score_n, with_moves):
    """The final ownership's mean and stdev float64 [P] (``tasks.mean_and_stdev`` with one count owner_n > 0)
    and, with ``with_moves``, each root move's mean ownership float64 [A, P] (moves_owner_sum over score_n
    float64 [A], at least 1); an empty [0, 0] without."""
    points = owner_sum.shape[0]
    counts = np.full(points, np.float64(owner_n))
    mean = np.empty(points, np.float64)
    stdev = np.empty(points, np.float64)
    mean_and_stdev_into(owner_sum, owner_abs_sum, counts, mean, stdev)
    if not with_moves:
        return mean, stdev, np.empty((0, 0), np.float64)
    moves = np.empty(moves_owner_sum.shape, np.float64)
    for a in range(moves.shape[0]):
        n = max(score_n[a], 1.0)
        for p in range(moves.shape[1]):
            moves[a, p] = moves_owner_sum[a, p] / n
    return mean, stdev, moves


@numba.njit(nogil=True, cache=True)
def rounded_value(x, scale):
    """One float64 rounded as numpy does it, np.round(x, d) with scale = 10.0 ** d (NaN/inf as 0)."""
    return np.rint(x * scale) / scale if np.isfinite(x) else 0.0


@numba.njit(nogil=True, cache=True)
def finite_value(x, nan):
    """``tree.finite_values`` of one float64: NaN -> nan, +-inf -> the largest finite float64 of that sign."""
    if np.isnan(x):
        return nan
    return min(max(x, -np.finfo(np.float64).max), np.finfo(np.float64).max)


@numba.njit(nogil=True, cache=True)
def move_columns(visits, legal, ranking, values, prior, score, score_stdev, flip_rate, score_sign):
    """The listed moves of ``responses.move_infos`` and their numeric fields, from float [A] visits, values,
    prior, score (score_stdev float [A] or empty: none) and legal bool [A], in ranking int [A]'s order: (actions
    int64 [M] of the visited searched moves best first, visits int64 [M] (rounded), float64 [6, M] rows: win
    rate, prior, LCB, utility (6 digits), score lead, score stdev (3 digits; 0 without score_stdev))."""
    m = 0
    for i in range(ranking.shape[0]):
        m += visits[ranking[i]] > 0 and legal[ranking[i]]
    actions = np.empty(m, np.int64)
    counts = np.empty(m, np.int64)
    rows = np.zeros((6, m), np.float64)
    j = 0
    for i in range(ranking.shape[0]):
        a = ranking[i]
        if not (visits[a] > 0 and legal[a]):
            continue
        n = np.float64(visits[a])
        own = finite_value(np.float64(values[a]), 0.0)
        lcb = own - 1.96 * np.sqrt(max(own * (1 - own), 1e-4) / n)
        rate = 1.0 - own if flip_rate else own
        lcb = 1.0 - lcb if flip_rate else lcb
        actions[j] = a
        counts[j] = np.int64(np.rint(n))
        rows[0, j] = rounded_value(rate, 1e6)
        rows[1, j] = rounded_value(np.float64(prior[a]), 1e6)
        rows[2, j] = rounded_value(lcb, 1e6)
        rows[3, j] = rounded_value(2 * rate - 1, 1e6)
        lead = score_sign * finite_value(np.float64(score[a]), 0.0)
        rows[4, j] = np.rint(lead * 1e3) / 1e3  # (the former code rounded a finite value: inf stays)
        if score_stdev.shape[0]:
            rows[5, j] = np.rint(finite_value(np.float64(score_stdev[a]), 0.0) * 1e3) / 1e3
        j += 1
    return actions, counts, rows
