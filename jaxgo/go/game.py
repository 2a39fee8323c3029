"""A real game on the host: one ``rules.State`` plus the history that superko and undo need.

The jitted rules apply simple ko; this class adds the configured ko rule by keeping every earlier position's
Zobrist hash on the host: positional superko forbids recreating any earlier board, situational superko any
earlier board with the same player to move.  Moves may be played out of turn (GTP allows it).
"""

from __future__ import annotations

import copy

import numpy as np

from jaxgo.go import kernels, rules
from jaxgo.go.config import Rules
from jaxgo.go.coords import EMPTY


class IllegalMove(ValueError):
    """A move the rules forbid; ``reason`` is 'occupied', 'ko', 'suicide', 'superko' or 'off board'."""

    def __init__(self, reason: str, move: int | None = None):
        super().__init__(f"illegal move ({reason})")
        self.reason = reason
        self.move = move


class Game:
    """Board, side to move, captures, move list, superko history and undo for one game."""

    def __init__(self, rules_config: Rules):
        self.rules = rules_config
        self.size = rules_config.size
        self.clear()

    # -- state ----------------------------------------------------------------------------------------------
    def clear(self) -> None:
        """Empty board, Black to move, no history."""
        self.state = rules.new_state(self.size)
        self.moves: list[tuple[int, int]] = []
        self._undo_stack: list[tuple[rules.State, int, bool]] = []  # (state, history length, was a move)
        self._seen: list[tuple[int, int]] = [self._position_key(self.state)]

    @property
    def to_play(self) -> int:
        return int(self.state.to_play)

    @property
    def pass_move(self) -> int:
        return self.size * self.size

    def board(self) -> np.ndarray:
        """int8 [size, size], row 0 at the top."""
        return np.asarray(self.state.stones).reshape(self.size, self.size)

    def captures(self, color: int) -> int:
        """Stones captured by ``color``."""
        return int(self.state.captures[rules.colour_index(color)])

    def is_over(self) -> bool:
        return int(self.state.passes) >= 2

    def _position_key(self, state: rules.State) -> tuple[int, int]:
        return int(rules.hash_key(state.hash)), int(state.to_play)

    def _kernels(self) -> kernels.RuleKernels:
        return kernels.kernels(self.rules.suicide)

    def _with_player(self, color: int) -> rules.State:
        """The current state with ``color`` to move (a ko restriction only binds the player it was set for)."""
        if color == self.to_play:
            return self.state
        return self.state.replace(to_play=np.int8(color), ko=np.int32(-1))

    # -- legality -------------------------------------------------------------------------------------------
    def repeats(self, words, color: int) -> np.ndarray:
        """bool [...]: whether positions with hashes ``words`` uint32 [..., 2] (``rules.State.hash``), each
        reached by a move of ``color``, break the superko rule (never under simple ko)."""
        keys = rules.hash_key(words)
        if self.rules.ko_rule == "positional":
            seen = {key for key, _ in self._seen}
        elif self.rules.ko_rule == "situational":
            seen = {key for key, to_play in self._seen if to_play == -color}
        else:
            seen = set()
        return np.array([int(key) in seen for key in keys.ravel()], bool).reshape(keys.shape)

    def illegal_reason(self, color: int, move: int) -> str | None:
        """None when legal, else why ``color`` may not play ``move``."""
        if move == self.pass_move:
            return None
        if not 0 <= move < self.pass_move:
            return "off board"
        state = self._with_player(color)
        k = self._kernels()
        if int(state.stones[move]) != EMPTY:
            return "occupied"
        if not bool(k.legal(state)[move]):
            return "ko" if int(state.ko) == move else "suicide"
        if self.rules.ko_rule != "simple" and self.repeats(k.play(state, move).hash, color):
            return "superko"
        return None

    def is_legal(self, color: int, move: int) -> bool:
        return self.illegal_reason(color, move) is None

    def legal_moves(self, color: int) -> np.ndarray:
        """bool [P+1]: legal moves of ``color`` under the configured rules (pass last, always legal)."""
        state = self._with_player(color)
        k = self._kernels()
        mask = np.array(k.legal(state))
        if self.rules.ko_rule != "simple" and mask[:-1].any():
            # Hash the result of every point at once (one fixed shape, one compile); illegal points are ignored.
            hashes = np.asarray(k.next_hashes(state, np.arange(self.pass_move, dtype=np.int32)))
            moves = np.flatnonzero(mask[:-1])
            mask[moves[self.repeats(hashes[moves], color)]] = False
        return mask

    # -- changes --------------------------------------------------------------------------------------------
    def play(self, color: int, move: int) -> None:
        """Play ``move`` for ``color``; raise IllegalMove (state unchanged) if the rules forbid it."""
        reason = self.illegal_reason(color, move)
        if reason is not None:
            raise IllegalMove(reason, move)
        self._undo_stack.append((self.state, len(self._seen), True))
        self.state = self._kernels().play(self._with_player(color), np.int32(move))
        self.moves.append((color, move))
        self._seen.append(self._position_key(self.state))

    def undo(self) -> None:
        """Take back the last move or setup; IndexError when there is nothing to undo."""
        if not self._undo_stack:
            raise IndexError("nothing to undo")
        self.state, seen_length, was_move = self._undo_stack.pop()
        del self._seen[seen_length:]
        if was_move:
            self.moves.pop()

    def setup_stones(self, color: int, points) -> None:
        """Place stones of ``color`` (handicap, SGF AB/AW) without capturing; the side to move is kept."""
        board = np.asarray(self.state.stones).copy()
        points = list(points)
        if any(not 0 <= p < self.pass_move for p in points):
            raise IllegalMove("off board")
        if any(board[p] != EMPTY for p in points):
            raise IllegalMove("occupied")
        board[points] = color
        captures = tuple(int(c) for c in self.state.captures)
        self._undo_stack.append((self.state, len(self._seen), False))
        self.state = rules.from_board(board, self.to_play, captures, int(self.state.move_count))
        self._seen.append(self._position_key(self.state))

    def copy(self) -> "Game":
        """An independent copy: the same rules, position, moves and superko history, and nothing to undo."""
        other = copy.copy(self)
        other.moves = list(self.moves)
        other._seen = list(self._seen)
        other._undo_stack = []
        return other

    def set_to_play(self, color: int) -> None:
        """Make ``color`` the side to move (e.g. White first after handicap stones).

        The current position's entry in the superko history takes the new side to move, so situational
        superko compares against the position as it really stands.
        """
        self.state = self._with_player(color)
        self._seen[-1] = self._position_key(self.state)

    # -- history --------------------------------------------------------------------------------------------
    def position_keys(self) -> set[int]:
        """The 64-bit Zobrist keys of every position of the game so far (the current one included)."""
        return {key for key, _ in self._seen}

    def steps(self) -> list[tuple[rules.State, bool]]:
        """(state before, was a move) for every move or setup since ``clear``, oldest first (what ``undo``
        takes back); setups are handicap / SGF AB/AW stones."""
        return [(state, was_move) for state, _, was_move in self._undo_stack]

    def start_position(self) -> tuple[rules.State, list[tuple[int, int]]]:
        """(state, moves): the position before the first move (after any setup) and the moves since.

        When stones were set up after a move, the current position and no moves (the move history cannot be
        replayed from one start position).
        """
        steps = self.steps()
        first_move = next((i for i, (_, was_move) in enumerate(steps) if was_move), None)
        if first_move is None:
            return self.state, list(self.moves)
        if any(not was_move for _, was_move in steps[first_move:]):
            return self.state, []
        return steps[first_move][0], list(self.moves)

    # -- scoring --------------------------------------------------------------------------------------------
    def score(self) -> float:
        """Tromp-Taylor area score: black - white - komi."""
        return float(self._kernels().score(self.state, np.float32(self.rules.komi)))

    def ownership(self) -> np.ndarray:
        """int8 [size, size] area owner per point (row 0 at the top)."""
        return np.asarray(self._kernels().ownership(self.state)).reshape(self.size, self.size)


def new_game(size: int = 19, komi: float = 7.5, ko_rule: str = "positional", suicide: bool = False) -> Game:
    return Game(Rules(size=size, komi=komi, ko_rule=ko_rule, suicide=suicide))


__all__ = ["Game", "IllegalMove", "new_game"]
