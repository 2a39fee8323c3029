"""Move-prediction accuracy of a gamma file on the test split, by move number, and the figure
docs/figures/gammas_accuracy_by_move.png (test data: KGS 2017-01..06 from the u-go.net archives; Fox pro-vs-pro
even games from featurecat/go-dataset; see ../shared/data/README.md).

    python studies/gammas/gammas_eval_figure.py [--gammas base large FILE ...] [--kgs-games 100] [--fox-games 100]
        [--out PNG]

Prints one JSON object per (model, test set) (the ``jaxgo gammas eval --curve`` result) and writes the plot.
"""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from jaxgo.data import heldout_archives  # noqa: E402
from jaxgo.features import gammas as gm  # noqa: E402
from jaxgo.learn.evaluate import evaluate  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gammas", nargs="+", default=["base", "large"],
                        help="gamma files, or 'base' / 'large' for the shipped models (each is evaluated)")
    parser.add_argument("--kgs-games", type=int, default=100)
    parser.add_argument("--fox-games", type=int, default=100)
    parser.add_argument("--out", default="docs/figures/gammas_accuracy_by_move.png")
    parser.add_argument("--min-positions", type=int, default=100, help="plot buckets with at least this many")
    parser.add_argument("--replot", default=None, help="JSON lines printed by an earlier run: only plot them")
    args = parser.parse_args(argv)
    if args.replot:
        with open(args.replot) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        plot({(r.pop("gammas", "?"), r.pop("test_set")): r for r in rows}, args.out, args.min_positions)
        return
    results = {}
    kgs = heldout_archives(which="kgs2017")
    per = max(1, args.kgs_games // len(kgs))  # spread the KGS games over the six monthly archives
    for name in args.gammas:
        g = gm.load_named(name)
        results[(name, "KGS 2017")] = _merge([evaluate(g, path, limit=per, curve=True) for path in kgs])
        results[(name, "Fox pro-vs-pro")] = evaluate(g, heldout_archives(which="fox")[0], limit=args.fox_games,
                                                     pro_only=True, curve=True)
        for (model, test_set), r in results.items():
            if model == name:
                print(json.dumps({"gammas": model, "test_set": test_set, **r}), flush=True)
    plot(results, args.out, args.min_positions)


def plot(results, out, min_positions):
    """Top-1 by move number, one line per (model, test set), top-1 and top-5 overall in the legend."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = {"KGS 2017": "o-", "Fox pro-vs-pro": "s--"}
    for (model, test_set), r in results.items():
        buckets = [b for b in r["by_move"] if b["positions"] >= min_positions]
        xs = [(b["from"] + b["to"]) / 2 for b in buckets]
        ax.plot(xs, [b["top1"] for b in buckets], styles.get(test_set, "^-"),
                label=f"{model}, {test_set} ({r['games']} games): top-1 {r['top1']:.1%}, top-5 {r['top5']:.1%}")
    ax.set_xlabel(f"move number (20-move buckets with >= {min_positions} positions)")
    ax.set_ylabel("top-1 accuracy")
    ax.set_ylim(0, 0.7)
    ax.grid(alpha=0.3)
    ax.set_title("Move prediction by move number (base: 3x3 + tactical; large: + large patterns)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def _merge(parts):
    positions = sum(p["positions"] for p in parts)
    out = {"positions": positions, "games": sum(p["games"] for p in parts)}
    for key in ("top1", "top5", "mean_log_likelihood"):
        out[key] = sum(p[key] * p["positions"] for p in parts) / positions
    buckets = {}
    for p in parts:
        for b in p["by_move"]:
            acc = buckets.setdefault(b["from"], {"from": b["from"], "to": b["to"], "positions": 0, "t1": 0, "t5": 0})
            acc["positions"] += b["positions"]
            acc["t1"] += b["top1"] * b["positions"]
            acc["t5"] += b["top5"] * b["positions"]
    out["by_move"] = [{"from": b["from"], "to": b["to"], "positions": b["positions"],
                       "top1": b["t1"] / b["positions"], "top5": b["t5"] / b["positions"]}
                      for _, b in sorted(buckets.items())]
    return out


if __name__ == "__main__":
    main()
