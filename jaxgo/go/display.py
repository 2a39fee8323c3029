"""Text rendering of boards with GTP coordinates (used by GTP showboard and the demo)."""

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
