"""Board coordinates shared by every module.

A point on an N x N board is the flat index ``row * N + col`` where row 0 is the TOP row as printed
(GTP row N) and col 0 is column A.  Pass is the index ``N * N``.  GTP column letters skip ``I``.
Colours are int8: BLACK = 1, WHITE = -1, EMPTY = 0.
"""

from __future__ import annotations

BLACK = 1
WHITE = -1
EMPTY = 0

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
MAX_SIZE = 25


def pass_move(size: int) -> int:
    """The pass action index for an N x N board."""
    return size * size


def to_point(row: int, col: int, size: int) -> int:
    """(row from top, col from left) -> flat point index."""
    return row * size + col


def from_point(point: int, size: int) -> tuple[int, int]:
    """Flat point index -> (row from top, col from left)."""
    return divmod(point, size)


def point_to_gtp(point: int, size: int) -> str:
    """Flat index -> GTP vertex such as ``D4``; the pass index gives ``pass``."""
    if point == pass_move(size):
        return "pass"
    row, col = from_point(point, size)
    return f"{GTP_COLUMNS[col]}{size - row}"


def colour_letter(colour: int) -> str:
    """BLACK -> ``"B"``, WHITE -> ``"W"`` (the letter of SGF properties, GTP colours and KataGo queries)."""
    if colour == BLACK:
        return "B"
    if colour == WHITE:
        return "W"
    raise ValueError(f"not a colour: {colour!r}")


def gtp_moves(moves, size: int) -> list[list[str]]:
    """``[(colour, point), ...]`` -> ``[["B", "D4"], ["W", "pass"], ...]``: a move list in GTP vertices, the form
    of ``play`` commands and of the analysis protocol's ``moves``."""
    return [[colour_letter(colour), point_to_gtp(int(point), size)] for colour, point in moves]


def gtp_to_point(vertex: str, size: int) -> int:
    """GTP vertex (case-insensitive, ``pass`` allowed) -> flat index. Raises ValueError if off-board."""
    text = vertex.strip().upper()
    if text == "PASS":
        return pass_move(size)
    if len(text) < 2 or text[0] not in GTP_COLUMNS[:size] or not (text[1:].isdigit() and text[1:].isascii()):
        raise ValueError(f"invalid vertex {vertex!r}")
    col = GTP_COLUMNS.index(text[0])
    number = int(text[1:])
    if not 1 <= number <= size:
        raise ValueError(f"invalid vertex {vertex!r}")
    return to_point(size - number, col, size)


def parse_color(text: str) -> int:
    """GTP colour word (``b``, ``black``, ``w``, ``white``, any case) -> BLACK or WHITE."""
    word = text.strip().lower()
    if word in ("b", "black"):
        return BLACK
    if word in ("w", "white"):
        return WHITE
    raise ValueError(f"invalid color {text!r}")


def color_name(color: int) -> str:
    return "black" if color == BLACK else "white"
