"""Text rendering of boards with GTP coordinates (GTP showboard, the demo) and ASCII diagrams read back (tests)."""

from __future__ import annotations

import numpy as np

from jaxgo.go.coords import BLACK, GTP_COLUMNS, WHITE

SYMBOLS = {BLACK: "X", WHITE: "O"}


def board_text(board: np.ndarray, last_move: int | None = None) -> str:
    """ASCII diagram of an int8 [N, N] board (row 0 on top), GTP letters and numbers on the sides; the last
    move (flat index) is bracketed by parentheses."""
    size = board.shape[0]
    header = "    " + " ".join(GTP_COLUMNS[:size])
    lines = [header]
    for row in range(size):
        text = ""
        for col in range(size):
            point = row * size + col
            before = "(" if point == last_move else (")" if col and point - 1 == last_move else " ")
            text += before + SYMBOLS.get(int(board[row, col]), ".")
        text += ")" if last_move == row * size + size - 1 else " "
        lines.append(f"{size - row:2d} {text}{size - row:2d}")
    lines.append(header)
    return "\n".join(lines)


def parse_board(rows: list[str]) -> np.ndarray:
    """int8 [N, N] board from an ASCII diagram, top row first: ``X`` Black, ``O`` White, ``.`` empty, points
    separated by spaces (``["X O .", ". X .", ". . ."]``).  ValueError for a ragged or non-square diagram."""
    cells = [row.split() for row in rows]
    size = len(cells)
    if any(len(row) != size for row in cells):
        raise ValueError(f"an ASCII board needs {size} points in each of its {size} rows")
    values = {"X": BLACK, "O": WHITE, ".": 0}
    try:
        return np.array([[values[ch] for ch in row] for row in cells], np.int8)
    except KeyError as exc:
        raise ValueError(f"unknown board symbol {exc.args[0]!r} (X, O or .)") from None


def game_from_ascii(rows: list[str], to_play: int = BLACK, komi: float = 7.5, **rule_options):
    """A ``Game`` with the stones of an ASCII diagram (``parse_board``) as setup stones and ``to_play`` to move;
    ``rule_options`` go to ``Rules`` (ko_rule, suicide)."""
    from jaxgo.go.config import Rules
    from jaxgo.go.game import Game

    board = parse_board(rows).reshape(-1)
    game = Game(Rules(size=int(np.sqrt(board.size)), komi=komi, **rule_options))
    for colour in (BLACK, WHITE):
        points = np.flatnonzero(board == colour)
        if len(points):
            game.setup_stones(colour, points)
    game.set_to_play(to_play)
    return game
