"""Row bitboards for many boards at once.

An N x N point set is ``uint32 [N, *batch]``: bit ``c`` of word ``r`` is the point (row r, col c), row 0 at the
top as in ``jaxgo.go.coords``.  The row axis comes FIRST and the batch axes last, so every operation is an
elementwise loop over the (long, contiguous) batch -- what XLA's CPU backend vectorises well; a vmapped
single-board layout would put the 9..19 row words innermost and run several times slower.

Neighbours are shifts within a word plus row offsets, so whole-board set operations cost a few word ops.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

U32 = jnp.uint32


def row_mask(size: int):
    return U32((1 << size) - 1)


def shift_up(x):
    """Row r takes row r+1 (each point moves one row up); the bottom row becomes empty."""
    return jnp.concatenate([x[1:], jnp.zeros_like(x[:1])], axis=0)


def shift_down(x):
    """Row r takes row r-1; the top row becomes empty."""
    return jnp.concatenate([jnp.zeros_like(x[:1]), x[:-1]], axis=0)


def shift_left(x, size: int):
    """Column c takes column c-1 (bit shift towards higher columns), clipped to the board."""
    return (x << U32(1)) & row_mask(size)


def shift_right(x):
    return x >> U32(1)


def neighbours(x, size: int):
    """Points orthogonally adjacent to some point of ``x``."""
    return shift_left(x, size) | shift_right(x) | shift_up(x) | shift_down(x)


def flood(seeds, within, size: int, max_iterations: int | None = None):
    """The connected parts of ``within`` that contain a point of ``seeds`` (seeds ⊆ within); same shapes.

    Grows one step per iteration while any set in the batch still changes.
    """

    def body(carry):
        current, _, i = carry
        nxt = (current | neighbours(current, size)) & within
        return nxt, jnp.any(nxt != current), i + 1

    limit = size * size if max_iterations is None else max_iterations
    carry = (seeds, jnp.any(seeds != 0), jnp.int32(0))
    return jax.lax.while_loop(lambda c: c[1] & (c[2] < limit), body, carry)[0]


def popcount(x):
    """int32 [*batch]: number of points in each set."""
    return jnp.sum(jax.lax.population_count(x).astype(jnp.int32), axis=0)


def is_empty_set(x):
    """bool [*batch]."""
    return ~jnp.any(x != 0, axis=0)


def point_mask(row, col, size: int):
    """uint32 [N, *batch]: the single point (row, col) of each board (row, col: int32 [*batch])."""
    rows = jnp.arange(size).reshape((size,) + (1,) * jnp.ndim(row))
    return jnp.where(rows == row, U32(1) << col.astype(U32), U32(0))


def select_bit(word, k):
    """Column of the k-th (0-based) set bit of each uint32 word; each word must hold more than k bits."""
    col = jnp.zeros_like(k, jnp.int32)
    k = k.astype(jnp.int32)
    for width in (16, 8, 4, 2, 1):
        low = jax.lax.population_count((word >> col.astype(U32)) & U32((1 << width) - 1)).astype(jnp.int32)
        step = k >= low
        k = jnp.where(step, k - low, k)
        col = jnp.where(step, col + width, col)
    return col


def select_point(x, k):
    """(row, col) of the k-th set point of each board in row-major order (0 <= k < popcount)."""
    counts = jax.lax.population_count(x).astype(jnp.int32)
    ends = jnp.cumsum(counts, axis=0)
    row = jnp.sum(ends <= k, axis=0).astype(jnp.int32)
    rows = jnp.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1))
    at_row = rows == row
    word = jnp.sum(jnp.where(at_row, x, U32(0)), axis=0, dtype=U32)
    before = jnp.sum(jnp.where(at_row, ends - counts, 0), axis=0)
    return row, select_bit(word, k - before)


def from_dense(mask):
    """bool [*batch, N, N] -> uint32 [N, *batch]."""
    size = mask.shape[-1]
    weights = U32(1) << jnp.arange(size, dtype=U32)
    words = jnp.sum(jnp.where(mask, weights, U32(0)), axis=-1, dtype=U32)  # [*batch, N]
    return jnp.moveaxis(words, -1, 0)


def to_dense(x, size: int):
    """uint32 [N, *batch] -> bool [*batch, N, N]."""
    words = jnp.moveaxis(x, 0, -1)  # [*batch, N]
    return ((words[..., None] >> jnp.arange(size, dtype=U32)) & U32(1)).astype(bool)


def edge_rows(size: int) -> np.ndarray:
    """uint32 [N] (numpy): the points on the first line."""
    dense = np.zeros((size, size), bool)
    dense[0, :] = dense[-1, :] = dense[:, 0] = dense[:, -1] = True
    return (dense * (1 << np.arange(size, dtype=np.uint64))).sum(axis=1).astype(np.uint32)


def eyes(own, opp, size: int):
    """Empty points that are ``own``'s eyes by the playout eye rule.

    All on-board orthogonal neighbours are own stones; opponent diagonals: none on a first-line point, at most
    one elsewhere.  Off-board neighbours count as own for the first test and as not-opponent for the second.
    """
    full = row_mask(size)
    empty = ~(own | opp) & full
    not_own = ~own & full
    surrounded = empty & ~neighbours(not_own, size)
    up, down = shift_up(opp), shift_down(opp)
    diagonals = [shift_left(up, size), shift_right(up), shift_left(down, size), shift_right(down)]
    one_or_more = diagonals[0] | diagonals[1] | diagonals[2] | diagonals[3]
    two_or_more = U32(0)
    for i in range(4):
        for j in range(i + 1, 4):
            two_or_more = two_or_more | (diagonals[i] & diagonals[j])
    edge = jnp.asarray(edge_rows(size)).reshape((size,) + (1,) * (own.ndim - 1))
    diagonal_ok = (edge & ~one_or_more) | (~edge & ~two_or_more)
    return surrounded & diagonal_ok
