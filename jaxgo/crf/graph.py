"""Board graph for the territory CRF: one pairwise factor per pair of neighbouring points.

Edges are numbered horizontal first (row r, columns k,k+1 -> r*(N-1)+k), then vertical
(rows r,r+1, column k -> H + r*N+k).  Point index = row*N+col, row 0 at the top.
Directed messages: d < E runs i->j of edge d, d >= E runs j->i of edge d-E.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class Graph:
    n: int
    edges: np.ndarray      # [E, 2] int32 (i, j)
    src: np.ndarray        # [2E] directed message source
    dst: np.ndarray        # [2E] directed message destination

    @property
    def num_points(self) -> int:
        return self.n * self.n

    @property
    def num_edges(self) -> int:
        return len(self.edges)


@lru_cache(maxsize=None)
def board_graph(n: int) -> Graph:
    h = [(r * n + k, r * n + k + 1) for r in range(n) for k in range(n - 1)]
    v = [(r * n + k, (r + 1) * n + k) for r in range(n - 1) for k in range(n)]
    edges = np.array(h + v, dtype=np.int32).reshape(-1, 2)
    src = np.concatenate([edges[:, 0], edges[:, 1]]).astype(np.int32)
    dst = np.concatenate([edges[:, 1], edges[:, 0]]).astype(np.int32)
    return Graph(n, edges, src, dst)
