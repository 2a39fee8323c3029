"""Small host-side Go board for shallow reading: ladders (``jaxgo.go.ladder``) and the proof search (Python lists;
copying a board is cheap)."""

from __future__ import annotations

import numpy as np

from jaxgo.go.tables import neighbour_lists

EMPTY, BLACK, WHITE = 0, 1, -1


class Board:
    __slots__ = ("size", "stones", "to_play", "ko", "_chains")

    def __init__(self, size: int, stones=None, to_play: int = BLACK, ko: int = -1):
        self.size = size
        self.stones = list(stones) if stones is not None else [EMPTY] * (size * size)
        self.to_play = int(to_play)
        self.ko = ko
        self._chains = {}   # point -> (stones, liberties); boards are not changed after ``play`` returns

    @classmethod
    def from_ascii(cls, text: str, to_play: int = BLACK) -> "Board":
        rows = [r.replace(" ", "") for r in text.strip().splitlines()]
        stones = [BLACK if ch in "Xx#@" else WHITE if ch in "Oo" else EMPTY for r in rows for ch in r]
        return cls(len(rows), stones, to_play)

    def copy(self) -> "Board":
        return Board(self.size, self.stones, self.to_play, self.ko)

    def key(self):
        return hash((tuple(self.stones), self.to_play, self.ko))

    def chain(self, p: int):
        """(stones, liberties) as sets for the chain at occupied point ``p`` (cached; do not mutate them)."""
        hit = self._chains.get(p)
        if hit is not None:
            return hit
        colour = self.stones[p]
        nb = neighbour_lists(self.size)
        seen = {p}
        libs = set()
        stack = [p]
        st = self.stones
        while stack:
            q = stack.pop()
            for n in nb[q]:
                v = st[n]
                if v == colour:
                    if n not in seen:
                        seen.add(n)
                        stack.append(n)
                elif v == EMPTY:
                    libs.add(n)
        out = (seen, libs)
        if colour != EMPTY:
            for q in seen:
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
        """New board after ``move`` by the side to move, or None if illegal (occupied, ko, suicide)."""
        st = self.stones
        if move == self.size * self.size:
            return Board(self.size, st, -self.to_play, -1)
        if st[move] != EMPTY or move == self.ko:
            return None
        colour = self.to_play
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
        if not libs:
            return None
        if len(captured) == 1 and len(own) == 1 and libs == {captured[0]}:
            b.ko = captured[0]
        return b


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
