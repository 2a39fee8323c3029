"""The session's game before JAX is loaded: host boards for a GUI's first commands.

A GUI starts the engine and at once sends ``boardsize``, ``komi``, ``clear_board`` and the moves of the game it
shows, and gives up on an engine that is slow to answer; importing JAX and compiling the rule kernels takes
seconds (``jaxgo bench gtp``).  Until the real ``jaxgo.go.game.Game`` exists (built once the warm-up thread has compiled
its kernels, or by the first command that needs it), ``EarlyGame`` plays and takes back the moves in plain
Python with the rules of ``Game``: a move may be played out of turn (the ko restriction is then lifted),
simple ko, suicide forbidden or (``Rules.suicide``) removing the mover's chain, positional or situational
superko from the history of positions, pass always legal.  ``moves`` is what the real game replays.

The positions are host boards (``jaxgo.go.hostboard.Board``, its colours and points: those of
``jaxgo.go.coords``); this module adds the history and superko.  No JAX and no module that imports it.
"""

from __future__ import annotations

import numpy as np

from jaxgo.go.config import Rules
from jaxgo.go.hostboard import Board


class EarlyGame:
    """Moves on one board with ``Game``'s rules, in plain Python (see the module docstring)."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.size = rules.size
        self.clear()

    def clear(self) -> None:
        self.history: list[Board] = [Board(self.size)]  # every position of the game, the current one last
        self.moves: list[tuple[int, int]] = []

    @property
    def position(self) -> Board:
        return self.history[-1]

    @property
    def to_play(self) -> int:
        return self.position.to_play

    @property
    def pass_move(self) -> int:
        return self.size * self.size

    def board(self) -> np.ndarray:
        """int8 [size, size], row 0 at the top."""
        return np.array(self.position.stones, np.int8).reshape(self.size, self.size)

    def captures(self, colour: int) -> int:
        return self.position.captures[0 if colour == 1 else 1]

    def illegal_reason(self, colour: int, move: int) -> str | None:
        return self._try(colour, move)[1]

    def _try(self, colour: int, move: int) -> tuple[Board | None, str | None]:
        nxt, reason = self.position.after(colour, move, self.rules.suicide)
        if nxt is None or move == self.pass_move or self.rules.ko_rule == "simple":
            return nxt, reason
        if self.rules.ko_rule == "positional":
            repeated = any(nxt.stones == old.stones for old in self.history)
        else:  # situational: the stones and the side to move
            repeated = any(nxt.stones == old.stones and nxt.to_play == old.to_play for old in self.history)
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


__all__ = ["EarlyGame"]
