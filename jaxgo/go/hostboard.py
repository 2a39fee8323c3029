"""The host board: one Go position in plain Python, for every host-side reader of positions.

Its users: the GTP session's first moves before JAX is loaded (``jaxgo.gtp.early``), ladder reading
(``jaxgo.go.ladder``), the proof search (``jaxgo.proof``), stone status (``jaxgo.go.status``) and the rules
kernels' from-scratch chain statistics (``jaxgo.go.rules``).  ``chain_and_liberties`` is the one host flood
fill; the slow oracle the tests compare against is ``jaxgo.go.reference.ReferenceBoard``, which keeps its own on
purpose (an oracle shares no code with what it checks).

Conventions of ``jaxgo.go.coords``: point ``row * N + col`` (row 0 on top), pass = ``N * N``, BLACK = 1,
WHITE = -1, EMPTY = 0 (the native kernels' 1/2 encoding stays inside them).  A ``Board`` is never changed once
``play`` or ``after`` has returned it (its chain cache relies on that); copying one is cheap (a list of P ints).
"""

from __future__ import annotations

import numpy as np

from jaxgo.go.coords import BLACK, EMPTY, WHITE
from jaxgo.go.tables import neighbour_lists


def chain_and_liberties(stones, start: int, size: int) -> tuple[set[int], set[int]]:
    """(points of the connected set of ``stones[start]``'s colour through ``start``, the distinct empty points
    next to it); stones: a flat sequence [P] of BLACK / WHITE / EMPTY.  For an empty ``start`` the set is the
    empty region and the second set is empty."""
    nbrs = neighbour_lists(size)
    colour = stones[start]
    seen, liberties, stack = {start}, set(), [start]
    while stack:
        for nb in nbrs[stack.pop()]:
            value = stones[nb]
            if value == colour:
                if nb not in seen:
                    seen.add(nb)
                    stack.append(nb)
            elif value == EMPTY:
                liberties.add(nb)
    return seen, liberties


def chains(stones, size: int) -> list[list[int]]:
    """The chains of stones of a flat board [P], each as its sorted points, in the order of their first point."""
    seen: set[int] = set()
    found = []
    for start in range(size * size):
        if stones[start] != EMPTY and start not in seen:
            members, _ = chain_and_liberties(stones, start, size)
            seen |= members
            found.append(sorted(members))
    return found


class Board:
    """One position: stones (a list [P]), the side to move, the simple-ko point (-1: none) and the stones
    captured by Black and by White."""

    __slots__ = ("size", "stones", "to_play", "ko", "captures", "_chains")

    def __init__(self, size: int, stones=None, to_play: int = BLACK, ko: int = -1, captures=(0, 0)):
        self.size = size
        self.stones = list(stones) if stones is not None else [EMPTY] * (size * size)
        self.to_play = int(to_play)
        self.ko = ko
        self.captures = tuple(captures)
        self._chains = {}   # point -> (stones, liberties); boards are not changed after ``play`` returns

    @classmethod
    def from_ascii(cls, text: str, to_play: int = BLACK) -> "Board":
        rows = [r.replace(" ", "") for r in text.strip().splitlines()]
        stones = [BLACK if ch in "Xx#@" else WHITE if ch in "Oo" else EMPTY for r in rows for ch in r]
        return cls(len(rows), stones, to_play)

    def copy(self) -> "Board":
        return Board(self.size, self.stones, self.to_play, self.ko, self.captures)

    def key(self):
        return hash((tuple(self.stones), self.to_play, self.ko))

    def chain(self, p: int):
        """(stones, liberties) as sets for the chain at occupied point ``p`` (cached; do not mutate them)."""
        hit = self._chains.get(p)
        if hit is not None:
            return hit
        out = chain_and_liberties(self.stones, p, self.size)
        if self.stones[p] != EMPTY:
            for q in out[0]:
                self._chains[q] = out
        return out

    def neighbour_chains(self, chain_points, colour):
        """Representative points of distinct chains of ``colour`` adjacent to ``chain_points``."""
        nb = neighbour_lists(self.size)
        reps, covered = [], set()
        for q in chain_points:
            for n in nb[q]:
                if self.stones[n] == colour and n not in covered:
                    pts, _ = self.chain(n)
                    covered |= pts
                    reps.append(n)
        return reps

    def play(self, move: int):
        """New board after ``move`` (a point or pass, on the board) by the side to move, or None if illegal
        (occupied, ko, suicide)."""
        return self.after(self.to_play, move)[0]

    def after(self, colour: int, move: int, suicide: bool = False) -> tuple["Board | None", str | None]:
        """(the board after ``colour`` plays ``move``, None) or (None, why it is illegal: "off board",
        "occupied", "ko", "suicide").  A move out of turn is allowed and lifts the ko restriction; with
        ``suicide`` a chain left without liberties by its own move is removed (captured by the opponent)."""
        st = self.stones
        points = self.size * self.size
        if move == points:
            return Board(self.size, st, -colour, -1, self.captures), None
        if not 0 <= move < points:
            return None, "off board"
        if st[move] != EMPTY:
            return None, "occupied"
        if move == self.ko and colour == self.to_play:
            return None, "ko"
        b = Board(self.size, st, -colour, -1)
        b.stones[move] = colour
        captured = []
        for n in neighbour_lists(self.size)[move]:
            if b.stones[n] == -colour:
                pts, libs = b.chain(n)
                if not libs:
                    for q in pts:
                        b.stones[q] = EMPTY
                    captured.extend(pts)
        b._chains = {}
        own, libs = b.chain(move)
        black, white = self.captures
        if not libs:
            if not suicide:
                return None, "suicide"
            for q in own:
                b.stones[q] = EMPTY
            b._chains = {}
            black, white = (black, white + len(own)) if colour == BLACK else (black + len(own), white)
        elif len(captured) == 1 and len(own) == 1 and libs == {captured[0]}:
            b.ko = captured[0]
        b.captures = (black + len(captured), white) if colour == BLACK else (black, white + len(captured))
        return b, None


def game_board(game) -> Board:
    """Host ``Board`` of a ``jaxgo.go.game.Game`` (stones, side to move, simple-ko point)."""
    return state_board(game.state.stones, game.to_play, getattr(game.state, "ko", -1))


def state_board(stones, to_play: int, ko: int = -1) -> Board:
    """Host ``Board`` of one position's fields: stones int [P] (BLACK 1, WHITE -1, EMPTY 0), the side to move
    and the simple-ko point (-1 or out of range: none)."""
    stones = np.asarray(stones).reshape(-1)
    size = int(round(len(stones) ** 0.5))
    ko = int(ko)
    return Board(size, stones.tolist(), int(to_play), ko if 0 <= ko < size * size else -1)
