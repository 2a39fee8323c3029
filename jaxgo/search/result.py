"""``SearchResult``: what a search reports, whatever its strategy, and how it is made from root statistics."""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxgo.search.tree import best_action


@dataclasses.dataclass
class SearchResult:
    move: int  # point or pass = P: the best action by ``tree.rank_actions``, the PV's first move

    win_rate: float  # for the player to move
    playouts: int
    seconds: float
    visits: np.ndarray  # [A] root visits (or playouts per move for flat strategies)
    values: np.ndarray  # [A] root win rates (NaN where unknown)
    pv: list
    stopped_early: bool = False  # a time-limited search ended because more playouts could not change the move


def search_result(visits, values, playouts: int, pv=()) -> SearchResult:
    """The result from per-action visits and win rates [A]: the move is the best by ``tree.rank_actions`` and
    the first move of the principal variation (which is the move alone for the flat strategies); pass with a
    win rate of 0.5 when nothing was visited."""
    p = len(visits) - 1
    if not np.any(visits > 0):
        return SearchResult(p, 0.5, playouts, 0.0, visits, values, [p])
    pv = list(pv)
    best = pv[0] if pv else best_action(visits, values)
    return SearchResult(best, float(values[best]), playouts, 0.0, visits, values, pv or [best])
