"""Large shape patterns: nested "circles" around a move, hashed up to the 8 board symmetries, and a dictionary of
the frequent ones (Coulom 2007, section 3.2; Stern, Herbrich and Graepel 2006 use the same nesting).

The pattern of size s around point p is the colour of every point at Coulom's distance
d(dr, dc) = |dr| + |dc| + max(|dr|, |dc|) <= s from p (p itself excluded), relative to the side to move: empty,
own, opponent or off the board.  ``SIZES`` = 4..10 (size 3 is the 3x3 square of ``jaxgo.features.moves``,
size 10 holds 72 points).  The hash of a pattern is the XOR of one random 32-bit key per (offset, colour); its
canonical hash is the smallest hash over the 8 symmetries (rotations, reflections), so two patterns that are
images of each other under a symmetry share it (colour reversal is handled by the normalisation to the side to
move, not by the hash).

A ``LargeDictionary`` lists the (size, canonical hash) pairs seen often enough as the *played* move in training
games (``harvest`` counts them, ``LargeDictionary.from_counts`` keeps those with ``min_count``).  A candidate's
level is 1 + the dictionary index of the largest of its patterns that is in the dictionary, 0 if none: the
feature group ``"large"`` of a Bradley-Terry model (``jaxgo.features.codes`` stores it next to the base code).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo import rules

SIZES = (4, 5, 6, 7, 8, 9, 10)
MAX_SIZE = SIZES[-1]
_KEY_SEED = 0x1A46E
_NONE = np.uint32(0xFFFFFFFF)  # padding of the dictionary rows


def coulom_distance(dr, dc):
    """Coulom's distance |dr| + |dc| + max(|dr|, |dc|) (numpy or python ints)."""
    dr, dc = abs(dr), abs(dc)
    return dr + dc + max(dr, dc)


@functools.lru_cache(maxsize=None)
def offsets() -> np.ndarray:
    """int32 [O, 2]: the (dr, dc) offsets with 0 < d <= MAX_SIZE, sorted by d (then dr, dc), so the pattern of
    size s is a prefix of this list."""
    reach = MAX_SIZE // 2
    cells = [(dr, dc) for dr in range(-reach, reach + 1) for dc in range(-reach, reach + 1)
             if (dr, dc) != (0, 0) and coulom_distance(dr, dc) <= MAX_SIZE]
    cells.sort(key=lambda c: (coulom_distance(*c), c))
    return np.array(cells, np.int32)


@functools.lru_cache(maxsize=None)
def prefix_lengths() -> np.ndarray:
    """int32 [S]: number of offsets in the pattern of each size of ``SIZES``."""
    d = np.array([coulom_distance(*c) for c in offsets()])
    return np.array([int(np.sum(d <= s)) for s in SIZES], np.int32)


@functools.lru_cache(maxsize=None)
def keys() -> np.ndarray:
    """uint32 [O, 4]: the random key of each (offset, colour value) pair (value 0 empty, 1 own, 2 opponent,
    3 off board)."""
    rng = np.random.default_rng(_KEY_SEED)
    return rng.integers(1, 2**32, size=(len(offsets()), 4), dtype=np.uint32)


def _symmetry_maps():
    """The 8 symmetries of the square as (swap, sign_r, sign_c): (dr, dc) -> signs * (dc, dr) if swap."""
    return [(swap, sr, sc) for swap in (False, True) for sr in (1, -1) for sc in (1, -1)]


@functools.lru_cache(maxsize=None)
def neighbour_index(size: int) -> np.ndarray:
    """int32 [8, O, P]: the point at offset T(o) from every point p for each symmetry T (P = off board)."""
    points = size * size
    table = np.full((8, len(offsets()), points), points, np.int32)
    rows, cols = np.divmod(np.arange(points), size)
    for t, (swap, sr, sc) in enumerate(_symmetry_maps()):
        for o, (dr, dc) in enumerate(offsets()):
            if swap:
                dr, dc = dc, dr
            r, c = rows + sr * dr, cols + sc * dc
            inside = (r >= 0) & (r < size) & (c >= 0) & (c < size)
            table[t, o] = np.where(inside, r * size + c, points)
    return table


def colour_values(state: rules.State):
    """int32 [P+1]: 0 empty, 1 own (side to move), 2 opponent, and 3 at index P (off board)."""
    stones = state.stones.astype(jnp.int32) * state.to_play.astype(jnp.int32)
    values = jnp.where(stones == 1, 1, jnp.where(stones == -1, 2, 0))
    return jnp.concatenate([values, jnp.array([3], jnp.int32)])


def _canonical(cell_values):
    """cell_values int32 [8, O, ...] -> uint32 [S, ...]: canonical hash of each size's pattern."""
    key_rows = jnp.asarray(keys())  # [O, 4]
    shape = (1, key_rows.shape[0]) + (1,) * (cell_values.ndim - 2)
    o_index = jnp.arange(key_rows.shape[0]).reshape(shape)
    hashed = key_rows[o_index, cell_values]  # [8, O, ...]
    bounds = [0] + [int(n) for n in prefix_lengths()]
    rings = [jax.lax.reduce(hashed[:, lo:hi], jnp.uint32(0), jax.lax.bitwise_xor, (1,))
             for lo, hi in zip(bounds[:-1], bounds[1:])]  # each [8, ...]
    out, acc = [], None
    for ring in rings:
        acc = ring if acc is None else acc ^ ring
        out.append(jnp.min(acc, axis=0))
    return jnp.stack(out)


