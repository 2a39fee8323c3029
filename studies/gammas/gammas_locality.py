"""Where move prediction loses accuracy from KGS to pro games: played moves bucketed by their distance to the
previous move (Coulom's d = |dx| + |dy| + max(|dx|, |dy|)), with each bucket's share of the moves and the model's
top-1 accuracy inside it, for KGS 2017 (the first games of its first monthly archive) and Fox pro-vs-pro.

    python studies/gammas/gammas_locality.py [--gammas large|base|FILE] [--kgs-games 120] [--fox-games 200] [--json]

The last line re-weights KGS's per-bucket accuracies by Fox's bucket shares: the part of the KGS -> Fox gap that
the mix of local and distant moves alone explains (the rest is lower accuracy within the buckets).
"""

from __future__ import annotations

import argparse
import json

import jax.numpy as jnp
import numpy as np

BUCKETS = (("d <= 4 (local)", 1, 3), ("d 5-8", 4, 7), ("d 9-16", 8, 15), ("d >= 17", 16, 16),
           ("no previous move / pass", 0, 0), ("d = 0 (retake)", 17, 17))


def played_levels(gammas, path, limit: int, accept=None):
    """(rank int [N], dist_prev level int [N]) of every played move of the first ``limit`` games at ``path``."""
    from jaxgo.data.archives import iter_path
    from jaxgo.data.skips import SkipStats
    from jaxgo.features import GROUPS, group_offsets
    from jaxgo.features.games import games_codes, previous_moves
    from jaxgo.learn import bt
    from jaxgo.learn.train import decode_batch

    log_gamma = jnp.asarray(gammas.log_gamma)
    group = GROUPS.index("dist_prev")
    offset = int(np.asarray(group_offsets())[group])
    records = [rec for _, rec in iter_path(path, SkipStats(), limit=limit, size=19, accept=accept)]
    ranks, levels = [], []
    for codes, moves in games_codes(records, batch=16, large_dictionary=gammas.large):
        if len(moves) == 0:
            continue
        prev, prev2 = previous_moves(moves)
        meta = np.stack([moves, prev, prev2, np.arange(len(moves))], 1).astype(np.int16)
        features, mask, winner = decode_batch(jnp.asarray(codes), jnp.asarray(meta), jnp.ones(len(moves), bool))
        ranks.append(np.asarray(bt.predict_rank(log_gamma, features, mask, winner)))
        played = np.asarray(features)[np.arange(len(moves)), np.asarray(winner)]
        levels.append(played[:, group] - offset)
    return np.concatenate(ranks), np.concatenate(levels)


def table(ranks, levels) -> list[dict]:
    rows = []
    for name, lo, hi in BUCKETS:
        sel = (levels >= lo) & (levels <= hi)
        rows.append({"bucket": name, "share": float(sel.mean()),
                     "top1": float(np.mean(ranks[sel] == 0)) if sel.any() else None})
    return rows


def main(argv=None) -> int:
    from jaxgo.data.split import heldout_archives, is_pro_vs_pro
    from jaxgo.features import gammas as gm

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gammas", default="large")
    parser.add_argument("--kgs-games", type=int, default=120)
    parser.add_argument("--fox-games", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    gammas = gm.load_named(args.gammas)
    kgs_path = heldout_archives(which="kgs2017")[0]
    fox_path = heldout_archives(which="fox")[0]
    out = {}
    for name, path, limit, accept in (("KGS 2017", kgs_path, args.kgs_games, None),
                                      ("Fox pro-vs-pro", fox_path, args.fox_games, is_pro_vs_pro)):
        ranks, levels = played_levels(gammas, path, limit, accept)
        out[name] = {"positions": int(len(ranks)), "top1": float(np.mean(ranks == 0)), "buckets": table(ranks, levels)}
    kgs, fox = out["KGS 2017"]["buckets"], out["Fox pro-vs-pro"]["buckets"]
    out["kgs_accuracy_at_fox_mix"] = float(sum(f["share"] * (k["top1"] or 0.0) for k, f in zip(kgs, fox)))
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print("| bucket | KGS share | KGS top-1 | Fox share | Fox top-1 |")
    print("|---|---|---|---|---|")
    fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    for k, f in zip(kgs, fox):
        print(f"| {k['bucket']} | {k['share']:.3f} | {fmt(k['top1'])} | {f['share']:.3f} | {fmt(f['top1'])} |")
    print(f"| all | {out['KGS 2017']['positions']} positions | {out['KGS 2017']['top1']:.3f} | "
          f"{out['Fox pro-vs-pro']['positions']} positions | {out['Fox pro-vs-pro']['top1']:.3f} |")
    print(f"KGS accuracies at Fox's mix of distances: {out['kgs_accuracy_at_fox_mix']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
