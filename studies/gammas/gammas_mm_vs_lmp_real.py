"""MM and LMP on the same small real set (the first N KGS training games; u-go.net archives): do they reach the
same optimum?  Both use the Gamma(1, 1) prior of jaxgo.learn.bt.

    python studies/gammas/gammas_mm_vs_lmp_real.py --games 30 --mm-iterations 40 --lmp-passes 15

Prints one JSON object: training mean log-likelihood of each, and the largest / median difference in log gamma
over the features seen at least --min-count times.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

from jaxgo.data import iter_records, train_archives  # noqa: E402
from jaxgo.features import game_features, group_offsets, num_features  # noqa: E402
from jaxgo.learn import bt, lmp  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--mm-iterations", type=int, default=40)
    parser.add_argument("--lmp-passes", type=int, default=15)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--min-count", type=int, default=20)
    args = parser.parse_args(argv)
    feats, masks, winners = [], [], []
    for _, record in iter_records(train_archives(), limit=args.games):
        f, legal, moves = game_features(record)
        feats.append(f), masks.append(legal), winners.append(moves)
    f, m, w = np.concatenate(feats), np.concatenate(masks), np.concatenate(winners).astype(np.int32)
    k = num_features()
    t0 = time.time()
    mm = np.asarray(bt.fit(f, m, w, k, iterations=args.mm_iterations, fixed=group_offsets(), prior="gamma").log_gamma)
    t_mm = time.time() - t0
    t0 = time.time()
    lp = np.asarray(lmp.log_gamma(lmp.fit(f, m, w, k, passes=args.lmp_passes, batch=args.batch,
                                          fixed=group_offsets())))
    t_lmp = time.time() - t0
    one = np.asarray(lmp.log_gamma(lmp.fit(f, m, w, k, passes=1, batch=args.batch, fixed=group_offsets())))
    counts = np.bincount(f[m].reshape(-1), minlength=k)
    seen = counts >= args.min_count
    seen[group_offsets()] = False
    diff = np.abs(mm - lp)[seen]
    print(json.dumps({
        "games": args.games, "positions": int(len(w)), "features_compared": int(seen.sum()),
        "mm_iterations": args.mm_iterations, "lmp_passes": args.lmp_passes, "lmp_batch": args.batch,
        "mm_train_ll": float(bt.log_likelihood(mm, f, m, w)), "lmp_train_ll": float(bt.log_likelihood(lp, f, m, w)),
        "lmp_one_pass_train_ll": float(bt.log_likelihood(one, f, m, w)),
        "max_abs_diff_log_gamma": float(diff.max()), "median_abs_diff_log_gamma": float(np.median(diff)),
        "one_pass_median_abs_diff": float(np.median(np.abs(mm - one)[seen])),
        "mm_seconds": round(t_mm, 1), "lmp_seconds": round(t_lmp, 1)}))


if __name__ == "__main__":
    main()
