"""Host-side search tree as numpy structure-of-arrays (mctx's names), grown on demand.

Node ``i`` holds one position; the statistics of the edge ``(i, a)`` live in row ``i`` of the ``children_*``
arrays (A = P + 1 actions, pass last).  Values are counted from the point of view of the player to move at
node ``i`` (``to_play[i]``): ``children_values[i, a]`` is the number of playouts through ``(i, a)`` that this
player won.  Node positions are kept field by field (``states[name][i]``), so a batch of leaves is gathered
with one fancy index per field and handed to ``playout.run`` as a batched ``rules.State``.

Shapes (capacity C, actions A):
    parents [C] int32 (-1 at the root), action_from_parent [C] int32, to_play [C] int8,
    hashes [C] uint64 (Zobrist of the stones), expanded [C] bool, terminal [C] bool,
    children_index [C, A] int32 (-1: no node yet), children_visits / children_values [C, A] float64,
    children_rave_visits / children_rave_values [C, A] float64, children_prior [C, A] float32,
    children_legal [C, A] bool.
"""

from __future__ import annotations

import numpy as np

from jaxgo.go import rules
from jaxgo.search import descent

UNVISITED = -1
STATE_FIELDS = ("stones", "chain", "lib_count", "lib_sum", "lib_sumsq", "ko", "to_play", "passes", "captures",
                "hash", "move_count")


def states_to_numpy(state) -> dict:
    """{field: numpy array} of a (batched) ``rules.State``, the fields the tree keeps (``STATE_FIELDS``)."""
    return {name: np.asarray(getattr(state, name)) for name in STATE_FIELDS}


def stack_state(state, count: int):
    """``count`` copies of one unbatched ``rules.State`` as a batched numpy state [count, ...]."""
    out = {}
    for name in STATE_FIELDS:
        x = np.asarray(getattr(state, name))
        out[name] = np.empty((count,) + x.shape, x.dtype)
        out[name][...] = x
    return rules.State(**out)


def array_specs(num_actions: int) -> dict:
    """{name: (shape of one row, dtype)} of a tree's ``Tree.ARRAYS`` with ``num_actions`` actions."""
    a = (num_actions,)
    return {"parents": ((), np.int32), "action_from_parent": ((), np.int32), "to_play": ((), np.int8),
            "hashes": ((), np.uint64), "expanded": ((), np.bool_), "terminal": ((), np.bool_),
            "children_index": (a, np.int32), "children_visits": (a, np.float64), "children_values": (a, np.float64),
            "children_rave_visits": (a, np.float64), "children_rave_values": (a, np.float64),
            "children_prior": (a, np.float32), "children_legal": (a, np.bool_)}


def state_specs(state) -> dict:
    """{field: (shape, dtype)} of one unbatched ``rules.State``'s ``STATE_FIELDS`` (as ``stack_state`` keeps them)."""
    out = {}
    for name in STATE_FIELDS:
        x = np.asarray(getattr(state, name))
        out[name] = (x.shape, x.dtype)
    return out


def rank_actions(visits, values) -> np.ndarray:
    """int [A]: actions best first: most visits, then highest win rate (NaN lowest), then lowest index.  The one
    move-choice order of the engine: the move played, the PV and the order of reported moves all follow it."""
    visits = np.asarray(visits, np.float64)
    values = finite_values(values, -1.0)
    return np.lexsort((np.arange(len(visits)), -values, -visits))


FLOAT_MAX = float(np.finfo(np.float64).max)


def finite_values(values, nan: float = 0.0) -> np.ndarray:
    """float64 [...]: ``np.nan_to_num(values, nan=nan)`` (NaN -> ``nan``, +-inf -> the largest finite float64 of
    that sign) in three ufunc calls, without ``nan_to_num``'s Python (a reply builds a few of these per answer)."""
    values = np.asarray(values, np.float64)
    return np.where(np.isnan(values), nan, np.clip(values, -FLOAT_MAX, FLOAT_MAX))


def move_decided(visits, remaining: float) -> bool:
    """Whether ``remaining`` more playouts cannot change the move that ``rank_actions`` puts first: the most
    visited action leads the second by more than ``remaining`` visits (the conservative stopping rule of
    decision-theoretic search control: further search has no value when no outcome of it changes the
    decision).  visits: [A]."""
    visits = np.asarray(visits, np.float64)
    if visits.size < 2:
        return True
    second, first = np.partition(visits, -2)[-2:]
    return bool(first - second > remaining)


def best_action(visits, values) -> int:
    """The first action of ``rank_actions``."""
    return int(rank_actions(visits, values)[0])


