"""Small real check of the MM gammas: fit on a few hundred KGS training games, measure move prediction on
KGS 2017 test games (the split of ../shared/data/README.md; public originals: u-go.net KGS archives).

    python scripts/gammas_small_experiment.py --train-games 200 --test-games 200 --iterations 20

Prints one JSON object: positions, top1, top5, mean_log_likelihood on the test games, and timings.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxgo.data import SkipStats, iter_records, heldout_archives, train_archives  # noqa: E402
from jaxgo.util.paths import data_dir  # noqa: E402
from jaxgo.features import GROUPS, game_features, group_offsets, group_sizes, num_features  # noqa: E402
from jaxgo.learn import bt  # noqa: E402


def collect(paths, games: int, stats: SkipStats):
    feats, masks, winners = [], [], []
    for _, record in iter_records(paths, stats, limit=games):
        f, legal, moves = game_features(record)
        feats.append(f)
        masks.append(legal)
        winners.append(moves)
    return np.concatenate(feats), np.concatenate(masks), np.concatenate(winners).astype(np.int32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(data_dir()))
    parser.add_argument("--train-games", type=int, default=200)
    parser.add_argument("--test-games", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    t0 = time.time()
    train_stats, test_stats = SkipStats(), SkipStats()
    f, m, w = collect(train_archives(args.data), args.train_games, train_stats)
    t_extract = time.time() - t0
    fixed = group_offsets()  # the absent level of every group stays at gamma 1
    t1 = time.time()
    state = bt.fit(f, m, w, num_features(), iterations=args.iterations, fixed=fixed)
    state.log_gamma.block_until_ready()
    t_fit = time.time() - t1
    train_ll = float(bt.log_likelihood(state.log_gamma, jnp.asarray(f), jnp.asarray(m), jnp.asarray(w)))
    del f, m, w
    tf, tm, tw = collect(heldout_archives(args.data), args.test_games, test_stats)
    ranks = np.asarray(bt.predict_rank(state.log_gamma, jnp.asarray(tf), jnp.asarray(tm), jnp.asarray(tw)))
    test_ll = float(bt.log_likelihood(state.log_gamma, jnp.asarray(tf), jnp.asarray(tm), jnp.asarray(tw)))
    offsets, sizes = group_offsets(), group_sizes()
    gammas = np.exp(np.asarray(state.log_gamma))
    small = {g: [round(float(x), 3) for x in gammas[offsets[i]:offsets[i] + sizes[i]]]  # one group's levels only
             for i, g in enumerate(GROUPS) if g != "pattern"}
    print(json.dumps({
        "train_games": train_stats.kept, "train_skipped": dict(train_stats.skipped),
        "test_games": test_stats.kept, "test_skipped": dict(test_stats.skipped),
        "positions": int(len(tw)), "top1": float(np.mean(ranks == 0)), "top5": float(np.mean(ranks < 5)),
        "mean_log_likelihood": test_ll, "train_mean_log_likelihood": train_ll,
        "iterations": args.iterations, "extract_train_s": round(t_extract, 1), "fit_s": round(t_fit, 1),
        "gammas_non_pattern": small,
    }))


if __name__ == "__main__":
    main()
