"""Linear-model failure (thesis sections 5.3-5.4, Figure 5.6): incentives per epoch of Monte Carlo policy
iteration (Algorithm 2) and TD(lambda) policy iteration (Algorithm 3) on the toy sum G + H + I, with
N = 1000, epsilon = 0.2, alpha = 0.001, lambda = 0.9; plus the indifference limits under the optimal policy.

    python studies/cgt/cgt_linear_failure.py --epochs 150 --out docs/figures/cgt_linear_incentives.png
"""

from __future__ import annotations

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from jaxgo.cgt.games import LEFT, toy_sum  # noqa: E402
from jaxgo.cgt.linear_failure import indifference_limits, policy_iteration  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="docs/figures/cgt_linear_incentives.png")
    args = ap.parse_args()
    games = toy_sum()
    runs = {alg: policy_iteration(games, alg, epochs=args.epochs, seed=args.seed) for alg in ("mc", "td")}
    fig, axes = plt.subplots(2, 2, figsize=(13, 8), sharex=True)
    titles = {"mc": "Algorithm 2 (Monte Carlo policy iteration)", "td": "Algorithm 3 (TD(λ) policy iteration)"}
    for col, alg in enumerate(("mc", "td")):
        h = runs[alg]
        epochs = range(1, len(h["incentives"]) + 1)
        for row, player in enumerate((LEFT, -LEFT)):
            ax = axes[row, col]
            for k, (p, i, node, child) in enumerate(h["moves"]):
                if p != player:
                    continue
                name = f"{games[i].node_name(node)} → {games[i].node_name(child)}"
                ax.plot(epochs, [inc[k] for inc in h["incentives"]], label=name)
            who = "Left (greedy: highest)" if player == LEFT else "Right (greedy: lowest)"
            ax.set_title(f"{titles[alg]}\nincentives of {who}", fontsize=10)
            ax.set_ylabel("incentive  w[child] − w[node]")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="best")
        axes[1, col].set_xlabel(f"epoch (N = 1000 playouts each); policy changes in 2nd half: {h['changes']}, "
                                f"oscillates: {h['oscillates']}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    limits = indifference_limits(games)
    summary = {alg: {k: runs[alg][k] for k in ("changes", "distinct", "oscillates")} |
               {"optimal_fraction_last": runs[alg]["optimal_fraction"][-1]} for alg in runs}
    summary["indifference_limits"] = {k: v for k, v in limits.items() if k != "weights"}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
