"""The thesis's toy sum G + H + I (Figures 5.2, 5.7, 5.10): exact thermographs with their triangle
approximations, CG-TD(0) temperatures over training against the exact values, and the HOTSTRAT check.

    python studies/cgt/cgt_toy.py --episodes 3000 --seeds 3
writes docs/figures/cgt_thermographs.png and docs/figures/cgt_temperatures.png and prints a summary.
"""

from __future__ import annotations

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxgo.cgt.games import toy_sum  # noqa: E402
from jaxgo.cgt.thermograph import plot_thermograph, thermographs  # noqa: E402
from jaxgo.cgt.toy import run_toy  # noqa: E402
from jaxgo.cgt.triangle import triangles  # noqa: E402


def plot_thermographs(path: str) -> None:
    """Figure 5.7: thermographs of G, H, I (and I^R), with the triangle approximation dashed."""
    games = toy_sum()
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.8), sharey=True)
    cases = [(0, 0), (1, 0), (2, 0), (2, 2)]
    for ax, (i, n) in zip(axes, cases):
        th, tri = thermographs(games[i])[n], triangles(games[i])[n]
        plot_thermograph(ax, th, t_max=5.5, label="exact", color="C0", lw=2.5)
        ts = np.linspace(0, 5.5, 200)
        ax.plot(tri.left_wall(ts), ts, "--", color="C2", label="triangle")
        ax.plot(tri.right_wall(ts), ts, "--", color="C2")
        ax.plot([th.mean], [th.temperature], "ko", ms=4)
        ax.set_title(f"{games[i].node_name(n)} = {games[i]!s}" if n == 0 else f"{games[i].node_name(n)} = {{0 | -6}}")
        ax.set_xlim(6.5, -6.5)
        ax.grid(alpha=0.3)
        ax.set_xlabel("score (Left > 0 drawn left)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_temperatures(path: str, episodes: int, seeds: int) -> list[dict]:
    """Figure 5.10: learnt temperatures of the inner nodes over CG-TD(0) episodes, exact values dashed."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    results = []
    for seed in range(seeds):
        res = run_toy(episodes=episodes, seed=seed, linear_epochs=0, trace_every=25)
        results.append(res)
        tr = res["temperature_trace"]
        rows = np.array(tr["rows"])
        for k, name in enumerate(tr["columns"][1:], start=1):
            exact = next(n["exact"]["temperature"] for n in res["nodes"] if n["node"] == name)
            if exact == 0.0:
                continue
            color = f"C{k % 10}"
            ax.plot(rows[:, 0], rows[:, k], color=color, alpha=0.8, lw=1.2, label=f"{name}" if seed == 0 else None)
            if seed == 0:
                ax.axhline(exact, color=color, ls="--", lw=0.8)
    ax.set_xlabel("CG-TD(0) episode")
    ax.set_ylabel("learnt temperature (exact dashed)")
    ax.set_title(f"CG-TD(0) on G + H + I: temperatures of the inner nodes ({seeds} seeds, α = 0.1, ε = 0.5)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=3000)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    plot_thermographs("docs/figures/cgt_thermographs.png")
    results = plot_temperatures("docs/figures/cgt_temperatures.png", args.episodes, args.seeds)
    print(json.dumps([{"seed": r["cgtd"]["seed"], "temperature_error_max": r["temperature_error_max"],
                       "hotstrat_optimal": r["hotstrat_optimal"],
                       "hotstrat_optimal_exact": r["hotstrat_optimal_exact_thermographs"],
                       "learnt_equals_exact": r["hotstrat_learnt_equals_exact_decisions"]} for r in results], indent=1))


if __name__ == "__main__":
    main()
