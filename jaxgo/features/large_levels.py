"""Large-pattern levels on the host, compiled by numba: ``large.candidate_levels`` for a batch of positions with
no XLA call, fast enough for the search's priors (about 0.1 ms per 19x19 position).

``LevelTable`` holds a dictionary's frame hashes (``LargeDictionary.tables``) in one open-addressing hash table
keyed by (size, frame hash), so a lookup costs one probe or two; ``candidate_levels`` hashes every legal point's
patterns in frame 0 as ``large.board_hashes`` does (a running sum over the offsets sorted by distance, one size
after another) and keeps the level of the largest size found.

Every size is looked up: a dictionary harvested from games can hold a larger pattern of a point without its
smaller ones (seen on the shipped one), so stopping at the first size missing would give other levels.  Most
sizes of most points are absent, and a 2 MB bit filter answers those without probing the table, which does not
stay in cache.  The tests hold the levels to ``large.candidate_levels`` on random and real positions.
"""

from __future__ import annotations

import dataclasses
import functools
import threading

import numba
import numpy as np

from jaxgo.features import large

_EMPTY_SLOT = np.uint64(0xFFFFFFFFFFFFFFFF)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the (size, hash) key to a slot
_FILTER_MULTIPLIER = np.uint64(0xD6E8FEB86659FD93)  # another one, to a bit of the filter
FILTER_BITS = 24  # a 2 MB bit filter in front of the table: most keys looked up are absent


@dataclasses.dataclass(frozen=True)
class LevelTable:
    """A dictionary's (size index, frame hash) -> level map: slot keys uint64 [C] ((size index << 32) | hash, all
    ones when free) and levels int32 [C], C a power of two at least twice the entries; ``shift`` = 64 - log2 C.
    ``present`` uint64 [2**FILTER_BITS / 64]: a bit per filter slot of the keys in the table, so that most absent
    keys (most of those looked up: a point's larger patterns are rarely frequent) cost no probe of the table,
    which does not stay in cache."""

    keys: np.ndarray
    levels: np.ndarray
    shift: int
    present: np.ndarray


@numba.njit(nogil=True, cache=True)
def _slot(key, shift):
    return (key * _MULTIPLIER) >> np.uint64(shift)


@numba.njit(nogil=True, cache=True)
def _filter_bit(key):
    return (key * _FILTER_MULTIPLIER) >> np.uint64(64 - FILTER_BITS)


@numba.njit(nogil=True, cache=True)
def _insert_all(hashes, levels, slot_keys, slot_levels, shift, present):
    """Insert every (size s, hashes[s, j]) with levels[s, j] > 0 (linear probing); each row sorted by hash, then
    level (``LargeDictionary.tables``)."""
    mask = np.uint64(slot_keys.shape[0] - 1)
    for s in range(hashes.shape[0]):
        for j in range(hashes.shape[1]):
            if levels[s, j] <= 0:
                continue
            key = (np.uint64(s) << np.uint64(32)) | np.uint64(hashes[s, j])
            i = _slot(key, shift)
            while slot_keys[i] != _EMPTY_SLOT and slot_keys[i] != key:
                i = (i + np.uint64(1)) & mask
            if slot_keys[i] == key:
                continue  # a hash shared by two entries: the smaller level, as ``large.levels_of`` finds it
            slot_keys[i] = key
            slot_levels[i] = levels[s, j]
            bit = _filter_bit(key)
            present[bit >> np.uint64(6)] |= np.uint64(1) << (bit & np.uint64(63))


_build_lock = threading.Lock()


def level_table(dictionary: large.LargeDictionary) -> LevelTable:
    """The ``LevelTable`` of a dictionary, built once per dictionary object (about 1.5 s for 200,000 entries; a
    second thread asking meanwhile waits for the first)."""
    with _build_lock:
        return _build(dictionary)


