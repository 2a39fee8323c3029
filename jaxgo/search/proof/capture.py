"""Capture goal for proof search: can the attacker capture the goal string?

g(n): TRUE if the goal point is empty (string captured) or the goal string has one liberty with the attacker
to move, or a ladder works (``ladder_captures``); FALSE if the string has more than L liberties; else UNKNOWN.
``solve_capture`` runs the search with L = 2, 3, ... repeating with L + 1 while the result is a disproof
(the paper's scheme) up to ``max_l``.

Candidate moves (both sides): liberties of the goal string, liberties of attacker strings adjacent to it
with at most two liberties (captures/escapes), and for the attacker the second-order liberties of the goal.
"""

from __future__ import annotations

from .board import Board
from .tree import Result, Tree


def ladder_captures(board: Board, goal: int, depth: int = 60) -> bool:
    """Simple ladder reader: attacker to move, goal string with 1 or 2 liberties; defender only extends."""
    if board.stones[goal] == 0:
        return True
    _, libs = board.chain(goal)
    if len(libs) == 1:
        return True
    if len(libs) != 2 or depth <= 0:
        return False
    defender = board.stones[goal]
    pts, _ = board.chain(goal)
    # defender can capture an adjacent attacker string in atari: not a simple ladder
    for rep in board.neighbour_chains(pts, -defender):
        if len(board.chain(rep)[1]) == 1:
            return False
    for atari in sorted(libs):
        b1 = board.play(atari)
        if b1 is None:
            continue
        _, l1 = b1.chain(goal)
        if len(l1) != 1:
            continue
        (escape,) = tuple(l1)
        b2 = b1.play(escape)
        if b2 is None:
            return True
        if ladder_captures(b2, goal, depth - 1):
            return True
    return False


class CaptureProblem:
    def __init__(self, goal: int, attacker: int, max_libs: int = 3, use_ladder: bool = True):
        self.goal = goal
        self.attacker = attacker
        self.max_libs = max_libs
        self.use_ladder = use_ladder

    def key(self, b: Board):
        return b.key()

    def is_or(self, b: Board) -> bool:
        return b.to_play == self.attacker

    def evaluate(self, b: Board):
        if b.stones[self.goal] == 0:
            return True
        _, libs = b.chain(self.goal)
        if len(libs) > self.max_libs:
            return False
        if b.to_play == self.attacker:
            if len(libs) == 1:
                return True
            if self.use_ladder and len(libs) == 2 and ladder_captures(b, self.goal):
                return True
        return None

    def candidates(self, b: Board) -> list[int]:
        pts, libs = b.chain(self.goal)
        moves = set(libs)
        defender = -self.attacker
        for rep in b.neighbour_chains(pts, self.attacker):
            _, l = b.chain(rep)
            if len(l) <= 2:
                moves |= l
        if b.to_play == self.attacker:
            from .board import _nbrs
            nb = _nbrs(b.size)
            for lib in list(libs):
                for n in nb[lib]:
                    if b.stones[n] == 0:
                        moves.add(n)
        del defender
        return sorted(moves)

    def children(self, b: Board):
        out = []
        for m in self.candidates(b):
            c = b.play(m)
            if c is not None:
                out.append((m, c))
        return out


def solve_capture(board: Board, goal: int, attacker_to_move: bool = True, solver: str = "pns",
                  max_nodes: int = 20000, max_seconds: float = 10.0, l_start: int = 2, max_l: int = 4,
                  prior=None) -> tuple[Result, int]:
    """Attack (attacker to move) or defend (defender to move) the string at ``goal``.

    Returns (result of the last search, L used).  With the attacker to move, ``result.value`` True means the
    string can be captured; with the defender to move, False means the defender saves it (``result.move`` is
    then the saving move).  On a disproof at L the search is repeated with L + 1 up to ``max_l``.
    """
    if board.stones[goal] == 0:
        raise ValueError("goal point is empty")
    attacker = -board.stones[goal]
    b = board.copy()
    b.to_play = attacker if attacker_to_move else -attacker
    total_nodes, total_time = 0, 0.0
    res, L = None, l_start
    for L in range(l_start, max_l + 1):
        prob = CaptureProblem(goal, attacker, L)
        if prior is not None:
            prob.prior = prior
        res = Tree(prob, solver).search(b, max_nodes=max(1, max_nodes - total_nodes),
                                        max_seconds=max(0.0, max_seconds - total_time))
        total_nodes += res.nodes
        total_time += res.seconds
        if res.value is not False or total_nodes >= max_nodes or total_time >= max_seconds:
            break
    res.nodes, res.seconds = total_nodes, total_time
    return res, L
