"""Value-loss table on random sums of small games: HOTSTRAT with exact thermographs, recursive triangles and
CG-TD(0) learnt triangles, against exact minimax (plus a random-move baseline).

    python studies/cgt/cgt_random_sums.py --sums 200 --cgtd 3000
prints two markdown tables (uniform random leaves; Go-like "hot" games) as pasted into docs/cgt.md.
"""

from __future__ import annotations

import argparse
import json

from jaxgo.cgt.random_sums import format_table, value_loss_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sums", type=int, default=200)
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--cgtd", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="", help="also write the raw results here")
    args = ap.parse_args()
    out = {}
    for hot in (False, True):
        res = value_loss_table(args.sums, args.games, seed=args.seed, cgtd_episodes=args.cgtd, hot=hot)
        out["hot" if hot else "uniform"] = res
        print(f"\n{'Go-like hot games' if hot else 'uniform random leaves'}: {args.sums} sums of {args.games} games "
              f"(depth <= 3, <= 2 options per player, <= 13 nodes), CG-TD {args.cgtd} episodes per sum; "
              "loss = points the strategy's user loses against a perfect opponent, 4 plays per sum "
              "(user Left/Right x Left/Right first)\n")
        print(format_table(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
