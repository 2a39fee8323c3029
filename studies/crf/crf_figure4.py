"""Figure 4 of the paper on the test split: per-point cross-entropy between predicted and GNU Go territory
outcomes at moves 20/80/150, for Boltzmann5 and BoltzmannLiberties with Swendsen-Wang and loopy BP
(each model file trained with the matching inference, as in the paper).  Writes a bar chart and a JSON table.
Usage: python studies/crf/crf_figure4.py --positions /tmp/crf/test150.npz \
          --b5-sw B5SW.json --blib-sw BLIBSW.json --b5-bp B5BP.json --blib-bp BLIBBP.json \
          [--sweeps 200] [--out docs/figures/crf_figure4.png] [--json OUT.json]"""
import argparse
import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from jaxgo.crf.cli import evaluate

MOVES = (20, 80, 150)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", required=True)
    for k in ("b5-sw", "blib-sw", "b5-bp", "blib-bp"):
        ap.add_argument(f"--{k}", required=True)
    ap.add_argument("--sweeps", type=int, default=200)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", default="docs/figures/crf_figure4.png")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    for inf in ("sw", "bp"):
        for model in ("b5", "blib"):
            path = getattr(a, f"{model}_{inf}")
            for r in evaluate(path, a.positions, MOVES, inf, sweeps=a.sweeps, limit=a.limit):
                r["model_file"] = path
                rows.append(r)
                print(json.dumps(r), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, inf, title in zip(axes, ("sw", "bp"), ("Swendsen-Wang", "Loopy BP")):
        labels, vals, errs, cols = [], [], [], []
        for m in MOVES:
            for model, col in (("b5", "#777777"), ("blib", "#222222")):
                r = next(r for r in rows if r["inference"] == inf and r["model"] == model and r["move"] == m)
                labels.append(f"{'B5' if model == 'b5' else 'BLib'}\nmove {m}")
                vals.append(r["cross_entropy_nats"])
                errs.append(r["cross_entropy_std"])
                cols.append(col)
        x = np.arange(len(vals)) + np.repeat(np.arange(len(MOVES)) * 0.6, 2)
        ax.bar(x, vals, yerr=errs, color=cols, capsize=3)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(title)
        ax.set_ylim(0, 1.5)
    axes[0].set_ylabel("per-point cross-entropy (nats)")
    n = rows[0]["positions"]
    fig.suptitle(f"Territory prediction, KGS 2017 test split ({n} positions per move number; bars ±1 s.d.)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
