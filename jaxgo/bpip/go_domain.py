"""Go capture problems for the BPIP controller, with a proof-number search (PNS) baseline.

Uses the plain-Python ``jaxgo.go.reference.ReferenceBoard``.  The attacker tries to capture the chain at
``target``; the defender escapes when the chain reaches ``escape_libs`` liberties or after ``max_plies``.
Moves: the attacker plays on the target's liberties; the defender on the target's liberties or captures an
adjacent attacker chain in atari.  Values are +1 / -1 (win / loss) for the side to move.

Evaluator (a liberty prior, the kind of knowledge a proof-number search initialises its numbers with):
P(capture) = 0.9 / 0.6 / 0.3 for 1 / 2 / >= 3 liberties with the attacker to move and 0.7 / 0.35 / 0.1 with
the defender to move; M = 2P - 1 for the attacker; bounds are the game bounds (Up = 1, Lw = -1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxgo.bpip.distributions import Grid
from jaxgo.go.reference import ReferenceBoard
from jaxgo.go.tables import neighbour_lists

GO_GRID = Grid(half_width=1.0, step=0.05)
PRIOR_ATTACKER = {1: 0.9, 2: 0.6}
PRIOR_DEFENDER = {1: 0.7, 2: 0.35}

LADDER = """
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . X O X . . .
. . . X O . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""  # White's two stones (e6, e5) have two liberties (f5, e4); Black to play and capture


@dataclass(frozen=True)
class CaptureState:
    board: ReferenceBoard
    ply: int


class CaptureDomain:
    """Domain protocol of ``jaxgo.bpip.tree`` for one capture problem."""

    def __init__(self, target: int, attacker: int, escape_libs: int = 3, max_plies: int = 30):
        self.target, self.attacker = target, attacker
        self.escape_libs, self.max_plies = escape_libs, max_plies

    def initial(self, board: ReferenceBoard) -> CaptureState:
        return CaptureState(board, 0)

    def _libs(self, board) -> np.ndarray:
        return np.flatnonzero(board.liberties(self.target))

    def _captured(self, board) -> bool:
        return board.stones[self.target] != -self.attacker

    def moves(self, s: CaptureState) -> list:
        b = s.board
        if self.terminal_value(s) is not None:
            return []
        cand = set(int(p) for p in self._libs(b))
        if b.to_play != self.attacker:  # defender may also capture adjacent attackers in atari
            chain = np.flatnonzero(b.chain(self.target))
            for p in chain:
                for nb in neighbour_lists(b.size)[p]:
                    if b.stones[nb] == self.attacker:
                        libs = np.flatnonzero(b.liberties(nb))
                        if len(libs) == 1:
                            cand.add(int(libs[0]))
        return sorted(m for m in cand if b.is_legal(m))

    def play(self, s: CaptureState, move):
        b = s.board.copy()
        b.play(move)
        return CaptureState(b, s.ply + 1)

    def _attacker_value(self, s: CaptureState) -> float | None:
        b = s.board
        if self._captured(b):
            return 1.0
        if len(self._libs(b)) >= self.escape_libs or s.ply >= self.max_plies:
            return -1.0
        return None

    def terminal_value(self, s: CaptureState) -> float | None:
        v = self._attacker_value(s)
        if v is None:
            cand = set(int(p) for p in self._libs(s.board))
            if s.board.to_play == self.attacker and not any(s.board.is_legal(m) for m in cand):
                v = -1.0
        if v is None:
            return None
        return v if s.board.to_play == self.attacker else -v

    def evaluate(self, s: CaptureState):
        libs = len(self._libs(s.board))
        table, default = (PRIOR_ATTACKER, 0.3) if s.board.to_play == self.attacker else (PRIOR_DEFENDER, 0.1)
        m_att = 2.0 * table.get(libs, default) - 1.0
        m = m_att if s.board.to_play == self.attacker else -m_att
        return m, 1.0, -1.0

    def features(self, s: CaptureState) -> frozenset:
        return frozenset(int(p) * 3 + int(c) + 1 for p, c in enumerate(s.board.stones) if c)

    def expansion_time(self, s: CaptureState) -> float:
        return 1.0 + len(self._libs(s.board))

    def move_name(self, move) -> str:
        return str(move)


def proof_number_search(domain: CaptureDomain, state: CaptureState, max_expansions: int = 100000) -> dict:
    """Plain PNS (attacker = OR node); returns {"proved": bool|None, "expansions": n, "moves": winning first moves}."""
    inf = float("inf")

    class N:
        __slots__ = ("s", "children", "pn", "dn", "parent", "move", "or_node")

    def make(s, parent, move):
        n = N()
        n.s, n.children, n.parent, n.move = s, None, parent, move
        n.or_node = s.board.to_play == domain.attacker
        t = domain.terminal_value(s)
        if t is None:
            n.pn, n.dn = 1.0, 1.0
        else:
            att_wins = (t > 0) == n.or_node
            n.pn, n.dn = (0.0, inf) if att_wins else (inf, 0.0)
        return n

    def update(n):
        if n.or_node:
            n.pn = min(c.pn for c in n.children)
            n.dn = sum(c.dn for c in n.children)
        else:
            n.pn = sum(c.pn for c in n.children)
            n.dn = min(c.dn for c in n.children)

    root = make(state, None, None)
    expansions = 0
    while root.pn not in (0.0, inf) and expansions < max_expansions:
        n = root
        while n.children:
            n = min(n.children, key=(lambda c: c.pn) if n.or_node else (lambda c: c.dn))
        mv = domain.moves(n.s)
        n.children = [make(domain.play(n.s, m), n, m) for m in mv]
        expansions += 1
        if not n.children:
            n.pn, n.dn = (inf, 0.0) if n.or_node else (0.0, inf)
        while n is not None:
            if n.children:
                update(n)
            n = n.parent
    proved = True if root.pn == 0 else (False if root.pn == inf else None)
    moves = [c.move for c in (root.children or []) if c.pn == 0] if root.or_node else []
    return {"proved": proved, "expansions": expansions, "moves": moves}
