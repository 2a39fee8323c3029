"""Measure the bias of RAVE's values in the engine's own search trees and the constant of Silver's minimum-MSE
schedule it implies (``jaxgo.search.rave_bias``): rave_c3 = b^2 / sigma^2.

    jaxgo eval rave-bias --sgf benchmarks/games/sgf_9x9_default.tar.xz --sgf-folder sgf_default \\
        --positions 40 --playouts 10000 --out rave_bias.json --plot docs/figures/rave_bias.png

Positions are drawn from the games of ``--sgf`` (a folder of SGF files or a tar of them; ``--sgf-folder`` keeps
the members under one top folder): a game at random, a move number uniform in [``--first-move``,
``--last-move``] (at most the game's length).  Each is searched once with ``SearchConfig()``'s defaults (changed
by the engine's own search options: ``--bias``, ``--prior``, ``--search-option FIELD=VALUE`` ...) at
``--playouts``; the edges with at least ``--min-visits`` Monte Carlo playouts and as many other RAVE playouts give
the estimate.  It prints a table by depth (the root's moves are depth 0) and a JSON summary (also written to
``--out``) with rave_c3's 95% interval from resampling whole positions; ``--plot`` draws rave_c3 by depth with
those intervals.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from jaxgo.go.sgf import replay
from jaxgo.match import read_game_records
from jaxgo.search.config import add_arguments as add_search_arguments
from jaxgo.search.config import from_args as search_config_from_args
from jaxgo.search.rave_bias import EdgeStatistics, RaveBias, bootstrap_c3, edge_statistics, rave_bias

DEPTHS = ((0, 0), (1, 1), (2, 3), (4, None))


def sample_positions(records: list, count: int, first_move: int, last_move: int, seed: int) -> list:
    """``count`` (record, move number) pairs: a record at random among those with at least ``first_move``
    moves, a move number uniform in [first_move, min(last_move, its length)]."""
    usable = [r for r in records if len(r.moves) >= first_move]
    if not usable:
        raise ValueError(f"no game has {first_move} moves")
    rng = random.Random(seed)
    picks = []
    for _ in range(count):
        record = rng.choice(usable)
        picks.append((record, rng.randint(first_move, min(last_move, len(record.moves)))))
    return picks


def estimate_row(depth: str, est: RaveBias) -> dict:
    """One row of the table and of the JSON summary."""
    return {"depth": depth, "edges": est.edges, "mean_difference": est.mean_difference, "b2": est.bias_squared,
            "sigma2": est.sigma_squared, "rave_c3": est.rave_c3}


def depth_rows(stats: EdgeStatistics) -> list[dict]:
    return [estimate_row(f"{low}" if low == high else (f"{low}-{high}" if high else f"{low}+"),
                         rave_bias(stats.at_depths(low, high))) for low, high in DEPTHS]


def plot(rows: list[dict], intervals: list[tuple], summary: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    labels = [r["depth"] for r in rows] + ["all"]
    values = [r["rave_c3"] for r in rows] + [summary["rave_c3"]]
    lows = [v - lo for v, (lo, _) in zip(values, intervals)]
    highs = [hi - v for v, (_, hi) in zip(values, intervals)]
    ax.bar(labels, values, yerr=[lows, highs], capsize=4, color=["#7fa7d9"] * len(rows) + ["#2f5f9f"])
    ax.axhline(summary["config_rave_c3"], color="#c0392b", linestyle="--",
               label=f"the searches' rave_c3 = {summary['config_rave_c3']:g}")
    ax.set_xlabel("depth of the edge's node below the root")
    ax.set_ylabel("b² / σ²  (rave_c3 of the min-MSE schedule)")
    ax.set_title(f"RAVE bias in {summary['positions']} searches of {summary['playouts']:,} playouts "
                 f"({summary['edges']:,} edges)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval rave-bias", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sgf", required=True, help="a folder of SGF files or a tar of them")
    parser.add_argument("--sgf-folder", help="only the tar members under this top folder")
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--playouts", type=int, default=10000)
    parser.add_argument("--first-move", type=int, default=5)
    parser.add_argument("--last-move", type=int, default=60)
    parser.add_argument("--min-visits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the JSON summary (with the per-depth rows) here")
    parser.add_argument("--plot", help="draw rave_c3 by depth with 95%% intervals (PNG)")
    add_search_arguments(parser)
    args = parser.parse_args(argv)

    from tqdm import tqdm

    from jaxgo.search.limits import SearchLimits
    from jaxgo.search.searcher import Searcher

    try:
        config = search_config_from_args(args)
    except ValueError as exc:
        print(f"rave_bias: {exc}", file=sys.stderr)
        return 2
    if config.strategy != "rave":
        print("rave_bias: the search must be RAVE (strategy rave)", file=sys.stderr)
        return 2
    named, broken = read_game_records([args.sgf], args.sgf_folder)
    records = [record for _, record in named]
    try:
        picks = sample_positions(records, args.positions, args.first_move, args.last_move, args.seed)
    except ValueError as exc:
        print(f"rave_bias: {exc} ({len(records)} games read, {broken} broken)", file=sys.stderr)
        return 2
    per_position = []
    for index, (record, move_number) in enumerate(tqdm(picks, desc="searches", file=sys.stderr)):
        game = replay(record, move_number=move_number)
        searcher = Searcher(game.rules, config, seed=args.seed + index)
        searcher.search(game, SearchLimits(playouts=args.playouts))
        per_position.append(edge_statistics(searcher.tree, args.min_visits))
    stats = EdgeStatistics.concatenate(per_position)
    rows = depth_rows(stats)
    total = estimate_row("all", rave_bias(stats))
    intervals = [bootstrap_c3([s.at_depths(low, high) for s in per_position], seed=args.seed)
                 for low, high in DEPTHS + ((0, None),)]
    summary = {"games": len(records), "broken": broken, "positions": len(picks), "playouts": args.playouts,
               "min_visits": args.min_visits, **{k: v for k, v in total.items() if k != "depth"},
               "rave_c3_ci95": list(intervals[-1]), "config_rave_c3": config.rave_c3, "by_depth": rows}
    print("| depth | edges | mean Q - Q_other | b^2 | sigma^2 | rave_c3 = b^2/sigma^2 (95%) |", file=sys.stderr)
    print("|---|---|---|---|---|---|", file=sys.stderr)
    for row, (low, high) in zip(rows + [total], intervals):
        print(f"| {row['depth']} | {row['edges']} | {row['mean_difference']:+.3f} | {row['b2']:.4f} | "
              f"{row['sigma2']:.3f} | {row['rave_c3']:.3f} ({low:.3f}-{high:.3f}) |", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    if args.plot:
        plot(rows, intervals, summary, args.plot)
    print(json.dumps({k: v for k, v in summary.items() if k != "by_depth"}))
    return 0