def _build(dictionary: large.LargeDictionary) -> LevelTable:
    cached = dictionary.__dict__.get("_level_table")
    if cached is not None:
        return cached
    hashes, levels = dictionary.tables()
    entries = max(1, int(np.sum(levels > 0)))
    bits = max(4, int(np.ceil(np.log2(2 * entries))))
    table = LevelTable(np.full(1 << bits, _EMPTY_SLOT, np.uint64), np.zeros(1 << bits, np.int32), 64 - bits,
                       np.zeros(1 << (FILTER_BITS - 6), np.uint64))
    _insert_all(np.asarray(hashes, np.uint32), np.asarray(levels, np.int32), table.keys, table.levels, table.shift,
                table.present)
    object.__setattr__(dictionary, "_level_table", table)
    return table


@numba.njit(nogil=True, cache=True)
def _lookup(slot_keys, slot_levels, shift, present, key):
    bit = _filter_bit(key)
    if not (present[bit >> np.uint64(6)] >> (bit & np.uint64(63))) & np.uint64(1):
        return 0
    mask = np.uint64(slot_keys.shape[0] - 1)
    i = _slot(key, shift)
    while True:
        k = slot_keys[i]
        if k == key:
            return slot_levels[i]
        if k == _EMPTY_SLOT:
            return 0
        i = (i + np.uint64(1)) & mask


@numba.njit(nogil=True, cache=True)
def levels_into(stones, to_play, legal, rows, cols, keys, prefix, slot_keys, slot_levels, shift, present, reach, out):
    """Fill ``out`` int32 [S, P + 1] with the large-pattern level of every legal candidate (0 elsewhere and for
    pass).  stones int8 [S, P] (1 Black, -1 White), to_play int32 [S] (1 / -1), legal bool [S, P + 1]; rows /
    cols int32 [O] the offsets, keys uint64 [O] their multipliers, prefix int32 [sizes] the offsets in each
    size's pattern (``large.offsets``, ``keys``, ``prefix_lengths``)."""
    count, points = stones.shape
    size = int(np.sqrt(points) + 0.5)
    gw = size + 2 * reach
    grid = np.full(gw * gw, 3, np.uint64)  # off board
    step = np.zeros(rows.shape[0], np.int64)
    for o in range(rows.shape[0]):
        step[o] = rows[o] * gw + cols[o]
    low = np.uint64(0xFFFFFFFF)
    for i in range(count):
        mover = to_play[i]
        for p in range(points):
            v = stones[i, p] * mover
            grid[(p // size + reach) * gw + p % size + reach] = 1 if v == 1 else (2 if v == -1 else 0)
        for p in range(points + 1):
            out[i, p] = 0
        for p in range(points):
            if not legal[i, p]:
                continue
            centre = (p // size + reach) * gw + p % size + reach
            acc = np.uint64(0)
            o = 0
            level = 0
            for s in range(prefix.shape[0]):
                while o < prefix[s]:
                    acc += grid[centre + step[o]] * keys[o]
                    o += 1
                found = _lookup(slot_keys, slot_levels, shift, present, (np.uint64(s) << np.uint64(32)) | (acc & low))
                if found > 0:
                    level = found
            out[i, p] = level


@functools.lru_cache(maxsize=None)
def _geometry():
    offsets = large.offsets()
    return (np.ascontiguousarray(offsets[:, 0], np.int32), np.ascontiguousarray(offsets[:, 1], np.int32),
            large.keys().astype(np.uint64), np.asarray(large.prefix_lengths(), np.int32))


def candidate_levels(stones, to_play, legal, dictionary: large.LargeDictionary) -> np.ndarray:
    """int32 [S, P + 1]: ``large.candidate_levels`` of each position (stones int8 [S, P], to_play int [S] as 1 /
    -1, legal bool [S, P + 1], pass last) under ``dictionary``."""
    stones = np.ascontiguousarray(stones, np.int8)
    table = level_table(dictionary)
    rows, cols, keys, prefix = _geometry()
    out = np.zeros((stones.shape[0], stones.shape[1] + 1), np.int32)
    levels_into(stones, np.ascontiguousarray(to_play, np.int32), np.ascontiguousarray(legal, bool), rows, cols, keys,
                prefix, table.keys, table.levels, table.shift, table.present, large.MAX_SIZE // 2, out)
    return out
