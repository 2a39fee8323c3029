"""Tree storage reused from search to search: a server's trees are allocated once at their full capacity and
handed back clean, never grown by doubling (``Tree._grow`` copies every array) nor freed and allocated again.

``TreeArena.take(actions, capacity, position fields)`` gives a clean tree of ``capacity`` rows (a free one of that
shape, else a new one, in fresh zero pages, its links written off the GIL), into which a search puts its root
(``TreeSearch.prepare_tree``'s ``storage``); ``adopt(tree, capacity)`` one holding a copy of ``tree``;
``give_back(tree)`` clears the rows the search used and keeps the storage for the next search of the same board and
capacity, up to ``max_bytes`` of free storage (beyond it the storage is dropped).  A tree that outgrows its
capacity after all (a node cap raised later) still grows as any ``Tree`` does and is not kept.
"""

from __future__ import annotations

import mmap
import threading

import numba
import numpy as np

from jaxgo.search.tree import STATE_FIELDS, UNVISITED, Tree

CLEARED = {"parents": -1, "action_from_parent": -1, "children_index": UNVISITED}  # the rest back to 0 / False


def tree_nbytes(tree: Tree) -> int:
    """Bytes of a tree's arrays (its node positions included)."""
    total = sum([getattr(tree, name).nbytes for name in Tree.ARRAYS])
    return total + sum([array.nbytes for array in (tree.states or {}).values()])


def clear_rows(tree: Tree, count: int) -> None:
    """Reset the first ``count`` rows of every array of ``tree`` to a new tree's values; size 0, root 0 (in one
    nogil call, ``clear_tree``)."""
    clear_tree(count, *[getattr(tree, name) for name in Tree.ARRAYS], *[tree.states[name] for name in STATE_FIELDS])
    tree.size = 0
    tree.root = 0


@numba.njit(nogil=True, cache=True)
def clear_tree(count, parents, action_from_parent, to_play, hashes, expanded, terminal, children_index,
               children_visits, children_values, children_rave_visits, children_rave_values, children_prior,
               children_legal, stones, chain, lib_count, lib_sum, lib_sumsq, ko, state_to_play, passes, captures,
               hash_words, move_count):
    """Rows 0 .. count - 1 of a tree's arrays (``Tree.ARRAYS``, then its positions' ``STATE_FIELDS``) back to a
    new tree's values (``CLEARED``, else 0)."""
    parents[:count] = -1
    action_from_parent[:count] = -1
    children_index[:count] = UNVISITED
    to_play[:count] = 0
    hashes[:count] = 0
    expanded[:count] = False
    terminal[:count] = False
    children_visits[:count] = 0.0
    children_values[:count] = 0.0
    children_rave_visits[:count] = 0.0
    children_rave_values[:count] = 0.0
    children_prior[:count] = 0.0
    children_legal[:count] = False
    stones[:count] = 0
    chain[:count] = 0
    lib_count[:count] = 0
    lib_sum[:count] = 0
    lib_sumsq[:count] = 0
    ko[:count] = 0
    state_to_play[:count] = 0
    passes[:count] = 0
    captures[:count] = 0
    move_count[:count] = 0
    hash_words[:count] = 0


LAZY_MIN_BYTES = 1 << 20  # smaller arrays: np.zeros (a mapping per array of a few KB would waste pages and maps)