def canonical_hashes(state: rules.State):
    """uint32 [S, P]: canonical hash of every point's pattern of each size (occupied points included).

    Board-wide form of ``point_hashes``: per offset o the keys selected over the padded board, then, per symmetry
    T, the lookup shifted by T(o) (a static slice) is XORed in; no per-point gathers.
    """
    points = state.stones.shape[0]
    size = rules.board_size(points)
    reach = MAX_SIZE // 2
    grid = jnp.pad(colour_values(state)[:points].reshape(size, size), reach, constant_values=3)
    planes = [grid == v for v in range(3)]
    bounds = [0] + [int(n) for n in prefix_lengths()]
    acc = [jnp.zeros((size, size), jnp.uint32) for _ in range(8)]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        for o in range(lo, hi):
            k = [jnp.uint32(x) for x in keys()[o]]
            looked_up = jnp.where(planes[0], k[0], jnp.where(planes[1], k[1], jnp.where(planes[2], k[2], k[3])))
            dr, dc = (int(x) for x in offsets()[o])
            for t, (swap, sr, sc) in enumerate(_symmetry_maps()):
                r, c = (dc, dr) if swap else (dr, dc)
                r, c = reach + sr * r, reach + sc * c
                acc[t] = acc[t] ^ looked_up[r:r + size, c:c + size]
        out.append(functools.reduce(jnp.minimum, acc).reshape(points))
    return jnp.stack(out)


def point_hashes(state: rules.State, point):
    """uint32 [S]: canonical hashes of the patterns around one point (int32 [], on the board); equals
    ``canonical_hashes(state)[:, point]`` at a fraction of the cost."""
    size = rules.board_size(state.stones.shape[0])
    index = jnp.asarray(neighbour_index(size))[:, :, jnp.clip(point, 0, size * size - 1)]  # [8, O]
    return _canonical(colour_values(state)[index])


@dataclasses.dataclass(frozen=True)
class LargeDictionary:
    """Frequent large patterns: entry i (level 1 + i) is (``sizes[i]``, ``hashes[i]``), sorted by size, then hash.

    size_index int8 [M]: index into ``SIZES``; hashes uint32 [M]; counts int64 [M]: times played in the harvest.
    """

    size_index: np.ndarray
    hashes: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        order = np.lexsort((self.hashes, self.size_index))
        if not np.array_equal(order, np.arange(len(order))):
            raise ValueError("dictionary entries must be sorted by size, then hash")

    def __len__(self) -> int:
        return len(self.hashes)

    @classmethod
    def from_counts(cls, size_index, hashes, min_count: int) -> "LargeDictionary":
        """Keep the (size, hash) pairs occurring at least ``min_count`` times in the given occurrence lists
        (int [n], uint32 [n]: one entry per harvested (move, size))."""
        pairs = (np.asarray(size_index, np.int64) << 32) | np.asarray(hashes, np.uint32).astype(np.int64)
        unique, counts = np.unique(pairs, return_counts=True)
        keep = counts >= min_count
        unique, counts = unique[keep], counts[keep]
        return cls((unique >> 32).astype(np.int8), (unique & 0xFFFFFFFF).astype(np.uint32), counts.astype(np.int64))

    def fingerprint(self) -> str:
        """A short digest of the entries (shard folders record it, so codes of another dictionary are refused)."""
        digest = hashlib.sha1(self.size_index.tobytes() + self.hashes.tobytes())
        return digest.hexdigest()[:16]

    def tables(self):
        """(hashes uint32 [S, W], levels int32 [S, W]): per size, the sorted hashes (padded with 0xFFFFFFFF)
        and their levels (1 + entry index; 0 on padding), for ``levels_of``."""
        width = max(1, max((int(np.sum(self.size_index == s)) for s in range(len(SIZES))), default=1))
        table = np.full((len(SIZES), width), _NONE, np.uint32)
        level = np.zeros((len(SIZES), width), np.int32)
        for s in range(len(SIZES)):
            rows = np.flatnonzero(self.size_index == s)
            table[s, :len(rows)] = self.hashes[rows]
            level[s, :len(rows)] = rows + 1
        return table, level

    def save(self, path) -> None:
        np.savez_compressed(path, size_index=self.size_index, hashes=self.hashes, counts=self.counts,
                            sizes=np.array(SIZES, np.int32))

    @classmethod
    def load(cls, path) -> "LargeDictionary":
        with np.load(path) as data:
            if tuple(data["sizes"].tolist()) != SIZES:
                raise ValueError(f"{path}: pattern sizes {data['sizes'].tolist()} differ from {SIZES}")
            return cls(data["size_index"], data["hashes"], data["counts"])


def levels_of(hashes, tables):
    """Large-pattern levels int32 [...] from canonical hashes uint32 [S, ...] and ``LargeDictionary.tables()``
    (as arrays): the level of the largest size whose hash is in the dictionary, 0 if none."""
    table, level = tables
    out = jnp.zeros(hashes.shape[1:], jnp.int32)
    for s in range(hashes.shape[0]):
        h = hashes[s]
        i = jnp.clip(jnp.searchsorted(table[s], h.reshape(-1)), 0, table.shape[1] - 1).reshape(h.shape)
        found = (table[s][i] == h) & (level[s][i] > 0)
        out = jnp.where(found, level[s][i], out)
    return out


def candidate_levels(state: rules.State, legal, tables):
    """int32 [P+1]: large-pattern level of every candidate (0 for pass and illegal points)."""
    levels = levels_of(canonical_hashes(state), tables)
    return jnp.where(legal, jnp.concatenate([levels, jnp.zeros(1, jnp.int32)]), 0)
