"""Move-prediction quality of a gamma file on game records: top-1 / top-5 accuracy, mean log-likelihood.

Every move of every usable game is a test position (the candidates are the legal moves and pass, as in
training); rank 0 means the played move had the largest strength (ties count against the model).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.data import SkipStats, is_pro_vs_pro, iter_path
from jaxgo.features.games import cut_games, games_codes, previous_moves
from jaxgo.features.gammas import Gammas
from jaxgo.learn import bt
from jaxgo.learn.shards import batches
from jaxgo.learn.train import decode_batch

SCORE_BATCH = 256


@jax.jit
def _score(log_gamma, codes, meta, valid):
    """ranks int32 [B], log-likelihood float32 [B] for one batch of positions."""
    f, mask, w = decode_batch(codes, meta, valid)
    return bt.predict_rank(log_gamma, f, mask, w), bt.position_log_likelihood(log_gamma, f, mask, w)


def score_games(gammas: Gammas, records, batch: int = 16, stats: SkipStats | None = None):
    """(ranks int32 [N], log_likelihood float32 [N], move_number int32 [N]) over all usable moves; records cut at
    an illegal move are counted in ``stats.cut``."""
    if not gammas.compatible():
        raise ValueError("gamma file layout does not match jaxgo.features (groups/sizes differ)")
    lg = jnp.asarray(gammas.log_gamma)
    all_codes, metas = [], []
    records = list(records)
    coded = games_codes(records, batch=batch, large_dictionary=gammas.large)
    if stats is not None:
        stats.cut += cut_games(records, coded)
    for codes, moves in coded:
        if len(moves) == 0:
            continue
        prev, prev2 = previous_moves(moves)
        all_codes.append(codes)
        metas.append(np.stack([moves, prev, prev2, np.arange(len(moves))], 1).astype(np.int16))
    if not metas:
        return np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(0, np.int32)
    meta = np.concatenate(metas)
    codes, bmeta, valid = batches(np.concatenate(all_codes), meta, SCORE_BATCH)
    ranks, lls = [], []
    for i in range(len(codes)):
        r, ll = _score(lg, jnp.asarray(codes[i]), jnp.asarray(bmeta[i]), jnp.asarray(valid[i]))
        ranks.append(np.asarray(r)), lls.append(np.asarray(ll))
    n = len(meta)
    return np.concatenate(ranks)[:n], np.concatenate(lls)[:n], meta[:, 3].astype(np.int32)


def evaluate(gammas: Gammas, path, *, limit: int | None = None, pro_only: bool = False, chunk: int = 64,
             curve: bool = False, size: int = 19) -> dict:
    """Score the games at ``path`` (SGF file, folder or tar.gz; ``limit`` games).  Returns a JSON-ready dict:
    top1, top5, mean_log_likelihood, positions, games, skipped (by reason), cut_games (used only up to an illegal
    move), complete and damaged (archives read only up to a damage point, ``jaxgo.data.ArchiveDamage``); with
    ``curve`` also ``by_move``: per 20-move bucket of the move number, positions and top1/top5."""
    stats = SkipStats()
    stream = iter_path(path, stats, limit=limit, size=size, accept=is_pro_vs_pro if pro_only else None)
    ranks, lls, numbers, pending = [], [], [], []

    def flush():
        r, ll, n = score_games(gammas, [rec for _, rec in pending], stats=stats)
        ranks.append(r), lls.append(ll), numbers.append(n)
        pending.clear()

    for item in stream:
        pending.append(item)
        if len(pending) == chunk:
            flush()
    if pending:
        flush()
    r = np.concatenate(ranks) if ranks else np.zeros(0)
    ll = np.concatenate(lls) if lls else np.zeros(0)
    n = np.concatenate(numbers) if numbers else np.zeros(0)
    out = {"positions": int(len(r)), "games": stats.kept,
           "top1": float(np.mean(r == 0)) if len(r) else None,
           "top5": float(np.mean(r < 5)) if len(r) else None,
           "mean_log_likelihood": float(np.mean(ll)) if len(r) else None,
           "skipped": dict(stats.skipped), "cut_games": stats.cut, "complete": stats.complete,
           "damaged": stats.damaged}
    if curve:
        buckets = []
        for lo in range(0, int(n.max()) + 1 if len(n) else 0, 20):
            sel = (n >= lo) & (n < lo + 20)
            if sel.sum() >= 20:
                buckets.append({"from": lo, "to": lo + 19, "positions": int(sel.sum()),
                                "top1": float(np.mean(r[sel] == 0)), "top5": float(np.mean(r[sel] < 5))})
        out["by_move"] = buckets
    return out