def lazy_zeros(shape: tuple, dtype) -> np.ndarray:
    """A zero array of ``shape`` and ``dtype``; from ``LAZY_MIN_BYTES`` on in fresh anonymous memory (``mmap``):
    its pages are mapped, zero, when first touched (by the compiled tree loops, off the GIL), never written here.
    ``np.zeros`` may instead get reused heap memory from the allocator and clear all of it at once, under the GIL
    (several ms for a 9x9 tree of 4,096 rows)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if count * dtype.itemsize < LAZY_MIN_BYTES:
        return np.zeros(shape, dtype)
    return np.frombuffer(mmap.mmap(-1, count * dtype.itemsize), dtype, count).reshape(shape)


@numba.njit(nogil=True, cache=True)
def unlink_rows(parents, action_from_parent, children_index):
    """A new tree's ``Tree.LINKS``: parents int32 [C], action_from_parent int32 [C] and children_index int32
    [C, A] all -1 (``UNVISITED``)."""
    parents[:] = -1
    action_from_parent[:] = -1
    children_index[:] = UNVISITED


def _row_specs(tree: Tree) -> dict:
    """{field: (shape of one row, dtype)} of a tree's node positions (``take``'s ``specs``)."""
    return {name: (array.shape[1:], array.dtype) for name, array in tree.states.items()}


class BufferPool:
    """Scratch arrays kept from search to search by key (a search's staging buffers: ``round_step.RoundStep``),
    so that a new search does not allocate and clear them under the GIL; thread-safe.  At most ``per_key``
    are kept per key (more given back are dropped)."""

    def __init__(self, per_key: int = 1024):
        self.per_key = per_key
        self._free: dict[tuple, list] = {}
        self._lock = threading.Lock()

    def take(self, key: tuple):
        """A buffer given back under ``key``, or None."""
        with self._lock:
            free = self._free.get(key)
            return free.pop() if free else None

    def give_back(self, key: tuple, buffer) -> None:
        with self._lock:
            free = self._free.setdefault(key, [])
            if len(free) < self.per_key:
                free.append(buffer)


class TreeArena:
    """Free tree storage by shape (actions, capacity, position shapes); thread-safe.  ``buffers``: the searches'
    staging buffers (``BufferPool``)."""

    def __init__(self, max_bytes: float):
        self.max_bytes = max_bytes
        self.free_bytes = 0
        self.allocated = 0  # trees made new (not taken from the pool)
        self.reused = 0
        self._free: dict[tuple, list[Tree]] = {}
        self._lock = threading.Lock()
        self.buffers = BufferPool()

    @staticmethod
    def _key(num_actions: int, capacity: int, specs: dict) -> tuple:
        return (num_actions, capacity) + tuple([(name, tuple(specs[name][0]), np.dtype(specs[name][1]).str)
                                                for name in STATE_FIELDS])

    def take(self, num_actions: int, capacity: int, specs: dict) -> Tree:
        """A clean tree (size 0, every row a new tree's) of ``capacity`` rows whose node positions have the
        fields' (shape of one row, dtype) of ``specs`` (``tree.state_specs``): a free one of that shape, else a
        new one (``lazy_zeros``, its links set to -1 in one nogil call)."""
        key = self._key(num_actions, capacity, specs)
        with self._lock:
            free = self._free.get(key)
            out = free.pop() if free else None
            if out is not None:
                self.free_bytes -= out.storage_key[1]
                self.reused += 1
            else:
                self.allocated += 1
        if out is None:
            out = Tree.unlinked(num_actions, capacity, specs, lazy_zeros)
            unlink_rows(out.parents, out.action_from_parent, out.children_index)
            out.storage_key = (key, tree_nbytes(out), capacity)
        return out

    def adopt(self, tree: Tree, capacity: int) -> Tree:
        """A tree of at least ``capacity`` rows (``tree``'s if larger) equal to ``tree`` (its first ``size``
        rows copied; the rest clean)."""
        capacity = max(capacity, tree.size)
        out = self.take(tree.num_actions, capacity, _row_specs(tree))
        n = tree.size
        for name in Tree.ARRAYS:
            getattr(out, name)[:n] = getattr(tree, name)[:n]
        for name, array in tree.states.items():
            out.states[name][:n] = array[:n]
        out.size, out.root = n, tree.root
        return out

    def give_back(self, tree: Tree, capacity: int) -> bool:
        """Clear ``tree`` and keep it for a later ``adopt`` of the same shape (unless it grew past ``capacity``
        or the free storage would pass ``max_bytes``); whether it was kept."""
        if tree.capacity != capacity or tree.states is None:
            return False
        if tree.storage_key is None or tree.storage_key[2] != capacity:  # (not made here, or grown since)
            tree.storage_key = (self._key(tree.num_actions, capacity, _row_specs(tree)), tree_nbytes(tree), capacity)
        key, size, _ = tree.storage_key
        with self._lock:
            if self.free_bytes + size > self.max_bytes:
                return False
            self.free_bytes += size  # counted now, so two threads giving back at once stay within the bound
        clear_rows(tree, tree.size)
        with self._lock:
            self._free.setdefault(key, []).append(tree)
        return True
