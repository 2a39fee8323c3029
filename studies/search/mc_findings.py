"""Thesis chapter 3's qualitative findings on 9x9 at equal playout budgets, measured as move regret.

    JAX_PLATFORMS=cpu python studies/search/mc_findings.py --positions 8 --budgets 1000 4000 --seeds 3 \
        --plot docs/figures/search_findings.png

Positions: the empty board plus positions 10-30 random moves in.  Reference value of every legal move: its
light-playout win rate from ``--oracle`` playouts per move (a depth-1 estimate: it favours depth-1 methods, so
"depth-2 is worse" here is measured against depth-1 ground truth; Bouzy's finding was from games).  For each
strategy and budget, each seed's chosen move gets regret = best reference value - chosen move's reference value
(percentage points) and top-1 agreement.  Prints one JSON line per (strategy, budget) and a summary table.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import numpy as np

from jaxgo.go.game import new_game
from jaxgo.playouts.xla import light as playout
from jaxgo.search.config import FLAT_STRATEGIES, TREE_STRATEGIES, SearchConfig
from jaxgo.search.flat import root_children
from jaxgo.search.limits import SearchLimits
from jaxgo.search.player import RESIGN
from jaxgo.search.searcher import Searcher


def positions(count: int, size: int, seed: int):
    rng = np.random.default_rng(seed)
    out = [new_game(size=size, komi=7.5)]
    while len(out) < count:
        game = new_game(size=size, komi=7.5)
        for _ in range(int(rng.integers(10, 31))):
            legal = np.flatnonzero(game.legal_moves(game.to_play)[:-1])
            game.play(game.to_play, int(rng.choice(legal)))
        out.append(game)
    return out


def reference_values(game, per_move: int, seed: int) -> np.ndarray:
    """[A] win rate of each legal move for the player to move (NaN for illegal and pass)."""
    searcher = Searcher(game.rules, SearchConfig(strategy="mc", playout_policy="light", bias_c2=0.0), seed=seed)
    states, legal, _ = root_children(searcher, game)
    result = playout.run(states, jax.random.PRNGKey(seed), game.rules.komi, num_per_state=per_move)
    winner = np.asarray(result.winner).reshape(len(legal), per_move)
    rates = (winner == game.to_play).mean(axis=1) + 0.5 * (winner == 0).mean(axis=1)
    legal = legal.copy()
    legal[-1] = False
    return np.where(legal, rates, np.nan)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--budgets", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--oracle", type=int, default=512, help="reference playouts per move")
    parser.add_argument("--strategies", nargs="+", default=list(FLAT_STRATEGIES + TREE_STRATEGIES))
    parser.add_argument("--plot", default=None)
    args = parser.parse_args(argv)
    games = positions(args.positions, args.size, 0)
    start = time.time()
    refs = [reference_values(g, args.oracle, 100 + i) for i, g in enumerate(games)]
    print(json.dumps({"oracle_seconds": round(time.time() - start, 1), "oracle_playouts_per_move": args.oracle}),
          flush=True)
    rows = []
    for strategy in args.strategies:
        for budget in args.budgets:
            regrets, hits, used = [], [], []
            for g, ref in zip(games, refs):
                best = np.nanmax(ref)
                for seed in range(args.seeds):
                    config = SearchConfig(strategy=strategy, playout_policy="light", bias_c2=0.0)
                    searcher = Searcher(g.rules, config, seed=seed)
                    result = searcher.search(g, SearchLimits(playouts=budget))
                    move = result.move
                    known = move != RESIGN and move < len(ref) and not np.isnan(ref[move])
                    value = ref[move] if known else np.nanmin(ref)
                    regrets.append(100 * (best - value))
                    hits.append(value >= best - 1e-9)
                    used.append(result.playouts)
            row = {"strategy": strategy, "budget": budget, "mean_regret_pct": round(float(np.mean(regrets)), 2),
                   "sem_regret_pct": round(float(np.std(regrets) / np.sqrt(len(regrets))), 2),
                   "top1": round(float(np.mean(hits)), 3), "mean_playouts": int(np.mean(used)),
                   "samples": len(regrets)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{'strategy':8s} " + " ".join(f"regret@{b:<7d}" for b in args.budgets))
    for strategy in args.strategies:
        cells = [r for r in rows if r["strategy"] == strategy]
        print(f"{strategy:8s} " + " ".join(f"{r['mean_regret_pct']:6.2f}±{r['sem_regret_pct']:<5.2f}" for r in cells))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.2))
        width = 0.8 / len(args.budgets)
        x = np.arange(len(args.strategies))
        for j, budget in enumerate(args.budgets):
            vals = [next(r for r in rows if r["strategy"] == s and r["budget"] == budget) for s in args.strategies]
            ax.bar(x + j * width, [v["mean_regret_pct"] for v in vals], width,
                   yerr=[v["sem_regret_pct"] for v in vals], capsize=3, label=f"{budget} playouts/move")
        ax.set_xticks(x + width * (len(args.budgets) - 1) / 2)
        ax.set_xticklabels(args.strategies)
        ax.set_ylabel("regret vs depth-1 reference (win-rate points)")
        ax.set_title(f"{args.size}x{args.size}: move regret at equal playout budgets "
                     f"({args.positions} positions x {args.seeds} seeds)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
