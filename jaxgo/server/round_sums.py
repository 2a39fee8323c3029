"""The analysis statistics of a round's playouts in one compiled call: per root move the sums of the final scores
and of their squares and the playout count, the summed final ownership (and its absolute value) and, with
``includeMovesOwnership``, the ownership per root move.

``Task.accumulate`` did this with a dozen numpy calls (``np.add.at`` per statistic, sums over [n, L, P] ownership
arrays), a tenth of a server's host time per leaf.  ``add_round`` reads the rows of one task straight from the
collected call's arrays (no slices made) and sums in float64 (the numpy version summed each leaf's L scores in
float32 first: the score sums may differ in the last float32 digit).
"""

from __future__ import annotations

import math
from pathlib import Path

import numba
import numpy as np

from jaxgo.playouts.native import NATIVE_SOURCES, drop_stale_cache
from jaxgo.search import round_batch
from jaxgo.search.positions import SEARCH_SOURCES

# The server's compiled code (these sums, ``compiled_snapshot``) calls the search's: dropped when that changes.
drop_stale_cache(Path(__file__).parent, NATIVE_SOURCES + SEARCH_SOURCES + sorted(Path(__file__).parent.glob("*.py")))


@numba.njit(nogil=True, cache=True)
def add_round(row0, count, cols, root_actions, final, owner, score_sum, score_sq_sum, score_n, owner_sum,
              owner_abs_sum, moves_owner_sum, with_moves):
    """Add the playouts of rows ``row0 .. row0 + count - 1``, their first ``cols`` columns, of final float [T, L]
    (Black - White - komi) and owner int8 [T, L, P] to the statistics: score_sum / score_sq_sum / score_n
    float64 [A] at each row's root move (root_actions int [count]; -1: the leaf is the root, not counted per
    move), owner_sum / owner_abs_sum float64 [P], and with ``with_moves`` moves_owner_sum float64 [A, P].
    Returns the sum of all the scores (root moves or not)."""
    points = owner.shape[2]
    total = 0.0
    for r in range(count):
        row = row0 + r
        action = root_actions[r]
        row_sum = 0.0
        row_sq = 0.0
        for j in range(cols):
            value = np.float64(final[row, j])
            row_sum += value
            row_sq += value * value
            for p in range(points):  # no branch (owners are -1, 0, +1; adding 0 changes no sum): a vector loop
                o = owner[row, j, p]
                owner_sum[p] += o
                owner_abs_sum[p] += o * o
            if with_moves and action >= 0:
                for p in range(points):
                    moves_owner_sum[action, p] += owner[row, j, p]
        total += row_sum
        if action >= 0:
            score_sum[action] += row_sum
            score_sq_sum[action] += row_sq
            score_n[action] += cols
    return total


@numba.njit(nogil=True, cache=True)
def backup_round(tasks, slots, rows0, counts, cols, use_rave, with_moves, value, first, final, owner, entries, totals):
    """The backup of a round for the searches ``tasks`` int [R] of a ``round_batch.SearchSlots`` list ``entries``
    (indices into the per-search arrays; search t at ``entries[slots[t]]``): its ``counts[t]`` leaves, rows
    ``rows0[t] ...`` of the collected call, get their first ``cols[t]`` playouts along their paths
    (``round_batch.backup_search``: value float64 [B, L], first int8 [B, L, P]) and into the search's analysis
    statistics (``add_round``: final float [B, L], owner int8 [B, L, P]; ``round_batch.STAT_FIELDS``).
    totals[t]: the sum of its scores."""
    for i in range(tasks.shape[0]):
        t = tasks[i]
        e = entries[slots[t]]
        n = counts[t]
        round_batch.backup_search(e, rows0[t], n, cols[t], use_rave[t], value, first)
        actions = np.empty(n, np.int64)
        round_batch.root_actions(e, n, actions)
        totals[t] = add_round(rows0[t], n, cols[t], actions, final, owner, e[36], e[37], e[38], e[39], e[40], e[41],
                              with_moves[t])


@numba.njit(nogil=True, cache=True)
def playout_wins(rows0, counts, extra, utility, scale, winner, final, value, ratio):
    """The first part of ``backup.playout_values`` for the rows of R searches, after ``komi.shifted_results``:
    search t's rows ``rows0[t] .. rows0[t] + counts[t] - 1`` of winner int [B, L] and final float [B, L] (Black -
    White - komi), re-scored with extra komi ``extra[t]`` (its sign the winner where extra[t] != 0), give
    value float64 [B, L] = the win (1, 0 or 1/2) and, where ``utility[t]`` != 0, ratio float64 [B, L] = the
    score / ``scale[t]`` (its arctan is numpy's: ``mix_margins`` then adds it).  Other rows are left alone."""
    for t in range(rows0.shape[0]):
        for r in range(rows0[t], rows0[t] + counts[t]):
            for j in range(winner.shape[1]):
                score = np.float64(final[r, j])
                if extra[t] != 0.0:
                    score = score - extra[t]
                    won = np.float64(np.sign(score))
                else:
                    won = np.float64(winner[r, j])
                value[r, j] = (won + 1.0) / 2.0
                if utility[t] != 0.0:
                    ratio[r, j] = score / scale[t]


@numba.njit(nogil=True, cache=True)
def mix_margins(rows0, counts, utility, angle, value):
    """The second part of ``backup.playout_values``: where ``utility[t]`` (u) != 0, each of search t's rows (as in
    ``playout_wins``) of value float64 [B, L] becomes (1 - u) * value + u * (1/2 + angle / pi), angle float64
    [B', L] the arctan of ``playout_wins``' ratio (B' at least the mixed searches' last row + 1)."""
    for t in range(rows0.shape[0]):
        u = utility[t]
        if u == 0.0:
            continue
        for r in range(rows0[t], rows0[t] + counts[t]):
            for j in range(value.shape[1]):
                margin = 0.5 + angle[r, j] / math.pi
                value[r, j] = (1.0 - u) * value[r, j] + u * margin


def playout_values(winner, final, rows0, counts, extra, utility, scale) -> np.ndarray:
    """float64 [B, L]: Black's value of each playout of R searches' rows, as each search's
    ``TreeSearch.backup_leaves`` computes it (``komi.shifted_results``, then ``backup.playout_values``): search t's
    rows ``rows0[t] ...`` (counts[t] rows) of winner int [B, L] and final float [B, L], with its extra komi
    extra[t], score utility utility[t] and board size scale[t] (float64 [R]).  Other rows: 0.  Two nogil calls
    and numpy's arctan (the same function as the searches' own backup) over the rows that need it."""
    value = np.zeros(np.shape(winner), np.float64)
    rows0, counts = np.asarray(rows0, np.int64), np.asarray(counts, np.int64)
    mixed = utility != 0
    any_mixed = bool(mixed.any())
    ratio = np.zeros(value.shape, np.float64) if any_mixed else value[:0]
    playout_wins(rows0, counts, extra, utility, scale, winner, final, value, ratio)
    if any_mixed:
        end = int((rows0 + counts)[mixed].max())  # (mix_margins reads the rows of the mixed searches only)
        mix_margins(rows0, counts, utility, np.arctan(ratio[:end], out=ratio[:end]), value)
    return value
