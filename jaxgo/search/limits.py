"""``SearchLimits``: the limits of one search, one value passed in by the search's owner (KataGo's per-search
limits beside ``SearchParams``; mctx's ``num_simulations`` argument).

What a search may spend and where it must stop, as opposed to how it searches (``SearchConfig``): the budget
(playouts and/or seconds; neither: ``DEFAULT_PLAYOUTS``), ``forbid_pass`` (``kgs-genmove_cleanup``: pass only
when nothing else is searched), the node cap of the tree (the analysis server's share of its tree memory), the
stop check (GTP interrupt, the end of pondering) and the batch size K of searches on a time budget (the shape
compiled for the game's clock).  The owner -- the ``Player`` for a game, a server ``Task`` for an analysed turn --
builds it for every search; the searcher never has these set from outside.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

DEFAULT_PLAYOUTS = 3000  # playouts per move when neither playouts, seconds nor a clock is set


@dataclasses.dataclass(frozen=True)
class SearchLimits:
    playouts: int | None = None  # playouts to run (the last batch may go beyond); None: no playout limit
    seconds: float | None = None  # wall-clock seconds; None: no time limit (neither: DEFAULT_PLAYOUTS playouts)
    forbid_pass: bool = False  # kgs-genmove_cleanup: pass only when nothing else is searched at the root
    # Most tree nodes (None: no limit).  A full tree stops growing: a descent that reaches a missing child below
    # the root plays out from the node it is at (the root's children are always created).
    max_nodes: int | None = None
    should_stop: Callable[[], bool] | None = None  # checked after every batch: True ends the search with its result
    # K of a tree search on a time budget, the shape compiled for the game's clock: the owner (``Player.clock``)
    # keeps it from move to move; None: K from the seconds (``tree_search.tree_leaves``)
    timed_leaves: int | None = None

    def __post_init__(self):
        if self.playouts is not None and self.playouts < 0:
            raise ValueError(f"playouts must be at least 0, got {self.playouts}")
        if self.seconds is not None and not self.seconds >= 0:
            raise ValueError(f"seconds must be at least 0, got {self.seconds}")
        if self.max_nodes is not None and self.max_nodes < 1:
            raise ValueError(f"max_nodes must be at least 1, got {self.max_nodes}")
        if self.timed_leaves is not None and self.timed_leaves < 1:
            raise ValueError(f"timed_leaves must be at least 1, got {self.timed_leaves}")

    def budget(self) -> tuple[int | None, float | None]:
        """(playouts, seconds) of the search: the limits set, or ``DEFAULT_PLAYOUTS`` playouts when neither is."""
        if self.playouts is None and self.seconds is None:
            return DEFAULT_PLAYOUTS, None
        return self.playouts, self.seconds

    def stopped(self) -> bool:
        """Whether the stop check says to end the search now."""
        return self.should_stop is not None and bool(self.should_stop())
