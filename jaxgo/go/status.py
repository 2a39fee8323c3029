"""Stone status at the end of a game: alive, dead or seki, from playout ownership plus a static seki rule.

Light playouts cannot see seki: nobody passes while a legal non-eye move exists, so the shared liberties of two
eyeless chains are always filled and one chain dies, decided by whose turn it is.  ``stone_status`` therefore
first judges life by ownership (a stone whose point the playouts give to the opponent is dead), then overrides
it with a static rule for the two standard seki shapes between adjacent chains A and B of opposite colours:

* neither has an eye and they share all their liberties, at least two of them (libs(A) == libs(B), |S| >= 2);
* each has exactly one single-point eye and, eyes aside, they share all their remaining liberties (>= 1).

An eye here is an empty point all of whose on-board neighbours are stones of that one chain.  Playing a shared
liberty in either shape is a self-atari for the mover, so both sides pass and the stones live without territory;
the shared liberties are neutral (Tromp-Taylor counts them for nobody anyway).  Shapes needing more reading (a
chain in seki with several opponent chains, big-eye seki) are left to the ownership judgement.
"""

from __future__ import annotations

import numpy as np

from jaxgo.go import hostboard
from jaxgo.go.coords import EMPTY
from jaxgo.go.tables import neighbour_lists


def chains(board: np.ndarray) -> list[np.ndarray]:
    """The chains of a flat board int8 [P] (+1 Black, -1 White), each as sorted int [n] points."""
    size = int(round(len(board) ** 0.5))
    return [np.array(members) for members in hostboard.chains(board.tolist(), size)]


def _liberties_and_eyes(board: np.ndarray, members: np.ndarray) -> tuple[set, set]:
    """(liberties other than eyes, single-point eyes) of one chain."""
    size = int(round(len(board) ** 0.5))
    nbrs = neighbour_lists(size)
    inside = set(members.tolist())
    libs, eyes = set(), set()
    for point in members:
        for nb in nbrs[point]:
            if board[nb] == EMPTY:
                if all(n in inside for n in nbrs[nb]):
                    eyes.add(nb)
                else:
                    libs.add(nb)
    return libs, eyes


def seki_points(board: np.ndarray) -> np.ndarray:
    """bool [P]: stones in one of the two static seki shapes (see the module docstring) of a flat board [P]."""
    size = int(round(len(board) ** 0.5))
    nbrs = neighbour_lists(size)
    groups = chains(board)
    owner = np.full(len(board), -1)
    for index, members in enumerate(groups):
        owner[members] = index
    info = [_liberties_and_eyes(board, members) for members in groups]
    seki = np.zeros(len(board), bool)
    for a, members in enumerate(groups):
        libs_a, eyes_a = info[a]
        touching = {int(owner[nb]) for p in members for nb in nbrs[p] if board[nb] == -board[members[0]]}
        for b in touching:
            libs_b, eyes_b = info[b]
            if libs_a != libs_b or len(eyes_a) != len(eyes_b) or len(eyes_a) > 1:
                continue
            if len(libs_a) >= (2 if not eyes_a else 1):
                seki[members] = True
                seki[groups[b]] = True
    return seki


def stone_status(board: np.ndarray, ownership: np.ndarray) -> np.ndarray:
    """str [P] per point: 'alive', 'dead' or 'seki' for stones, '' for empty points.

    board int [P] (+1 Black, -1 White); ownership float [P] in [-1, 1] (mean playout ownership, +1 Black).
    A chain has one status: seki when it is in a static seki shape, dead when the playouts give most of its
    stones to the opponent, alive otherwise.  (Neutral playout ownership is no sign of seki: dame between two
    living groups is neutral too.)
    """
    board = np.asarray(board).reshape(-1)
    ownership = np.asarray(ownership, np.float64).reshape(-1)
    static_seki = seki_points(board)
    status = np.full(board.shape, "", dtype=object)
    for members in chains(board):
        colour = board[members[0]]
        if static_seki[members].any():
            status[members] = "seki"
            continue
        status[members] = "dead" if np.mean(ownership[members] * colour < 0) > 0.5 else "alive"
    return status
