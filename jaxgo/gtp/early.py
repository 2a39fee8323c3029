"""The session's game before JAX is loaded: a small flood-fill board for a GUI's first commands.

A GUI starts the engine and at once sends ``boardsize``, ``komi``, ``clear_board`` and the moves of the game it
shows, and gives up on an engine that is slow to answer; importing JAX and compiling the rule kernels takes
2-3 s on a 2-core CPU.  Until the real ``jaxgo.go.game.Game`` exists (built once the warm-up thread has compiled
its kernels, or by the first command that needs it), ``EarlyGame`` plays and takes back the moves in plain
Python with the rules of ``Game``: a move may be played out of turn (the ko restriction is then lifted),
simple ko, suicide forbidden or (``Rules.suicide``) removing the mover's chain, positional or situational
superko from the history of positions, pass always legal.  ``moves`` is what the real game replays.

Conventions of ``jaxgo.go.coords``: point ``row * N + col`` (row 0 on top), pass = ``N * N``, BLACK = 1,
WHITE = -1, EMPTY = 0.  No JAX and no module that imports it.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jaxgo.go.config import Rules
from jaxgo.go.coords import EMPTY


@functools.lru_cache(maxsize=None)
def neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """[P] tuples: the on-board orthogonal neighbours of every point."""
    out = []
    for point in range(size * size):
        row, col = divmod(point, size)
        out.append(tuple(r * size + c for r, c in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1))
                         if 0 <= r < size and 0 <= c < size))
    return tuple(out)


def chain_and_liberties(stones: np.ndarray, start: int, size: int) -> tuple[list[int], int]:
    """(points of the chain through ``start``, its number of distinct liberties)."""
    nbrs = neighbours(size)
    colour = stones[start]
    chain, liberties, stack = {start}, set(), [start]
    while stack:
        for nb in nbrs[stack.pop()]:
            if stones[nb] == EMPTY:
                liberties.add(nb)
            elif stones[nb] == colour and nb not in chain:
                chain.add(nb)
                stack.append(nb)
    return sorted(chain), len(liberties)


@dataclasses.dataclass(frozen=True)
class Position:
    """One position: stones int8 [P], side to move, ko point (-1 none), captures by Black and by White."""

    stones: np.ndarray
    to_play: int
    ko: int = -1
    captures: tuple[int, int] = (0, 0)

    def key(self) -> tuple[bytes, int]:
        """What superko compares: the stones and the side to move."""
        return self.stones.tobytes(), self.to_play


def after_move(position: Position, colour: int, move: int, suicide: bool) -> tuple[Position | None, str | None]:
    """(the position after ``colour`` plays ``move``, None) or (None, why it is illegal); superko aside."""
    size = int(round(np.sqrt(position.stones.size)))
    ko = position.ko if colour == position.to_play else -1
    if move == size * size:
        return Position(position.stones, -colour, -1, position.captures), None
    if not 0 <= move < size * size:
        return None, "off board"
    if position.stones[move] != EMPTY:
        return None, "occupied"
    if move == ko:
        return None, "ko"
    stones = position.stones.copy()
    stones[move] = colour
    captured: set[int] = set()
    for nb in neighbours(size)[move]:
        if stones[nb] == -colour and nb not in captured:
            enemy, liberties = chain_and_liberties(stones, nb, size)
            if liberties == 0:
                captured.update(enemy)
    stones[list(captured)] = EMPTY
    own, liberties = chain_and_liberties(stones, move, size)
    black, white = position.captures
    taken = len(captured)
    if liberties == 0:
        if not suicide:
            return None, "suicide"
        stones[own] = EMPTY
        black, white = (black, white + len(own)) if colour == 1 else (black + len(own), white)
    black, white = (black + taken, white) if colour == 1 else (black, white + taken)
    new_ko = -1
    if taken == 1 and own == [move] and liberties == 1:
        new_ko = next(iter(captured))
    return Position(stones, -colour, new_ko, (black, white)), None


class EarlyGame:
    """Moves on one board with ``Game``'s rules, in plain Python (see the module docstring)."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.size = rules.size
        self.clear()

    def clear(self) -> None:
        start = Position(np.zeros(self.size * self.size, np.int8), 1)
        self.history: list[Position] = [start]  # every position of the game, the current one last
        self.moves: list[tuple[int, int]] = []

    @property
    def position(self) -> Position:
        return self.history[-1]

    @property
    def to_play(self) -> int:
        return self.position.to_play

    @property
    def pass_move(self) -> int:
        return self.size * self.size

    def board(self) -> np.ndarray:
        """int8 [size, size], row 0 at the top."""
        return self.position.stones.reshape(self.size, self.size)

    def captures(self, colour: int) -> int:
        return self.position.captures[0 if colour == 1 else 1]

    def illegal_reason(self, colour: int, move: int) -> str | None:
        return self._try(colour, move)[1]

    def _try(self, colour: int, move: int) -> tuple[Position | None, str | None]:
        nxt, reason = after_move(self.position, colour, move, self.rules.suicide)
        if nxt is None or move == self.pass_move or self.rules.ko_rule == "simple":
            return nxt, reason
        if self.rules.ko_rule == "positional":
            repeated = any(np.array_equal(nxt.stones, old.stones) for old in self.history)
        else:
            repeated = any(nxt.key() == old.key() for old in self.history)
        return (None, "superko") if repeated else (nxt, None)

    def play(self, colour: int, move: int) -> str | None:
        """Play ``move`` for ``colour``; None, or why it is illegal (the game is then unchanged)."""
        nxt, reason = self._try(colour, move)
        if nxt is None:
            return reason
        self.history.append(nxt)
        self.moves.append((colour, move))
        return None

    def undo(self) -> bool:
        """Take back the last move; False when there is none."""
        if not self.moves:
            return False
        self.moves.pop()
        self.history.pop()
        return True


__all__ = ["EarlyGame", "Position", "after_move", "neighbours"]
