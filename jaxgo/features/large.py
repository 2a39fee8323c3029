"""Large shape patterns: nested "circles" around a move, hashed up to the 8 board symmetries, and a dictionary of
the frequent ones (Coulom 2007, section 3.2; Stern, Herbrich and Graepel 2006 use the same nesting).

The pattern of size s around point p is the colour of every point at Coulom's distance d(dr, dc) = |dr| + |dc| +
max(|dr|, |dc|) <= s from p (p itself excluded), relative to the side to move: empty, own, opponent or off the
board.  ``SIZES`` = 4..10 (size 3 is the 3x3 square of ``jaxgo.features.moves``, size 10 holds 72 points).  The hash
of a pattern read in a given frame is sum_o value_o * key_o mod 2**32 with a random odd 32-bit key per offset; a
pattern has 8 frame hashes, one per symmetry of the square (rotations, reflections), and its canonical hash is their
minimum, shared by all its symmetric images (colour reversal is handled by the normalisation to the side to move,
not by the hash).  Extraction hashes every point in one frame only (``board_hashes``, 8x cheaper than all frames)
and the dictionary lists each entry's 8 frame hashes.

A ``LargeDictionary`` lists the (size, canonical hash) pairs seen often enough as the *played* move in training
games (``harvest`` counts them, ``LargeDictionary.from_counts`` keeps those with ``min_count``).  A candidate's
level is 1 + the dictionary index of the largest of its patterns that is in the dictionary, 0 if none: the
feature group ``"large"`` of a Bradley-Terry model (``jaxgo.features.codes`` stores it next to the base code).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os

import jax.numpy as jnp
import numpy as np

from jaxgo.features.moves import symmetries
from jaxgo.go import rules
from jaxgo.util.files import save_npz_atomic

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
    """uint32 [O]: a random odd multiplier per offset; a pattern's hash is sum_o value_o * key_o mod 2**32
    (value 0 empty, 1 own, 2 opponent, 3 off board): one multiply-add per offset, and two patterns collide
    with probability about 2**-31."""
    rng = np.random.default_rng(_KEY_SEED)
    return rng.integers(0, 2**31, size=len(offsets()), dtype=np.uint32) * np.uint32(2) + np.uint32(1)


@functools.lru_cache(maxsize=None)
def neighbour_index(size: int) -> np.ndarray:
    """int32 [8, O, P]: the point at offset T(o) from every point p for each symmetry T (P = off board)."""
    points = size * size
    table = np.full((8, len(offsets()), points), points, np.int32)
    rows, cols = np.divmod(np.arange(points), size)
    for t, transform in enumerate(symmetries()):
        for o, offset in enumerate(offsets().tolist()):
            dr, dc = transform(*offset)
            r, c = rows + dr, cols + dc
            inside = (r >= 0) & (r < size) & (c >= 0) & (c < size)
            table[t, o] = np.where(inside, r * size + c, points)
    return table


def colour_values(state: rules.State):
    """int32 [P+1]: 0 empty, 1 own (side to move), 2 opponent, and 3 at index P (off board)."""
    stones = state.stones.astype(jnp.int32) * state.to_play.astype(jnp.int32)
    values = jnp.where(stones == 1, 1, jnp.where(stones == -1, 2, 0))
    return jnp.concatenate([values, jnp.array([3], jnp.int32)])


def _frame_hashes(cell_values):
    """cell_values int32 [8, O, ...] (the values read in each symmetry's frame) -> uint32 [S, 8, ...]: the hash
    of each size's pattern in each frame."""
    key = jnp.asarray(keys()).reshape((1, -1) + (1,) * (cell_values.ndim - 2))
    hashed = cell_values.astype(jnp.uint32) * key  # [8, O, ...]
    bounds = [0] + [int(n) for n in prefix_lengths()]
    out, acc = [], None
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        ring = jnp.sum(hashed[:, lo:hi], axis=1, dtype=jnp.uint32)
        acc = ring if acc is None else acc + ring
        out.append(acc)
    return jnp.stack(out)


def point_cells(state: rules.State, point):
    """int32 [O]: the colour values around one point in frame 0 (``offsets()`` order), the cells a dictionary
    stores."""
    size = rules.board_size(state.stones.shape[0])
    return colour_values(state)[jnp.asarray(neighbour_index(size))[0, :, jnp.clip(point, 0, size * size - 1)]]


def point_hashes(state: rules.State, point):
    """uint32 [S, 8]: the hashes of the patterns around one point (int32 [], on the board) in the 8 symmetry
    frames (frame 0: the board as it is).  Their minimum over the frames is the canonical hash; the set of the 8
    is the same for every symmetric image of the pattern."""
    size = rules.board_size(state.stones.shape[0])
    index = jnp.asarray(neighbour_index(size))[:, :, jnp.clip(point, 0, size * size - 1)]  # [8, O]
    return _frame_hashes(colour_values(state)[index])


def board_hashes(state: rules.State):
    """uint32 [S, P]: the frame-0 hash (``point_hashes(state, p)[:, 0]``) of every point's pattern of each size.

    One multiply-add per offset o: the padded board's values shifted by o (a static slice) times o's key; no
    gathers.  A dictionary lists the 8 frame hashes of each pattern, so looking up frame 0 finds
    every symmetric image.
    """
    points = state.stones.shape[0]
    size = rules.board_size(points)
    reach = MAX_SIZE // 2
    grid = jnp.pad(colour_values(state)[:points].reshape(size, size), reach, constant_values=3).astype(jnp.uint32)
    bounds = [0] + [int(n) for n in prefix_lengths()]
    acc = jnp.zeros((size, size), jnp.uint32)
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        for o in range(lo, hi):
            r, c = (reach + int(x) for x in offsets()[o])
            acc = acc + grid[r:r + size, c:c + size] * jnp.uint32(keys()[o])
        out.append(acc.reshape(points))
    return jnp.stack(out)


@functools.lru_cache(maxsize=None)
def symmetry_permutation() -> np.ndarray:
    """int32 [8, O]: index in ``offsets()`` of T_t(o) for every symmetry t and offset o, so that frame t of a
    pattern stored as its frame-0 cells c is sum_o key_o * c[perm[t, o]] (as ``point_hashes`` reads it)."""
    where = {tuple(o): i for i, o in enumerate(offsets().tolist())}
    perm = np.zeros((8, len(where)), np.int32)
    for t, transform in enumerate(symmetries()):
        for o, offset in enumerate(offsets().tolist()):
            perm[t, o] = where[transform(*offset)]
    return perm


def cell_variants(cells, size_index) -> np.ndarray:
    """uint32 [M, 8]: the 8 frame hashes of patterns given by their frame-0 cells uint8 [M, O] (values 0-3,
    ``colour_values`` order) and sizes (int [M], index into ``SIZES``); numpy."""
    cells = np.asarray(cells, np.uint64)
    size_index = np.asarray(size_index, np.int64)
    inside = np.arange(len(offsets()))[None, :] < prefix_lengths()[size_index][:, None]  # [M, O]
    key = keys().astype(np.uint64)
    out = np.zeros((len(cells), 8), np.uint32)
    for t, perm in enumerate(symmetry_permutation()):
        total = np.sum(np.where(inside, cells[:, perm] * key, 0), axis=1, dtype=np.uint64)
        out[:, t] = (total & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return out


@dataclasses.dataclass(frozen=True)
class LargeDictionary:
    """Frequent large patterns: entry i (level 1 + i) is the pattern of size ``SIZES[size_index[i]]``; sorted by
    size, then canonical hash.

    size_index int8 [M]; cells uint8 [M, O]: the pattern's colour values in the frame it was first seen in (0
    beyond its size); counts int32 [M]: times played in the harvest.  Derived: ``variants`` uint32 [M, 8], its
    hashes in the 8 symmetry frames (``point_hashes``), and ``hashes`` uint32 [M] = variants.min(1), canonical.
    """

    size_index: np.ndarray
    cells: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        variants = cell_variants(self.cells, self.size_index) if len(self.cells) else np.zeros((0, 8), np.uint32)
        object.__setattr__(self, "variants", variants)
        object.__setattr__(self, "hashes", variants.min(1) if len(variants) else np.zeros(0, np.uint32))
        order = np.lexsort((self.hashes, self.size_index))
        if not np.array_equal(order, np.arange(len(order))):
            raise ValueError("dictionary entries must be sorted by size, then canonical hash")

    def __len__(self) -> int:
        return len(self.size_index)

    @classmethod
    def from_occurrences(cls, variants, cells, min_count: int) -> "LargeDictionary":
        """Keep the patterns played at least ``min_count`` times.  variants uint32 [n, S, 8]: the frame hashes of
        every size around n played points (``point_hashes``); cells uint8 [n, O]: the colour values around them
        (frame 0)."""
        variants = np.asarray(variants, np.uint32)
        n, sizes = variants.shape[:2]
        canonical = variants.min(2).reshape(-1)  # occurrence k = (move k // S, size k % S)
        size_of = np.tile(np.arange(sizes, dtype=np.int64), n)
        unique, first, counts = np.unique((size_of << 32) | canonical.astype(np.int64), return_index=True,
                                          return_counts=True)
        keep = counts >= min_count
        unique, first, counts = unique[keep], first[keep], counts[keep]
        size_index = (unique >> 32).astype(np.int8)
        inside = np.arange(len(offsets()))[None, :] < prefix_lengths()[size_index][:, None]
        kept_cells = np.where(inside, np.asarray(cells, np.uint8)[first // sizes], 0).astype(np.uint8)
        return cls(size_index, kept_cells, counts.astype(np.int32))

    def fingerprint(self) -> str:
        """A short digest of the entries (shard folders record it, so codes of another dictionary are refused)."""
        digest = hashlib.sha1(self.size_index.astype(np.int8).tobytes() + np.ascontiguousarray(self.variants).tobytes())
        return digest.hexdigest()[:16]

    def ascii(self, i: int) -> str:
        """Entry i drawn as text (side to move: X own, O opponent; ``#`` off board, ``*`` the move, blank: outside
        the pattern)."""
        reach = MAX_SIZE // 2
        grid = [[" "] * (2 * reach + 1) for _ in range(2 * reach + 1)]
        grid[reach][reach] = "*"
        for o in range(int(prefix_lengths()[self.size_index[i]])):
            dr, dc = offsets()[o]
            grid[reach + dr][reach + dc] = ".XO#"[int(self.cells[i, o])]
        lines = ["".join(row).rstrip() for row in grid if row.count(" ") < len(row)]
        indent = min(len(line) - len(line.lstrip()) for line in lines)
        return "\n".join(line[indent:] for line in lines)

    def tables(self):
        """(hashes uint32 [S, W], levels int32 [S, W]): per size, the sorted frame hashes of its entries (the
        distinct variants of each, padded with 0xFFFFFFFF) and their levels (1 + entry index; 0 on padding),
        for ``levels_of``.  Built once per dictionary."""
        if "_tables" in self.__dict__:
            return self.__dict__["_tables"]
        rows = []
        for s in range(len(SIZES)):
            entries = np.flatnonzero(self.size_index == s)
            pairs = np.stack([self.variants[entries].reshape(-1).astype(np.int64), np.repeat(entries + 1, 8)])
            rows.append(np.unique(pairs, axis=1))  # sorted by hash
        width = max(1, max(r.shape[1] for r in rows))
        table = np.full((len(SIZES), width), _NONE, np.uint32)
        level = np.zeros((len(SIZES), width), np.int32)
        for s, pairs in enumerate(rows):
            table[s, :pairs.shape[1]] = pairs[0]
            level[s, :pairs.shape[1]] = pairs[1]
        object.__setattr__(self, "_tables", (table, level))
        return table, level

    def save(self, path) -> None:
        """Write atomically; ``.npz`` is added to a name without it (as ``np.savez`` does)."""
        path = os.fspath(path)
        if not path.endswith(".npz"):
            path += ".npz"
        save_npz_atomic(path, dict(self.arrays(), sizes=np.array(SIZES, np.int32)), compressed=True)

    def arrays(self, prefix: str = "") -> dict:
        """The stored arrays (cells packed 4 per byte), for ``save`` and the gamma file."""
        cells = np.asarray(self.cells, np.uint8)
        packed = cells[:, 0::4] | (cells[:, 1::4] << 2) | (cells[:, 2::4] << 4) | (cells[:, 3::4] << 6)
        return {f"{prefix}size_index": self.size_index.astype(np.int8), f"{prefix}cells": packed,
                f"{prefix}counts": self.counts.astype(np.int32)}

    @classmethod
    def from_arrays(cls, data, prefix: str = "") -> "LargeDictionary":
        packed = np.asarray(data[f"{prefix}cells"], np.uint8)
        cells = np.zeros((len(packed), packed.shape[1] * 4), np.uint8)
        for j in range(4):
            cells[:, j::4] = (packed >> (2 * j)) & 3
        return cls(np.asarray(data[f"{prefix}size_index"], np.int8), cells, np.asarray(data[f"{prefix}counts"]))

    @classmethod
    def load(cls, path) -> "LargeDictionary":
        with np.load(path) as data:
            if tuple(data["sizes"].tolist()) != SIZES:
                raise ValueError(f"{path}: pattern sizes {data['sizes'].tolist()} differ from {SIZES}")
            return cls.from_arrays(data)


def levels_of(hashes, tables):
    """Large-pattern levels int32 [...] from frame-0 hashes uint32 [S, ...] (``board_hashes``) and
    ``LargeDictionary.tables()`` (as arrays): the level of the largest size whose hash is in the dictionary, 0 if
    none."""
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
    levels = levels_of(board_hashes(state), tables)
    return jnp.where(legal, jnp.concatenate([levels, jnp.zeros(1, jnp.int32)]), 0)
