"""The per-size constant tables of a board: neighbours, diagonals and Zobrist keys (numpy, built once per size).

A board of N x N points is a flat array of P = N * N points, row 0 at the top; a table row per point lists its
neighbours with P marking off-board (``neighbour_table``, ``diagonal_table``), or only the on-board ones as Python
ints for host loops (``neighbour_lists``, ``diagonal_lists``).  ``board_size`` reads N back from P.
"""

from __future__ import annotations

import functools
import math

import numpy as np


def board_size(num_points: int) -> int:
    size = math.isqrt(num_points)
    if size * size != num_points:
        raise ValueError(f"{num_points} points is not a square board")
    return size


@functools.lru_cache(maxsize=None)
def neighbour_table(size: int) -> np.ndarray:
    """int32 [P, 4]: orthogonal neighbours (up, down, left, right); P marks off-board."""
    return _offset_table(size, ((-1, 0), (1, 0), (0, -1), (0, 1)))


@functools.lru_cache(maxsize=None)
def diagonal_table(size: int) -> np.ndarray:
    """int32 [P, 4]: diagonal neighbours; P marks off-board."""
    return _offset_table(size, ((-1, -1), (-1, 1), (1, -1), (1, 1)))


@functools.lru_cache(maxsize=None)
def neighbour_lists(size: int) -> tuple[tuple[int, ...], ...]:
    """[P] tuples of Python ints: the on-board orthogonal neighbours of every point, in ``neighbour_table``
    order (host code that loops over neighbours)."""
    return _on_board(neighbour_table(size))


@functools.lru_cache(maxsize=None)
def diagonal_lists(size: int) -> tuple[tuple[int, ...], ...]:
    """[P] tuples of Python ints: the on-board diagonal neighbours of every point, in ``diagonal_table`` order."""
    return _on_board(diagonal_table(size))


def _on_board(table: np.ndarray) -> tuple[tuple[int, ...], ...]:
    points = table.shape[0]
    return tuple(tuple(int(q) for q in row if q != points) for row in table)


def _offset_table(size: int, offsets) -> np.ndarray:
    points = size * size
    table = np.full((points, 4), points, dtype=np.int32)
    for point in range(points):
        row, col = divmod(point, size)
        for k, (dr, dc) in enumerate(offsets):
            r, c = row + dr, col + dc
            if 0 <= r < size and 0 <= c < size:
                table[point, k] = r * size + c
    return table


@functools.lru_cache(maxsize=None)
def zobrist_table(size: int) -> np.ndarray:
    """uint32 [P, 2, 2]: 64-bit key (two words) per point and colour (0 black, 1 white)."""
    rng = np.random.default_rng(0x5EED + size)
    return rng.integers(0, 2**32, size=(size * size, 2, 2), dtype=np.uint32)


def colour_index(color):
    """BLACK -> 0, WHITE -> 1 (works on arrays)."""
    return (1 - color) // 2
