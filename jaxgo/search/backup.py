"""Compiled host-side tree work after a batch's descents (numba): which new nodes to create, which of them repeat a
position, the leaf of every descent, and the backup of its playouts along the paths.

``jaxgo.search.descent`` scores edges and descends K times with a virtual loss on every edge taken; the descents
end on nodes or on edges without a node yet (``descent.PENDING``).  Here ``number_pending`` numbers those edges,
``repeated_positions`` drops new positions that repeat the game or the path (superko), ``resolve_leaves`` gives
every descent its leaf (taking back the virtual losses of a dropped one), and ``backup_batch`` adds the leaves' L
playout results (``playout_values``) along the paths, as ``jaxgo.search.reference.backup_reference`` does
(tests/search/test_descent.py holds them to it on random trees).  None of these loops holds the GIL.

Shapes as in ``descent``: A actions (pass last), P = A - 1 points, C tree capacity, K leaves per batch, L playouts
per leaf, D the longest recorded path.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from jaxgo.search.descent import PENDING


@numba.njit(nogil=True, cache=True)
def backup_batch(rows, path_nodes, path_actions, lengths, leaves, value, first, to_play, children_visits,
                 children_values, children_rave_visits, children_rave_values, use_rave):
    """Add the playouts of the leaves ``rows`` int [R] (rows of the paths) along their paths: value float [K, L]
    (Black's value of each playout in [0, 1]: 1 a Black win, 0 a White win, 1/2 a draw, or ``playout_values``
    with a share of the score), first int [K, L, P] (the colour that played each point first in each playout,
    0 none).  Every edge on a path gains L - 1 visits (its virtual loss was the first) and the value of the
    player to move at its node (White's is 1 - Black's); under RAVE every node on the path (the leaf too) gains
    the AMAF credit of the playouts' first plays and of the same player's later tree moves on the path."""
    pass_action = children_visits.shape[1] - 1
    count = value.shape[1]
    points = first.shape[2]
    for row in rows:
        black = 0.0
        for j in range(count):
            black += value[row, j]
        white = count - black
        length = lengths[row]
        for depth in range(length + 1):
            node = path_nodes[row, depth] if depth < length else leaves[row]
            color = to_play[node]
            wins = black if color == 1 else white
            if depth < length:
                action = path_actions[row, depth]
                children_visits[node, action] += count - 1
                children_values[node, action] += wins
            if use_rave:
                for j in range(count):
                    won = value[row, j] if color == 1 else 1.0 - value[row, j]
                    for p in range(points):
                        if first[row, j, p] == color:
                            children_rave_visits[node, p] += 1.0
                            children_rave_values[node, p] += won
                for later in range(depth, length, 2):
                    action = path_actions[row, later]
                    if action != pass_action:
                        children_rave_visits[node, action] += count
                        children_rave_values[node, action] += wins


@numba.njit(nogil=True, cache=True)
def number_pending(path_nodes, path_actions, lengths, ends, children_index, pair_nodes, pair_actions, pair_of):
    """Number the distinct edges without a node that descents ended on (``ends[i] == PENDING``; the edge is the
    last of the path): pair_nodes / pair_actions int32 [>= K] receive them in order of first use, pair_of int32
    [K] each descent's edge number (-1 for a descent that ended at a node); returns how many.  ``children_index``
    [C, A] marks the numbered edges during the call (-2 - number) and is restored."""
    count = 0
    for i in range(ends.shape[0]):
        pair_of[i] = -1
        if ends[i] != PENDING:
            continue
        node = path_nodes[i, lengths[i] - 1]
        action = path_actions[i, lengths[i] - 1]
        mark = children_index[node, action]
        if mark <= -2:
            pair_of[i] = -2 - mark
            continue
        children_index[node, action] = -2 - count
        pair_nodes[count] = node
        pair_actions[count] = action
        pair_of[i] = count
        count += 1
    for j in range(count):
        children_index[pair_nodes[j], pair_actions[j]] = -1
    return count


@numba.njit(nogil=True, cache=True)
def repeated_positions(keys, parents_of_new, actions, pass_action, parents, hashes, root, history, out):
    """out bool [R]: whether each new position, key uint64 [R] (Zobrist), repeats the game's history (uint64 [H],
    sorted) or a position on the tree path from its parent (parents_of_new int [R]) up to ``root`` (superko); a
    pass (actions int [R]) never does."""
    for r in range(keys.shape[0]):
        out[r] = False
        if actions[r] == pass_action:
            continue
        key = keys[r]
        at = np.searchsorted(history, key)
        if at < history.shape[0] and history[at] == key:
            out[r] = True
            continue
        node = parents_of_new[r]
        while node >= 0:
            if hashes[node] == key:
                out[r] = True
                break
            if node == root:
                break
            node = parents[node]


@numba.njit(nogil=True, cache=True)
def resolve_leaves(created, pair_of, ends, path_nodes, path_actions, lengths, children_visits, valid):
    """The leaf of every descent, written into ``ends`` int32 [K]: its end node, or the node created for its
    pending edge (created int32 [pairs]; -1 where that edge's position was dropped: the descent's virtual losses
    are taken back and it has no leaf).  valid int32 [K] receives the descents that have one, in order; returns
    how many."""
    n = 0
    for i in range(ends.shape[0]):
        if pair_of[i] >= 0:
            leaf = created[pair_of[i]]
            if leaf < 0:
                for j in range(lengths[i]):
                    children_visits[path_nodes[i, j], path_actions[i, j]] -= 1
                continue
            ends[i] = leaf
        valid[n] = i
        n += 1
    return n


def playout_values(winner, score, score_utility: float = 0.0, scale: float = 9.0) -> np.ndarray:
    """float64 [...]: Black's value of each playout in [0, 1] from its winner int [...] (1 Black, -1 White, 0
    draw) and final score float [...] (Black - White - komi), with a share ``score_utility`` (u) of a
    saturating score term (KataGo's score utility, Fuego's score modification):

        v = (1 - u) * win + u * (1/2 + atan(score / scale) / pi),   win = 1, 0 or 1/2,

    so that a won playout is worth more than a lost one for u < 1/2 and, between two won ones, the larger
    margin is worth more.  u = 0 gives the plain win / loss / draw values (exactly 1, 0, 1/2)."""
    win = (np.asarray(winner, np.float64) + 1.0) / 2.0
    if not score_utility:
        return win
    margin = 0.5 + np.arctan(np.asarray(score, np.float64) / scale) / math.pi
    return (1.0 - score_utility) * win + score_utility * margin
