"""The leaf selection of many searches in one compiled call: a server's round over all its searches.

``round_step.RoundStep`` selects one search's leaves in two nogil calls; a server with 64 searches made 128 calls
a round, each with its Python around it.  Here every search that expands inline (uniform priors, or the base move
model's gammas: ``expansion.UNIFORM`` / ``GAMMAS``) is a *slot* of a ``SearchSlots`` table: one numba typed list
whose entry per slot is the tuple of that search's arrays (``FIELDS``): its tree's (``Tree.ARRAYS`` and the node
positions, ``STATE_FIELDS``), its random stream, score parameters, game history and last moves, its path buffers
(``round_step.LeafBuffers``) and the analysis statistics of its owner.  ``select_searches`` runs
``descend_round`` and ``create_leaves`` for any number of slots in one call (callers split the slots over threads:
the call holds no GIL and each slot touches only its own arrays) and writes the valid leaves' positions and last
moves straight into the rows of a device batch, one search after the other; ``backup_search`` and
``root_actions`` serve the backup (``jaxgo.server.round_sums.backup_round``).  The calls are those of
``RoundStep.select`` in the same order, so each search's tree, leaves and random stream are the same, bit for bit
(tests/search/test_round_batch.py).

A search whose descent outgrows its path buffer (``descent.PATH_OVERFLOW``, status per slot) is retried by its
``RoundStep`` with a longer buffer, as ``RoundStep.select`` would; searches that expand in Python (large patterns,
ladder pruning, an ``on_expand``) stay on ``RoundStep.select``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.typed import List

from jaxgo.search import backup, expansion
from jaxgo.search.round_step import DONE, copy_leaf, create_leaves, descend_round
from jaxgo.search.tree import STATE_FIELDS, Tree

SEARCH_FIELDS = ("rng", "params", "root_last", "history")  # per search: ``RoundStep`` / ``TreeJob`` arrays
BUFFER_FIELDS = ("path_nodes", "path_actions", "path_lengths", "ends", "nodes", "actions", "lengths", "leaves")
STAT_FIELDS = ("score_sum", "score_sq_sum", "score_n", "owner_sum", "owner_abs_sum", "moves_owner_sum")
POSITION_FIELDS = tuple("position_" + name for name in STATE_FIELDS)  # the tree's node positions
FIELDS = Tree.ARRAYS + POSITION_FIELDS + SEARCH_FIELDS + BUFFER_FIELDS + STAT_FIELDS  # a slot's entry, in order


class SearchSlots:
    """One numba typed list of the arrays of any number of searches, one entry per slot: the tuple of its arrays
    in ``FIELDS`` order (views of the search's own arrays, no copies: the kernels change them in place), and which
    slots are free.  One list, so that a compiled call's arguments are typed in a few steps whatever the number
    of searches.  Not thread-safe: slots are taken, set and released on one thread."""

    def __init__(self):
        self.entries = None  # numba.typed.List of tuples, made with the first entry (its type)
        self._blank = None  # an entry of 1-element arrays: what a released slot holds
        self._free: list[int] = []
        self._count = 0
        self._length = 0  # entries in the list
        self._marks: dict[int, tuple] = {}

    def take(self) -> int:
        if self._free:
            return self._free.pop()
        self._count += 1
        return self._count - 1

    def release(self, slot: int) -> None:
        """Free ``slot`` (its arrays go back to their owner: the slot holds 1-element placeholders)."""
        if self.entries is not None and slot < self._length:
            put_entry(self.entries, slot, self._blank, self._blank)
        self._marks.pop(slot, None)
        self._free.append(slot)

    def set(self, slot: int, arrays: dict) -> None:
        """Make ``slot``'s entry the arrays (field -> C-contiguous array, every name of ``FIELDS``), unless
        they are the arrays it holds already."""
        mark = tuple([id(arrays[name]) for name in FIELDS])
        if self._marks.get(slot) == mark:
            return
        entry = tuple([arrays[name] for name in FIELDS])
        if self.entries is None:
            self._blank = tuple([np.zeros((1,) * a.ndim, a.dtype) for a in entry])
            self.entries = new_entries(self._blank)
            self._length = 1
        put_entry(self.entries, slot, entry, self._blank)
        self._length = max(self._length, slot + 1)
        self._marks[slot] = mark


# The typed list is made and changed only inside these cached kernels: a typed list's own methods called from Python
# are compiled anew in every process for the entry's type (3-4 s of CPU for a server's first query), these are not.
@numba.njit(nogil=True, cache=True)
def new_entries(blank):
    """A typed list holding ``blank``, a slot entry's tuple of arrays: the list of that entry type."""
    entries = List()
    entries.append(blank)
    return entries


@numba.njit(nogil=True, cache=True)
def put_entry(entries, slot, entry, blank):
    """``entries[slot] = entry``, the list first grown to ``slot + 1`` entries with ``blank``."""
    while len(entries) <= slot:
        entries.append(blank)
    entries[slot] = entry


def slot_arrays(tree: Tree, buffers, search: dict) -> dict:
    """The arrays of one slot (``SearchSlots.set``): a tree's, a ``round_step.LeafBuffers``' paths and leaves,
    and ``search``: the ``SEARCH_FIELDS`` and ``STAT_FIELDS``."""
    arrays = {name: getattr(tree, name) for name in Tree.ARRAYS}
    arrays.update({"position_" + name: array for name, array in tree.states.items()})
    arrays.update({name: getattr(buffers, name) for name in BUFFER_FIELDS})
    arrays.update(search)
    return arrays


@numba.njit(nogil=True, cache=True)
def select_searches(tasks, start, slots, ks, rooms, roots, sizes, modes, superko, entries, zobrist, gamma_tables,
                    out_stones, out_chain, out_lib_count, out_lib_sum, out_lib_sumsq, out_ko, out_to_play, out_passes,
                    out_captures, out_hash, out_move_count, out_last, offsets, counts, status):
    """``RoundStep.select``'s compiled part for the searches ``tasks`` int [R] (indices into the other per-search
    arrays): search t (its arrays at ``entries[slots[t]]``, a ``SearchSlots`` list) descends ``ks[t]`` times from
    ``roots[t]`` with ``rooms[t]`` new nodes allowed (``descend_round``, expanding inline: ``modes[t]``
    ``UNIFORM`` or ``GAMMAS`` with gamma_tables), creates the new nodes from row ``sizes[t]`` (superko[t]: drop
    repeats), writes its valid descents into its buffers (``create_leaves``) and its leaves' positions and last
    two moves into the device batch (``out_*``, ``STATE_FIELDS`` order, [B, ...], and out_last int32 [B, 2]) from
    row ``offsets[t]``: the searches' rows follow each other from row ``start``.  Out: sizes[t] the tree's new
    size, counts[t] its valid leaves, status[t] ``DONE`` or ``descent.PATH_OVERFLOW`` (nothing changed but the
    random stream, no rows: retry with a longer path buffer).  Returns the row after the last one written."""
    waiting = np.empty(1, np.int32)  # (only IN_PYTHON expansions list nodes there)
    at = start
    for i in range(tasks.shape[0]):
        t = tasks[i]
        e = entries[slots[t]]
        done, _ = descend_round(True, ks[t], roots[t], rooms[t], e[5], e[4], e[0], e[1], e[6], e[7], e[8], e[9],
                                e[10], e[11], e[12], e[25], e[24], e[28], e[29], e[30], e[31], e[13], e[19], e[18],
                                modes[t], waiting, e[26], gamma_tables)
        status[t] = done
        offsets[t] = at
        if done != DONE:
            counts[t] = 0
            continue
        n, sizes[t] = create_leaves(
            sizes[t], roots[t], superko[t], e[27], zobrist, e[0], e[1], e[2], e[3], e[5], e[6], e[7], e[12], e[13],
            e[14], e[15], e[16], e[17], e[18], e[19], e[20], e[21], e[22], e[23], e[28], e[29], e[30], e[31], e[32],
            e[33], e[34], e[35])
        counts[t] = n
        leaves = e[35]
        for r in range(n):
            copy_leaf(at + r, leaves[r], roots[t], e[26], e[0], e[1], e[13], e[14], e[15], e[16], e[17], e[18],
                      e[19], e[20], e[21], e[22], e[23], out_stones, out_chain, out_lib_count, out_lib_sum,
                      out_lib_sumsq, out_ko, out_to_play, out_passes, out_captures, out_hash, out_move_count, out_last)
        at += n
    return at


@numba.njit(nogil=True, cache=True)
def backup_search(e, row0, count, cols, use_rave, value, first):
    """``TreeSearch.backup_leaves``' compiled part for the search of entry ``e`` (a ``SearchSlots`` entry): its
    ``count`` valid leaves (``select_searches``) get the first ``cols`` playouts of rows ``row0 ...`` of value
    float64 [B, L] (Black's value of each playout, ``backup.playout_values``) and first int8 [B, L, P]
    (``backup.backup_batch``)."""
    backup.backup_batch(np.arange(count), e[32], e[33], e[34], e[35], value[row0:row0 + count, :cols],
                        first[row0:row0 + count, :cols], e[2], e[7], e[8], e[9], e[10], use_rave)


@numba.njit(nogil=True, cache=True)
def root_actions(e, count, out):
    """out int64 [>= count]: the root move of each of entry ``e``'s valid leaves (-1 where the leaf is the root),
    as ``PendingLeaves.root_actions``."""
    actions, lengths = e[33], e[34]
    for r in range(count):
        out[r] = actions[r, 0] if lengths[r] > 0 else -1


def expansion_modes() -> tuple:
    """The expansion modes ``select_searches`` runs inline."""
    return expansion.UNIFORM, expansion.GAMMAS