class Tree:
    """A growable SoA tree; ``root`` is the node index of the current position."""

    storage_key = None  # (its arena.TreeArena key, bytes, capacity) once an arena has made or kept its storage

    def __init__(self, num_actions: int, capacity: int = 16):  # grows by doubling; small searches stay small
        self.num_actions = num_actions
        self.size = 0
        self.root = 0
        self._allocate(capacity)

    # -- storage --------------------------------------------------------------------------------------------
    def _allocate(self, capacity: int) -> None:
        self.capacity = capacity
        for name, (shape, dtype) in array_specs(self.num_actions).items():  # the LINKS -1, the rest 0
            shape = (capacity,) + shape
            setattr(self, name, np.full(shape, UNVISITED, dtype) if name in self.LINKS else np.zeros(shape, dtype))
        self.states = None  # dict field -> np.ndarray [C, ...], created with the first node

    ARRAYS = ("parents", "action_from_parent", "to_play", "hashes", "expanded", "terminal", "children_index",
              "children_visits", "children_values", "children_rave_visits", "children_rave_values",
              "children_prior", "children_legal")

    LINKS = ("parents", "action_from_parent", "children_index")  # the arrays whose clean value is not 0 (-1)

    @classmethod
    def unlinked(cls, num_actions: int, capacity: int, state_specs: dict, zeros=np.zeros) -> "Tree":
        """An empty tree (size 0) of ``capacity`` rows: every array zero, as a new tree's (made by ``zeros(shape,
        dtype)``), but the ``LINKS``, allocated and not written: the caller sets them to -1
        (``jaxgo.search.arena.unlink_rows``, off the GIL) before use.  ``state_specs``: the node positions' field
        -> (shape of one row, dtype)."""
        tree = cls.__new__(cls)
        tree.num_actions, tree.size, tree.root, tree.capacity = num_actions, 0, 0, capacity
        for name, (shape, dtype) in array_specs(num_actions).items():
            setattr(tree, name, (np.empty if name in cls.LINKS else zeros)((capacity,) + shape, dtype))
        tree.states = {name: zeros((capacity,) + tuple(shape), dtype) for name, (shape, dtype) in state_specs.items()}
        return tree

    def _grow(self) -> None:
        old = {name: getattr(self, name) for name in self.ARRAYS}
        old_states = self.states
        self._allocate(self.capacity * 2)
        for name, array in old.items():
            getattr(self, name)[: len(array)] = array
        if old_states is not None:
            self.states = {}
            for name, array in old_states.items():
                grown = np.zeros((self.capacity,) + array.shape[1:], array.dtype)
                grown[: len(array)] = array
                self.states[name] = grown

    def reserve(self, count: int) -> None:
        """Make room for ``count`` more nodes (doubling the storage as often as needed): compiled code may then
        write rows ``size .. size + count - 1`` (their ``children_*`` rows are clean)."""
        while self.size + count > self.capacity:
            self._grow()

    def add_root(self, state) -> int:
        """Append a node without parent for one unbatched ``rules.State`` (its fields numpy or JAX arrays) and
        return its index: ``add_nodes`` of a batch of one with parent and action -1, the same rows written, once
        the tree holds node positions (``states``)."""
        self.reserve(1)
        index = self.size
        for name in STATE_FIELDS:
            self.states[name][index] = getattr(state, name)
        self.parents[index] = -1
        self.action_from_parent[index] = -1
        self.to_play[index] = self.states["to_play"][index]
        self.hashes[index] = rules.hash_key(self.states["hash"][index])
        self.terminal[index] = self.states["passes"][index] >= 2
        self.size += 1
        return index

    def add_nodes(self, states: dict, parents: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Append nodes for a batch of positions (``states``: field -> [K, ...] numpy); returns their indices
        and links them under ``parents`` (-1 for a root)."""
        count = len(parents)
        self.reserve(count)
        if self.states is None:
            self.states = {name: np.zeros((self.capacity,) + np.shape(states[name])[1:], np.asarray(states[name]).dtype)
                           for name in STATE_FIELDS}
        index = np.arange(self.size, self.size + count, dtype=np.int32)
        for name in STATE_FIELDS:
            self.states[name][index] = np.asarray(states[name])
        self.parents[index] = parents
        self.action_from_parent[index] = actions
        self.to_play[index] = np.asarray(states["to_play"])
        self.hashes[index] = rules.hash_key(states["hash"])
        self.terminal[index] = np.asarray(states["passes"]) >= 2
        linked = parents >= 0
        self.children_index[parents[linked], actions[linked]] = index[linked]
        self.size += count
        return index

    def gather_states(self, nodes: np.ndarray) -> rules.State:
        """A batched ``rules.State`` [len(nodes)] of the given nodes' positions (numpy fields)."""
        return rules.State(**{name: self.states[name][nodes] for name in STATE_FIELDS})

    def state(self, node: int) -> rules.State:
        return rules.State(**{name: self.states[name][node] for name in STATE_FIELDS})

    # -- statistics -----------------------------------------------------------------------------------------
    def root_visits(self) -> np.ndarray:
        return self.children_visits[self.root]

    def root_win_rates(self) -> np.ndarray:
        """[A] win rate of each root action for the player to move at the root (NaN where unvisited)."""
        return self.win_rates(self.root)

    def win_rates(self, node: int) -> np.ndarray:
        """[A] win rate of each action of ``node`` for its player to move (NaN where unvisited)."""
        visits = self.children_visits[node]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(visits > 0, self.children_values[node] / visits, np.nan)

    def principal_variation(self, length: int = 10, node: int | None = None) -> list[int]:
        """The line of ``best_action`` choices from ``node`` (default the root), at most ``length`` actions, among
        each node's searched moves (a reused root may hold visits of moves it no longer searches); compiled
        (``descent.best_line``)."""
        out = np.empty(max(0, length), np.int32)
        count = descent.best_line(self.children_index, self.children_visits, self.children_values,
                                  self.children_legal, self.root if node is None else node, out)
        return out[:count].tolist()

    # -- checks -------------------------------------------------------------------------------------------------
    def check_consistency(self, positions: bool = False) -> None:
        """Recompute the tree's invariants from scratch; raise AssertionError on any difference: links between
        parents and children both ways, each node's key, side to move and terminal flag from its position, the
        sides alternating, counts in range, an edge's visits at least those of its child's edges, nodes not
        expanded never descended through, the rows beyond ``size`` clean; with ``positions`` also every node's
        position (``rules.check_consistency``)."""
        n = self.size
        assert 0 < n <= self.capacity and 0 <= self.root < n, "size / root"
        index = self.children_index[:n]
        linked = index >= 0
        nodes, actions = np.nonzero(linked)
        children = index[linked]
        assert np.all(children < n) and len(np.unique(children)) == len(children), "a child out of range or shared"
        assert np.all(self.parents[children] == nodes), "a child's parent"
        assert np.all(self.action_from_parent[children] == actions), "a child's action"
        assert np.all(self.to_play[children] == -self.to_play[nodes]), "sides must alternate"
        assert len(children) == n - 1 and self.root not in children, "every node but the root is one child"
        assert np.array_equal(self.hashes[:n], rules.hash_key(self.states["hash"][:n])), "node keys"
        assert np.array_equal(self.to_play[:n], self.states["to_play"][:n]), "side to move"
        assert np.array_equal(self.terminal[:n], self.states["passes"][:n] >= 2), "terminal flags"
        visits, values = self.children_visits[:n], self.children_values[:n]
        assert np.all(visits >= 0) and np.all(values >= -1e-9) and np.all(values <= visits + 1e-9), "edge counts"
        rave_n, rave_w = self.children_rave_visits[:n], self.children_rave_values[:n]
        assert np.all(rave_w >= -1e-9) and np.all(rave_w <= rave_n + 1e-9), "RAVE counts"
        assert np.all(visits[nodes, actions] + 1e-9 >= visits[children].sum(axis=1)), "a child seen more than its edge"
        assert np.all(visits[~self.expanded[:n]].sum(axis=1) == 0), "a node not expanded was descended through"
        assert np.all(self.children_index[n:] == UNVISITED) and not self.children_visits[n:].any() \
            and not self.children_legal[n:].any() and not self.expanded[n:].any(), "rows beyond size"
        if positions:
            for node in range(n):
                rules.check_consistency(self.state(node))

    # -- reuse ----------------------------------------------------------------------------------------------
    def reroot(self, node: int) -> None:
        """Make ``node`` the root, keeping only its subtree (nodes are copied compactly, in BFS order).  The root
        itself keeps the tree as it is: every node is in its subtree (a search of the same position again)."""
        if node == self.root:
            return
        order = [node]
        head = 0
        while head < len(order):
            children = self.children_index[order[head]]
            order.extend(int(c) for c in children[children >= 0])
            head += 1
        order = np.asarray(order, np.int32)
        remap = np.full(self.capacity, -1, np.int32)
        remap[order] = np.arange(len(order), dtype=np.int32)
        for name in self.ARRAYS:
            array = getattr(self, name)
            array[: len(order)] = array[order]
        for name in STATE_FIELDS:
            self.states[name][: len(order)] = self.states[name][order]
        n = len(order)
        ci = self.children_index[:n]
        self.children_index[:n] = np.where(ci >= 0, remap[np.maximum(ci, 0)], UNVISITED)
        self.parents[:n] = np.where(self.parents[:n] >= 0, remap[np.maximum(self.parents[:n], 0)], -1)
        self.parents[0] = -1
        self.action_from_parent[0] = -1
        self.size = n
        self.root = 0
        # Forget the rest.
        self.children_index[n:] = UNVISITED
        for name in ("children_visits", "children_values", "children_rave_visits", "children_rave_values",
                     "children_prior"):
            getattr(self, name)[n:] = 0
        self.children_legal[n:] = False
        self.expanded[n:] = False
