"""Harvest a large-pattern dictionary from training games (``jaxgo.features.large``).

Every non-pass move of the kept games contributes its canonical hash at each size of ``large.SIZES``; the
(size, hash) pairs played at least ``min_count`` times form the dictionary (Coulom 2007 keeps the patterns that
occur often enough as the played move; the candidates that were not played are not counted).
"""

from __future__ import annotations

import time

import numpy as np

from jaxgo.data.archives import iter_records
from jaxgo.data.skips import SkipStats
from jaxgo.data.split import is_pro_vs_pro
from jaxgo.features import large


def harvest(sources, *, games: int | None = None, min_count: int = 10, pro_only: bool = False,
            batch: int = 16, chunk: int = 256, progress: bool = True, size: int = 19):
    """(LargeDictionary, summary dict: games, moves, seconds, entries per size, skipped by reason) from the
    first ``games`` kept games of the archives ``sources``."""
    from jaxgo.features.games import games_played_hashes

    stats = SkipStats()
    stream = iter_records(sources, stats, limit=games, size=size, accept=is_pro_vs_pro if pro_only else None)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=games, unit="game", desc="harvest")
    parts, cell_parts, pending, kept, t0 = [], [], [], 0, time.time()

    def flush():
        for hashes, cells in games_played_hashes(pending, batch=batch):
            parts.append(hashes)
            cell_parts.append(cells)
        if bar is not None:
            bar.update(len(pending))
        pending.clear()

    for _, record in stream:
        pending.append(record)
        kept += 1
        if len(pending) == chunk:
            flush()
    if pending:
        flush()
    if bar is not None:
        bar.close()
    hashes = np.concatenate(parts) if parts else np.zeros((0, len(large.SIZES), 8), np.uint32)  # [moves, S, 8]
    cells = np.concatenate(cell_parts) if cell_parts else np.zeros((0, len(large.offsets())), np.uint8)
    dictionary = large.LargeDictionary.from_occurrences(hashes, cells, min_count)
    summary = {"games": kept, "moves": int(len(hashes)), "min_count": min_count,
               "seconds": round(time.time() - t0, 2), "entries": len(dictionary),
               "entries_per_size": {str(s): int(np.sum(dictionary.size_index == i))
                                    for i, s in enumerate(large.SIZES)},
               "skipped": dict(stats.skipped), "complete": stats.complete, "damaged": stats.damaged}
    return dictionary, summary
